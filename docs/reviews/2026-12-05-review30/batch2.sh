#!/bin/bash
cd /work/wt/review30; export SGBIN=$PWD/sluicegate
while ! grep -q DONE batch.log; do sleep 2; done
R() { echo "=== $1"; python3 run2.py "$@" 2>&1 | grep -v '^event' ; }
U20="python3 pyup2.py --port {port} --latency 20ms --workers 20"
R F-base-adaptive --upstream "$U20" --pool adaptive --load "--rate 800 --duration 15s --patience 2s"
for p in adaptive static:20; do R F2x-fail5-$p --upstream "$U20 --fail503 0.05" --pool $p --load "--rate 1600 --duration 15s --patience 2s"; done
# warm-up that slows requests each other for 3 s (contention), then a plain 20-worker pool, at 1.5x
for p in adaptive static:20; do R S2-warmlock-$p --upstream "$U20 --contention 0.1 --change 3s:contention=0" --pool $p --load "--rate 1500 --duration 20s --patience 2s"; done
R S2-nolock-adaptive --upstream "$U20" --pool adaptive --load "--rate 1500 --duration 20s --patience 2s"
echo DONE2
