#!/usr/bin/env bash
set -e
BIN=$1; TAG=$2
valgrind --tool=callgrind --callgrind-out-file=/tmp/cg/$TAG.cg $BIN serve --listen 127.0.0.1:22281 --upstream http://127.0.0.1:22112 --max-concurrency 100000 --max-queue 100000 --queue-timeout 10s --workers 1 > /tmp/cg/$TAG.log 2>&1 &
P=$!
for _ in $(seq 150); do sleep 0.2; curl -s -o /dev/null http://127.0.0.1:22281/ && break; done
callgrind_control -z $P >/dev/null
wrk -t1 -c16 -d6s http://127.0.0.1:22281/ > /tmp/cg/$TAG.wrk
callgrind_control -d $P > /dev/null
kill -INT $P; sleep 2; kill $P 2>/dev/null || true; wait $P 2>/dev/null || true
n=$(grep -oP '\d+(?= requests in)' /tmp/cg/$TAG.wrk)
ir=$(for f in /tmp/cg/$TAG.cg.*; do grep -ohP '(?<=^summary: )\d+|(?<=^totals: )\d+' $f | head -1; done | sort -n | tail -1)
echo "$TAG requests $n instr/request $((ir / n))"
