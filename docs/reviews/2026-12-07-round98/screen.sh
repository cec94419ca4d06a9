#!/usr/bin/env bash
# screen.sh FIRST COUNT: every scenario, main's code (R98 unset, M) against R98=B
f=$1; n=$2
all=$(./sim-tog list 2>&1 | awk '/^scenarios:/{on=1;next} /^algorithms:/{on=0} on{print $1}')
for sc in $all; do
  [ -s per/M-$sc-$f.txt ] || ./run.sh M ./sim-tog $sc $f $n littles R98=
  [ -s per/B-$sc-$f.txt ] || ./run.sh B ./sim-tog $sc $f $n littles R98=B
done
