# machine: validation/machine-1g.toml
# One pass of 16 KiB random reads over a cold 64 MiB file (every block once: fio's random
# map), first with fio's default POSIX_FADV_RANDOM hint (each miss reads its request
# alone: 4,096 disk reads), then with fadvise_hint=0, where readahead's history lookup
# (try_context_readahead, page_cache_sync_ra since 6.10) reads a window sized by the
# cached pages just before a miss, so the pass needs fewer, larger disk reads as the file
# fills.
fio --name=hint --rw=randread --bs=16k --size=64m --filename=f
fio --name=nohint --rw=randread --bs=16k --size=64m --filename=f --fadvise_hint=0
