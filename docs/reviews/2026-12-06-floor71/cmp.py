import sys, statistics as st
def load(p):
    d={}
    for l in open(p):
        s,g,p99,c=l.strip().split(',')
        d[int(s)]=(float(g),float(p99),float(c) if c else None)
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
for i,name in ((0,'goodput'),(1,'p99/unloaded'),(2,'converge')):
    ks=[k for k in a if a[k][i] is not None and b[k][i] is not None]
    xa=[a[k][i] for k in ks]; xb=[b[k][i] for k in ks]; dd=[y-x for x,y in zip(xa,xb)]
    if not ks: continue
    se=st.stdev(dd)/len(dd)**0.5 if len(dd)>1 else 0
    moved=sum(1 for x in dd if abs(x)>1e-9)
    print(f"{name}: n={len(ks)} A {st.mean(xa):.4f} B {st.mean(xb):.4f} diff {st.mean(dd):+.4f} ± {se:.4f}  (seeds moved {moved})")
