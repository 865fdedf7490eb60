# machine: validation/qemu-6.1/watermark-boost/machine.toml
# guest-fill.sh in the twin: page cache fills memory, then `du` over 200,000 files grows
# reclaimable slab, with vm.watermark_boost_factor 15000 and 0. The tree exists from boot.
dd if=/dev/zero of=/big bs=1M count=2600
sync
for f in 15000 0; do
  echo $f > /proc/sys/vm/watermark_boost_factor
  echo "=== watermark_boost_factor $f"
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
  dd if=/big of=/dev/null bs=1M
  sleep 2
  grep -E '^ +(boost|pages free|min|low|high) ' /proc/zoneinfo
  grep -E '^(pgscan_kswapd|pgsteal_kswapd|pgscan_direct|pgsteal_direct|allocstall_normal|pageoutrun|kswapd_low_wmark_hit_quickly|kswapd_high_wmark_hit_quickly|slabs_scanned|nr_vmscan_write|workingset_refault_file) ' /proc/vmstat
  grep -E '^(MemFree|Cached|Buffers|SReclaimable|Slab):' /proc/meminfo
  du -s /export
  sleep 2
  grep -E '^ +(boost|pages free|min|low|high) ' /proc/zoneinfo
  grep -E '^(pgscan_kswapd|pgsteal_kswapd|pgscan_direct|pgsteal_direct|allocstall_normal|pageoutrun|kswapd_low_wmark_hit_quickly|kswapd_high_wmark_hit_quickly|slabs_scanned|nr_vmscan_write|workingset_refault_file) ' /proc/vmstat
  grep -E '^(MemFree|Cached|Buffers|SReclaimable|Slab):' /proc/meminfo
done
