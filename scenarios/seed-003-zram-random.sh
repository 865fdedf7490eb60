# Seed 003 — "Why Linux uses swap, part 2" (2020): zram swap with random, incompressible data.
# A 16 GB laptop with a 16 GB swap file; swapdemo maps a 3 GiB "library" read-only and
# 14 GiB of shared anonymous data (MAP_SHARED|MAP_ANONYMOUS: shmem), fills the data, then
# for each 1 GiB chunk reads 3 GiB worth of data pages while picking random library pages
# (code) — data + library = RAM + 1 GiB.
# machine: seed-003

# The library the demo requires (3 GiB of code-like data, written once).
dd if=/dev/urandom of=library.bin bs=1M count=3072 status=none
sync

# The desktop beside it: a browser and an editor holding about 2 GB between them.
memhog 1536M --comm firefox --active 0.15 &
memhog 512M --comm code --active 0.15 &
sleep 5

# Fedora's zram-generator: zram0 of min(RAM/2, 4 GiB), priority 100, before the file.
zramctl --find --size 4G
mkswap /dev/zram0
swapon -p 100 /dev/zram0
time swapdemo --fill random
zramctl
free -m
