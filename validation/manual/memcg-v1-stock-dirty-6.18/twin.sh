# machine: examples/file-tree-6x.toml
# The twin's side of run.sh: the same writes in a v1 cgroup of a 2-CPU Linux 6.x machine
# with ext4 on virtio. `memtwin run validation/manual/memcg-v1-stock-dirty-6.18/twin.sh`
mkdir /sys/fs/cgroup/memory/t
cd /sys/fs/cgroup/memory/t
for n in 70 10 200; do
  cgexec -g memory:t dd if=/dev/zero of=/root/f$n bs=4k count=$n status=none
  echo "after $n pages"
  grep . memory.usage_in_bytes memory.kmem.usage_in_bytes memory.failcnt
  grep -E '^(cache|dirty|writeback|pgpgin|pgpgout) ' memory.stat
done
grep -E '^(nr_throttled_written|nr_vmscan_immediate_reclaim) ' /proc/vmstat
echo 655360 > memory.limit_in_bytes
grep . memory.limit_in_bytes memory.usage_in_bytes
grep -E '^(cache|dirty|writeback|pgpgout) ' memory.stat
grep -E '^(nr_throttled_written|nr_vmscan_immediate_reclaim) ' /proc/vmstat
echo 1 > memory.force_empty
cd /
rmdir /sys/fs/cgroup/memory/t
rm -f /root/f70 /root/f10 /root/f200
for i in 1 2 3; do
  mkdir /sys/fs/cgroup/memory/t
  echo 655360 > /sys/fs/cgroup/memory/t/memory.limit_in_bytes
  time cgexec -g memory:t dd if=/dev/zero of=/root/g bs=4k count=400 status=none
  cd /sys/fs/cgroup/memory/t
  grep . memory.usage_in_bytes memory.failcnt
  grep -E '^(cache|dirty|writeback|pgpgin|pgpgout) ' memory.stat
  grep -E '^(nr_throttled_written|nr_vmscan_immediate_reclaim) ' /proc/vmstat
  echo 1 > memory.force_empty
  cd /
  rmdir /sys/fs/cgroup/memory/t
  rm -f /root/g
done
