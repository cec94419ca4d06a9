import sys,collections,math
tot=collections.defaultdict(lambda:[0,0.0,0.0])
for s in range(1,41):
    lv=collections.defaultdict(lambda:[0,0.0,0.0])
    for l in open(f'/work/r94/d{s}.txt'):
        if not l.startswith('DBG94A'): continue
        _,t,rt,inf,lim,pr=l.split()
        t=float(t);rt=float(rt);inf=int(inf);lim=int(lim)
        if t<40 or pr=='1' or inf<lim: continue
        for d in (lv,tot):
            d[lim][0]+=1; d[lim][1]+=rt; d[lim][2]+=rt*rt
    out=[]
    for L in sorted(lv):
        n,sm,sq=lv[L]
        if n<20: continue
        out.append(f"{L}:{n}:{sm/n:.2f}")
    print(s,' '.join(out))
print('all',' '.join(f"{L}:{n}:{sm/n:.3f}±{math.sqrt(sq/n-(sm/n)**2)/math.sqrt(n):.3f}" for L,(n,sm,sq) in sorted(tot.items())))
