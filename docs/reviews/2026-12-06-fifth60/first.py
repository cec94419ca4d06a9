import re,sys,statistics as st
# For each seed: last came_back after 50 s; probes after it: reading rt, min_rt before, limit, shallow, decided, drained
d=sys.argv[1]
rows=[]
for s in range(int(sys.argv[2]),int(sys.argv[3])+1):
    L=open(f'{d}/{s}.txt').read().splitlines()
    cb=[l for l in L if 'came_back' in l and float(re.search(r't=([\d.]+)',l).group(1))>50]
    if not cb: continue
    tcb=float(re.search(r't=([\d.]+)',cb[0]).group(1))
    pr=[]
    for l in L:
        if 'finish' not in l: continue
        t=float(re.search(r' t=([\d.]+)',l).group(1)); st_=float(re.search(r'start=([\d.]+)',l).group(1))
        if st_<tcb: continue
        def f(k):
            m=re.search(k+r'=Some\(([\d.]+)(m|µ)s\)',l) or re.search(k+r'=([\d.]+)(m|µ)s',l)
            return float(m.group(1))*(1 if m.group(2)=='m' else 1e-3) if m else None
        pr.append(dict(start=st_,lim=int(re.search(r'limit=(\d+)',l).group(1)),rt=f(' rt'),mrt=f('min_rt'),
            sh=' shallow=true' in l, dec='decided=true' in l, dr='drained=true' in l, check='check=true' in l, passes=int(re.search(r'passes=(\d+)',l).group(1))))
    rows.append((s,tcb,pr))
for s,tcb,pr in rows:
    print(s, f'cb={tcb:.2f}', ' ; '.join(f"{p['start']-tcb:+.2f}s L{p['lim']}{'S' if p['sh'] else ''}{'D' if p['dec'] else ''}{'d' if p['dr'] else ''} {p['rt']:.1f}/{p['mrt']:.1f} n{p['passes']}" if p['rt'] else f"{p['start']-tcb:+.2f} blind" for p in pr[:4]))
# stats: first probe's reading vs later probes
f=[p[0]['rt'] for _,_,p in rows if p and p[0]['rt']]; later=[q['rt'] for _,_,p in rows for q in p[1:] if q['rt']]
m0=[p[0]['mrt'] for _,_,p in rows if p and p[0]['mrt']]
print('first probe reading mean', round(st.mean(f),2), 'n', len(f), '| later', round(st.mean(later),2), 'n',len(later), '| min RT before first', round(st.mean(m0),2))
