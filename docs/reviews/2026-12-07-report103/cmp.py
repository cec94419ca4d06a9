import sys,statistics as st,math
def load(p): return {int(l.split()[0]):float(l.split()[1]) for l in open(p) if len(l.split())>=2}
a=load(sys.argv[1]); b=load(sys.argv[2])
def sets(d):
    return ' '.join('%.4f'%st.mean([d[s] for s in range(k,k+5) if s in d]) for k in range(1,31,5) if any(s in d for s in range(k,k+5)))
print('A sets',sets(a)); print('B sets',sets(b))
for lo,hi in ((1,30),(31,90),(1,90)):
    d=[b[s]-a[s] for s in range(lo,hi+1) if s in a and s in b]
    if len(d)>1: print(f'{lo}-{hi}: n={len(d)} diff {st.mean(d):+.4f} ± {st.stdev(d)/math.sqrt(len(d)):.4f} up {sum(x>0.0005 for x in d)} down {sum(x<-0.0005 for x in d)}  meanA {st.mean([a[s] for s in range(lo,hi+1) if s in a]):.4f}')
