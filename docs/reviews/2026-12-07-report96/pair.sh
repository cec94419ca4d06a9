#!/bin/bash
sc=$1
BIN=/tmp/r96/sim-main /tmp/r96/bin/screen.sh pm $sc 31 90
BIN=/tmp/r96/sim-clean /tmp/r96/bin/screen.sh pc $sc 31 90
echo "== $sc"; python3 /tmp/r96/bin/cmp.py /tmp/r96/screen/pm/$sc/res.txt /tmp/r96/screen/pc/$sc/res.txt | grep -v sets
