# Seed 001 — RAM disk (tmpfs) against the hard disk with bonnie++ (DIGEST.md item 13), on a
# HP ProLiant ML110 G4: Xeon 3040 (2 cores), 2 GB PC2-5300 DDR2, two 160 GB 7200 rpm SATA
# disks in RAID 1, CentOS 3.6 (Linux 2.4). The article's figures for this row (its measure,
# not an input): RAM disk read 1872 / write 770 MB/s, HDD read 73 / write 70 MB/s.
# machine: ml110-g4
#
# The article's two commands, as the root shell here runs them (bonnie++ insists on -u as
# root). On the RAM disk it wrote a 256 MB file and told bonnie++ the machine has 128 MB of
# RAM (bonnie++ refuses a file smaller than twice RAM); --min-time=0.01 stands for its patch
# to bonnie++: a RAM disk finishes a 256 MB test faster than bonnie++'s 0.5 s minimum and
# would otherwise print "+++++". On the hard disk bonnie++ takes RAM from the kernel and a
# file twice that size, so the page cache cannot hold it. The file-creation tests are left
# out (-n 0): the article reports only the sequential block figures.
# vmstat runs beside each: during the RAM-disk run the CPU is busy and wa stays 0 (memory and
# CPU are the bottleneck); during the disk run bonnie++ waits on the disk (wa, b).

# The RAM disk: tmpfs mounted on /mnt/ram with size=... (see the machine file).
df -h /mnt/ram
vmstat 1 12 > /root/vmstat-ramdisk.txt &
bonnie++ -d /mnt/ram -s 256 -r 128 -u root -n 0 --min-time=0.01
wait
cat /root/vmstat-ramdisk.txt

# The hard disk: /tmp on the root filesystem.
vmstat 10 45 > /root/vmstat-hdd.txt &
bonnie++ -d /tmp -u root -n 0
wait
cat /root/vmstat-hdd.txt
