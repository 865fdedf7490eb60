# Seed 004 — "Split-Reclaim Method for Reducing Page De-allocation Delay on Multi-core File
# Server" (Hitachi, Linux 2.6.39-rc4), Table 1: the standard SPEC SFS 3.0 mix at 60,000 ops/s
# from 2 clients x 300 load processes against the 32-core NFS server, classic reclaim.
# SFS creates its file set from the requested load (10 MB per op/s: ~22 million files of
# its size mix under /export). Its INIT phase creates every file, leaving their dentries and
# inodes in the slab: here a LOOKUP + GETATTR pass over the file set (the generated files
# are on the disk already). The warm-up then fills memory with the files the mix reads and
# writes, and the measured minute runs with memory full. Table 1 is the reclaim record of
# the load, warm-up and measured minute apart. See docs/seed-004.md.
# machine: seed-004

# 256 server threads (the paper does not give its count; docs/seed-004.md).
rpc.nfsd 256
sfs --storm --ops 60000 --procs 300 --clients 2 > /dev/null
reclaimstat -z
sfs --ops 60000 --procs 300 --clients 2 --warmup 840 --runtime 60 &
sleep 840
# The warm-up: memory fills, and kswapd's first dentry batch walks every dentry INIT left.
reclaimstat
reclaimstat -z
wait
# The measured minute.
reclaimstat
grep -E '^(MemFree|Cached|Slab|SReclaimable|SUnreclaim)' /proc/meminfo
