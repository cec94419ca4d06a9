#!/usr/bin/env bash
# instructions per request of a gate binary with 2000 host routes, for Host $2
set -e
BIN=$1; HOST=$2; TAG=$3
python3 - <<'PY'
out = ['listen = "127.0.0.1:22280"', 'workers = 1', '[admin]', 'listen = "127.0.0.1:22290"']
for i in range(2000):
    out += ['[[pools]]', f'name = "p{i}"', 'upstream = "http://127.0.0.1:22112"', 'max_concurrency = 64']
for i in range(2000):
    out += ['[[routes]]', f'pool = "p{i}"', f'host = "h{i}.example"']
open('/tmp/cg/many.toml', 'w').write('\n'.join(out) + '\n')
PY
valgrind --tool=callgrind --callgrind-out-file=/tmp/cg/$TAG.cg $BIN serve --config /tmp/cg/many.toml > /tmp/cg/$TAG.log 2>&1 &
P=$!
for _ in $(seq 150); do sleep 0.2; curl -s -o /dev/null -H "Host: $HOST" http://127.0.0.1:22280/ && break; done
callgrind_control -z $P >/dev/null
wrk -t1 -c16 -d6s -H "Host: $HOST" http://127.0.0.1:22280/ > /tmp/cg/$TAG.wrk
callgrind_control -d $P > /dev/null
kill -INT $P; sleep 2; kill $P 2>/dev/null || true; wait $P 2>/dev/null || true
n=$(grep -oP '\d+(?= requests in)' /tmp/cg/$TAG.wrk)
ir=$(for f in /tmp/cg/$TAG.cg.*; do grep -ohP '(?<=^summary: )\d+|(?<=^totals: )\d+' $f | head -1; done | sort -n | tail -1)
echo "$TAG $HOST requests $n instr/request $((ir / n))"
