//! The tutorial scenarios in scenarios/ run unmodified, and what they print has the shape
//! the kernel's rules give.

mod common;

use memtwin_scenario::{RunOptions, RunResult};

fn run_file(name: &str) -> RunResult {
    let path = format!("{}/../../scenarios/{name}", env!("CARGO_MANIFEST_DIR"));
    memtwin_scenario::run(&RunOptions { script_path: Some(path), ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))
}

fn outputs(r: &RunResult) -> Vec<(&str, &str)> {
    r.commands.iter().map(|c| (c.source.as_str(), &r.transcript[c.output_start..c.output_end])).collect()
}

/// KiB of a `Name:   N kB` line.
fn kb(line: &str) -> u64 {
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no number in {line:?}"))
}

/// free -h's buff/cache column of the Mem line, in MiB.
fn buff_cache_mib(free: &str) -> f64 {
    let mem = free.lines().find(|l| l.starts_with("Mem:")).expect("Mem line");
    let v = mem.split_whitespace().nth(5).expect("buff/cache");
    let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
    let n: f64 = num.parse().expect("number");
    n * match unit {
        "Gi" => 1024.0,
        "Mi" => 1.0,
        "Ki" => 1.0 / 1024.0,
        _ => 1.0 / 1048576.0,
    }
}

#[test]
fn tutorial_drop_caches() {
    let r = run_file("tutorial-drop-caches.sh");
    assert_eq!(r.exit_status, 0, "{}", r.transcript);
    let o = outputs(&r);
    let find = |prefix: &str, nth: usize| o.iter().filter(|(s, _)| s.starts_with(prefix)).nth(nth).map(|(_, out)| *out).unwrap_or_else(|| panic!("no command {prefix:?}"));
    // After drop_caches the page cache is nearly empty; after writing 1 GiB it holds it.
    let before = buff_cache_mib(find("free -h", 0));
    let full = buff_cache_mib(find("free -h | grep Mem", 0));
    let after = buff_cache_mib(find("free -h", 2));
    assert!(before < 64.0, "cache after the first drop: {before} MiB");
    assert!(full > 900.0, "the 1 GiB file is cached: {full} MiB");
    assert!(after < 64.0, "drop_caches frees the clean cache: {after} MiB");
    // During the dd, the grep loop sees dirty pages and writeback, bounded by the dirty
    // limits (vm.dirty_ratio of the dirtyable memory, under 1.9 GB RAM).
    let loop_out = find("for i in 1 2 3 4 5", 0);
    let dirty: Vec<u64> = loop_out.lines().filter(|l| l.starts_with("Dirty:")).map(kb).collect();
    let wb: Vec<u64> = loop_out.lines().filter(|l| l.starts_with("Writeback:")).map(kb).collect();
    assert_eq!(dirty.len(), 5, "{loop_out}");
    assert!(dirty.iter().all(|&d| d > 0 && d < 1_900_000 * 40 / 100), "{dirty:?}");
    assert!(wb.iter().any(|&w| w > 0), "writeback under way: {wb:?}");
    // After sync nothing is dirty.
    let synced = find("grep -E '^(Dirty|Writeback):'", 0);
    assert!(synced.lines().all(|l| kb(l) == 0), "{synced}");
    let msg = find("echo \"page cache after", 0);
    let mib: u64 = msg.split_whitespace().nth(4).and_then(|v| v.parse().ok()).expect(msg);
    assert!(mib < 64, "{msg}");
}

#[test]
fn tutorial_dirty_tuning() {
    let r = run_file("tutorial-dirty-tuning.sh");
    assert_eq!(r.exit_status, 0, "{}", r.transcript);
    let o = outputs(&r);
    let loops: Vec<&str> = o.iter().filter(|(s, _)| s.starts_with("for i in 1 2")).map(|(_, out)| *out).collect();
    assert_eq!(loops.len(), 2, "{}", r.transcript);
    // Dirty + Writeback is what balance_dirty_pages holds under the limit.
    let held = |out: &str| -> Vec<u64> {
        let d: Vec<u64> = out.lines().filter(|l| l.starts_with("Dirty:")).map(kb).collect();
        let w: Vec<u64> = out.lines().filter(|l| l.starts_with("Writeback:")).map(kb).collect();
        d.iter().zip(&w).map(|(a, b)| a + b).collect()
    };
    let (default, small) = (held(loops[0]), held(loops[1]));
    // 48 MiB = 49152 kB: the limit, with the per-CPU ratelimit's slack (a few hundred kB).
    assert!(small.iter().all(|&x| x > 0 && x <= 49152 + 1024), "{small:?}");
    assert!(default.iter().all(|&x| x > 2 * 49152), "the default 20% lets far more pile up: {default:?}");
    // The ratios read 0 once the byte limits are set, and the bytes 0 once the ratios are back.
    let ratios: Vec<&str> = o.iter().filter(|(s, _)| s.starts_with("sysctl vm.dirty_ratio")).map(|(_, out)| *out).collect();
    assert_eq!(ratios[1], "vm.dirty_ratio = 0\nvm.dirty_background_ratio = 0\n");
    assert_eq!(o.last().unwrap().1, "vm.dirty_bytes = 0\nvm.dirty_background_bytes = 0\n");
    // dd's own summary: with 48 MiB of room, all but 48 MiB of the 512 MiB goes to the
    // disk (virtio: 160 MB/s at most) while dd runs; with the default ratios most of it
    // stays in the page cache.
    let secs = |out: &str| -> f64 { out.split(", ").nth(2).and_then(|t| t.trim_end_matches(" s").parse().ok()).unwrap_or_else(|| panic!("{out}")) };
    let dd: Vec<f64> = o.iter().filter(|(s, _)| s.starts_with("wait")).map(|(_, out)| secs(out)).collect();
    assert_eq!(dd.len(), 2, "{}", r.transcript);
    assert!(dd[1] >= (512.0 - 48.0) * 1048576.0 / 160e6, "throttled to the disk: {} s", dd[1]);
    assert!(dd[1] > 1.3 * dd[0], "the small limits slow dd: {dd:?}");
}

#[test]
fn tutorial_pipes() {
    let r = run_file("tutorial-pipes.sh");
    assert_eq!(r.exit_status, 0, "{}", r.transcript);
    let o = outputs(&r);
    assert_eq!(o[0].1.lines().count(), 3, "vmstat 1 | head -3: {}", o[0].1);
    assert!(o[1].1.starts_with("268435456 bytes"), "dd's last line through tail: {}", o[1].1);
    assert_eq!(o[2].1, "256 MiB\n");
    // Dirty data is written back once it is older than dirty_expire (30 s), found by the
    // flusher's periodic wakeup (dirty_writeback, 5 s).
    let waited: u64 = o.iter().find(|(s, _)| s.starts_with("echo \"dirty pages")).and_then(|(_, out)| out.split_whitespace().nth(6)?.parse().ok()).expect("the loop's count");
    assert!((25..=45).contains(&waited), "{waited} s");
    let table = o.iter().find(|(s, _)| s.starts_with("grep -E '^(MemFree")).expect("table").1;
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(table.lines().all(|l| l.ends_with(" MiB")), "{table}");
    assert!(o.iter().any(|(s, out)| s.starts_with("seq 1 4") && *out == "pass 3\npass 4\n"));
    assert!(o.iter().any(|(s, out)| s.starts_with("cat data | wc -c") && *out == "268435456\n"));
}
