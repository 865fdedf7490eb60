# A container whose page cache fills its memory.max (cgroup v2): a 512 MiB web
# container reads a 2 GiB file. Its cache is charged to it, so once memory.current reaches
# memory.max the kernel reclaims the container's own cache (try_to_free_mem_cgroup_pages:
# memory.events "max", memory.stat pgscan/pgsteal) while the host keeps gigabytes free and
# kswapd never wakes.
# machine: default

# The host writes the data set (its cache is the host's, dropped before the container runs).
dd if=/dev/urandom of=/root/data.bin bs=1M count=2048 status=none
sync
echo 3 > /proc/sys/vm/drop_caches

mkdir /sys/fs/cgroup/web
echo 512M > /sys/fs/cgroup/web/memory.max
cgexec -g memory:web dd if=/root/data.bin of=/dev/null bs=1M
cat /sys/fs/cgroup/web/memory.max
cat /sys/fs/cgroup/web/memory.current
cat /sys/fs/cgroup/web/memory.events
cat /sys/fs/cgroup/web/memory.stat
free -m
