# Per seed of capacity_fifth (DIR/tS/ from runall.sh): when the slow start restarted before 49.9 s.
import csv,sys
d=sys.argv[1]
out=[]
for seed in range(1,31):
    tr=[r for r in csv.DictReader(open(f'{d}/t{seed}/trace_capacity_fifth.csv')) if r['algorithm']=='littles']
    rs=[float(r['t_s']) for r in tr if r['phase']=='restarting']
    o=[];prev=None
    for t in rs:
        if prev is None or t-prev>0.15: o.append(t)
        prev=t
    f=[t for t in o if t<49.9]
    if f: out.append(f"{seed}:{f}")
print(d,'restarts before 49.9 s:',' '.join(out))
