#!/bin/bash
# Step 1+2: build tree inside memtwin-kmem-build, then force_empty it.
source /tmp/kmem-real/lib.sh
B=$CGR/memtwin-kmem-build
trap 'echo "trap: exiting step12 (cgroup kept for later steps; cleanup.sh removes it)"' EXIT
mkdir $B || exit 1
echo "== before build (global)"; globals
echo "== build"
bash -c "echo \$\$ > $B/cgroup.procs; cat /proc/self/cgroup | grep memory; exec /usr/bin/time -v /usr/bin/python3 /tmp/kmem-real/build_tree.py" 2>&1 | grep -E 'files=|memory|Elapsed|Maximum resident'
sync
echo "== after build: memtwin-kmem-build"; cgfigs $B; cgstat $B
echo "== after build (global)"; globals
echo "== force_empty"
s=$(date +%s.%N); echo 0 > $B/memory.force_empty; echo "  force_empty rc=$? took $(echo "$(date +%s.%N)-$s"|bc) s"
echo "== after force_empty: memtwin-kmem-build"; cgfigs $B; cgstat $B
echo "== after force_empty (global)"; globals
