import sys
def load(n,sc):
    d={}
    for l in open(f'/tmp/r112/scr/{n}/{sc}/res.txt'):
        p=l.split()
        if len(p)>=2: d[int(p[0])]=float(p[1])
    return d
sc,x,y=sys.argv[1:4]
a,b=load(x,sc),load(y,sc)
for lo,hi in [(1,30),(31,90),(91,250),(1,250),(31,250)]:
    ss=[s for s in range(lo,hi+1) if s in a and s in b]
    if len(ss)<2: continue
    d=[b[s]-a[s] for s in ss]; m=sum(d)/len(d); se=(sum((v-m)**2 for v in d)/(len(d)-1)/len(d))**.5
    print(f"{sc} {x}->{y} {lo}-{hi}: {m:+.4f} ± {se:.4f} ({sum(v>0 for v in d)} up, {sum(v<0 for v in d)} down)")
print('  moved:',[(s,a[s],b[s]) for s in sorted(b) if s in a and a[s]!=b[s]])
