# write-read-twice (validation/scenarios/write-read-twice.sh) under global reclaim:
# a written file read twice; since 4.7 the first read leaves it inactive, the second activates.
# run: run.sh --accel tcg --ram 2048M --swap 4096M --cpus 2 --disk-mb 4096 --put lib.sh guest.sh OUT
. /data/lib.sh
step dd_write dd if=/dev/zero of=/data/file bs=1M count=64
step sync sync
step dd_read dd if=/data/file of=/dev/null bs=1M
step dd_read dd if=/data/file of=/dev/null bs=1M
step free free
