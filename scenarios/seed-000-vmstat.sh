# Seed 000 — "Linux memory basics and how to read vmstat" (Qiita, 2016), the page-cache half.
# Replays the article's commands on its 1.9 GB VM with a virtio disk. Background vmstat and
# iotop stand for the second terminal the article watched them in.
# machine: seed-000

# The four states of memory: used, cache (buff + cache), free, swap.
free

# Start clean: swap everything back in, then empty the page cache.
swapoff -a && swapon -a
free
echo 1 > /proc/sys/vm/drop_caches

# Buffered write: dd finishes at memory speed until the dirty limits throttle it; the
# flusher writes the rest back, the last part 30 s later (dirty_expire_centisecs).
vmstat 1 40 &
dd if=/dev/zero of=test bs=1M count=512
wait

# Read it straight back: every page is in the page cache (bi = 0, GB/s).
vmstat 1 2 &
dd if=test of=/dev/null bs=1M count=512
wait

# O_DIRECT write: only dd does I/O; opening with O_TRUNC drops the file's cached pages.
iotop -b -o -n 3 -d 1 &
vmstat 1 5 &
dd if=/dev/zero of=test bs=1M count=512 oflag=direct
wait

# Buffered write again: dd and the flusher both do I/O (b = 2).
iotop -b -o -n 2 -d 1 &
vmstat 1 4 &
dd if=/dev/zero of=test bs=1M count=512
wait
sync

# Deleting the file frees its page cache at once.
rm -f test
vmstat 1 2

# Reading the raw block device fills the buffer cache (buff), not the page cache.
vmstat 1 3 &
dd if=/dev/vda of=/dev/null bs=1M count=512
wait
dd if=/dev/vda of=/dev/null bs=1M count=512
free
