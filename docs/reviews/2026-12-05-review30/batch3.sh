#!/bin/bash
cd /work/wt/review30; export SGBIN=$PWD/sluicegate
while ! grep -q DONE2 batch2.log; do sleep 2; done
R() { echo "=== $1"; python3 run2.py "$@" 2>&1 | grep -v '^event' ; }
U20="python3 pyup2.py --port {port} --latency 20ms --workers 20"
for p in adaptive static:20; do R Q2x-mq0-$p --upstream "$U20" --pool $p --max-queue 0 --load "--rate 1600 --duration 15s --patience 2s"; done
B="--at 5|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 3000 --duration 1s --patience 2s --json"
for mq in 0 1024; do for p in adaptive static:20; do
R B-burst-mq$mq-$p --upstream "$U20" --pool $p --max-queue $mq --load "--rate 400 --duration 24s --patience 2s" \
  --at "5|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 3000 --duration 1s --patience 2s --json" \
  --at "12|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 3000 --duration 1s --patience 2s --json" \
  --at "19|spawn:{bin} load --url http://127.0.0.1:{gate}/ --rate 3000 --duration 1s --patience 2s --json"
done; done
echo DONE3
