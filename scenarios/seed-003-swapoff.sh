# Seed 003 — "Why Linux uses swap, part 2" (2020): swap switched off completely.
# A 16 GB laptop with a 16 GB swap file; swapdemo maps a 3 GiB "library" read-only and
# 14 GiB of shared anonymous data (MAP_SHARED|MAP_ANONYMOUS: shmem), fills the data, then
# for each 1 GiB chunk reads 3 GiB worth of data pages while picking random library pages
# (code) — data + library = RAM + 1 GiB.
# machine: seed-003

# The library the demo requires (3 GiB of code-like data, written once).
dd if=/dev/urandom of=library.bin bs=1M count=3072 status=none
sync

# No desktop beside it this time. The article's top for this run shows "Tasks: 217 total"
# (298 and 302 in the runs with the browser and the editor) and "331,6 used": total minus
# free minus buff/cache, which with swap off holds every anonymous page of every process.
# The browser tab had died in the swappiness-0 run; what is left is the idle session
# (the machine's boot_anon). With 2 GB of desktop on top, 14 GiB of data would not fit
# and the OOM killer would end the demo instead (try it: the memhog lines of the other
# seed-003 scenarios).

swapoff -a
top -b -n 2 -d 60 &
time timeout 120 swapdemo
free -m
