"""Loss budget per seed: ours vs same seed's fixed_c, per 100 ms, by class.
usage: budget.py DIR PREFIX SC C SEEDS..."""
import csv,sys,collections
d,pre,sc,C=sys.argv[1],sys.argv[2],sys.argv[3],int(sys.argv[4]); seeds=[int(s) for s in sys.argv[5:]]
cls=['a start','b probe','c <c','c c..c+1','c c+2','c >=c+3']
tot=collections.Counter(); rows=[]
print(f"| seed | ours/oracle | {' | '.join(cls)} | total |")
for s in seeds:
    dd=f'{d}/{pre}{s}'
    tl=list(csv.DictReader(open(f'{dd}/timeline_{sc}.csv')))
    tr=[r for r in csv.DictReader(open(f'{dd}/trace_{sc}.csv')) if r['algorithm']=='littles']
    by=collections.defaultdict(list)
    for r in tl: by[r['algorithm']].append(r)
    ours=by['littles']; fc=by['fixed_c']; T=len(ours)
    ref=sum(int(r['good']) for r in fc)/len(fc)
    start_end=T
    for i,r in enumerate(ours):
        if int(r['limit'])<int(ours[0]['limit']): start_end=i; break
    cat=collections.Counter()
    for i,(a,b) in enumerate(zip(ours,tr)):
        g=int(a['good']); L=int(a['limit'])
        if i<start_end: c='a start'
        elif b['phase']=='probing': c='b probe'
        elif L<C: c='c <c'
        elif L<=C+1: c='c c..c+1'
        elif L==C+2: c='c c+2'
        else: c='c >=c+3'
        cat[c]+=(ref-g)/(ref*T)
    og=sum(int(r['good']) for r in ours); fg=sum(int(r['good']) for r in fc)
    print(f"| {s} | {og/fg:.3f} | "+' | '.join(f"{cat[c]:+.3f}" for c in cls)+f" | {sum(cat.values()):+.3f} |")
    for c in cls: tot[c]+=cat[c]/len(seeds)
print(f"| mean | | "+' | '.join(f"{tot[c]:+.3f}" for c in cls)+f" | {sum(tot.values()):+.3f} |")
