#!/bin/bash
# What a v1 cgroup at its limit holds while dd writes and after it exits: usage, kmem,
# cache, rss and dirty pages sampled every few milliseconds (pages), while `sh -c 'dd ...;
# sleep 0.4'` writes 2000 pages in a cgroup limited to 160 pages. Run as root from outside
# any limited cgroup; it creates and removes the cgroup memtwin-stock-test and a directory
# under /tmp.
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
uname -r
mkdir $CG
echo $(( 160 * 4096 )) > $CG/memory.limit_in_bytes
(
  for i in $(seq 1 300); do
    u=$(cat $CG/memory.usage_in_bytes); k=$(cat $CG/memory.kmem.usage_in_bytes)
    echo "usage=$((u / 4096)) kmem=$((k / 4096)) $(awk '$1 == "cache" { c = $2 } $1 == "rss" { r = $2 } $1 == "dirty" { d = $2 }
      END { print "cache=" c / 4096, "rss=" r / 4096, "dirty=" d / 4096 }' $CG/memory.stat) tasks=$(wc -l < $CG/cgroup.procs)"
  done > $D/samples
) &
S=$!
sleep 0.05
sh -c "echo \$\$ > $CG/cgroup.procs; dd if=/dev/zero of=$D/g bs=4k count=2000 status=none; sleep 0.4"
wait $S
# Consecutive equal samples counted once (uniq -c).
uniq -c $D/samples
