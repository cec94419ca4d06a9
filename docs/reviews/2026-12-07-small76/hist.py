import sys,collections
for f in sys.argv[1:]:
    h=collections.defaultdict(collections.Counter)
    for line in open(f):
        p=line.split()
        if p[0]!='A': continue
        t,busy,inf,lim,pr=float(p[1]),int(p[2]),int(p[3]),int(p[4]),int(p[5])
        if t<10 or pr: continue
        h[lim][busy]+=1
    print(f)
    for lim in sorted(h):
        c=h[lim]; n=sum(c.values())
        if n<30: continue
        top=sorted(c)[-6:]
        print(f"  limit {lim}: n={n} top counts "+' '.join(f"{k}:{c[k]}" for k in top))
