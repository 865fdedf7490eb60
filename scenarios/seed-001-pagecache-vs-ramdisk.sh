# Seed 001, phenomenon 14: a RAM disk is not always faster, because the page cache already
# keeps files in RAM. A working set that fits in memory is read back from disk files as fast as
# from tmpfs once it is cached; only the first (cold) read of a disk file waits for the disk.
# Where tmpfs does win: the cold read, and writes that must be durable (fsync), which on a disk
# wait for the device while on tmpfs they return at once — at the price of losing everything on
# a crash (see seed-001-ramdisk.sh).
# machine: default

# The same 1 GiB data set on the disk (/root) and on the RAM disk (/dev/shm).
dd if=/dev/zero of=/root/data bs=1M count=1024
sync
cp /root/data /dev/shm/data
free

# Cold: the disk file is not in the page cache (drop_caches), the RAM disk file stays.
echo 3 > /proc/sys/vm/drop_caches
free
time dd if=/root/data of=/dev/null bs=1M

# Warm: the second read of the disk file comes from the page cache, at the RAM disk's speed.
time dd if=/root/data of=/dev/null bs=1M
time dd if=/dev/shm/data of=/dev/null bs=1M
free

# Temp files that are written and read back: buffered writes to the disk go to the page cache
# at memory speed as well (well below the dirty limits) ...
time dd if=/dev/zero of=/root/tmpfile bs=1M count=256
time dd if=/dev/zero of=/dev/shm/tmpfile bs=1M count=256
# ... but a write that must reach stable storage waits for the disk; on tmpfs fsync is free.
time dd if=/dev/zero of=/root/tmpfile bs=1M count=256 conv=fsync
time dd if=/dev/zero of=/dev/shm/tmpfile bs=1M count=256 conv=fsync
