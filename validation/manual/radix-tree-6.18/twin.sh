# The twin's side of run.sh (memtwin run twin.sh --set cgroup=v1): the same files, their
# pages dropped (drop_caches, which leaves no shadow entries, as POSIX_FADV_DONTNEED),
# then each group read in a v1 cgroup; radix_tree_node's active objects and the cgroup's
# kmem counter before and after each group.
dd if=/dev/zero of=/root/big bs=1M count=256 status=none
for i in $(seq 1 5000); do dd if=/dev/zero of=/root/one$i bs=4k count=1 status=none; dd if=/dev/zero of=/root/two$i bs=8k count=1 status=none; done
sync
echo 1 > /proc/sys/vm/drop_caches
mkdir /sys/fs/cgroup/memory/box
grep ^radix_tree_node /proc/slabinfo
cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
cgexec -g memory:box cat /root/big > /dev/null
grep ^radix_tree_node /proc/slabinfo
cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
for i in $(seq 1 5000); do cgexec -g memory:box cat /root/one$i > /dev/null; done
grep ^radix_tree_node /proc/slabinfo
cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
for i in $(seq 1 5000); do cgexec -g memory:box cat /root/two$i > /dev/null; done
grep ^radix_tree_node /proc/slabinfo
cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
