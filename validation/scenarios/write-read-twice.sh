# machine: validation/machine-1g.toml
# A written file read twice: since 4.7 the write leaves the page unreferenced, the first
# read sets PG_referenced, the second activates (pgactivate, active_file).
dd if=/dev/zero of=file bs=1M count=64
sync
dd if=file of=/dev/null bs=1M
dd if=file of=/dev/null bs=1M
