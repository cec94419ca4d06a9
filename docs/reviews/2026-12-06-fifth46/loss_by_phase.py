"""Answers lost against capacity in each phase of capacity_fifth, per seed.

Usage: python3 loss_by_phase.py DIR SEED...  where DIR/tSEED/ is a run's --out of
`sluicegate-sim scorecard --scenario capacity_fifth --algo littles --seed SEED --trace`.
Capacity per 100 ms: 100 answers (50 workers of 50 ms), 20 from 20 s to 50 s (10 workers).
"""
import csv
import sys

SEGMENTS = [(0, 20), (20, 21), (21, 23), (23, 26), (26, 30), (30, 50),
            (50, 51), (51, 53), (53, 56), (56, 70)]


def capacity(t):
    return 20 if 20 <= t < 50 else 100


def main():
    base = sys.argv[1]
    for seed in sys.argv[2:]:
        path = f"{base}/t{seed}/timeline_capacity_fifth.csv"
        rows = [r for r in csv.DictReader(open(path)) if r["algorithm"] == "littles"]
        out, lost = [], 0
        for a, b in SEGMENTS:
            inside = [r for r in rows if a <= float(r["t_s"]) < b - 1e-9]
            cap = sum(capacity(float(r["t_s"])) for r in inside)
            good = sum(int(r["good"]) for r in inside)
            out.append(f"{a}-{b}:{cap - good}")
            lost += cap - good
        print(seed, " ".join(out), "lost", lost)


main()
