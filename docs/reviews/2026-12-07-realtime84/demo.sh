#!/bin/bash
G=/work/tgt-realtime84/debug/sluicegate
cd /tmp/rt84
while pgrep -f "rtfix.sh" >/dev/null; do sleep 2; done
i=0
for v in off fix11 off fix11; do
  i=$((i+1))
  if [ $v = fix11 ]; then RT84_FIX=11 $G demo > demo-$i-$v.txt 2>&1; else $G demo > demo-$i-$v.txt 2>&1; fi
done
