#!/bin/bash
cd /work/wt/review30; export SGBIN=$PWD/sluicegate
while ! grep -q DONE4 batch4.log; do sleep 2; done
R() { echo "=== $1"; python3 run2.py "$@" 2>&1 | grep -v '^event' ; }
for p in adaptive static:40; do R SH-over-$p --upstream "python3 pyup2.py --port {port} --latency 20ms --contention 0.1" --pool $p --load "--rate 700 --duration 15s --patience 2s"; done
echo DONE5
