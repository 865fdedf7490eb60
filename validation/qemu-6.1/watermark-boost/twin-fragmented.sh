# machine: validation/qemu-6.1/watermark-boost/machine.toml
# guest-fragmented.sh in the twin: two files read at once interleave their page cache;
# deleting one leaves plenty of free memory in small runs; then `du` over 200,000 files
# grows reclaimable slab, with vm.watermark_boost_factor 15000 and 0.
dd if=/dev/zero of=/a bs=1M count=800
dd if=/dev/zero of=/b bs=1M count=800
sync
for f in 15000 0; do
  echo $f > /proc/sys/vm/watermark_boost_factor
  echo "=== watermark_boost_factor $f"
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
  cp /a /a2; cp /b /b2; sync
  echo 3 > /proc/sys/vm/drop_caches; sleep 1
  dd if=/a2 of=/dev/null bs=4k 2>/dev/null &
  dd if=/b2 of=/dev/null bs=4k 2>/dev/null &
  wait
  rm /a2; sleep 2
  grep -E '^ +(boost|pages free|min|low|high) ' /proc/zoneinfo
  grep -E '^(pgscan_kswapd|pgsteal_kswapd|pgscan_direct|pgsteal_direct|allocstall_normal|pageoutrun|kswapd_low_wmark_hit_quickly|kswapd_high_wmark_hit_quickly|slabs_scanned|nr_vmscan_write|workingset_refault_file) ' /proc/vmstat
  grep -E '^(MemFree|Cached|Buffers|SReclaimable|Slab):' /proc/meminfo
  cat /proc/buddyinfo
  du -s /export
  sleep 2
  grep -E '^ +(boost|pages free|min|low|high) ' /proc/zoneinfo
  grep -E '^(pgscan_kswapd|pgsteal_kswapd|pgscan_direct|pgsteal_direct|allocstall_normal|pageoutrun|kswapd_low_wmark_hit_quickly|kswapd_high_wmark_hit_quickly|slabs_scanned|nr_vmscan_write|workingset_refault_file) ' /proc/vmstat
  grep -E '^(MemFree|Cached|Buffers|SReclaimable|Slab):' /proc/meminfo
  rm /b2
done
