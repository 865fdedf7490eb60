# Seed 003 — "Why Linux uses swap, part 2" (2020): swappiness 1: swap only as a last resort.
# A 16 GB laptop with a 16 GB swap file; swapdemo maps a 3 GiB "library" read-only and
# 14 GiB of shared anonymous data (MAP_SHARED|MAP_ANONYMOUS: shmem), fills the data, then
# for each 1 GiB chunk reads 3 GiB worth of data pages while picking random library pages
# (code) — data + library = RAM + 1 GiB.
# machine: seed-003
# The machine models the article's pre-5.9 kernel (anon/file balance by recent_rotated /
# recent_scanned). Compare the 5.9+ cost model with:
#   memtwin run scenarios/seed-003-swappiness-1.sh --set kernel=linux-6.x

# The library the demo requires (3 GiB of code-like data, written once).
dd if=/dev/urandom of=library.bin bs=1M count=3072 status=none
sync

# The desktop beside it: a browser and an editor holding about 2 GB between them.
memhog 1536M --comm firefox --active 0.15 &
memhog 512M --comm code --active 0.15 &
sleep 5

sysctl -w vm.swappiness=1
top -b -n 2 -d 60 &
# The article stopped the demo after two minutes ({ sleep 120; killall swapdemo; } &).
time timeout 120 swapdemo
free -m
