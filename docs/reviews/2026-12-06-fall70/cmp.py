import sys
def load(f): return {r.split()[0]: r.split() for r in open(f)}
a=load(sys.argv[1])
for f in sys.argv[2:]:
    b=load(f)
    # seeds where neither run had a false return: return-speed comparison
    clean=[s for s in a if int(a[s][4])==0 and int(b[s][4])==0]
    ra=sum(float(a[s][3]) for s in clean)/len(clean); rb=sum(float(b[s][3]) for s in clean)/len(clean)
    ga=sum(float(a[s][1]) for s in clean)/len(clean); gb=sum(float(b[s][1]) for s in clean)/len(clean)
    print(f"{f}: clean seeds {len(clean)}: return mean {ra:.3f} -> {rb:.3f}, goodput {ga:.4f} -> {gb:.4f}; all seeds return mean {sum(float(a[s][3]) for s in a)/len(a):.3f} -> {sum(float(b[s][3]) for s in b)/len(b):.3f}")
