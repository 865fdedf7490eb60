# file-plenty: light global pressure with plenty of clean inactive file cache.
# 1200 MiB file written, synced and read once; then dd's 900 MiB anonymous buffer
# (GNU dd bs=900M allocates and fills it) on the ~1.9 GiB guest with 4 GiB swap.
# get_scan_count's cache_trim_mode should reclaim file pages only (pswpout ~0).
# run: run.sh --accel tcg --ram 2048M --swap 4096M --cpus 2 --disk-mb 4096 --put lib.sh guest.sh OUT
. /data/lib.sh
step free free
step dd_write dd if=/dev/zero of=/data/file bs=1M count=1200
step sync sync
step dd_read dd if=/data/file of=/dev/null bs=1M
step dd_900M_anon dd if=/dev/zero of=/dev/null bs=900M count=1
step free free
step dd_reread dd if=/data/file of=/dev/null bs=1M
step free free
echo "OOM kills in dmesg: $(dmesg | grep -c 'Killed process')"
