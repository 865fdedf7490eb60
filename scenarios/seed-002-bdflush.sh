# Seed 002 — "/proc tuning" (@IT, 2002), file I/O: bdflush thresholds (DIGEST.md items 15-16).
# The article copies an 80 MB file with `time cp` on a 128 MB machine running Linux 2.4,
# first with vm.bdflush's soft and hard limits at 30% and 60% (the defaults), then at 100%:
# real 5.52 s against 3.81 s, while user (0.03 / 0.04 s) and sys (1.07 / 1.08 s) stay the
# same. 30% of 128 MB is ~40 MB, so an 80 MB copy crosses the soft limit: from there cp
# itself starts writing dirty buffers out as it dirties more (and, past the hard limit, waits
# for them), and the disk alternates between reading the source and writing the copy. At
# 100% the copy ends before any threshold is reached and the data stays in memory.
# machine: seed-002
#
# The vm.bdflush vector: nfract ndirty - - interval age_buffer nfract_sync nfract_stop -
# (soft limit %, buffers per bdflush pass, -, -, kupdate interval and buffer age in jiffies,
# hard limit %, bdflush stop %). Its modern equivalents are vm.dirty_background_ratio,
# vm.dirty_ratio, vm.dirty_writeback_centisecs and vm.dirty_expire_centisecs.
# Each copy starts cold: the source is written and the machine rebooted, which is how a
# page cache was emptied on Linux 2.4 (drop_caches came with 2.6.16). `reboot` syncs, boots
# the same machine again and keeps what is on its disk; settings made with sysctl are gone,
# so each copy sets vm.bdflush after it.

cat /proc/sys/vm/bdflush
dd if=/dev/zero of=/root/src bs=1M count=80
reboot
free

# The defaults: soft limit 30%, hard limit 60%.
sysctl -w vm.bdflush="30 500 0 0 500 3000 60 20 0"
vmstat 1 6 > /root/vmstat-30-60.txt &
time cp /root/src /root/dst
wait
cat /root/vmstat-30-60.txt

# Start the second copy cold as well: the first copy's data goes to disk and out of memory.
rm -f /root/dst
reboot

# Both limits at 100%: the 80 MB copy never reaches them.
sysctl -w vm.bdflush="100 500 0 0 500 3000 100 20 0"
vmstat 1 4 > /root/vmstat-100-100.txt &
time cp /root/src /root/dst
wait
cat /root/vmstat-100-100.txt
free
