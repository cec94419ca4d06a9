#!/bin/bash
# Control calls from four loops at once while wrk runs through pool `api` (gate.toml):
# limits (2, 5 or 8), queue settings (a new limiter each time), reloads (the file's 4),
# close/open. The upstream must never see more than 8 at once.
A=${ADMIN:-127.0.0.1:9901}; G=${GATE:-127.0.0.1:8080}; D=${1:-8}
curl -s 127.0.0.1:9000/__stats > /dev/null   # resets the peak
wrk -t1 -c40 -d${D}s "http://$G/delay?ms=30" > /tmp/storm-wrk.out &
W=$!
END=$((SECONDS+D))
l1(){ n=0; while [ $SECONDS -lt $END ]; do c=$(shuf -e 2 5 8 -n1); curl -s -o /dev/null -XPUT $A/pools/api/limits -d "{\"max_concurrency\":$c}"; n=$((n+1)); done; echo "limits $n"; }
l2(){ n=0; while [ $SECONDS -lt $END ]; do q=$(shuf -e 0 5 50 -n1); t=$(shuf -e 200ms 1s -n1); curl -s -o /dev/null -XPUT $A/pools/api/limits -d "{\"max_queue\":$q,\"queue_timeout\":\"$t\"}"; n=$((n+1)); done; echo "queues $n"; }
l3(){ n=0; while [ $SECONDS -lt $END ]; do curl -s -o /dev/null -XPOST $A/reload; n=$((n+1)); done; echo "reloads $n"; }
l4(){ n=0; while [ $SECONDS -lt $END ]; do curl -s -o /dev/null -XPOST $A/pools/api/close; curl -s -o /dev/null -XPOST $A/pools/api/open; n=$((n+1)); done; echo "close/open $n"; }
l1 & l2 & l3 & l4 & wait $W; wait
sleep 1
echo "upstream: $(curl -s 127.0.0.1:9000/__stats)"
grep -E 'requests|Non-2|Socket' /tmp/storm-wrk.out
curl -s $A/status | python3 -c 'import json,sys; d=json.load(sys.stdin)["pools"]["api"]; print("after: limit",d["limit"],"closed",d["closed"],"in_flight",d["in_flight"],"queued",d["queued"]); print({a:b for a,b in d["counters"].items() if b})'
