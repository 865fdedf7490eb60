# machine: machines/qemu-6.1.toml
# guest.sh in the twin: the same commands. Run from the repository root:
#   memtwin run validation/qemu-6.1/swap-cache-nodes/twin.sh --machine machines/qemu-6.1.toml
mkdir -p /mnt/t
mount -t tmpfs -o size=3G tmpfs /mnt/t
echo "== start"
grep -E '^radix_tree_node ' /proc/slabinfo
grep -E '^(workingset_nodes|pswpout|pswpin) ' /proc/vmstat
grep -E '^(SwapFree|SwapCached|Shmem|Slab|SReclaimable):' /proc/meminfo
dd if=/dev/zero of=/mnt/t/f bs=1M count=2560
sleep 5
echo "== written"
grep -E '^radix_tree_node ' /proc/slabinfo
grep -E '^(workingset_nodes|pswpout|pswpin) ' /proc/vmstat
grep -E '^(SwapFree|SwapCached|Shmem|Slab|SReclaimable):' /proc/meminfo
rm /mnt/t/f
sleep 2
echo "== removed"
grep -E '^radix_tree_node ' /proc/slabinfo
grep -E '^(workingset_nodes|pswpout|pswpin) ' /proc/vmstat
grep -E '^(SwapFree|SwapCached|Shmem|Slab|SReclaimable):' /proc/meminfo
