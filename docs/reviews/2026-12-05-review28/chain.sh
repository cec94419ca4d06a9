#!/bin/bash
cd "$(dirname "$0")"
while ! grep -q "batchB done" batchB.log 2>/dev/null; do sleep 2; done
for b in C D E F; do ./batch$b.sh > batch$b.log 2>&1; done
echo chain done > chain.log
