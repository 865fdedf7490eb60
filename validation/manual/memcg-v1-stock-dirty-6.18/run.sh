#!/bin/bash
# Per-CPU charge stocks and v1 cgroup reclaim of dirty pages on a real kernel (cgroup v1
# memory controller at /sys/fs/cgroup/memory). Run as root from outside any limited cgroup;
# it creates and removes one cgroup, memtwin-stock-test, and writes its files under a
# mktemp directory in /tmp (removed at the end). Nothing global is changed.
set -u
CG=/sys/fs/cgroup/memory/memtwin-stock-test
D=$(mktemp -d /tmp/mtstock.XXXX)
cleanup() {
  if [ -d $CG ]; then
    for p in $(cat $CG/cgroup.procs); do echo $p > /sys/fs/cgroup/memory/cgroup.procs; done
    echo 1 > $CG/memory.force_empty 2>/dev/null
    rmdir $CG
  fi
  rm -rf $D
}
trap cleanup EXIT
pages() { echo $(( $1 / 4096 )); }
stat_of() { awk -v k="$1" '$1 == k { print $2 }' $CG/memory.stat; }
st() {
  echo "$1: usage=$(pages $(cat $CG/memory.usage_in_bytes)) cache=$(pages $(stat_of cache)) dirty=$(pages $(stat_of dirty))" \
       "writeback=$(pages $(stat_of writeback)) kmem=$(pages $(cat $CG/memory.kmem.usage_in_bytes)) failcnt=$(cat $CG/memory.failcnt)" \
       "pgpgin=$(stat_of pgpgin) pgpgout=$(stat_of pgpgout)"
}
vm() { grep -E "^(nr_throttled_written|nr_vmscan_immediate_reclaim) " /proc/vmstat | tr '\n' ' '; echo; }
uname -r; nproc
# 1. Usage counts the stocks: pages written by dd in a new cgroup, no limit.
mkdir $CG
for n in 70 10 200; do
  sh -c "echo \$\$ > $CG/cgroup.procs; exec dd if=/dev/zero of=$D/f$n bs=4k count=$n status=none"
  st "after $n pages"
done
# 2. A limit below the dirty page cache (160 pages).
vm
if echo $(( 160 * 4096 )) > $CG/memory.limit_in_bytes; then echo "limit write: ok"; else echo "limit write: failed"; fi
st "limit 160 pages"
vm
echo 1 > $CG/memory.force_empty; rmdir $CG; rm -f $D/*
# 3. dd of 400 pages into a new cgroup limited to 160 pages, three rounds.
for i in 1 2 3; do
  mkdir $CG
  echo $(( 160 * 4096 )) > $CG/memory.limit_in_bytes
  vm
  t0=$(date +%s%N)
  sh -c "echo \$\$ > $CG/cgroup.procs; exec dd if=/dev/zero of=$D/g bs=4k count=400 status=none"
  t1=$(date +%s%N)
  st "round $i: dd of 400 pages at a limit of 160 ($(( (t1 - t0) / 1000 )) us with sh's fork and exec)"
  vm
  echo 1 > $CG/memory.force_empty; rmdir $CG; rm -f $D/g
done
