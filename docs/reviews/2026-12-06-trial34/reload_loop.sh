#!/bin/bash
# Rewrites gate-r.toml (atomic mv) with alternating limits / queue settings and reloads,
# through POST /reload and SIGHUP alternately, for $1 seconds.
D=$(dirname "$0"); END=$((SECONDS+${1:-8})); i=0
while [ $SECONDS -lt $END ]; do
  i=$((i+1)); c=$(( (i % 2) ? 4 : 8 )); q=$(( (i % 3) ? 20 : 30 ))
  sed -e "s/^max_concurrency = 4$/max_concurrency = $c/" -e "s/^max_queue = 20$/max_queue = $q/" "$D/gate.toml" > "$D/gate-r.toml.new"
  mv "$D/gate-r.toml.new" "$D/gate-r.toml"
  if (( i % 2 )); then curl -s -XPOST 127.0.0.1:9901/reload -o /dev/null -w '%{http_code} '; else kill -HUP $(cat /tmp/gate.pid); fi
  sleep 0.05
done
echo; echo "reloads: $i"
