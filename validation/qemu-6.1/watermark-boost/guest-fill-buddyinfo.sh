#!/bin/sh
# Watermark boosting on a real 6.1 kernel: page cache fills memory, then `du` over 200,000
# files grows reclaimable slab; the same with vm.watermark_boost_factor 0. guest-fill.sh with
# /proc/buddyinfo and /proc/pagetypeinfo before and after du, and buddyinfo in each sample.
. /data/lib.sh
cd /data
zone() { awk '/^Node 0, zone/{z=$4} z=="DMA32" && ($1=="boost"||($1=="pages"&&$2=="free")||$1=="min"||$1=="low"||$1=="high"){printf "%s=%s ", ($1=="pages"?"free":$1), ($1=="pages"?$3:$2)} END{print ""}' /proc/zoneinfo; }
vm() { grep -E '^(pgscan_kswapd|pgsteal_kswapd|pgscan_direct|pgsteal_direct|allocstall_dma32|allocstall_normal|pageoutrun|kswapd_low_wmark_hit_quickly|kswapd_high_wmark_hit_quickly|slabs_scanned|compact_stall|compact_daemon_wake|nr_vmscan_write|pswpout|workingset_refault_file) ' /proc/vmstat | tr '\n' ' '; echo; }
mem() { grep -E '^(MemFree|Cached|Buffers|SReclaimable|Slab):' /proc/meminfo | tr -s ' ' | tr '\n' ' '; echo; }
mkdir -p export
i=0; a=0
while [ $i -lt 200000 ]; do
  d=export/d$((a / 900))/d$((a / 30 % 30))/d$((a % 30)); mkdir -p $d
  j=0; while [ $j -lt 30 ] && [ $i -lt 200000 ]; do : > $d/f$j; j=$((j+1)); i=$((i+1)); done
  a=$((a+1))
done
echo "files $i leaf dirs $a"
step write-big dd if=/dev/zero of=big bs=1M count=2600
sync
for f in 15000 0; do
  echo $f > /proc/sys/vm/watermark_boost_factor
  echo "=== watermark_boost_factor $(cat /proc/sys/vm/watermark_boost_factor)"
  sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
  step read-big-$f dd if=big of=/dev/null bs=1M
  sleep 2
  echo "before: $(zone)"; echo "before: $(vm)"; echo "before: $(mem)"
  cat /proc/buddyinfo; cat /proc/pagetypeinfo
  ( while :; do echo "t=$(now) $(zone) $(grep DMA32 /proc/buddyinfo)"; sleep 0.2; done ) > out/zone-$f.txt &
  S=$!
  step du-$f du -s export
  sleep 2
  kill $S
  echo "after: $(zone)"; echo "after: $(vm)"; echo "after: $(mem)"
  cat /proc/buddyinfo; cat /proc/pagetypeinfo
  echo "max boost during du: $(awk '{for(i=1;i<=NF;i++) if ($i ~ /^boost=/){split($i,a,"="); if (a[2]>m) m=a[2]}} END{print m+0}' out/zone-$f.txt)"
  echo "samples with boost>0: $(grep -c 'boost=[1-9]' out/zone-$f.txt) of $(wc -l < out/zone-$f.txt)"
done
echo 15000 > /proc/sys/vm/watermark_boost_factor
