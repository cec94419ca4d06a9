"""phase.py A B SEED...: good answers per phase (timeline 'good'), run A vs B."""
import csv,sys
ph=[(0,20),(20,23),(23,26),(26,30),(30,50),(50,53),(53,70)]
def load(d,s):
    out=[0]*len(ph)
    for r in csv.DictReader(open(f'/tmp/f54/{d}/t{s}/timeline_capacity_fifth.csv')):
        t=float(r['t_s'])
        for i,(a,b) in enumerate(ph):
            if a<=t<b: out[i]+=int(r['good'])
    return out
a,b=sys.argv[1],sys.argv[2]
print('seed', ' '.join(f'{x}-{y}' for x,y in ph))
for s in sys.argv[3:]:
    x=load(a,s); y=load(b,s)
    print(s, ' '.join(f'{q-p:+d}' for p,q in zip(x,y)), 'total', sum(y)-sum(x))
