#!/bin/bash
# $1 = which loop, runs until $2 (epoch s)
A=127.0.0.1:19909; end=$2; n=0; codes=""
while [ $(date +%s) -lt $end ]; do
  case $1 in
    limits) v=$((RANDOM % 12)); c=$(curl -s -o /dev/null -w '%{http_code}' -X PUT $A/pools/api/limits -d "{\"max_concurrency\": $v}");;
    queue)  v=$((RANDOM % 50)); c=$(curl -s -o /dev/null -w '%{http_code}' -X PUT $A/pools/api/limits -d "{\"max_queue\": $v, \"queue_timeout\": \"$((RANDOM%3+1))s\"}");;
    adapt)  v=$((RANDOM % 12 + 1)); c=$(curl -s -o /dev/null -w '%{http_code}' -X PUT $A/pools/ad/limits -d "{\"max_concurrency\": $v}");;
    reload) c=$(curl -s -o /dev/null -w '%{http_code}' -X POST $A/reload);;
    closeopen) c=$(curl -s -o /dev/null -w '%{http_code}' -X POST $A/pools/ad/close)$(curl -s -o /dev/null -w '%{http_code}' -X POST $A/pools/ad/open);;
    rewrite) m=$((RANDOM % 10 + 1)); sed "s/^max_concurrency = .*/max_concurrency = $m/" conc.toml > conc.toml.new && mv conc.toml.new conc.toml; kill -HUP $(cat gc.pid); c=hup;;
  esac
  n=$((n+1)); codes="$codes $c"
done
echo "$1: $n calls; codes: $(echo $codes | tr ' ' '\n' | sort | uniq -c | tr '\n' ' ')"
