# Seed 004 — Table 2, the worst case: attribute lookups over 78 million files (LOOKUP and
# GETATTR of every file over NFS from 2 clients x 300 load processes), classic reclaim. Every
# file's dentry and inode go through the slab: slab outgrows memory and reclaim must free
# it. Table 2 is this run's reclaim record and the storm's total time. docs/seed-004.md.
# machine: seed-004

rpc.nfsd 256
reclaimstat -z
sfs --storm --files 78000000 --procs 300 --clients 2
reclaimstat
grep -E '^(MemFree|Cached|Slab|SReclaimable|SUnreclaim)' /proc/meminfo
