# Per seed of capacity_fifth (DIR/tS/ from runall.sh): when the return restarted the slow start, when the limit
# first reached 40, answers in time in 50-51 s, and the limit at 49.9 s and 51 s.
import csv,sys
d=sys.argv[1]
for seed in range(1,31):
    tr=[r for r in csv.DictReader(open(f'{d}/t{seed}/trace_capacity_fifth.csv')) if r['algorithm']=='littles']
    tl=[r for r in csv.DictReader(open(f'{d}/t{seed}/timeline_capacity_fifth.csv')) if r['algorithm']=='littles']
    restart=next((float(r['t_s']) for r in tr if float(r['t_s'])>=50 and r['phase']=='restarting'),None)
    probes=[float(r['t_s']) for r in tr if 49<=float(r['t_s'])<54 and r['last_cause']=='probe' and r['last_ago_s'] and float(r['last_ago_s'])<0.1]
    lim=[int(r['limit']) for r in tl if 49.9<=float(r['t_s'])<51]
    reach40=next((float(r['t_s']) for r in tl if float(r['t_s'])>=50 and int(r['limit'])>=40),None)
    good=sum(int(r['good']) for r in tl if 50<=float(r['t_s'])<51)
    print(seed,'restart',restart,'>=40 at',reach40,'good50-51',good,'lims',lim[0],lim[-1],'probes',probes[:3], 'minrt',tr[495]['min_rt_ms'],tr[505]['min_rt_ms'])
