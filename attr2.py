import sys,csv
for d in sys.argv[1:]:
    rows=list(csv.DictReader(open(f'{d}/timeline_heavy_tail_3x.csv')))
    n=len(rows); a={'half':0,'shallow':0,'nh':0,'ns':0}
    for r in rows:
        lim=int(r['limit']); idle=max(0,50-int(r['upstream']))
        if lim<32: a['half']+=idle; a['nh']+=1
        elif lim<46: a['shallow']+=idle; a['ns']+=1
    print(d, f"half {a['half']/n:.2f} ({a['nh']} ticks) shallow {a['shallow']/n:.2f} ({a['ns']} ticks)")
