import csv,sys
# steady state after return: idle worker-seconds (50 - in_flight)+, good, late, per run
t0,t1=float(sys.argv[1]),float(sys.argv[2])
for d in sys.argv[4:]:
    s=sys.argv[3]
    idle=good=late=0; lim=0;n=0
    for r in csv.DictReader(open(f'{d}/t{s}/timeline_capacity_fifth.csv')):
        t=float(r['t_s'])
        if t0<=t<t1:
            idle+=max(0,50-int(r['upstream']))*0.1; good+=int(r['good']); late+=int(r['late']); lim+=int(r['limit']); n+=1
    print(d, s, f'idle worker-s {idle:.1f} good {good} late {late} mean limit {lim/n:.1f}')
