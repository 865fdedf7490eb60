# Seed 001 — "Linux Tips: using the RAM disk (/dev/shm) for I/O tuning", phenomena 11 and 12.
# A RAM disk is tmpfs: its files are page-cache pages with no disk behind them (Shmem, shown
# by free as `shared` and inside `buff/cache`), limited by a size (half of RAM by default),
# written at memory speed, never dropped by drop_caches — and gone when the machine stops.
# machine: default
#
# Transcript conventions for the two machine-level built-ins:
#   crash    the power goes: nothing is synced, running jobs die. One line follows the
#            echoed command:  --- crash: power lost at T s, the machine boots again ---
#   reboot   a clean restart: background jobs are stopped, everything is synced, then:
#            --- reboot: synced and restarted at T s ---
# The script then goes on on the new boot. The clock keeps running; memory, caches, swap,
# sysctl settings and /proc counters start afresh; /dev/shm is mounted again at its default
# size and empty; /mnt/ram is not mounted (it is not in /etc/fstab). Disk files keep what
# reached the disk: data whose writeback (or O_DIRECT write) completed, and names the ext4
# journal committed (every 5 s, or at sync).

# The default /dev/shm: half of MemTotal.
df -h
free

# The article's commands: re-create /dev/shm at 384 MB and mount a second RAM disk.
umount /dev/shm
mount -t tmpfs -o size=384m tmpfs /dev/shm
mkdir /mnt/ram
mount -t tmpfs -o size=384m /dev/shm /mnt/ram
# Resizing in place works too (the files stay).
mount -o remount,size=384m /dev/shm
df -h

# Temp files on the RAM disk: memory speed, no disk I/O; shared and buff/cache grow.
dd if=/dev/zero of=/mnt/ram/work1 bs=1M count=128
dd if=/dev/zero of=/mnt/ram/work2 bs=1M count=128
free
df -h /mnt/ram

# The size limit: writes past 384 MB fail with ENOSPC; what was written stays.
dd if=/dev/zero of=/mnt/ram/big bs=1M count=256
cp /mnt/ram/work1 /mnt/ram/copy
ls -l /mnt/ram
df -h /mnt/ram

# drop_caches frees clean page cache only: the RAM disk stays in shared and buff/cache.
echo 3 > /proc/sys/vm/drop_caches
free

# Results written to the disk: one synced, one left to writeback 40 s before the crash (the
# flusher writes inodes dirty for dirty_expire_centisecs = 30 s), and two written 10 s before
# the crash without sync: a 1 GiB one (background writeback started on it: partly on disk) and
# a small one (still only in the page cache).
dd if=/dev/zero of=/root/result-synced bs=1M count=256
sync
dd if=/dev/zero of=/root/result-old bs=1M count=256
sleep 30
dd if=/dev/zero of=/root/result-recent bs=1M count=1024
dd if=/dev/zero of=/root/notes bs=1M count=16
sleep 10
ls -l /root /mnt/ram
crash

# After the power loss: the RAM disk's files are gone (/mnt/ram is only the empty directory on
# /, as it was not in fstab), /dev/shm is back at its default size and empty; the synced file
# and the one the flusher wrote are whole, the recent ones lost their unwritten data.
df -h /dev/shm /mnt/ram
ls -l /mnt/ram /root
stat -c '%n %s' /root/result-synced /root/result-old /root/result-recent /root/notes
free

# A clean reboot syncs first: nothing on the disk is lost; tmpfs starts empty all the same.
dd if=/dev/zero of=/root/rerun bs=1M count=128
dd if=/dev/zero of=/dev/shm/scratch bs=1M count=64
reboot
ls -l /root /dev/shm
