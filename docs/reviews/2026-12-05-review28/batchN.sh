#!/bin/bash
# N: SIGTERM (the gate's drain) at t = 8 s of an 800/s run, 50 x 50 ms; and the bursts of batch M were here too
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
for p in adaptive static:50; do
  one N-sigterm-b50-r800-${p/:/} --upstream "$U" --pool $p --load "--rate 800 --duration 12s --patience 2s" --at "8|gate-term"
  tail -3 results/N-sigterm-b50-r800-${p/:/}.gate.log | cut -c1-200
done
echo batchN done
