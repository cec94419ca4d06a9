import csv,sys,collections
for s in sys.argv[1:]:
    tl=list(csv.DictReader(open(f"t{s}/timeline_few_slow_workers_3x.csv")))
    tr=list(csv.DictReader(open(f"t{s}/trace_few_slow_workers_3x.csv")))
    lim=collections.Counter(int(float(r['limit'])) for r in tl if float(r['t_s'])>=0)
    inf=collections.Counter(min(int(r['in_flight']),6) for r in tl)
    ph=collections.Counter(r['phase'] for r in tr)
    g=tail=open(f"t{s}/scorecard.csv").read().split('\n')[1].split(',')[2]
    print(s,g,"limit:",dict(sorted(lim.items())),"inflight:",dict(sorted(inf.items())),"phase:",dict(ph))
