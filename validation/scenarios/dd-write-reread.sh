# machine: validation/machine-1g.toml
# Buffered write of a file, sync, a cached re-read, and free.
dd if=/dev/zero of=file bs=1M count=256
sync
dd if=file of=/dev/null bs=1M
free -m
