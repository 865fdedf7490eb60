# machine: validation/machine-1g.toml
# A file written and synced, the caches dropped, then a cold read and a warm read.
dd if=/dev/zero of=file bs=1M count=256
sync
echo 3 > /proc/sys/vm/drop_caches
dd if=file of=/dev/null bs=1M
dd if=file of=/dev/null bs=1M
free -m
