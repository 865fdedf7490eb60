# machine: validation/machine-1g.toml
# 600 MiB of cached file, then 700 MiB of anonymous memory in the same 1 GiB: reclaim
# evicts the cache and swaps; the file's re-read then refaults from disk.
dd if=/dev/zero of=file bs=1M count=600
sync
memhog 700M --active 0.1 --every 1 &
sleep 4
dd if=file of=/dev/null bs=1M
free -m
