import re,sys
cur={}; tot={}
for line in open(sys.argv[1]):
    seed,kind,rest=line.split(' ',2)
    d=dict(re.findall(r'(\w+)=(\S+)',rest))
    if kind=='PSTART': cur[seed]=d
    else:
        st=cur.get(seed,{})
        lim=int(d['limit']); held=float(d['held'])
        cost=max(10-lim,0)/10*held
        tot[seed]=tot.get(seed,0)+cost
        m=re.search(r'([\d.]+)(m?)s',d['mean']); mean=float(m.group(1))/(1000 if m.group(2) else 1)
        print(f"{seed:4} t={float(d['start']):6.1f} base={st.get('base')} busy_w={st.get('busy_w')} oldlim={st.get('limit')} depth={lim} held={held:5.1f} dec={d['decided'][0]} n={d['n']:>4} drained={d['drained'][0]} mean={mean:.3f} cost={cost:.1f}s")
print(" ".join(f"{k}:{v:.1f}" for k,v in tot.items()), "sum", round(sum(tot.values()),1))
