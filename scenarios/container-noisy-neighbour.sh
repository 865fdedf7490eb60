# A noisy neighbour and memory.low: two containers share a 1 GiB pod (memory.max on the
# parent, as a Kubernetes pod or a systemd slice sets it). "db" caches its 300 MiB data
# set; then "batch" streams 2 GiB through the page cache. The pod is at its limit, so
# reclaim walks the pod's cgroups (shrink_node_memcgs); db's memory.low=400M makes it
# skip db while batch has cache to give (mem_cgroup_below_low), so db's data set is still
# cached when it reads it again: no disk reads, memory-speed copy.
# (Remove the memory.low line to see db's cache evicted and re-read from disk.)
# machine: default

dd if=/dev/urandom of=/root/db.dat bs=1M count=300 status=none
dd if=/dev/urandom of=/root/stream.dat bs=1M count=2048 status=none
sync
echo 3 > /proc/sys/vm/drop_caches

mkdir /sys/fs/cgroup/pod
echo 1G > /sys/fs/cgroup/pod/memory.max
echo +memory > /sys/fs/cgroup/pod/cgroup.subtree_control
mkdir /sys/fs/cgroup/pod/db /sys/fs/cgroup/pod/batch
echo 400M > /sys/fs/cgroup/pod/db/memory.low
cgexec -g memory:pod/db dd if=/root/db.dat of=/dev/null bs=1M
cgexec -g memory:pod/batch dd if=/root/stream.dat of=/dev/null bs=1M
cat /sys/fs/cgroup/pod/db/memory.current
cat /sys/fs/cgroup/pod/batch/memory.current
cgexec -g memory:pod/db dd if=/root/db.dat of=/dev/null bs=1M
cat /sys/fs/cgroup/pod/db/memory.events
free -m
