# drop-reread (validation/scenarios/drop-reread.sh): drop_caches clears shadow entries
# (no workingset_refault_file on the re-read); the second read activates the file.
# run: run.sh --accel tcg --ram 2048M --swap 4096M --cpus 2 --disk-mb 4096 --put lib.sh guest.sh OUT
. /data/lib.sh
step dd_write dd if=/dev/zero of=/data/file bs=1M count=128
step sync sync
step dd_read dd if=/data/file of=/dev/null bs=1M
step drop_caches sh -c 'echo 3 > /proc/sys/vm/drop_caches'
step dd_read dd if=/data/file of=/dev/null bs=1M
step dd_read dd if=/data/file of=/dev/null bs=1M
step free free
