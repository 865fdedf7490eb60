#!/bin/bash
# One measured run: ./run_one.sh <limit: unlimited|64M|32M> <round> [du|find]
source /tmp/kmem-real/lib.sh
LIM=$1; R=$2; MODE=${3:-du}
D=$CGR/memtwin-kmem-du
TAG=${MODE}_${LIM}_r${R}; OUT=/tmp/kmem-real/logs/$TAG
SPID=
cleanup() { [ -n "$SPID" ] && kill $SPID 2>/dev/null; wait 2>/dev/null; cg_remove $D; }
trap cleanup EXIT
trap 'exit 1' INT TERM
# fresh cgroup: remove a leftover one (move tasks out, force_empty, rmdir) and re-create it
cg_remove $D
# also keep the build cgroup empty (it should already be ~0)
echo 0 > $CGR/memtwin-kmem-build/memory.force_empty
mkdir $D || exit 1
[ "$LIM" != unlimited ] && echo $LIM > $D/memory.limit_in_bytes
{
echo "=== $TAG  $(date -Is)"
echo "== du cgroup right after mkdir"; cgfigs $D
echo "== global BEFORE"; globals
} > $OUT.txt
sampler $D $OUT.samples & SPID=$!
if [ $MODE = du ]; then CMD="du -s /tmp/kmem-real/tree"; else CMD="sh -c 'find /tmp/kmem-real/tree -type f | wc -l'"; fi
bash -c "echo \$\$ > $D/cgroup.procs; exec /usr/bin/time -v timeout 1200 $CMD" > $OUT.time 2>&1
kill $SPID; wait $SPID 2>/dev/null; SPID=
{
echo "== command: $CMD"; sed 's/^/  /' $OUT.time
echo "== du cgroup AFTER"; cgfigs $D; cgstat $D
echo "== global AFTER"; globals
echo "== samples (t_s usage kmem_usage g_dentry_active g_ext4inode_active)"; sed 's/^/  /' $OUT.samples
} >> $OUT.txt
echo "$TAG: $(grep -E 'Elapsed' $OUT.time | awk '{print $NF}') kmem=$(cat $D/memory.kmem.usage_in_bytes) maxkmem=$(cat $D/memory.kmem.max_usage_in_bytes) usage=$(cat $D/memory.usage_in_bytes) failcnt=$(cat $D/memory.failcnt)"
