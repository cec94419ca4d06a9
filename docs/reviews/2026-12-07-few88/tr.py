import csv,sys
s=sys.argv[1]; P=sys.argv[2] if len(sys.argv)>2 else "t"
tr=list(csv.DictReader(open(f"{P}{s}/trace_few_slow_workers_3x.csv")))
tl=list(csv.DictReader(open(f"{P}{s}/timeline_few_slow_workers_3x.csv")))
prev=None
for r,l in zip(tr,tl):
    key=(r['limit'],r['phase'],r['last_cause'])
    if key!=prev:
        print(r['t_s'],r['limit'],r['phase'],'st',r['steered_limit'],'cap',r['cap'],r['cap_source'],'knee',r['knee'],'min',r['min_rt_ms'],'floor',r['floor_rt_ms'],'q',r['queue'],'pr',r['pass_rate'],'at',r['at_limit'],r['last_from'],'->',r['last_to'],r['last_cause'],'| good',l['good'],'late',l['late'],'upstream',l['upstream'])
    prev=key
