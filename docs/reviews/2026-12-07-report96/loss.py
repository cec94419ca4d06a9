import csv,sys,statistics as st
# loss accounting from trace: expected relative throughput by limit
def eff(L):
    if L<=10: return L/10
    return 1/(1+0.05*max(0,L-11))
sc='report_generator_1.5x'
d=sys.argv[1]; fr,to=int(sys.argv[2]),int(sys.argv[3])
tot={'probe_held':[], 'probe_tail':[], 'steady_low':[], 'steady_high':[], 'start':[]}
for s in range(fr,to+1):
    rows=list(csv.DictReader(open(f'{d}/s{s}/trace_{sc}.csv')))
    acc={k:0.0 for k in tot}
    for r in rows:
        t=float(r['t_s']); L=int(r['limit']); loss=(1-eff(L))/len(rows)
        if t<20: acc['start']+=loss
        elif r['phase']=='probing':
            acc['probe_held' if L<int(r['steered_limit'] or L) or L<10 else 'probe_tail']+=loss
        elif L<10: acc['steady_low']+=loss
        else: acc['steady_high']+=loss
    for k in tot: tot[k].append(acc[k])
print(' '.join(f'{k} {st.mean(v):.4f}' for k,v in tot.items()), 'sum %.4f'%sum(st.mean(v) for v in tot.values()))
