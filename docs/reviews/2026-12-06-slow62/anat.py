"""Per-seed loss breakdown of ours against fixed_c (same seed), per 100 ms.
usage: anat.py DIR SC C [timeline]   DIR holds timeline_SC.csv and trace_SC.csv (littles, vegas, fixed_c)"""
import csv,sys,collections
d,sc,C=sys.argv[1],sys.argv[2],int(sys.argv[3]); show=len(sys.argv)>4
tl=list(csv.DictReader(open(f'{d}/timeline_{sc}.csv')))
tr=[r for r in csv.DictReader(open(f'{d}/trace_{sc}.csv')) if r['algorithm']=='littles']
by=collections.defaultdict(list)
for r in tl: by[r['algorithm']].append(r)
ours=by['littles']; fc=by['fixed_c']; vg=by['vegas']
T=len(ours)
ref=sum(int(r['good']) for r in fc)/len(fc)  # oracle's mean good per 100 ms
# start ends when the limit first comes to <= C+1 after leaving 20
start_end=T
for i,r in enumerate(ours):
    if int(r['limit'])<int(ours[0]['limit']): start_end=i; break
cat=collections.defaultdict(lambda:[0,0.0,0,0,0])
for i,(a,b) in enumerate(zip(ours,tr)):
    g=int(a['good']); L=int(a['limit']); late=int(a['late'])+int(a['queue_timeouts'])
    if i<start_end: c='a start'
    elif b['phase']=='probing': c='b probe'
    elif L<C: c='c below c'
    elif L<=C+1: c='c at c..c+1'
    elif L==C+2: c='c c+2'
    else: c='c >=c+3'
    k=cat[c]; k[0]+=1; k[1]+=ref-g; k[2]+=g; k[3]+=late
tot_ref=ref*T
print(f'{sc} {d}: ours {sum(int(r["good"]) for r in ours)} vegas {sum(int(r["good"]) for r in vg)} fixed_c {sum(int(r["good"]) for r in fc)}  start_end {start_end/10:.1f}s')
for c in sorted(cat):
    n,l,g,late,_=cat[c]
    print(f'  {c:12s} time {n/T:5.3f} in-time/100ms {g/n:5.2f} (ref {ref:5.2f}) loss {l/tot_ref:+.4f} late {late}')
print(f'  total loss {sum(k[1] for k in cat.values())/tot_ref:+.4f}')
vl=collections.Counter(int(r['limit']) for r in vg if float(r['t_s'])>10)
print('  vegas limits after 10 s:',sorted(vl.items()))
ol=collections.Counter(int(r['limit']) for r in ours if float(r['t_s'])>10)
print('  ours limits after 10 s:',sorted(ol.items()))
# events
prev=None
ev=[]
for b in tr:
    key=(b['last_from'],b['last_to'],b['last_cause'])
    if key!=prev and b['last_cause']:
        ev.append(f"{float(b['t_s'])-float(b['last_ago_s'] or 0):6.1f} {b['last_cause']} {b['last_from']}->{b['last_to']} [{b['phase']}] q={b['queue'][:4]} pr={b['pass_rate'][:5]} min={b['min_rt_ms'][:6]} fl={b['floor_rt_ms'][:6]}")
    prev=key
if show:
    for e in ev: print('   ',e)
    # per second timeline
    print('   t  lim inf good late rej | vegas lim good')
    for s in range(0,T//10):
        o=ours[s*10:(s+1)*10]; v=vg[s*10:(s+1)*10]; bb=tr[s*10:(s+1)*10]
        print(f'  {s:3d} {sum(int(r["limit"]) for r in o)/10:4.1f} {sum(int(r["in_flight"]) for r in o)/10:4.1f} {sum(int(r["good"]) for r in o):3d} {sum(int(r["late"])+int(r["queue_timeouts"]) for r in o):3d} {sum(int(r["rejected"]) for r in o):3d} {bb[-1]["phase"][:5]} | {sum(int(r["limit"]) for r in v)/10:4.1f} {sum(int(r["good"]) for r in v):3d}')
else:
    print('   events:',len(ev),'; first 12:'); [print('   ',e) for e in ev[:12]]
