# machine: validation/machine-1g.toml
# Light pressure with plenty of clean inactive file cache: get_scan_count's cache_trim_mode
# reclaims file pages only (pgscan_anon and pswpout stay near 0).
dd if=/dev/zero of=file bs=1M count=400
sync
dd if=file of=/dev/null bs=1M
memhog 700M --active 0.01 --every 1 &
sleep 4
