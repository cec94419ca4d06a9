#!/bin/bash
# first probe per seed: start t, base -> depth, min RT before/after (ms); C108 from env
s=$1; B=/work/tgt-cap108/release/sluicegate-sim; o=/tmp/c108/fp/$C108/$s
nice -n 10 $B scorecard --scenario report_generator_1.5x --algo littles --seed $s --trace --out $o -q >/dev/null 2>&1
python3 - $o/trace_report_generator_1.5x.csv $s <<'P'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
st=None
for i,r in enumerate(rows):
    if st is None and r['phase']=='probing':
        st=(r['t_s'],rows[i-1]['limit'],r['limit'],r['min_rt_ms'])
    if st and r['min_rt_ms']!=st[3]:
        print(sys.argv[2],st[0],st[1],st[2],st[3],r['min_rt_ms'],r['t_s']); break
P
rm -rf $o
