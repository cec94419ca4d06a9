#!/bin/bash
# O: the thrashing service at 2x again, on this build and on the lead's newer one (run by hand at 08:13)
cd "$(dirname "$0")"
U2='python3 pyup2.py --port {port} --latency 20ms --contention 0.0025 --contention-exp 2'
python3 run2.py F2-thrash-r1000-adaptive-2 --upstream "$U2" --pool adaptive --load "--rate 1000 --duration 20s --patience 2s" > results/F2-thrash-r1000-adaptive-2.out 2>&1
SGBIN=$PWD/sluicegate-new python3 run2.py K-new-thrash-r1000-adaptive --upstream "$U2" --pool adaptive --load "--rate 1000 --duration 20s --patience 2s" > results/K-new-thrash-r1000-adaptive.out 2>&1
