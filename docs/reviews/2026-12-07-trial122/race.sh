#!/bin/bash
# race.sh RUN: wrk load + admin changes + reloads + SIGHUP, then SIGTERM amid them
cd /tmp/t122; GATE=/work/tgt-trial122/release/sluicegate; run=$1
$GATE serve --config race.toml > race.$run.log 2>&1 & gp=$!
sleep 0.5
wrk -t1 -c32 -d6s http://127.0.0.1:22380/x > wrk.st.$run 2>&1 & w1=$!
wrk -t1 -c32 -d6s http://127.0.0.1:22380/ad/x > wrk.ad.$run 2>&1 & w2=$!
end=$((SECONDS+4)); n=0
while [ $SECONDS -lt $end ]; do
  for p in st ad; do
    curl -s -o /dev/null -X PUT 127.0.0.1:22390/pools/$p/limits -d "{\"max_concurrency\": $((RANDOM%10))}" &
    curl -s -o /dev/null -X PUT 127.0.0.1:22390/pools/$p/limits -d "{\"max_queue\": $((RANDOM%50)), \"queue_timeout\": \"$((1+RANDOM%3))s\"}" &
    curl -s -o /dev/null -X POST 127.0.0.1:22390/pools/$p/close &
    curl -s -o /dev/null -X POST 127.0.0.1:22390/pools/$p/open &
  done
  curl -s -o /dev/null -X POST 127.0.0.1:22390/reload &
  kill -HUP $gp
  n=$((n+1)); wait_n=$(jobs -r | wc -l); sleep 0.02
done
t0=$(date +%s.%N)
kill -TERM $gp; kill -HUP $gp; curl -s -X POST 127.0.0.1:22390/reload -o /dev/null -w "reload during drain: %{http_code}\n"; curl -s -X PUT 127.0.0.1:22390/pools/st/limits -d '{"max_concurrency": 3}' -o /dev/null -w "put during drain: %{http_code}\n"
wait $gp; rc=$?; t1=$(date +%s.%N)
wait $w1 $w2
echo "run $run: rounds $n, exit $rc after $(python3 -c "print('%.2f' % ($t1-$t0))") s; panics: $(grep -ci panic race.$run.log); errors: $(grep -c ERROR race.$run.log)"
grep -E "grace|drain|stopping" race.$run.log | tail -3 | cut -c1-250
