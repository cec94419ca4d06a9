"""Trace-only probe loss: slots where the limit is held under the steered limit in a probe.
Usage: holdloss.py SIM SCENARIO a-b"""
import csv, sys, subprocess, os
S, sc = sys.argv[1], sys.argv[2]; a, b = (int(x) for x in sys.argv[3].split('-'))
tot = 0; held = 0; gp = []
for seed in range(a, b + 1):
    out = f'/tmp/p68/hl/{os.path.basename(S)}-{sc}-{seed}'
    os.makedirs(out, exist_ok=True)
    subprocess.run([S, 'scorecard', '--scenario', sc, '--algo', 'littles', '--algo', 'fixed_c', '--seed', str(seed), '--trace', '--out', out, '-q'], capture_output=True)
    tl = list(csv.DictReader(open(f'{out}/timeline_{sc}.csv')))
    ours = [x for x in tl if x['algorithm'] == 'littles']; orc = sum(int(x['good']) for x in tl if x['algorithm'] == 'fixed_c')
    tr = list(csv.DictReader(open(f'{out}/trace_{sc}.csv')))
    hold = set(r['t_s'] for r in tr if r['phase'] == 'probing' and r['steered_limit'] and int(r['limit']) < int(r['steered_limit']))
    ref = [int(x['good']) for x in ours if float(x['t_s']) >= 2 and x['t_s'] not in hold]
    R = sum(ref) / len(ref)
    tot += sum(R - int(x['good']) for x in ours if x['t_s'] in hold) / orc
    held += len(hold) / 10
    gp.append(float([r for r in csv.DictReader(open(f'{out}/scorecard.csv')) if r['algorithm'] == 'littles'][0]['goodput_per_possible']))
n = b - a + 1
print(f"{sc} {os.path.basename(S)}: goodput {sum(gp)/n:.4f}  held {held/n:.2f} s/seed  hold loss {tot/n:.4f}/seed")
