# machine: qemu-6.1
# A common tutorial: watch the page cache and the dirty pages while a file is written,
# then drop the clean cache and see free memory come back.
sync
echo 3 > /proc/sys/vm/drop_caches
free -h
dd if=/dev/zero of=bigfile bs=1M count=1024 &
for i in 1 2 3 4 5; do
    sleep 1
    grep -E 'Dirty|Writeback' /proc/meminfo
done
wait
free -h | grep Mem
sync
grep -E '^(Dirty|Writeback):' /proc/meminfo
echo 3 > /proc/sys/vm/drop_caches
free -h
cached_kb=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
echo "page cache after drop_caches: $((cached_kb / 1024)) MiB"
rm bigfile
