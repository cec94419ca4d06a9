#!/bin/bash
# usage: var.sh TAG SC FROM TO  (env passed through)
TAG=$1; SC=$2; A=$3; Z=$4
B=/work/tgt-few88/release/sluicegate-sim
mkdir -p v/$TAG
for s in $(seq $A $Z); do $B scorecard --scenario $SC --algo littles --seed $s --out v/$TAG/$SC-$s -q >/dev/null 2>&1; done
python3 - $TAG $SC $A $Z <<'PY'
import sys
tag,sc,a,z=sys.argv[1],sys.argv[2],int(sys.argv[3]),int(sys.argv[4])
g=[float(open(f"v/{tag}/{sc}-{s}/scorecard.csv").read().split('\n')[1].split(',')[2]) for s in range(a,z+1)]
sets=[sum(g[i:i+5])/5 for i in range(0,len(g),5)]
print(tag,sc,"sets:"," ".join(f"{x:.3f}" for x in sets),f"mean {sum(g)/len(g):.4f}")
PY
