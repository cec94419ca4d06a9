#!/bin/bash
# usage: screen.sh NAME [ENV=VAL...]; prints goodput per set for watched rows
name=$1; shift
S=/work/tgt-probe68/release/sluicegate-sim
SCS="demo_2x demo_busy_2x few_slow_workers_3x report_generator_1.5x capacity_fifth capacity_halves latency_spike network_delay_spike overload_10x random_drops_1.5x heavy_tail_3x two_speeds_2x failures"
args=""; for s in $SCS; do args="$args --scenario $s"; done
mkdir -p /tmp/p68/scr/$name
for seed in 1 6 11 16 21 26; do
  env "$@" $S scorecard $args --algo littles --seed $seed --seeds 5 --out /tmp/p68/scr/$name/s$seed -q >/dev/null 2>&1 &
  if (( seed == 6 || seed == 16 || seed == 26 )); then wait; fi
done
wait
python3 - "$name" <<'PY'
import csv,sys
name=sys.argv[1]
rows={}
for seed in [1,6,11,16,21,26]:
    for r in csv.DictReader(open(f'/tmp/p68/scr/{name}/s{seed}/scorecard.csv')):
        if r['algorithm']=='littles':
            rows.setdefault(r['scenario'],[]).append((float(r['goodput_per_possible']), r['converge_s']))
for sc,v in rows.items():
    print(f"{sc:24s} " + " ".join(f"{g:.3f}" for g,_ in v) + f"  mean {sum(g for g,_ in v)/len(v):.4f}" + ("  conv " + " ".join(c for _,c in v) if v[0][1] else ""))
PY
