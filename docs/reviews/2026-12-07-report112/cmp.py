import sys
def load(n,sc='report_generator_1.5x'):
    d={}
    for l in open(f'/tmp/r112/scr/{n}/{sc}/res.txt'):
        p=l.split()
        if len(p)>=2: d[int(p[0])]=float(p[1])
    return d
sc=sys.argv[1]; names=sys.argv[2:]
a={n:load(n,sc) for n in names}
for n in a: print(n, ' '.join(f"{sum(a[n][s] for s in range(f,f+5))/5:.4f}" for f in range(1,31,5) if all(s in a[n] for s in range(f,f+5))))
def pair(x,y,lo,hi):
    ss=[s for s in range(lo,hi+1) if s in a[x] and s in a[y]]
    if len(ss)<2: return '-'
    d=[a[y][s]-a[x][s] for s in ss]
    m=sum(d)/len(d); se=(sum((v-m)**2 for v in d)/(len(d)-1)/len(d))**.5
    return f"{m:+.4f} ± {se:.4f} ({sum(v>0 for v in d)} up, {sum(v<0 for v in d)} down)"
x=names[0]
for y in names[1:]:
    print(x,'->',y,'1-30',pair(x,y,1,30),'31-90',pair(x,y,31,90),'1-90',pair(x,y,1,90))
    print('  moved:',[(s,a[x][s],a[y][s]) for s in sorted(a[y]) if s in a[x] and a[x][s]!=a[y][s]])
