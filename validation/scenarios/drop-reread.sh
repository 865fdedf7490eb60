# machine: validation/machine-1g.toml
# A cached file dropped with drop_caches and read again twice: invalidation clears the
# shadow entries (no workingset_refault_file), the second read activates it.
dd if=/dev/zero of=file bs=1M count=128
sync
dd if=file of=/dev/null bs=1M
echo 3 > /proc/sys/vm/drop_caches
dd if=file of=/dev/null bs=1M
dd if=file of=/dev/null bs=1M
