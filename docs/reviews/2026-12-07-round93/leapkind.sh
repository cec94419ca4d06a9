#!/usr/bin/env bash
# leapkind.sh TAG [ENV=VAL] -> leapkind-TAG.txt: seeds whose demand-led start leapt, and to what
t=$1; shift
for s in $(seq 1 500); do env DBG93=1 "$@" /work/r93/sim-tog scorecard --scenario demo_busy_2x --algo littles --seed $s --out /tmp/r93-lk-$t -q 2>&1 >/dev/null | grep -m1 "verdict.*Leap" | sed "s/^/$s /"; done > /work/r93/leapkind-$t.txt
