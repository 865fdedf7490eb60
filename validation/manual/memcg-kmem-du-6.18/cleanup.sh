#!/bin/bash
# Remove every memtwin-kmem-* cgroup (tasks moved out, force_empty, rmdir) and the tree. Run from outside the cgroups.
source /tmp/kmem-real/lib.sh
trap 'echo "remaining cgroups: [$(ls -d $CGR/memtwin-kmem-* 2>/dev/null)]"; echo "tree present: $( [ -e /tmp/kmem-real/tree ] && echo yes || echo no)"' EXIT
grep memory /proc/self/cgroup
for d in $CGR/memtwin-kmem-*; do [ -d "$d" ] && { echo "removing $d"; cg_remove $d; }; done
rm -rf /tmp/kmem-real/tree
