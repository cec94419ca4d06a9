import csv,sys
sc=sys.argv[1]; a,b=sys.argv[2],sys.argv[3]; cuts=[float(x) for x in sys.argv[4].split(',')]
def load(d):
    r=list(csv.DictReader(open(f'{d}/timeline_{sc}.csv')))
    return [(float(x['t_s']),int(x['good'])) for x in r if x['algorithm']=='littles']
A,B=load(a),load(b)
for lo,hi in zip(cuts,cuts[1:]):
    ga=sum(g for t,g in A if lo<=t<hi); gb=sum(g for t,g in B if lo<=t<hi)
    print(f'{lo:5.1f}-{hi:5.1f} {ga:7d} {gb:7d} {gb-ga:+6d}')
print('total',sum(g for t,g in A),sum(g for t,g in B))
