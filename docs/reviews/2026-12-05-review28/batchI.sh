#!/bin/bash
# I: more that an operator would do
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
# I1: a service that guards itself: 503 at once while 20 are in service (50 ms each: 400/s)
U='python3 pyup2.py --port {port} --latency 50ms --shed 20'
for r in 320 800; do for p in adaptive static:20 none; do
  one I1-shed20-r$r-${p/:/} --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
# I2: no queue at all (max_queue = 0: turn away at once), 50 x 50 ms, 500/s and 800/s
U='{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 50'
for r in 500 800; do for p in adaptive static:50; do
  one I2-noqueue-b50-r$r-${p/:/} --max-queue 0 --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s"
done; done
# I3: slow readers whose downloads end during the run: 8 clients, 1 MiB each, beside 500/s small
U3='python3 pyup2.py --port {port} --workers 20 --latency 20ms --big-path /big --big-bytes 1048576'
for p in adaptive static:20; do
  one I3-slowreaders-1m-${p/:/} --upstream "$U3" --pool $p --load "--rate 500 --duration 30s --patience 2s" --at "2|spawn:python3 slowclient.py {gate} /big 8 1000000 26"
  cut -c1-300 results/I3-slowreaders-1m-${p/:/}.spawn0.out
done
# I4: the defaults of F4 (queue_timeout 10 s) with queue_order = "lifo", as BENCHMARKS' *Impatient clients* suggests
UL='python3 pyup2.py --port {port} --workers 10 --latency 20ms --dist lognormal:1'
for p in adaptive static:10; do
  one I4-defaults-lifo-logn-r600-${p/:/} --queue-timeout 10s --extra 'queue_order = "lifo"' --upstream "$UL" --pool $p --load "--rate 600 --duration 20s --patience 2s"
done
# I5: G1 again with /status read every 0.1 s around the restart
one I5-b200-r2400-adaptive-raise-max-fine --sample-every 0.1 --upstream '{bin} upstream --listen 127.0.0.1:{port} --latency 50ms --workers 200' --pool adaptive --load "--rate 2400 --duration 20s --patience 2s" --at "10|pool:adaptive:max=5000"
echo batchI done
