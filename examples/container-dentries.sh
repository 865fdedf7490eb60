# machine: examples/file-tree-6x.toml
# `du -s` over 200,000 files in a memory cgroup, without a limit and with limits of 64M and
# 32M. On Linux 6.x the dentries and inodes du caches are charged to its cgroup (kmem): at
# the limit, reclaim in the cgroup frees its own dentries and inodes (slabs_scanned) along
# with its page cache, and du goes on. Each round starts with the tree uncached: force_empty
# gives back what the cgroup holds before rmdir.
for lim in unlimited 64M 32M; do
  mkdir /sys/fs/cgroup/memory/du
  if [ $lim != unlimited ]; then echo $lim > /sys/fs/cgroup/memory/du/memory.limit_in_bytes; fi
  echo "== du with memory.limit_in_bytes $lim"
  grep -E '^slabs_scanned' /proc/vmstat
  time cgexec -g memory:du du -s /export
  cd /sys/fs/cgroup/memory/du
  grep . memory.usage_in_bytes memory.max_usage_in_bytes memory.failcnt memory.kmem.usage_in_bytes memory.kmem.max_usage_in_bytes
  grep -E '^(cache|active_file|inactive_file) ' memory.stat
  grep -E '^slabs_scanned' /proc/vmstat
  grep -E '^(Buffers|Slab|SReclaimable)' /proc/meminfo
  echo 0 > memory.force_empty
  cd /
  rmdir /sys/fs/cgroup/memory/du
done
