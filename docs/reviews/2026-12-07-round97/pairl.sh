#!/usr/bin/env bash
# pairl.sh A B: paired goodput of two leap files (seed max s14 s20 goodput)
pair="$(cd "$(dirname "$0")/../../.." && pwd)/scripts/sim-pair"
awk '{print $1, $5}' $1 > /tmp/pa; awk '{print $1, $5}' $2 > /tmp/pb
"$pair" /tmp/pa /tmp/pb | head -1
paste -d' ' $1 $2 | awk '$5!=$10 {print "   ", $0}'
