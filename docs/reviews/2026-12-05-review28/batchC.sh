#!/bin/bash
# C: a new upstream connection per request (Connection: close / HTTP/1.0), and bodies streamed slowly
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
# C1: 20 workers x 50 ms fixed (400/s), Connection: close on every answer
U='python3 pyup2.py --port {port} --workers 20 --latency 50ms --close'
for r in 200 320 800; do for p in adaptive static:20 none; do
  one C1-close-r$r-${p/:/} --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
# C1b: HTTP/1.0 answers, no length (the body ends at close)
U='python3 pyup2.py --port {port} --workers 20 --latency 50ms --http10'
for r in 320 800; do for p in adaptive static:20; do
  one C1-http10-r$r-${p/:/} --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
# C2: 20 workers, head after 10 ms then 64 KiB over 200 ms (210 ms a request: 95/s)
U='python3 pyup2.py --port {port} --workers 20 --latency 10ms --body-bytes 65536 --body-ms 200'
for r in 50 76 190; do for p in adaptive static:20 none; do
  one C2-stream-r$r-${p/:/} --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 3s"
done; done
# C2b: the same body, no worker cap: does the upstream see more than the limit while bodies stream?
U='python3 pyup2.py --port {port} --workers 0 --latency 10ms --body-bytes 65536 --body-ms 200'
for p in static:10 adaptive:max=10 adaptive; do
  one C2-stream-nocap-r100-${p/[:=]/}  --upstream "$U" --pool $p --load "--rate 100 --duration 20s --patience 3s"
done
echo batchC done
