import csv,sys,collections
for s in sys.argv[1:]:
    d=f"t{s}"
    sc={r['algorithm']:r for r in csv.DictReader(open(f"{d}/scorecard.csv"))}
    tl=collections.defaultdict(list)
    for r in csv.DictReader(open(f"{d}/timeline_threaded_overload.csv")): tl[r['algorithm']].append(r)
    L=tl['littles']
    lim=collections.Counter(int(r['limit']) for r in L if float(r['t_s'])>=1)
    up=collections.Counter(int(r['upstream']) for r in L if float(r['t_s'])>=1)
    tot=sum(lim.values())
    print(s, 'p99x', sc['littles']['p99_per_unloaded'], sc['fixed_c']['p99_per_unloaded'], 'gp', sc['littles']['goodput_per_possible'], sc['fixed_c']['goodput_per_possible'],
      'lim', sorted((k,round(v/tot,2)) for k,v in lim.items() if v/tot>0.01))
