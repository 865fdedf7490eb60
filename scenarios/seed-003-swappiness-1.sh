# Seed 003 — "Why Linux uses swap, part 2" (2020): swappiness 1: swap only as a last resort.
# A 16 GB laptop with a 16 GB swap file; swapdemo maps a 3 GiB "library" read-only and
# 14 GiB of shared anonymous data (MAP_SHARED|MAP_ANONYMOUS: shmem), fills the data, then
# for each 1 GiB chunk reads 3 GiB worth of data pages while picking random library pages
# (code) — data + library = RAM + 1 GiB.
# machine: seed-003
# The machine models the article's Linux 5.8. Compare the other eras' anon/file balance:
#   memtwin run scenarios/seed-003-swappiness-1.sh --set kernel=linux-5.4   # by rotations
#   memtwin run scenarios/seed-003-swappiness-1.sh --set kernel=linux-6.x   # 5.9+ anon LRU

# The library the demo requires (3 GiB of code-like data, written once).
dd if=/dev/urandom of=library.bin bs=1M count=3072 status=none
sync

# The desktop beside it: a browser and an editor holding about 2 GB between them.
memhog 1536M --comm firefox --active 0.15 &
memhog 512M --comm code --active 0.15 &
sleep 5

# This run's top shows "MiB Swap: 20480,0 total": Fedora's 4 GiB zram was on, before
# the 16 GiB file.
zramctl --find --size 4G
mkswap /dev/zram0
swapon -p 100 /dev/zram0

sysctl -w vm.swappiness=1
top -b -n 2 -d 60 &
# The article stopped the demo after two minutes ({ sleep 120; killall swapdemo; } &).
time timeout 120 swapdemo
free -m
