#!/bin/bash
# Page tables of anonymous memory on a real kernel: a process touches N bytes of anonymous
# memory (python3's bytearray, every page written); VmPTE (the process's page tables),
# /proc/meminfo PageTables and, with the process in a new v1 memory cgroup, the cgroup's
# kmem counter are read before and after. Run as root outside any limited cgroup; it
# creates and removes one cgroup, memtwin-pgtable-test. Nothing global is changed.
set -u
CG=/sys/fs/cgroup/memory/memtwin-pgtable-test
cleanup() {
  if [ -d $CG ]; then
    for p in $(cat $CG/cgroup.procs); do echo $p > /sys/fs/cgroup/memory/cgroup.procs; done
    rmdir $CG
  fi
}
trap cleanup EXIT
uname -r
mkdir $CG
for mb in 64 256 1024; do
  sh -c "echo \$\$ > $CG/cgroup.procs; exec python3 -c '
import re, sys
def f(path, key):
    return int(re.search(key + r\":\s+(\d+)\", open(path).read()).group(1))
kmem = lambda: int(open(\"$CG/memory.kmem.usage_in_bytes\").read()) // 1024
pte0, pt0, k0 = f(\"/proc/self/status\", \"VmPTE\"), f(\"/proc/meminfo\", \"PageTables\"), kmem()
b = bytearray(b\"\x01\") * ($mb << 20)
pte1, pt1, k1 = f(\"/proc/self/status\", \"VmPTE\"), f(\"/proc/meminfo\", \"PageTables\"), kmem()
print(\"$mb MiB touched: VmPTE +%d kB, PageTables +%d kB, cgroup kmem +%d kB\" % (pte1 - pte0, pt1 - pt0, k1 - k0))
'"
  sleep 1; echo "  after exit (1 s): cgroup kmem $(( $(cat $CG/memory.kmem.usage_in_bytes) / 1024 )) kB, usage $(( $(cat $CG/memory.usage_in_bytes) / 1024 )) kB"
done
