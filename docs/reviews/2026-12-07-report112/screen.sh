#!/bin/bash
# usage: screen.sh NAME SCENARIO FROM TO  (env passed through); 2 parallel
name=$1; sc=$2; from=$3; to=$4
B=${BIN:-/work/tgt-report112/release/sluicegate-sim}
out=/tmp/r112/scr/$name/$sc; mkdir -p $out
run() { s=$1; g=$(nice -n 10 $B scorecard --scenario $sc --algo littles --seed $s --out $out/t$s -q 2>/dev/null | grep "^| $sc | littles" | awk -F'|' '{print $4, $9}'); rm -rf $out/t$s; echo "$s $g"; }
export -f run; export B sc out
seq $from $to | xargs -P 2 -I{} bash -c 'run {}' | sort -n > $out/res.txt
