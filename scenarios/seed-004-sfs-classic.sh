# Seed 004 — "Split-Reclaim Method for Reducing Page De-allocation Delay on Multi-core File
# Server" (Hitachi, Linux 2.6.39-rc4), Table 1: the standard SPEC SFS 3.0 mix at 60,000 ops/s
# from 2 clients x 300 load processes against the 32-core NFS server, classic reclaim.
# SFS creates its file set from the requested load (10 MB per op/s: ~22 million files of
# its size mix under /export); the warm-up fills memory with the files it reads and writes
# and with their dentries and inodes, and the measured minute runs under memory pressure.
# Table 1 is the reclaim record of that minute. See docs/seed-004.md.
# machine: seed-004

# 256 server threads (the paper does not give its count; docs/seed-004.md).
rpc.nfsd 256
sfs --ops 60000 --procs 300 --clients 2 --warmup 240 --runtime 60 &
sleep 240
reclaimstat -z
wait
reclaimstat
grep -E '^(MemFree|Cached|Slab|SReclaimable|SUnreclaim)' /proc/meminfo
