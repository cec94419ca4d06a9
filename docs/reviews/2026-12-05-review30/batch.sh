#!/bin/bash
cd /work/wt/review30; export SGBIN=$PWD/sluicegate
R() { echo "=== $1"; python3 run2.py "$@" 2>&1 | grep -v '^event' ; }
U20="python3 pyup2.py --port {port} --latency 20ms --workers 20"
L800="--rate 800 --duration 15s --patience 2s"
# 1 fail 5% fast 503 at 0.8x
for p in adaptive static:20 none; do R F-fail5-$p --upstream "$U20 --fail503 0.05" --pool $p --load "$L800"; done
# 2 mq0 fast upstream
for p in adaptive static:20 none; do R Q-fast-mq0-$p --upstream "python3 pyup2.py --port {port} --latency 2ms --workers 20" --pool $p --max-queue 0 --load "--rate 1500 --duration 15s --patience 2s"; done
# 3 slow start
for p in adaptive static:20; do R S-slowstart-$p --upstream "$U20 --latency 100ms --change 4s:latency=20ms" --pool $p --load "$L800"; done
# 4 mq0 gradient2/aimd at 0.8x
for alg in gradient2 aimd; do R G-mq0-$alg --upstream "$U20" --pool adaptive:algorithm=$alg --max-queue 0 --load "$L800"; done
R G-mq0-littles --upstream "$U20" --pool adaptive --max-queue 0 --load "$L800"
R G-mq0-static20 --upstream "$U20" --pool static:20 --max-queue 0 --load "$L800"
# 5 workers 10 at 0.8x
for p in adaptive static:10 none; do R W-w10-$p --upstream "python3 pyup2.py --port {port} --latency 20ms --workers 10" --pool $p --load "--rate 400 --duration 15s --patience 2s"; done
# 6 step 0.5x -> 2x -> 0.5x  (500/s base, +1500/s for 10s at t=8)
for p in adaptive static:20; do R T-step-$p --upstream "$U20" --pool $p --load "--rate 500 --duration 28s --patience 2s" --at "8|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 1500 --duration 10s --patience 2s --json"; done
# 7 mq0 step
R T-step-mq0-adaptive --upstream "$U20" --pool adaptive --max-queue 0 --load "--rate 500 --duration 28s --patience 2s" --at "8|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 1500 --duration 10s --patience 2s --json"
# 8 heavy tail
for p in adaptive static:20; do R H-bimodal-$p --upstream "$U20 --dist bimodal:0.05:300ms" --pool $p --load "--rate 600 --duration 15s --patience 2s"; done
echo DONE
