# machine: qemu-6.1
# Runbook one-liners: pipes, loops and substitutions over the memory tools.
vmstat 1 | head -3
dd if=/dev/zero of=data bs=1M count=256 2>&1 | tail -1
ls -l data | awk '{print $5 / 1048576 " MiB"}'
n=0
while [ "$(awk '/^Dirty:/ {print $2}' /proc/meminfo)" -gt 1024 ]; do
    n=$((n + 1))
    sleep 1
done
echo "dirty pages written back after about $n s"
grep -E '^(MemFree|Cached|Dirty):' /proc/meminfo | awk '{printf "%-10s %8.1f MiB\n", $1, $2 / 1024}'
echo "nr_dirty_threshold: $(grep -w nr_dirty_threshold /proc/vmstat | cut -d' ' -f2)"
seq 1 4 | while read i; do echo "pass $i"; done | tail -2
cat data | wc -c
