#!/bin/bash
# D: the gate with workers = 2; two routes sharing one adaptive pool
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
for r in 500 1500; do for p in adaptive static:50; do
  one D1-gw2-b50-r$r-${p/:/} --gate-workers 2 --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
one D1-gw2-logn-r600-adaptive --gate-workers 2 --upstream 'python3 pyup2.py --port {port} --workers 10 --latency 20ms --dist lognormal:1' --pool adaptive --load "--rate 600 --duration 20s --patience 2s"
# D2: /fast (10 ms) and /slow (500 ms) to one pool in front of 20 workers
U='python3 pyup2.py --port {port} --workers 20 --latency 10ms --slow-path /slow --slow-latency 500ms'
for mix in "300 20" "600 40"; do set -- $mix; for p in adaptive static:20 none; do
  one D2-routes-f$1-s$2-${p/:/} --route /fast --route /slow --upstream "$U" --pool $p \
    --load "/fast|--rate $1 --duration 20s --patience 2s" --load "/slow|--rate $2 --duration 20s --patience 2s"
  sed -n 2p results/D2-routes-f$1-s$2-${p/:/}.out | cut -c1-200
done; done
echo batchD done
