#!/bin/bash
# F: what else an operator would do
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
UC='python3 pyup2.py --port {port} --latency 20ms --contention 0.1'
# F1: the contention service at 350/s again: a second run, other algorithms, and the floor as a workaround
for p in adaptive adaptive:algorithm=gradient2 adaptive:algorithm=vegas adaptive:algorithm=aimd adaptive:min=30; do
  one F1-cont-r350-${p//[:=,]/-} --upstream "$UC" --pool $p --load "--rate 350 --duration 20s --patience 2s"
done
# F2: contention that thrashes: 20 ms x (1 + 0.0025 n^2): throughput peaks at n = 20 (500/s), 400/s at 40, 300/s at 60
U2='python3 pyup2.py --port {port} --latency 20ms --contention 0.0025 --contention-exp 2'
for r in 400 1000; do for p in adaptive static:20 none; do
  one F2-thrash-r$r-${p/:/} --upstream "$U2" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
# F3: clients that download 8 MiB at 1 MB/s (4 of them from t = 3 s) beside 500/s of small requests; 20 workers x 20 ms
U3='python3 pyup2.py --port {port} --workers 20 --latency 20ms --big-path /big --big-bytes 8388608'
for p in adaptive static:20; do
  one F3-slowreaders-${p/:/} --upstream "$U3" --pool $p --load "--rate 500 --duration 20s --patience 2s" --at "3|spawn:python3 slowclient.py {gate} /big 4 1000000 15"
  cat results/F3-slowreaders-${p/:/}.spawn0.out | cut -c1-200
done
# F4: the defaults an operator leaves (queue_timeout 10 s, max_queue 1024), clients patient 2 s: lognormal 2x
UL='python3 pyup2.py --port {port} --workers 10 --latency 20ms --dist lognormal:1'
for p in adaptive static:10; do
  one F4-defaults-logn-r600-${p/:/} --queue-timeout 10s --upstream "$UL" --pool $p --load "--rate 600 --duration 20s --patience 2s"
done
# F5: the same as D1-gw2-b50-r1500 with workers = 1 (is the standing queue above 50 workers the threads'?)
one F5-gw1-b50-r1500-adaptive --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50' --pool adaptive --load "--rate 1500 --duration 20s --patience 2s"
echo batchF done
