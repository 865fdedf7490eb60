# machine: examples/file-tree.toml
# Attribute lookups over every file of a tree (du stats each entry): the dentry and inode
# caches grow in Slab, the directory and inode-table blocks in Buffers; drop_caches 2
# gives the unused dentries and inodes back.
grep -E '^(Buffers|Slab|SReclaimable)' /proc/meminfo
time du -s /export
grep -E '^(Buffers|Slab|SReclaimable)' /proc/meminfo
echo 2 > /proc/sys/vm/drop_caches
grep -E '^(Buffers|Slab|SReclaimable)' /proc/meminfo
