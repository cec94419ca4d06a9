import csv,sys
d=sys.argv[1]; t0=float(sys.argv[2]); t1=float(sys.argv[3]); step=int(sys.argv[4]) if len(sys.argv)>4 else 2
tr=list(csv.DictReader(open(d+'/trace_capacity_fifth.csv')))
tl={r['t_s']:r for r in csv.DictReader(open(d+'/timeline_capacity_fifth.csv'))}
print('t lim phase steer cap src knee minrt floor q pass cap | from to cause ago | infl qd good')
for r in tr:
    t=float(r['t_s'])
    if t0<=t<=t1 and (round(t*10)%step==0):
        x=tl.get(r['t_s'],{})
        print(r['t_s'],r['limit'],r['phase'],r['steered_limit'],r['cap'],r['cap_source'],r['knee'],r['min_rt_ms'],r['floor_rt_ms'],r['queue'],r['pass_rate'],r['capacity'],'|',r['last_from'],r['last_to'],r['last_cause'],r['last_ago_s'],'|',x.get('in_flight'),x.get('queued'),x.get('good'))
