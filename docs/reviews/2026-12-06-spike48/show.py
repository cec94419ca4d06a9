import csv,sys
d=sys.argv[1]; t0=float(sys.argv[2]) if len(sys.argv)>2 else 19.5; t1=float(sys.argv[3]) if len(sys.argv)>3 else 30
tr=list(csv.DictReader(open(d+'/trace_latency_spike.csv'))) if len(sys.argv)<5 else list(csv.DictReader(open(d+'/trace_'+sys.argv[4]+'.csv')))
tlf=d+'/timeline_'+(sys.argv[4] if len(sys.argv)>4 else 'latency_spike')+'.csv'
tl={r['t_s']:r for r in csv.DictReader(open(tlf))}
prev=None
for r in tr:
    t=float(r['t_s'])
    if t0<=t<=t1:
        x=tl.get(r['t_s'],{})
        key=(r['limit'],r['phase'],r['min_rt_ms'],r['floor_rt_ms'],r['queue'])
        print(r['t_s'],r['limit'],r['phase'][:5],r['knee'],r['cap'],r['min_rt_ms'],r['floor_rt_ms'],r['queue'],r['pass_rate'],r['capacity'],f"{r['last_from']}->{r['last_to']} {r['last_cause']}",'|',x.get('in_flight'),x.get('good'),x.get('late'),x.get('queue_timeouts'))
