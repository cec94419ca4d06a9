#!/bin/bash
# As redis_blip.sh, sampling the upstream's requests in flight every 100 ms after Redis is
# continued (up.py counts its own /__stats call: the numbers below have it taken off), with
# each gate's store state.
R=$(cat /tmp/redis.pid)
wrk -t1 -c20 -d${DUR:-9}s 'http://127.0.0.1:8111/delay?ms=400' > /tmp/gw1.out &
wrk -t1 -c20 -d${DUR:-9}s 'http://127.0.0.1:8112/delay?ms=400' > /tmp/gw2.out &
sleep 2.5; kill -STOP $R; sleep 2; kill -CONT $R; T0=$(date +%s%N)
for i in $(seq 1 40); do
  s=$(curl -s 127.0.0.1:9000/__stats | awk '{print $4}')
  u1=$(curl -s 127.0.0.1:9931/status | python3 -c 'import json,sys; j=json.load(sys.stdin); print("up" if j["store"]["up"] else "down", j["pools"]["g"]["in_flight"])')
  u2=$(curl -s 127.0.0.1:9932/status | python3 -c 'import json,sys; j=json.load(sys.stdin); print("up" if j["store"]["up"] else "down", j["pools"]["g"]["in_flight"])')
  z=$(redis-cli -p 6390 zcard "{sluicegate:g}:leases")
  echo "+$(( ($(date +%s%N) - T0) / 1000000 ))ms upstream in flight $s | leases in redis $z | gate1 $u1 | gate2 $u2"
  sleep 0.02
done
wait
