import collections,math
tot=collections.defaultdict(list)
for s in range(1,41):
    for l in open(f'/work/r94/d{s}.txt'):
        if not l.startswith('DBG94A'): continue
        _,t,rt,inf,lim,pr=l.split()
        t=float(t);rt=float(rt);inf=int(inf);lim=int(lim)
        if t<40 or pr=='1' or inf<lim: continue
        tot[lim].append(rt)
for L in sorted(tot):
    v=sorted(tot[L]); n=len(v)
    if n<200: continue
    q=lambda p: v[int(p*n)]
    print(L,n,'mean %.3f q05 %.3f q10 %.3f q25 %.3f q50 %.3f q75 %.3f'%(sum(v)/n,q(.05),q(.1),q(.25),q(.5),q(.75)))
