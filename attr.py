import sys,csv
for d in sys.argv[1:]:
    rows=list(csv.DictReader(open(f'{d}/timeline_heavy_tail_3x.csv')))
    n=len(rows); a={'probe':0,'after':0,'other':0}
    last_probe=-99
    for i,r in enumerate(rows):
        lim=int(r['limit']); idle=max(0,50-int(r['upstream'])); t=float(r['t_s'])
        if lim<46: last_probe=t; a['probe']+=idle
        elif t-last_probe<=0.5: a['after']+=idle
        else: a['other']+=idle
    print(d, ' '.join(f'{k}:{v/n:.2f}' for k,v in a.items()))
