#!/bin/bash
# Two gates share a global pool `g` (max_concurrency 4, instances 2: a local share of 2 each)
# through redis on 6390 (global1.toml, global2.toml). 20 clients per gate loop 400 ms requests;
# Redis is stopped (SIGSTOP) for 2 s, then continued. up.py's peak is read (and reset) at
# each phase's end: before, during the outage, and the 1.5 s after it.
R=$(cat /tmp/redis.pid)
curl -s 127.0.0.1:9000/__stats > /dev/null
wrk -t1 -c20 -d8s 'http://127.0.0.1:8111/delay?ms=400' > /tmp/gw1.out &
wrk -t1 -c20 -d8s 'http://127.0.0.1:8112/delay?ms=400' > /tmp/gw2.out &
sleep 2.5; echo "before:        $(curl -s 127.0.0.1:9000/__stats)"
kill -STOP $R; sleep 2
echo "redis stopped: $(curl -s 127.0.0.1:9000/__stats)"
kill -CONT $R
for i in 1 2 3; do sleep 0.5; echo "redis back +${i}x0.5s: $(curl -s 127.0.0.1:9000/__stats)"; done
wait
