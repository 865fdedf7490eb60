#!/bin/sh
# Real-kernel measurement: radix_tree_node objects (page-cache tree nodes) per file read,
# and their memory-cgroup charge. Root, cgroup v1 memory controller at
# /sys/fs/cgroup/memory; makes and removes the cgroup memtwin-xa-test and the directory
# $DIR (default /tmp/xatest). Each file's pages are dropped with POSIX_FADV_DONTNEED before
# it is read (no shadow entries: the tree is emptied), then the files are read in the cgroup.
set -eu
DIR=${DIR:-/tmp/xatest}
CG=/sys/fs/cgroup/memory/memtwin-xa-test
mkdir -p "$DIR/one" "$DIR/two"
cleanup() { rmdir "$CG" 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT INT TERM
dd if=/dev/zero of="$DIR/big" bs=1M count=256 status=none
python3 - "$DIR" <<'PY'
import sys
d = sys.argv[1]
for i in range(5000):
    open(f"{d}/one/{i}", "wb").write(b"x" * 4096)
    open(f"{d}/two/{i}", "wb").write(b"x" * 8192)
PY
sync
cat > "$DIR/read.py" <<'PY'
import os, sys, time
d, cg = sys.argv[1], sys.argv[2]
def radix():
    for l in open("/proc/slabinfo"):
        if l.startswith("radix_tree_node "):
            return int(l.split()[1])
def kmem():
    return int(open(cg + "/memory.kmem.usage_in_bytes").read())
def evict(p):
    fd = os.open(p, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
def read(p):
    with open(p, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass
groups = {"256 MiB file": [d + "/big"], "5,000 one-page files": [f"{d}/one/{i}" for i in range(5000)], "5,000 two-page files": [f"{d}/two/{i}" for i in range(5000)]}
for g, files in groups.items():
    for f in files:
        evict(f)
    time.sleep(0.5)
    r0, k0 = radix(), kmem()
    for f in files:
        read(f)
    r1, k1 = radix(), kmem()
    print(f"{g}: radix_tree_node {r1 - r0:+d} objects, cgroup kmem {(k1 - k0) / 1024:+.0f} kB")
PY
mkdir "$CG"
uname -r
grep ^radix_tree_node /proc/slabinfo
for i in 1 2 3; do
    sh -c "echo \$\$ > $CG/cgroup.procs; exec python3 $DIR/read.py $DIR $CG"
done
