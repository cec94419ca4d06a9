#!/bin/bash
# A: DB-like contention, no worker cap: service = 20 ms x (1 + 0.1 x in_service) (asymptote 500/s)
cd "$(dirname "$0")"
U='python3 pyup2.py --port {port} --latency 20ms --contention 0.1'
for r in 200 350 600; do
  for p in adaptive static:20 static:50 none; do
    n=A-cont-r$r-${p/:/}
    python3 run2.py $n --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s" > results/$n.out 2>&1
    head -1 results/$n.out | cut -c1-220; sed -n 3p results/$n.out
  done
done
echo batchA done
