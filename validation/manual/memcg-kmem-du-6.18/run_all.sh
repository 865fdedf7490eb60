#!/bin/bash
# Driver actually used (commands were typed in this order):
cd /tmp/kmem-real
./step12_build.sh 2>&1 | tee logs/step12.log           # step 1+2
./run_one.sh unlimited 0 du                             # warm-up round (first read updates dir atimes)
for R in 1 2 3; do for L in unlimited 64M 32M; do sync; ./run_one.sh $L $R du; done; done   # step 3
sync; ./run_one.sh 64M 1 find; sync; ./run_one.sh unlimited 1 find                          # step 4
python3 parse.py > logs/tables.md
./cleanup.sh 2>&1 | tee logs/cleanup.log                 # step 5
