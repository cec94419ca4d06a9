#!/bin/bash
# capacity_fifth with --trace on seeds 1-30 into /tmp/f49/NAME/tS (main first: ./runall.sh main),
# then per set: mean goodput and worst fall / return against /tmp/f49/main.sum, and the seeds that moved.
# runall.sh NAME [ENV=V...]
n=$1; shift
S=/work/tgt-rev37/release/sluicegate-sim
mkdir -p /tmp/f49/$n
for s in $(seq 1 30); do env "$@" $S scorecard --scenario capacity_fifth --algo littles --seed $s --trace --out /tmp/f49/$n/t$s -q >/dev/null 2>&1; done
for s in $(seq 1 30); do c=$(grep '^| capacity_fifth' /tmp/f49/$n/t$s/scorecard.md | head -1 | awk -F'|' '{print $4, $9}'); echo "$s $c"; done > /tmp/f49/$n.sum
python3 - "$n" <<'PY'
import sys,re
n=sys.argv[1]
def load(f):
    out={}
    for l in open(f):
        p=l.split()
        out[int(p[0])]=(float(p[1]),float(p[2]),float(p[5]) if p[5]!='never' else 99)
    return out
a=load('/tmp/f49/main.sum'); b=load(f'/tmp/f49/{n}.sum')
for k in range(6):
    ss=range(5*k+1,5*k+6)
    ga=sum(a[s][0] for s in ss)/5; gb=sum(b[s][0] for s in ss)/5
    fa=max(a[s][1] for s in ss); fb=max(b[s][1] for s in ss)
    ra=max(a[s][2] for s in ss); rb=max(b[s][2] for s in ss)
    print(f"{5*k+1}-{5*k+5}: goodput {ga:.4f} -> {gb:.4f}  fall {fa} -> {fb}  return {ra} -> {rb}")
for s in range(1,31):
    if a[s]!=b[s]: print(s,a[s],'->',b[s])
PY
