# machine: validation/machine-1g.toml
# fio's mmap engine over a cold 64 MiB file (fio's invalidate=1), with fio's madvise
# (fadvise_hint=1: MADV_SEQUENTIAL for the stream, MADV_RANDOM for the random job) and
# without (fadvise_hint=0). Without advice a major fault reads ra_pages around the page,
# the last quarter of it marked (PG_readahead): a stream takes one major fault and random
# faults read the file in a few large windows; MADV_RANDOM reads each page alone.
fio --name=seq --rw=read --bs=64k --size=64m --filename=f --ioengine=mmap
fio --name=seqnohint --rw=read --bs=64k --size=64m --filename=f --ioengine=mmap --fadvise_hint=0
fio --name=rand --rw=randread --bs=4k --size=64m --filename=f --ioengine=mmap --runtime=2 --time_based
fio --name=randnohint --rw=randread --bs=4k --size=64m --filename=f --ioengine=mmap --fadvise_hint=0 --runtime=2 --time_based
