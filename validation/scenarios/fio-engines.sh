# machine: validation/machine-1g.toml
# fio's engines on one 256 MiB file, each job starting cold (fio's invalidate=1): 4 KiB
# random reads with psync, buffered libaio and io_uring at depth 8 and O_DIRECT io_uring at
# depth 8; a sequential 64 KiB read (readahead, with fio's POSIX_FADV_SEQUENTIAL); 4 KiB
# random writes with buffered libaio and io_uring at depth 8 (io_uring punts them to io-wq).
fio --name=psync --rw=randread --bs=4k --size=256m --filename=f --runtime=2 --time_based
fio --name=libaio --rw=randread --bs=4k --size=256m --filename=f --ioengine=libaio --iodepth=8 --runtime=2 --time_based
fio --name=uring --rw=randread --bs=4k --size=256m --filename=f --ioengine=io_uring --iodepth=8 --runtime=2 --time_based
fio --name=direct --rw=randread --bs=4k --size=256m --filename=f --direct=1 --ioengine=io_uring --iodepth=8 --runtime=2 --time_based
fio --name=seq --rw=read --bs=64k --size=256m --filename=f
fio --name=wlibaio --rw=randwrite --bs=4k --size=256m --filename=f --ioengine=libaio --iodepth=8 --runtime=2 --time_based
fio --name=wuring --rw=randwrite --bs=4k --size=256m --filename=f --ioengine=io_uring --iodepth=8 --runtime=2 --time_based
