#!/bin/bash
G=/work/tgt-realtime84/debug/sluicegate
cd /tmp/rt84
while pgrep -f "rtt1.sh" >/dev/null; do sleep 2; done
for v in t1 off t1; do
  i=$((i+1))
  if [ $v = t1 ]; then RT84_T1=1 $G demo > demoB-$i-$v.txt 2>&1; else $G demo > demoB-$i-$v.txt 2>&1; fi
done
