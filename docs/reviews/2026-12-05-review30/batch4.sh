#!/bin/bash
cd /work/wt/review30; export SGBIN=$PWD/sluicegate
while ! grep -q DONE3 batch3.log; do sleep 2; done
R() { echo "=== $1"; python3 run2.py "$@" 2>&1 | grep -v '^event' ; }
U20="python3 pyup2.py --port {port} --latency 20ms --workers 20"
R T-step-mq0-static20 --upstream "$U20" --pool static:20 --max-queue 0 --load "--rate 500 --duration 28s --patience 2s" --at "8|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 1500 --duration 10s --patience 2s --json"
for p in adaptive static:20; do R H7-bimodal-$p --upstream "$U20 --dist bimodal:0.05:300ms" --pool $p --load "--rate 400 --duration 15s --patience 2s"; done
echo DONE4
