# helpers sourced by the experiment scripts
CGR=/sys/fs/cgroup/memory
slablines() { grep -E '^(# name|dentry|ext4_inode_cache|buffer_head|inode_cache|radix_tree_node|ext4_extent_status) ' /proc/slabinfo | sed 's/^/  /'; }
globals() {  # global figures
  echo "  vmstat: $(grep -E '^(slabs_scanned|pginodesteal|kswapd_inodesteal) ' /proc/vmstat | tr '\n' ' ')"
  echo "  meminfo: $(grep -E '^(Slab|SReclaimable|SUnreclaim|Buffers):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"
  echo "  /proc/slabinfo:"; slablines
}
cgfigs() {   # $1 = cgroup dir
  local d=$1 f
  for f in memory.limit_in_bytes memory.usage_in_bytes memory.max_usage_in_bytes memory.failcnt \
           memory.kmem.usage_in_bytes memory.kmem.max_usage_in_bytes memory.kmem.failcnt; do
    printf '  %-32s %s\n' $f "$(cat $d/$f 2>&1)"; done
  echo "  memory.kmem.slabinfo ($(wc -c < $d/memory.kmem.slabinfo) bytes):"; sed 's/^/    /' $d/memory.kmem.slabinfo
}
cgstat() { echo "  memory.stat:"; sed 's/^/    /' $1/memory.stat; }
# move any remaining tasks out (to root, as the brief prescribes) then force_empty and rmdir
cg_remove() {
  local d=$1 p
  [ -d "$d" ] || return 0
  for p in $(cat $d/cgroup.procs); do echo "  moving leftover pid $p out of $d"; echo $p > $CGR/cgroup.procs; done
  timeout 300 sh -c "echo 0 > $d/memory.force_empty" || echo "  force_empty rc=$? on $d"
  rmdir $d || echo "  rmdir $d failed"
}
# background sampler: t, cg usage, cg kmem usage, global dentry & ext4_inode active objs
sampler() {  # $1 cgroup dir, $2 outfile
  local t0=$(date +%s.%N)
  echo "t_s usage kmem_usage g_dentry_active g_ext4inode_active" > $2
  while [ -d $1 ]; do
    echo "$(echo "$(date +%s.%N) - $t0" | bc) $(cat $1/memory.usage_in_bytes) $(cat $1/memory.kmem.usage_in_bytes) $(awk '$1=="dentry"{d=$2} $1=="ext4_inode_cache"{i=$2} END{print d, i}' /proc/slabinfo)" >> $2 2>/dev/null
    sleep 0.5
  done
}
