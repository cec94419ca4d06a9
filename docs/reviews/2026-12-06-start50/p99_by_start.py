#!/usr/bin/env python3
"""p99 of latency / unloaded p99 for one run's served answers (a dump of the simulator's
records: arrival s, latency s, ratio; SG_S50DUMP in the round's experiment patch), over all
answers and with the answers that arrived before T left out, and how many of the run's top 1 %
arrived in each of the first tenths of a second."""
import math
import sys


def q(v, p):
    """Nearest rank, as the simulator's `quantile`."""
    v = sorted(v)
    k = max(1, min(len(v), math.ceil(p * len(v))))
    return v[k - 1]


def main():
    for path in sys.argv[1:]:
        rows = [tuple(map(float, l.split(","))) for l in open(path) if l.strip()]
        ratios = [r[2] for r in rows]
        p99 = q(ratios, 0.99)
        cuts = [0.0, 0.1, 0.2, 0.5, 1.0]
        after = [q([r[2] for r in rows if r[0] >= t], 0.99) for t in cuts]
        top = [r for r in rows if r[2] >= p99]
        first = [sum(1 for r in top if k / 10 <= r[0] < (k + 1) / 10) for k in range(10)]
        print(
            f"{path}: p99 {p99:.4f} | from " + " ".join(f"{t}s {a:.4f}" for t, a in zip(cuts, after))
            + f" | top1% {len(top)} of {len(rows)}, by 0.1 s in the first second {first}"
        )


main()
