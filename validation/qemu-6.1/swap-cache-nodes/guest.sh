# swap-cache-nodes: the swap cache's trees on 6.1. 2.5 GiB of zeros written to a tmpfs file
# on the ~1.9 GiB guest push about a third of it out to swap; the swapped pages' slots keep
# shadow entries in the swap cache, whose tree nodes are radix_tree_node objects (with the
# tmpfs file's own tree). Removing the file frees the slots, their entries and the nodes.
# run: run.sh --ram 2048M --swap 4096M --cpus 2 --disk-mb 1024 --put guest.sh guest.sh OUT
show() {
    echo "== $1"
    grep -E '^radix_tree_node ' /proc/slabinfo
    grep -E '^(workingset_nodes|pswpout|pswpin) ' /proc/vmstat
    grep -E '^(SwapFree|SwapCached|Shmem|Slab|SReclaimable):' /proc/meminfo
}
mkdir -p /mnt/t
mount -t tmpfs -o size=3G tmpfs /mnt/t
show start
dd if=/dev/zero of=/mnt/t/f bs=1M count=2560
sleep 5
show written
rm /mnt/t/f
sleep 2
show removed
