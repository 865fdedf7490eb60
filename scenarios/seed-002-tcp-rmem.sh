# Seed 002 — "/proc tuning" (@IT, 2002), network: the TCP receive buffer (DIGEST.md item 17).
# The article pulled a 200 MB file over gigabit Ethernet with FTP: ~60 MB/s with the boot-time
# net.ipv4.tcp_rmem of "4096 87380 174760", ~76 MB/s after raising it to
# "4096 873800 1747600" (and restarting the transfer).
# machine: seed-002
#
# Why: TCP keeps at most a receive window in flight. Linux 2.4 sizes a socket's receive
# buffer at tcp_rmem[1] and offers 3/4 of it as window (tcp_adv_win_scale = 2):
# 87380 -> 65535 bytes, which one round trip on this LAN (~1 ms with the receiver's own
# processing) turns into ~60 MB/s. Ten times the buffer lifts the window limit far above the
# link; what is left is the link and the 2002 PC itself: the 32-bit PCI bus behind the NIC
# and the CPU that copies every byte and handles every segment.
# `ftp get SIZE [LOCAL]` stands for an ftp session's `get` of a SIZE-byte file (here into
# /dev/null); vmstat beside it shows the receiving CPU and the interrupt rate.

sysctl net.ipv4.tcp_rmem net.ipv4.tcp_adv_win_scale
vmstat 1 3 > /root/vmstat-87380.txt &
ftp get 200M /dev/null
wait
cat /root/vmstat-87380.txt

sysctl -w net.ipv4.tcp_rmem="4096 873800 1747600"
vmstat 1 3 > /root/vmstat-873800.txt &
ftp get 200M /dev/null
wait
cat /root/vmstat-873800.txt
