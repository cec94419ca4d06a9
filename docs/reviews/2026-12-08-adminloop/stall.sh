#!/usr/bin/env bash
# proxied latency while /dashboard/samples is fetched three times, 2000 pools, samples of $2 s
BIN=$1; WAIT=$2; TAG=$3
$BIN upstream --listen 127.0.0.1:22112 --latency 0ms > /tmp/cg/up-$TAG.log 2>&1 & U=$!
$BIN serve --config /tmp/cg/many.toml > /tmp/cg/$TAG.log 2>&1 & P=$!
sleep $WAIT
wrk -t1 -c4 -d4s --latency -H "Host: h5.example" http://127.0.0.1:22280/ > /tmp/cg/$TAG-first.wrk
size=$(curl -s -o /dev/null -w '%{size_download}' http://127.0.0.1:22290/dashboard/samples)
wrk -t1 -c4 -d8s --latency -H "Host: h5.example" http://127.0.0.1:22280/ > /tmp/cg/$TAG-busy.wrk & W=$!
sleep 1; for i in $(seq ${FETCHES:-3}); do curl -s -o /dev/null http://127.0.0.1:22290/dashboard/samples; sleep 1; done
wait $W
wrk -t1 -c4 -d4s --latency -H "Host: h5.example" http://127.0.0.1:22280/ > /tmp/cg/$TAG-alone.wrk
kill $P $U; wait $P $U 2>/dev/null
echo "$TAG samples $size B; first: $(grep -E "^ +99%" /tmp/cg/$TAG-first.wrk | xargs); alone: $(grep -E '^ +99%' /tmp/cg/$TAG-alone.wrk | xargs) max $(grep Latency /tmp/cg/$TAG-alone.wrk | awk '{print $4}'); with fetches: $(grep -E '^ +99%' /tmp/cg/$TAG-busy.wrk | xargs) max $(grep Latency /tmp/cg/$TAG-busy.wrk | awk '{print $4}')"
