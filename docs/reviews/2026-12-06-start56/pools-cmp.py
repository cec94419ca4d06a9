import sys, statistics as st
def load(p):
    d={}
    for l in open(p):
        sc,s,g,p99=l.split(); d[(sc,int(s))]=(float(g),float(p99))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
for sc in sorted({k[0] for k in a}):
    seeds=sorted(s for (x,s) in a if x==sc and (x,s) in b)
    for i,name in ((0,'goodput'),(1,'p99')):
        d=[b[(sc,s)][i]-a[(sc,s)][i] for s in seeds]
        m=st.mean(d); se=st.stdev(d)/len(d)**0.5
        print(f"{sc:18s} {name:7s} n={len(d)} A={st.mean(a[(sc,s)][i] for s in seeds):.4f} B={st.mean(b[(sc,s)][i] for s in seeds):.4f} diff={m:+.4f} se={se:.4f} worst={min(d) if i==0 else max(d):+.4f}")
