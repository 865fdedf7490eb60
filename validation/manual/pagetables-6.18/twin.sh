# The twin's side of run.sh (memtwin run twin.sh --set cgroup=v1): memhog holds SIZE of
# anonymous memory in a v1 cgroup; PageTables and the cgroup's kmem counter while it holds
# it and after it is killed.
mkdir /sys/fs/cgroup/memory/box
grep PageTables /proc/meminfo
for size in 64M 256M 1G; do
  cgexec -g memory:box memhog $size --active 0 > /dev/null &
  sleep 2
  grep PageTables /proc/meminfo
  cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
  kill $!
  wait
  cat /sys/fs/cgroup/memory/box/memory.kmem.usage_in_bytes
done
cat /sys/fs/cgroup/memory/box/memory.usage_in_bytes
