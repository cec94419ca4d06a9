import sys,math
# ou.py VARIANT: per seed time-avg (whole run from the first move) over, under-in-probe, under-outside; regress goodput
v=sys.argv[1]; per=f"per/{v}-report_generator_1.5x-1.txt"
G={int(l.split()[0]):float(l.split()[1]) for l in open(per)}
rows=[]
for s in sorted(G):
    N=[]
    for l in open(f"logs/{v}/{s}.txt"):
        if l.startswith('DBG95N'):
            p=l.split(); N.append((float(p[1][2:]),int(p[4]),int(p[5].split('=')[1]),p[6]=='probe=true'))
    o=up=uo=0
    for (t0,L,B,pr),(t1,*_) in zip(N,N[1:]+[(300.0,0,0,0)]):
        d=min(t1,300)-t0
        if d<=0: continue
        if L>10:o+=(L-10)*d
        if L<10:
            if pr: up+=(10-L)*d
            else: uo+=(10-L)*d
    rows.append((s,G[s],o/300,up/300,uo/300))
n=len(rows)
print(v,"n",n,"g %.4f over %.3f under-probe %.3f under-out %.3f"%tuple(sum(r[i] for r in rows)/n for i in (1,2,3,4)))
if len(sys.argv)>2:
    for r in rows: print(*r[:2], "%.2f %.2f %.2f"%r[2:])
