#!/bin/bash
# adl.sh LONG N: 100 req/s of 20 ms work for 40 s; at 10 s, N requests to LONG (held 20 s)
cd /tmp/t122; G=/work/tgt-trial122/release/sluicegate
$G load --url "http://127.0.0.1:22180/adl/work?ms=20" --rate 100 --duration 40s --json > adl.load.json 2>&1 &
lp=$!
for t in $(seq 0 2 42); do
  if [ $t = 10 ]; then for i in $(seq $2); do curl -s -o /dev/null -m 60 -w "long %{http_code} %{time_total}\n" "127.0.0.1:22180/adl/$1" >> adl.long & done; fi
  curl -s 127.0.0.1:22190/status | python3 -c "
import json,sys; d=json.load(sys.stdin)['pools']['adl']; s=(d['adaptive'] or {}).get('state',{}); c=d['counters']
print('t=$t limit',d['limit'],'in_flight',d['in_flight'],'queued',d['queued'],'phase',s.get('phase'),'min_rt',s.get('min_rt_ms'),'q',s.get('queue'),'fwd',c['forwarded'],'qfull',c.get('queue_full'),'qto',c.get('queue_timeout'),'pred',c.get('predicted_timeout'), 'last', s.get('last_change'))"
  sleep 2
done
wait $lp; cat adl.load.json | cut -c1-600
