# Seed 000 — "Linux memory basics and how to read vmstat" (Qiita, 2016), the swap half.
# dd with a 2 GiB buffer on the 1.9 GB VM: the buffer is anonymous memory, so the cache
# collapses and the kernel swaps (so, swpd); when dd exits free memory comes back but the
# evicted file is re-read from disk (bi) — once; the next read is served from the cache.
# machine: seed-000

dd if=/dev/zero of=test bs=1M count=512 status=none
sync
free
vmstat 1 14 &
dd if=/dev/zero of=/dev/null bs=2G count=1
wait
free

# The file's cache was evicted: reading it costs disk reads again, once.
vmstat 1 2 &
dd if=test of=/dev/null bs=1M count=512
wait
dd if=test of=/dev/null bs=1M count=512
