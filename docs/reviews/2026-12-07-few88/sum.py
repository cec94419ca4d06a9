import csv,sys,collections
tot=collections.Counter()
for s in range(int(sys.argv[1]),int(sys.argv[2])+1):
    d=sys.argv[3] if len(sys.argv)>3 else "t"
    tl=list(csv.DictReader(open(f"{d}{s}/timeline_few_slow_workers_3x.csv")))
    tr=list(csv.DictReader(open(f"{d}{s}/trace_few_slow_workers_3x.csv")))
    g=float(open(f"{d}{s}/scorecard.csv").read().split('\n')[1].split(',')[2])
    # classify each 0.1s: start(warming), probe (limit<5 & probing), low (limit<5 not probing), over (limit>6)
    c=collections.Counter()
    for r,l in zip(tr,tl):
        L=int(r['limit'])
        if r['phase']=='warming_up': c['warm']+=1
        elif L<5 and r['phase']=='probing': c['probe<5']+=1
        elif L<5: c['low<5']+=1
        elif L>6: c['over6']+=1
    probes=sum(1 for a,b in zip(tr,tr[1:]) if b['last_cause']=='probe' and b['last_ago_s']!=a['last_ago_s'] and float(b['last_ago_s'])<0.15)
    # the "loss" in slots: (5-L) for L<5
    loss=sum(max(0,5-int(r['limit'])) for r in tr if r['phase']!='warming_up')/5/1500
    print(s,f"{g:.4f}",dict(c),f"lossL<5={loss:.4f}")
    tot['g']+=g
