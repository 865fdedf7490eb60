# machine: qemu-6.1
# A tuning tutorial: how much dirty data may pile up before writers are throttled.
# Write the same file with the default ratios and then with small byte limits, and read
# Dirty and Writeback from /proc/meminfo while it runs.
sysctl vm.dirty_ratio vm.dirty_background_ratio
dd if=/dev/zero of=big bs=1M count=512 2>&1 | tail -1 &
for i in 1 2; do
    sleep 0.5
    grep -E '^(Dirty|Writeback):' /proc/meminfo
done
wait
sync
rm big
# Small limits: the flusher starts at 16 MiB, writers are throttled near 48 MiB.
sysctl -w vm.dirty_background_bytes=16777216
sysctl -w vm.dirty_bytes=50331648
# Setting a *_bytes knob zeroes its *_ratio (and writing a ratio zeroes the bytes again).
sysctl vm.dirty_ratio vm.dirty_background_ratio
dd if=/dev/zero of=big bs=1M count=512 2>&1 | tail -1 &
for i in 1 2; do
    sleep 0.5
    grep -E '^(Dirty|Writeback):' /proc/meminfo
done
wait
sync
grep -E '^(Dirty|Writeback):' /proc/meminfo
rm big
# Back to the percentages (writing 0 to a *_bytes knob is refused: EINVAL).
sysctl -w vm.dirty_ratio=20 vm.dirty_background_ratio=10
sysctl vm.dirty_bytes vm.dirty_background_bytes
