import csv,sys,collections
f=sys.argv[1]; W=float(sys.argv[2]) if len(sys.argv)>2 else 5
rows=list(csv.DictReader(open(f)))
algos=sorted(set(r['algorithm'] for r in rows))
agg=collections.defaultdict(lambda: collections.defaultdict(float))
for r in rows:
    w=int(float(r['t_s'])//W)
    a=agg[(r['algorithm'],w)]
    a['n']+=1
    for k in ['limit','in_flight','queued','upstream']: a[k]+=float(r[k])
    for k in ['rejected','queue_timeouts','shed','good','late']: a[k]+=float(r[k])
ws=sorted(set(k[1] for k in agg))
print('t    '+' | '.join(f'{a[:8]:>8}: lim  inf  ups good late' for a in algos))
tot=collections.defaultdict(lambda: collections.defaultdict(float))
for w in ws:
    s=f'{w*W:4.0f} '
    for al in algos:
        a=agg[(al,w)]; n=a['n'] or 1
        s+=f' | {"":>8}  {a["limit"]/n:4.1f} {a["in_flight"]/n:4.1f} {a["upstream"]/n:4.1f} {a["good"]:4.0f} {a["late"]:4.0f}'
        for k in ['good','late']: tot[al][k]+=a[k]
    print(s)
for al in algos: print(al, dict(tot[al]))
