#!/bin/sh
# Capacity returns, with Rust upstreams only: the pool's upstream is switched by a reload
# from a 10-worker to a 50-worker `sluicegate upstream` (50 ms) at t=10 s, under 1500 req/s.
# Prints the limit once a second. Usage: reload_capacity.sh [adaptive|static]
B=$(cd "$(dirname "$0")/../../.." && pwd)/target/release/sluicegate
D=$(mktemp -d)
KIND=${1:-adaptive}
$B upstream --listen 127.0.0.1:19110 --latency 50ms --workers 10 >/dev/null 2>&1 & U1=$!
$B upstream --listen 127.0.0.1:19150 --latency 50ms --workers 50 >/dev/null 2>&1 & U2=$!
if [ "$KIND" = adaptive ]; then LIM='[pools.adaptive]'; else LIM='max_concurrency = 10'; fi
cfg() { printf 'listen = "127.0.0.1:19180"\nworkers = 1\n[admin]\nlisten = "127.0.0.1:19181"\n[[pools]]\nname = "p"\nupstream = "http://127.0.0.1:%s"\nqueue_timeout = "1s"\n%s\n[[routes]]\npool = "p"\n' "$1" "$LIM" > $D/g.toml.new; mv $D/g.toml.new $D/g.toml; }
cfg 19110
$B serve --config $D/g.toml 2>$D/gate.log & G=$!
sleep 0.5
$B load --url http://127.0.0.1:19180/ --rate 1500 --duration 25s --patience 2s --json > $D/load.json & L=$!
for i in $(seq 1 26); do
  sleep 1
  [ $i = 10 ] && { cfg 19150; curl -s -X POST 127.0.0.1:19181/reload >/dev/null; }
  printf '%s ' "$(curl -s 127.0.0.1:19181/metrics | awk '/^sluicegate_pool_limit/ {print $2}')"
done; echo
wait $L; cut -c1-260 $D/load.json
curl -s 127.0.0.1:19150/__upstream/stats | cut -c1-80; echo
grep -i reload $D/gate.log | head -3
kill $G $U1 $U2; wait 2>/dev/null; rm -rf $D
