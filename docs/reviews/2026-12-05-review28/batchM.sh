#!/bin/bash
# M: bursty traffic: 300/s (0.3x) all along, plus 1 s bursts of +1500/s every 4 s; 50 x 50 ms
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
B='spawn:for i in 1 2 3 4; do sleep 3; {bin} load --url http://127.0.0.1:{gate}/ --rate 1500 --duration 1s --patience 2s --json; done'
for p in adaptive static:50 none; do
  one M-bursts-b50-${p/:/} --upstream "$U" --pool $p --load "--rate 300 --duration 20s --patience 2s" --at "1|$B"
  cut -c1-160 results/M-bursts-b50-${p/:/}.spawn0.out
done
echo batchM done
