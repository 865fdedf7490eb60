# fio and the page cache: the same 4 KiB random reads of a 256 MiB file, served from the page
# cache, from the disk with O_DIRECT at queue depth 1 and 16, and from a file that does not
# fit in memory. A cached random read costs a page-cache lookup and a copy (about a
# microsecond); a cold one waits for the device (a virtio disk's ~200 us); libaio with
# iodepth=16 overlaps requests in the device queue (buffered, only io_uring does); a file larger than RAM keeps missing,
# with the refaults vmstat counts.
# machine: seed-000

# Lay the file out and read it once, so that it is in the page cache.
fio --name=warm --rw=read --bs=1m --size=256m --filename=data --invalidate=0

# Cached: invalidate=0 keeps the pages fio's default (invalidate=1) would drop first.
fio --name=cached --rw=randread --bs=4k --size=256m --filename=data --invalidate=0 --runtime=5 --time_based

# Cold: O_DIRECT bypasses the cache; every read is a device request.
fio --name=cold --rw=randread --bs=4k --size=256m --filename=data --direct=1 --runtime=5 --time_based

# Cold with 16 requests in flight.
fio --name=cold-qd16 --rw=randread --bs=4k --size=256m --filename=data --direct=1 --ioengine=libaio --iodepth=16 --runtime=5 --time_based

# Buffered libaio does not overlap anything: io_submit itself reads the page (aio has no
# async buffered read), so slat is one device read, clat the wait behind 15 queued events,
# and the IOPS those of psync. Buffered io_uring (5.9+) arms a wait on the page and
# returns: 16 reads at the device, as with O_DIRECT.
fio --name=buffered-libaio-qd16 --rw=randread --bs=4k --size=256m --filename=data --ioengine=libaio --iodepth=16 --runtime=5 --time_based
fio --name=buffered-io_uring-qd16 --rw=randread --bs=4k --size=256m --filename=data --ioengine=io_uring --iodepth=16 --runtime=5 --time_based

# Skewed reads of a file larger than RAM: zipf keeps a hot set cached, uniform keeps missing.
fio --name=uniform --rw=randread --bs=4k --size=3g --filename=big --norandommap --runtime=10 --time_based
fio --name=zipf --rw=randread --bs=4k --size=3g --filename=big --random_distribution=zipf:1.2 --invalidate=0 --runtime=10 --time_based
vmstat 1 1
