#!/usr/bin/env bash
# ou.sh VARIANT FIRST LAST: mean over/under the 10 workers (time-averaged after 20 s)
v=$1; a=$2; b=$3
for s in $(seq $a $b); do R94=$v DBG94=1 ./sim-tog scorecard --scenario report_generator_1.5x --algo littles --seed $s --out /tmp/r94-ou -q 2>&1 | grep DBG94N | python3 -c "
import sys,collections
ev=[(float(l.split()[1][2:]),int(l.split()[4])) for l in sys.stdin]
c=collections.Counter()
for (t0,L),(t1,_) in zip(ev,ev[1:]+[(300.0,0)]):
    if t1<=20: continue
    c[L]+=min(t1,300)-max(t0,20)
tot=sum(c.values())
print($s, '%.3f %.3f'%(sum((k-10)*v for k,v in c.items() if k>10)/tot, sum((10-k)*v for k,v in c.items() if k<10)/tot))
"; done | awk '{o+=$2;u+=$3;n++} END{printf "over %.3f under %.3f (n=%d)\n", o/n,u/n,n}'
