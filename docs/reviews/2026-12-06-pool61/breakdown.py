"""Where a start's goodput goes, against the oracle (fixed_c) of the same seed, per 100 ms.

Usage: breakdown.py SCENARIO WORKERS LAG_BINS DIR
DIR holds SCENARIO-S/timeline_SCENARIO.csv for seeds 1-5, each from
  sluicegate-sim scorecard --scenario SCENARIO --algo littles --algo fixed_c --seed S --out DIR/SCENARIO-S
Phases (of the limit, the answers shifted LAG_BINS later, about one mean RT): (a) before the
first leap, (b) from it to the first limit >= WORKERS, (c) from there until the limit is
within 1.05 x WORKERS, (d) the rest. Each is the oracle's answers less ours, over the oracle's.
"""
import csv,sys,collections
def load(path):
    rows=collections.defaultdict(list)
    for r in csv.DictReader(open(path)):
        rows[r['algorithm']].append(r)
    return rows
def brk(path,W,lag,verbose=False):
    rows=load(path); o=rows['littles']; f=rows['fixed_c']
    n=min(len(o),len(f))
    lim=[int(r['limit']) for r in o]
    t_leap=next((i for i in range(n) if lim[i]>lim[0]),n)
    t_reach=next((i for i in range(n) if lim[i]>=W),n)
    t_settle=next((i for i in range(t_reach,n) if lim[i]<=1.05*W),n)
    ph=[0.0]*4; tot_o=tot_f=0
    for i in range(n):
        d=int(f[i]['good'])-int(o[i]['good'])
        tot_o+=int(o[i]['good']); tot_f+=int(f[i]['good'])
        j=i-lag
        k=0 if j<t_leap else 1 if j<t_reach else 2 if j<t_settle else 3
        ph[k]+=d
    tot=sum(ph)
    return (t_leap/10,t_reach/10,t_settle/10, tot_o/tot_f, [p/tot_f for p in ph])
sc,W,lag=sys.argv[1],int(sys.argv[2]),int(sys.argv[3])
acc=[0]*4
for s in range(1,6):
    p=f"{sys.argv[4]}/{sc}-{s}/timeline_{sc}.csv"
    tl,tr,ts,ratio,ph=brk(p,W,lag)
    print(f"seed {s}: first leap {tl:.1f}s reach {tr:.1f}s settle {ts:.1f}s  ours/oracle {ratio:.3f}  loss of oracle's goodput: a {ph[0]:.3f} b {ph[1]:.3f} c {ph[2]:.3f} d {ph[3]:.3f}")
    acc=[x+y for x,y in zip(acc,ph)]
print("mean", " ".join(f"{x/5:.3f}" for x in acc), "shares", " ".join(f"{x/sum(acc):.2f}" for x in acc))
