import sys,collections
v=sys.argv[1]
c=collections.Counter(); cost=collections.Counter(); durs=collections.defaultdict(list); n=0
first=collections.Counter()
for s in range(1,251):
    prev=None; st=None
    lines=open(f"logs/{v}/{s}.txt").read().split('\n')
    rc=None; k=0
    for l in lines:
        if l.startswith('DBG95S'):
            d=dict(kv.split('=',1) for kv in l.split()[1:] if '=' in kv); rc=d['rc']; t=float(d['t'])
            if d['probe']=='true' and st is None:
                pass
        if l.startswith('DBG95N'):
            p=l.split(); t=float(p[1][2:]); L=int(p[4]); B=int(p[5].split('=')[1]); pr=p[6]=='probe=true'
            if pr and L<B and st is None: st=(t,L,B,rc)
            elif st and (not pr or L>=B):
                dur=t-st[0]; key=(st[1],st[2],st[3]); c[key]+=1; cost[key]+=max(0,10-st[1])*dur; durs[key].append(dur)
                k+=1
                if k==1: first[(st[1],st[2])]+=1
                st=None
tot=sum(cost.values())/250/300
print(v,"probes",sum(c.values()),"under-permit-s per run-s %.3f"%tot)
for key,_ in sorted(cost.items(),key=lambda x:-x[1])[:15]:
    print("depth %d base %d rc %s: n %d mean dur %.1f cost/run %.4f"%(key[0],key[1],key[2],c[key],sum(durs[key])/len(durs[key]),cost[key]/250/300))
