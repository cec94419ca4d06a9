#!/bin/bash
# cpureq.sh PID URL HOST : gate CPU µs per request over a 4 s wrk run
pid=$1; url=$2; host=$3
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
r=$(wrk -t1 -c16 -d4s -H "Host: $host" $url | awk '/^Requests\/sec/{print $2} / requests in /{print $1}' | head -1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
tck=$(getconf CLK_TCK)
python3 -c "print('$host requests=%s cpu_us_per_req=%.1f' % ($r, ($t1-$t0)*1e6/$tck/$r))"
