import csv,sys,collections
for s in sys.argv[1:]:
    d=f"d{s}"
    sc={r['algorithm']:r for r in csv.DictReader(open(f"{d}/scorecard.csv"))}
    tl=collections.defaultdict(list)
    for r in csv.DictReader(open(f"{d}/timeline_demo_2x.csv")): tl[r['algorithm']].append(r)
    tr=[r for r in csv.DictReader(open(f"{d}/trace_demo_2x.csv"))]
    L=tl['littles']; F=tl['fixed_c']
    n=min(len(L),len(F))
    # phases
    ph=collections.Counter(); loss=collections.Counter(); lim=collections.Counter()
    for i in range(n):
        p=tr[i]['phase'] if i<len(tr) else '?'
        t=float(L[i]['t_s'])
        key='start' if t<2 else p
        ph[key]+=1
        loss[key]+=int(F[i]['good'])-int(L[i]['good'])
        if t>=2: lim[int(L[i]['limit'])]+=1
    totF=sum(int(x['good']) for x in F[:n])
    print(s, sc['littles']['goodput_per_possible'], sc['fixed_c']['goodput_per_possible'], 'loss/fixed_c good:', {k:(ph[k],round(loss[k]/totF,4)) for k in ph})
    tot=sum(lim.values()); print('   limits', sorted((k,round(v/tot,2)) for k,v in lim.items() if v/tot>0.01))
