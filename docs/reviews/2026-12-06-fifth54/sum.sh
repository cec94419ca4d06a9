#!/bin/bash
# sum.sh NAME: per-seed list from /tmp/f54/NAME/tS (seed, goodput, convergence after 20 s, after 50 s)
n=$1
for d in $(ls -d /tmp/f54/$n/t* | sed 's/.*\/t//' | sort -n); do
  grep '^| capacity_fifth | over' /tmp/f54/$n/t$d/scorecard.md | awk -F'|' -v s=$d '{split($9,c," "); printf "%d %.3f %s %s\n", s, $4, c[1], c[4]}'
done > /tmp/f54/$n.txt
