# machine: validation/machine-1g.toml
# Scenario (a) of docs/memcg.md: a file twice the cgroup's limit is read through the page
# cache; reclaim inside the cgroup evicts the file's own cache (memcg reclaim on both sides
# with --twin-memcg).
dd if=/dev/zero of=file bs=1M count=1500
sync
echo 3 > /proc/sys/vm/drop_caches
dd if=file of=/dev/null bs=1M
dd if=file of=/dev/null bs=1M
free -m
