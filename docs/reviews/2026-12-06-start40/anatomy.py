"""Where a short overloaded run loses goodput, per 100 ms, against a fixed limit's run.

Usage (from a directory holding both runs' outputs, seeds 1-5):
  sluicegate-sim scorecard --scenario SC --algo littles --seed S --trace --out SC-S
  SG_S40FIX=L sluicegate-sim scorecard --scenario SC --algo littles --seed S --out REF-SC-S
  python3 anatomy.py SC REF
SG_S40FIX (experiments.patch) holds ours at L from its first move on, the reference run.
Prints the loss (ours against the reference, over 15000 answers: the demos' capacity of 200 a
second for 15 s, five seeds; change it for another scenario) in the first
two seconds, while a probe holds or is measured, and in the steady state.
"""
import csv,sys,collections
sc=sys.argv[1]; ref=sys.argv[2]
cat=collections.defaultdict(lambda:[0,0,0])
for seed in range(1,6):
    tl=list(csv.DictReader(open(f'{sc}-{seed}/timeline_{sc}.csv')))
    tr=list(csv.DictReader(open(f'{sc}-{seed}/trace_{sc}.csv')))
    fc=list(csv.DictReader(open(f'{ref}-{sc}-{seed}/timeline_{sc}.csv')))
    fcm=sum(int(r['good']) for r in fc if float(r['t_s'])<15)/150
    for a,b,f in zip(tl,tr,fc):
        t=float(a['t_s'])
        if t>=15: continue
        g=int(a['good']); L=int(a['limit'])
        ph=b['phase']; cause=b['last_cause']
        if t<2.0: c='0-2s'
        elif ph=='probing': c='probe+regrow'
        else: c='steady'
        cat[c][0]+=1; cat[c][1]+=g; cat[c][2]+=fcm
tot=0
for c,(n,g,r) in sorted(cat.items()):
    print(f'{c:14s} n={n:4d} ours/100ms={g/n:6.2f} ref={r/n:6.2f} loss={(r-g)/15000:.4f}')
    tot+=r-g
print('total', tot/15000)
