//! Seed 002 ("/proc tuning", @IT 2002): DIGEST.md items 15-17, through
//! scenarios/seed-002-bdflush.sh and scenarios/seed-002-tcp-rmem.sh on the seed-002 machine
//! (a 2002 PC: 128 MB, Linux 2.4, an IDE disk, gigabit Ethernet on 32-bit PCI).
//!
//! Expectations follow from the kernel's rules (2.4's balance_dirty and bdflush, TCP's window
//! from tcp_rmem and tcp_adv_win_scale) and the machine's physics (disk and link rates, the
//! round trip, the CPU's copy rate), not from the article's timings; the article's direction
//! and rough proportion are checked.

mod common;

use memtwin_kernel::net::TcpReceiver;
use memtwin_scenario::{RunOptions, RunResult};

fn run_file(name: &str) -> RunResult {
    let path = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    let opts = RunOptions { script_path: Some(path.clone()), ..Default::default() };
    memtwin_scenario::run(&opts).unwrap_or_else(|e| panic!("{path} failed to run: {e}"))
}


/// bash's `time` report: (real, user, sys) in seconds, in order of appearance.
fn times(t: &str) -> Vec<(f64, f64, f64)> {
    let secs = |s: &str| -> f64 {
        let (m, rest) = s.split_once('m').unwrap();
        m.parse::<f64>().unwrap() * 60.0 + rest.trim_end_matches('s').parse::<f64>().unwrap()
    };
    let lines: Vec<&str> = t.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Some(r) = l.strip_prefix("real\t") {
            let u = lines[i + 1].strip_prefix("user\t").unwrap();
            let s = lines[i + 2].strip_prefix("sys\t").unwrap();
            out.push((secs(r), secs(u), secs(s)));
        }
    }
    out
}

fn vmstat_rows(t: &str, file: &str) -> Vec<common::VmRow> {
    let head = format!("# cat {file}");
    let start = t.find(&head).unwrap_or_else(|| panic!("no '{head}'"));
    t[start + head.len()..].lines().skip(1).take_while(|l| !l.starts_with("# ")).filter_map(common::parse_vm_row).collect()
}

// ---- Items 15-16: bdflush -------------------------------------------------------------------

#[test]
fn bdflush_low_thresholds_make_cp_wait_for_the_disk() {
    let r = run_file("seed-002-bdflush.sh");
    let t = &r.transcript;
    // The vector is read and written as 2.4's /proc/sys/vm/bdflush.
    assert!(t.contains("# cat /proc/sys/vm/bdflush\n30\t500\t0\t0\t500\t3000\t60\t20\t0\n"), "{t}");
    assert!(t.contains("vm.bdflush = 100\t500\t0\t0\t500\t3000\t100\t20\t0\n"), "{t}");
    let tm = times(t);
    assert_eq!(tm.len(), 2, "{t}");
    let ((real_low, user_low, sys_low), (real_high, user_high, sys_high)) = (tm[0], tm[1]);

    // Only real time changes (the article: 5.52 s against 3.81 s, user and sys equal).
    assert!(real_low > real_high * 1.15, "30/60: {real_low} s, 100/100: {real_high} s\n{t}");
    assert!(real_low < real_high * 2.5, "the same order: {real_low} s vs {real_high} s");
    let close = |a: f64, b: f64| (a - b).abs() <= 0.2 * a.max(b) + 0.005;
    assert!(close(sys_low, sys_high), "sys {sys_low} vs {sys_high}");
    assert!(close(user_low, user_high), "user {user_low} vs {user_high}");

    // The physics: with both limits at 100% the copy only has to read 80 MB (the disk's read
    // rate bounds it); with 30/60 cp also writes what it dirties past 30% and waits for it:
    // writes during the copy, more I/O wait.
    let m = memtwin_machine::preset("seed-002").unwrap();
    let disk = m.disk("hda").unwrap();
    let read_only = 80.0 * 1048576.0 / disk.model.read_bw;
    assert!(real_high >= read_only * 0.95 && real_high < read_only * 1.5, "100/100: {real_high} s vs reading 80 MB: {read_only:.2} s");
    let low = vmstat_rows(t, "/root/vmstat-30-60.txt");
    let high = vmstat_rows(t, "/root/vmstat-100-100.txt");
    // (The first vmstat row is the average since boot.)
    let bo_low: u64 = low[1..].iter().map(|r| r.bo).sum();
    let bo_high: u64 = high[1..].iter().map(|r| r.bo).sum();
    assert!(bo_low > 20 * 1024, "30/60 writes during the copy: {bo_low} KiB");
    assert!(bo_high < 2 * 1024, "100/100 writes nothing during the copy: {bo_high} KiB");
    assert!(low[1..].iter().any(|r| r.bi > 0 && r.bo > 0), "reads and writes share the disk");
    // At 100% the 80 MB stay dirty in memory after the copy.
    let free_after = t.rsplit("# free\n").next().unwrap();
    assert!(free_after.contains("Mem:"), "{free_after}");
}

/// The modern equivalents (vm.dirty_background_ratio, vm.dirty_ratio) on a modern kernel
/// profile of the same machine move the same way.
#[test]
fn dirty_ratio_is_the_modern_equivalent() {
    let script = "\
dd if=/dev/zero of=/root/src bs=1M count=80
sync
echo 3 > /proc/sys/vm/drop_caches
sysctl -w vm.dirty_background_ratio=5 vm.dirty_ratio=10
time cp /root/src /root/dst
rm -f /root/dst
sync
echo 3 > /proc/sys/vm/drop_caches
sysctl -w vm.dirty_background_ratio=90 vm.dirty_ratio=100
time cp /root/src /root/dst
";
    let r = common::run_on(script, "seed-002", &["kernel=linux-6.x"]);
    let tm = times(&r.transcript);
    assert_eq!(tm.len(), 2, "{}", r.transcript);
    assert!(tm[0].0 > tm[1].0 * 1.1, "low dirty limits: {} s, high: {} s\n{}", tm[0].0, tm[1].0, r.transcript);
}

// ---- Item 17: tcp_rmem ----------------------------------------------------------------------

/// "N bytes received in S secs (R MB/s)": (bytes, seconds).
fn transfers(t: &str) -> Vec<(u64, f64)> {
    t.lines()
        .filter(|l| l.contains(" bytes received in "))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0].parse().unwrap(), w[4].parse().unwrap())
        })
        .collect()
}

#[test]
fn a_larger_tcp_rmem_raises_ftp_throughput() {
    let r = run_file("seed-002-tcp-rmem.sh");
    let t = &r.transcript;
    assert!(t.contains("net.ipv4.tcp_rmem = 4096\t87380\t174760\n"), "{t}");
    assert!(t.contains("226 Transfer complete.\n209715200 bytes received in "), "{t}");
    let x = transfers(t);
    assert_eq!(x.len(), 2, "{t}");
    let rate = |(b, s): (u64, f64)| b as f64 / s;
    let (small, large) = (rate(x[0]), rate(x[1]));

    // The window physics, from the machine's parameters: 2.4 offers 3/4 of the 87380-byte
    // buffer (65535 bytes); one window per round trip (the path's RTT plus the receiver's own
    // processing, which only lengthens it).
    let m = memtwin_machine::preset("seed-002").unwrap();
    let rtt = m.net.rtt_ns as f64 / 1e9;
    let w_small = TcpReceiver::win_from_space(87380, m.sysctl.tcp_adv_win_scale) as f64;
    assert_eq!(w_small, 65535.0);
    assert!(small <= w_small / rtt * 1.02, "window-limited: {small:.0} B/s <= W/RTT {:.0}", w_small / rtt);
    assert!(small >= w_small / rtt * 0.8, "{small:.0} B/s is well below W/RTT {:.0}", w_small / rtt);
    // Ten times the buffer: the window no longer limits; the link and the PC do. The payload
    // rate of gigabit Ethernet with 1500-byte frames is 1e9/8 x 1448/1538; the e1000 sits on
    // a 32-bit PCI bus that carries less.
    let mss = 1448.0;
    let wire = m.net.link_bps / 8.0 * mss / 1538.0;
    let bus = m.net.bus_bw.map_or(f64::INFINITY, |b| b * mss / 1518.0);
    assert!(large <= wire.min(bus) * 1.001, "{large:.0} B/s above the path rate {:.0}", wire.min(bus));
    let w_large = TcpReceiver::win_from_space(873800, m.sysctl.tcp_adv_win_scale) as f64;
    assert!(large < w_large / rtt / 2.0, "no longer window-limited: {large:.0} vs W/RTT {:.0}", w_large / rtt);
    // The article's direction and rough proportion: ~60 -> ~76 MB/s (+27%).
    let gain = large / small;
    assert!((1.1..=1.6).contains(&gain), "larger tcp_rmem: x{gain:.2} ({small:.0} -> {large:.0} B/s)\n{t}");
    assert!((45e6..80e6).contains(&small), "default buffer: {small:.0} B/s (the article: ~60 MB/s)");

    // The receiving CPU: busier with the larger window; every frame interrupts (no NAPI).
    let a = vmstat_rows(t, "/root/vmstat-87380.txt");
    let b = vmstat_rows(t, "/root/vmstat-873800.txt");
    let sy = |v: &[common::VmRow]| v[1..].iter().map(|r| r.sy).max().unwrap();
    assert!(sy(&b) > sy(&a), "sy {} -> {}", sy(&a), sy(&b));
    assert!(a[1].inr as f64 > small / mss * 0.8, "one interrupt per segment: {} in/s", a[1].inr);
    assert!(a[1..].iter().all(|r| r.wa == 0 && r.b == 0), "a socket wait is not I/O wait");
}

/// Autotuning (2.6.7+) grows the window towards tcp_rmem[2]; SO_RCVBUF is capped by
/// net.core.rmem_max and turns autotuning off.
#[test]
fn autotuning_and_so_rcvbuf() {
    let script = "\
sysctl -w net.ipv4.tcp_rmem=\"4096 87380 174760\"
ftp get 100M
sysctl -w net.ipv4.tcp_rmem=\"4096 87380 6291456\"
ftp get 100M
ftp -r 8M get 100M
sysctl -w net.core.rmem_max=8388608
ftp -r 8M get 100M
";
    // A modern kernel on a slow path: 10 ms round trip, a 10 GbE link, a fast CPU.
    let r = common::run_on(script, "default", &["net.rtt_us=10000", "net.link_mbit=10000"]);
    let x = transfers(&r.transcript);
    assert_eq!(x.len(), 4, "{}", r.transcript);
    let rate: Vec<f64> = x.iter().map(|&(b, s)| b as f64 / s).collect();
    // tcp_rmem[2] bounds what autotuning reaches: 174760 -> ~87 KB window (scale 1) per 10 ms.
    assert!(rate[0] < 10e6, "{}", rate[0]);
    assert!(rate[1] > rate[0] * 5.0, "autotuning towards 6 MB: {} vs {}", rate[1], rate[0]);
    // SO_RCVBUF of 8 MB is cut to rmem_max (212992) x 2 and autotuning is off.
    assert!(rate[2] < rate[1] / 3.0, "{} vs {}", rate[2], rate[1]);
    assert!(rate[3] > rate[2] * 5.0, "with rmem_max raised the 8 MB buffer applies: {} vs {}", rate[3], rate[2]);
}

#[test]
fn ftp_rejects_what_it_does_not_model() {
    let e = memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some("ftp put 10M\n".into()),
        machine: "seed-002".into(),
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.message.starts_with("t.sh:1: ftp: unsupported command 'put'"), "{}", e.message);
}
