//! Seed 000 (Qiita 2016, "Linux memory basics and vmstat"): the page-cache walk-through of
//! scenarios/seed-000-vmstat.sh, one test per phenomenon of DIGEST.md items 1-10.
//!
//! Expectations are derived from the physical parameters of the `seed-000` machine preset
//! (disk bandwidths and per-request latencies, the CPU's copy bandwidth, RAM, the dirty
//! sysctls), never from the article's own figures: the twin must show the same *shape*
//! (which counter moves, which way, by roughly how much, which run is faster).
//!
//! The scenario runs once per test binary (a OnceLock cache).

mod common;

use common::*;
use memtwin_machine::Machine;
use memtwin_scenario::RunResult;
use std::sync::OnceLock;

/// The file the article writes and reads: `bs=1M count=512`.
const FILE_BYTES: f64 = 512.0 * MIB;
const FILE_KIB: f64 = 512.0 * 1024.0;

const DD_WRITE: &str = "dd if=/dev/zero of=test bs=1M count=512";
const DD_READ: &str = "dd if=test of=/dev/null bs=1M count=512";
const DD_DIRECT: &str = "dd if=/dev/zero of=test bs=1M count=512 oflag=direct";
const DD_RAW: &str = "dd if=/dev/vda of=/dev/null bs=1M count=512";

fn result() -> &'static RunResult {
    static R: OnceLock<RunResult> = OnceLock::new();
    R.get_or_init(|| run_seed000(0))
}

fn tr() -> &'static Transcript {
    static T: OnceLock<Transcript> = OnceLock::new();
    T.get_or_init(|| Transcript::new(&result().transcript))
}

/// The physical parameters the expectations come from.
#[derive(Debug)]
struct Phys {
    machine: Machine,
    /// The disk holding `/` (where `test` lives).
    read_bw: f64,
    read_latency_s: f64,
    max_request_bytes: f64,
    /// The rate the disk writes large requests at: with a write-through host (the virtio
    /// preset) each request's latency is in series with its transfer.
    write_rate: f64,
    /// Seconds for one 1 MiB O_DIRECT write (as max_request_bytes requests).
    direct_mib_s: f64,
    copy_bw: f64,
    mem_total_kib: f64,
    dirty_ratio: f64,
    dirty_background_ratio: f64,
    expire_s: f64,
    writeback_interval_s: f64,
    boot_file_kib: f64,
    /// The flusher of the root disk as iotop names it: "[flush-253:0]" in the article
    /// (2.6.32); the machine runs the 6.x profile, whose writeback runs on an unbound
    /// kworker that shows the work it does: "[kworker/u4:1+flush-253:0]".
    flusher: String,
}

fn phys() -> &'static Phys {
    static P: OnceLock<Phys> = OnceLock::new();
    P.get_or_init(|| {
        let m = memtwin_machine::preset("seed-000").expect("the seed-000 preset loads");
        // The scenario picks its machine with a `# machine:` line: make sure it is this one.
        let text = std::fs::read_to_string(seed000_path()).expect("scenario file");
        assert_eq!(memtwin_scenario::machine_directive(&text).as_deref(), Some("seed-000"));
        let root = m.mounts.iter().find(|x| x.mountpoint == "/").expect("a root filesystem");
        let disk_name = root.source.strip_prefix("/dev/").expect("root on a disk");
        let d = m.disk(disk_name).expect("root disk").clone();
        assert!(d.model.read_bw > 0.0 && d.model.write_bw > 0.0);
        Phys {
            read_bw: d.model.read_bw,
            read_latency_s: d.model.latency_ns as f64 / 1e9,
            max_request_bytes: d.model.max_request_bytes as f64,
            write_rate: if d.model.write_through {
                let req = d.model.max_request_bytes as f64;
                req / (req / d.model.write_bw + d.model.write_latency_ns as f64 / 1e9)
            } else {
                d.model.write_bw
            },
            direct_mib_s: {
                let (req, lat) = (d.model.max_request_bytes as f64, d.model.write_latency_ns as f64 / 1e9);
                if d.model.write_through {
                    (MIB / req).ceil() * (req / d.model.write_bw + lat)
                } else {
                    MIB / d.model.write_bw + lat
                }
            },
            copy_bw: m.cpu_model.copy_bw,
            mem_total_kib: m.mem_total_bytes() as f64 / KIB,
            dirty_ratio: m.sysctl.dirty_ratio as f64 / 100.0,
            dirty_background_ratio: m.sysctl.dirty_background_ratio as f64 / 100.0,
            expire_s: m.sysctl.dirty_expire_centisecs as f64 / 100.0,
            writeback_interval_s: m.sysctl.dirty_writeback_centisecs as f64 / 100.0,
            boot_file_kib: m.boot_file_bytes as f64 / KIB,
            flusher: format!("flush-{}]", d.dev()),
            machine: m,
        }
    })
}

/// A dd the article runs: its prompt line, its summary, and (when a `vmstat 1 N &` was
/// started just before it) that vmstat's rows. Row k of such a vmstat is sampled k seconds
/// after dd started and covers the second (k-1, k].
struct Phase {
    prompt: usize,
    dd: DdSummary,
    rows: Vec<VmRow>,
}

/// The `nth` run of `dd_cmd`, with the rows of the `vmstat` started in the background on
/// the line just before it (if any).
fn phase(dd_cmd: &str, nth: usize) -> Phase {
    let t = tr();
    let prompt = t.prompt(dd_cmd, nth);
    let (_, dd) = t.dd_after(prompt);
    let prompts = t.prompts();
    let pos = prompts.iter().position(|(i, _)| *i == prompt).unwrap();
    // The vmstat started in the background right before the dd (maybe after an iotop).
    let mut rows = Vec::new();
    for (i, c) in prompts[..pos].iter().rev().take(2) {
        if c.starts_with("vmstat ") && c.ends_with(" &") {
            rows = t.vmstat_rows_after(*i, vmstat_count(c));
            break;
        }
    }
    Phase { prompt, dd, rows }
}

fn rows_text(rows: &[VmRow]) -> String {
    rows.iter()
        .enumerate()
        .map(|(k, r)| {
            format!(
                "{k:>3}: r={} b={} swpd={} free={} buff={} cache={} si={} so={} bi={} bo={} us={} sy={} id={} wa={}",
                r.r, r.b, r.swpd, r.free, r.buff, r.cache, r.si, r.so, r.bi, r.bo, r.us, r.sy, r.id, r.wa
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// iowait is idle time while some task sleeps in io_schedule() for a request in flight: two
/// whole seconds without a single block read or write cannot have any.
fn assert_no_iowait_without_io(rows: &[VmRow]) {
    for k in 2..rows.len() {
        let quiet = |r: &VmRow| r.bi == 0 && r.bo == 0 && r.si == 0 && r.so == 0;
        if quiet(&rows[k - 1]) && quiet(&rows[k]) {
            assert!(rows[k].wa == 0, "row {k}: wa = {} with no I/O for two seconds\n{}", rows[k].wa, rows_text(rows));
        }
    }
}

/// Index of the first sample at which `name` exceeds its first value.
fn first_rise(name: &str) -> usize {
    let s = &result().series;
    let v = col(s, name);
    v.iter().position(|&x| x > v[0]).unwrap_or_else(|| panic!("{name} never rises:\n{}", dump(s, &[name])))
}

/// Dirty thresholds (KiB) bounding what the kernel computes at the start of the first
/// buffered write: dirtyable memory is free + file LRU pages less a reserve (the high
/// watermarks, a few % of RAM at most: bounded here by 5% of MemTotal).
fn dirty_bounds_kib(at: usize) -> (f64, f64, f64) {
    let s = &result().series;
    let p = phys();
    let dirtyable_hi =
        (col(s, "mi.MemFree")[at] + col(s, "mi.Active(file)")[at] + col(s, "mi.Inactive(file)")[at]) as f64;
    let dirtyable_lo = dirtyable_hi - 0.05 * p.mem_total_kib;
    let thresh_hi = p.dirty_ratio * dirtyable_hi;
    let bg_hi = p.dirty_background_ratio * dirtyable_hi;
    let freerun_lo = (p.dirty_ratio + p.dirty_background_ratio) / 2.0 * dirtyable_lo;
    (thresh_hi, bg_hi, freerun_lo)
}

#[test]
fn parsers_read_the_article_text() {
    self_test_parsers();
}

// ---- 1. swapoff -a && swapon -a; the four states of memory -------------------------------

#[test]
fn t01_free_old_shows_the_machine_and_swap_is_empty_after_swapoff_swapon() {
    let t = tr();
    let p = phys();
    let first = t.free_old_after(t.prompt("free", 0));
    let second = t.free_old_after(t.prompt("free", 1));
    assert_eq!(first.mem[0] as f64, p.mem_total_kib, "free's total is MemTotal = RAM - kernel reserve");
    // The swap area is the partition less its header page.
    let swap_kib: f64 = p.machine.swaps.iter().map(|s| s.size_bytes as f64 / KIB - 4.0).sum();
    assert_eq!(second.swap[0] as f64, swap_kib, "Swap total");
    assert_eq!(second.swap[1], 0, "swpd after swapoff -a && swapon -a");
    assert_eq!(second.swap[2], second.swap[0]);
    // Idle: the page cache holds only the boot-time files.
    assert!(second.mem[5] as f64 <= p.boot_file_kib + 1.0, "idle cached {} > boot {}", second.mem[5], p.boot_file_kib);
}

// ---- 2. drop_caches -----------------------------------------------------------------------

#[test]
fn t02_drop_caches_leaves_only_the_idle_cache() {
    let p = phys();
    // In the scenario the cache is already at its idle level when it is dropped; check on a
    // machine with 256 MiB of clean page cache that `echo 1` drops all of it.
    let script = "\
free
dd if=/dev/zero of=f bs=1M count=256
sync
free
echo 1 > /proc/sys/vm/drop_caches
free
";
    let r = run_text("drop.sh", script).unwrap_or_else(|e| panic!("{e}"));
    let t = Transcript::new(&r.transcript);
    let before = t.free_old_after(t.prompt("free", 0));
    let filled = t.free_old_after(t.prompt("free", 1));
    let dropped = t.free_old_after(t.prompt("free", 2));
    let grown = filled.mem[5] as f64 - before.mem[5] as f64;
    assert!(within(grown, 256.0 * 1024.0, 0.10), "the 256 MiB file should be cached: +{grown} KiB\n{}", r.transcript);
    assert!(
        dropped.mem[5] as f64 <= p.boot_file_kib.max(before.mem[5] as f64),
        "after drop_caches cached = {} KiB, idle level {} KiB\n{}",
        dropped.mem[5],
        p.boot_file_kib,
        r.transcript
    );
    // ... and in the scenario itself, the cache right after the drop (vmstat's first row:
    // cache = Cached + SReclaimable) is no larger than the idle one.
    let s = &result().series;
    let rows = phase(DD_WRITE, 0).rows;
    let idle = col(s, "mi.Cached")[0] + col(s, "mi.SReclaimable")[0];
    assert!(rows[0].cache <= idle, "cache after drop_caches {} > idle {}", rows[0].cache, idle);
}

// ---- 3. buffered dd: absorbed by the cache, written back late ----------------------------

#[test]
fn t03_buffered_write_fills_the_page_cache() {
    let ph = phase(DD_WRITE, 0);
    assert_eq!(ph.dd.bytes as f64, FILE_BYTES);
    assert_eq!(ph.dd.records_in, (512, 0));
    assert_eq!(ph.dd.records_out, (512, 0));
    let top = ph.rows.iter().map(|r| r.cache).max().unwrap();
    let grown = top as f64 - ph.rows[0].cache as f64;
    assert!(within(grown, FILE_KIB, 0.10), "cache grew by {grown} KiB, expected ~{FILE_KIB}\n{}", rows_text(&ph.rows));
    // The series agrees: Cached (without slab) grows by the file's size.
    let s = &result().series;
    let i0 = first_rise("vm.nr_dirtied");
    let cached = col(s, "mi.Cached");
    let grown_s = cached[i0..(i0 + 10).min(cached.len())].iter().max().unwrap() - cached[i0 - 1];
    assert!(within(grown_s as f64, FILE_KIB, 0.10), "mi.Cached grew by {grown_s} KiB\n{}", dump(s, &["mi.Cached"]));
}

#[test]
fn t03_buffered_write_runs_between_memory_and_disk_speed() {
    let p = phys();
    let ph = phase(DD_WRITE, 0);
    let t = ph.dd.secs;
    let t_mem = FILE_BYTES / p.copy_bw;
    let t_disk = FILE_BYTES / p.write_rate;
    // The cache absorbs the write: well below the disk's time...
    assert!(t < 0.8 * t_disk, "dd took {t} s, the disk alone needs {t_disk} s: the cache should absorb the write");
    // ... but the dirty limits throttle dd: well above a memory copy.
    assert!(t > 3.0 * t_mem, "dd took {t} s, a memory copy takes {t_mem} s: balance_dirty_pages should throttle it");
    // Tighter, from the dirty limits: dirty + writeback never exceed `thresh`, so at least
    // 512 MiB - thresh must have reached the disk before dd exits; and dd runs freely
    // until dirty reaches (background + thresh) / 2, after which it goes at the disk's pace.
    let i0 = first_rise("vm.nr_dirtied");
    let (thresh_hi, _, freerun_lo) = dirty_bounds_kib(i0 - 1);
    let t_lo = (FILE_BYTES - thresh_hi * KIB) / p.write_rate;
    let t_hi = (FILE_BYTES - freerun_lo * KIB) / p.write_rate + t_mem;
    assert!(
        t >= 0.95 * t_lo && t <= 1.15 * t_hi,
        "dd took {t} s; from the dirty limits it should take {t_lo:.3}..{t_hi:.3} s (thresh <= {thresh_hi:.0} KiB, freerun >= {freerun_lo:.0} KiB)"
    );
    // The printed rate is consistent with bytes / time.
    assert!(within(ph.dd.rate, ph.dd.bytes_per_sec(), 0.01), "printed {} for {} B/s", ph.dd.rate_text, ph.dd.bytes_per_sec());
    assert_eq!(ph.dd.rate_unit, "MB/s", "{}", ph.dd.line);
}

#[test]
fn t03_only_part_of_the_data_is_written_while_dd_runs() {
    let ph = phase(DD_WRITE, 0);
    let t = ph.dd.secs;
    let rows = &ph.rows;
    let lo_rows = t.floor() as usize;
    let hi_rows = t.ceil() as usize;
    assert!(lo_rows >= 1, "dd took {t} s: too short to see its writeback in vmstat rows");
    // Row k covers (k-1, k]: what was written by dd's exit lies between these two sums.
    let written_lo: u64 = rows[1..=lo_rows].iter().map(|r| r.bo).sum();
    let written_hi: u64 = rows[1..=hi_rows].iter().map(|r| r.bo).sum();
    assert!(
        (written_hi as f64) < 0.8 * FILE_KIB && written_lo as f64 > 0.1 * FILE_KIB,
        "written while dd ran: {written_lo}..{written_hi} KiB of {FILE_KIB}\n{}",
        rows_text(rows)
    );
    // Physically at least 512 MiB - thresh must be on its way to the disk by then.
    let i0 = first_rise("vm.nr_dirtied");
    let (thresh_hi, _, _) = dirty_bounds_kib(i0 - 1);
    assert!(
        written_hi as f64 >= FILE_KIB - thresh_hi,
        "only {written_hi} KiB written by dd's exit, but dirty + writeback cannot exceed {thresh_hi:.0} KiB"
    );
    // dd is throttled (D state) while the flusher waits on the disk: b = 2, and the CPUs
    // idle waiting for I/O (wa).
    let during = &rows[1..=hi_rows];
    let sampled_during: Vec<&VmRow> = rows[1..].iter().enumerate().filter(|(k, _)| ((k + 1) as f64) < t).map(|(_, r)| r).collect();
    assert!(
        sampled_during.iter().any(|r| r.b >= 2),
        "b should reach 2 while dd runs (dd throttled + flusher)\n{}",
        rows_text(rows)
    );
    assert!(during.iter().any(|r| r.wa > 0), "wa should rise while dd runs\n{}", rows_text(rows));
}

#[test]
fn t03_the_rest_is_written_after_dirty_expire() {
    let p = phys();
    let ph = phase(DD_WRITE, 0);
    let t = ph.dd.secs;
    let rows = &ph.rows;
    let hi_rows = t.ceil() as usize;
    // After dd's writeback stops, a quiet period, then the late burst.
    let quiet = (hi_rows + 1..rows.len()).find(|&k| rows[k].bo == 0).unwrap_or_else(|| {
        panic!("no quiet second after dd's writeback\n{}", rows_text(rows))
    });
    let k = (quiet..rows.len()).find(|&k| rows[k].bo > 0).unwrap_or_else(|| {
        panic!("no late writeback burst within the {} s of vmstat\n{}", rows.len() - 1, rows_text(rows))
    });
    let end = (k..rows.len()).find(|&j| rows[j].bo == 0).unwrap_or(rows.len());
    let burst = &rows[k..end];
    // The burst starts in (k-1, k] seconds after dd started.
    let start_lo = (k - 1) as f64;
    let start_hi = k as f64;
    assert!(start_hi >= 25.0 && start_lo <= 40.0, "late burst starts {start_lo}..{start_hi} s after dd\n{}", rows_text(rows));
    // From the sysctls: the inode expires dirty_expire after it was first dirtied (when dd
    // started), and the flusher looks every dirty_writeback_centisecs.
    assert!(
        start_hi > p.expire_s && start_lo <= p.expire_s + p.writeback_interval_s + 1.0,
        "late burst at {start_lo}..{start_hi} s; expected within [{}, {}] s",
        p.expire_s,
        p.expire_s + p.writeback_interval_s
    );
    // dd is long gone; only the flusher may be waiting.
    assert!(start_lo > t, "the burst should come after dd exits ({t} s)");
    for r in burst {
        assert!(r.b <= 1, "during the late burst b = {} (only the flusher can wait)\n{}", r.b, rows_text(rows));
    }
    // The burst is what background writeback left: less than the background threshold.
    let burst_kib: u64 = burst.iter().map(|r| r.bo).sum();
    let i0 = first_rise("vm.nr_dirtied");
    let (_, bg_hi, _) = dirty_bounds_kib(i0 - 1);
    assert!(
        burst_kib > 0 && (burst_kib as f64) <= bg_hi * 1.02,
        "late burst wrote {burst_kib} KiB; it should be what stayed below the background threshold ({bg_hi:.0} KiB)"
    );
    // Everything the file holds reaches the disk, once.
    let total: u64 = rows[1..].iter().map(|r| r.bo).sum();
    assert!(within(total as f64, FILE_KIB, 0.03), "bo over the whole vmstat: {total} KiB, expected {FILE_KIB}\n{}", rows_text(rows));
}

#[test]
fn t03_no_dirty_pages_are_left_after_the_late_burst() {
    let s = &result().series;
    let out = col(s, "vm.pgpgout");
    let dirty = col(s, "vm.nr_dirty");
    let wb = col(s, "vm.nr_writeback");
    let mi_dirty = col(s, "mi.Dirty");
    let show = || dump(s, &["vm.pgpgout", "vm.nr_dirtied", "vm.nr_dirty", "vm.nr_writeback", "mi.Dirty"]);
    let j = out.iter().position(|&v| (v - out[0]) as f64 >= FILE_KIB).unwrap_or_else(|| panic!("the file is never fully written\n{}", show()));
    assert_eq!(dirty[j], 0, "all of the file was submitted at sample {j} but nr_dirty = {}\n{}", dirty[j], show());
    assert_eq!(mi_dirty[j], 0, "meminfo Dirty at sample {j}\n{}", show());
    assert!(
        (j..(j + 3).min(wb.len())).any(|i| wb[i] == 0),
        "writeback should complete within 2 s of the burst\n{}",
        show()
    );
    // And at the end of the scenario (after `sync`).
    assert_eq!(*dirty.last().unwrap(), 0, "{}", show());
    assert_eq!(*mi_dirty.last().unwrap(), 0, "{}", show());
}

// ---- 4. immediate re-read ------------------------------------------------------------------

#[test]
fn t04_reread_is_served_from_the_page_cache() {
    let p = phys();
    let ph = phase(DD_READ, 0);
    assert_eq!(ph.dd.bytes as f64, FILE_BYTES);
    assert_eq!(ph.dd.records_in, (512, 0));
    assert!(ph.rows.len() >= 2, "vmstat 1 2 rows:\n{}", rows_text(&ph.rows));
    // The rows after the first (which is the since-boot average) cover the read.
    for r in &ph.rows[1..] {
        assert_eq!(r.bi, 0, "bi while re-reading a cached file\n{}", rows_text(&ph.rows));
        assert_eq!(r.wa, 0, "nobody waits on I/O while re-reading a cached file\n{}", rows_text(&ph.rows));
    }
    let t_mem = FILE_BYTES / p.copy_bw;
    assert!(
        ph.dd.secs >= t_mem / 2.0 && ph.dd.secs <= t_mem * 2.0,
        "re-read took {} s; a memory copy of 512 MiB takes {t_mem:.3} s",
        ph.dd.secs
    );
    assert_eq!(ph.dd.rate_unit, "GB/s", "{}", ph.dd.line);
}

#[test]
fn t04_to_t09_no_disk_reads_before_the_raw_device_read() {
    // Every read of `test` hits the cache, the writes are whole pages (no read-modify-
    // write): pgpgin stays put until the raw read of /dev/vda fills the buffer cache.
    let s = &result().series;
    let pgpgin = col(s, "vm.pgpgin");
    let raw = first_rise("mi.Buffers");
    for i in 1..raw {
        assert_eq!(pgpgin[i], pgpgin[0], "pgpgin moved at t={}\n{}", s.t_s[i], dump(s, &["vm.pgpgin", "mi.Buffers"]));
    }
}

// ---- 5. O_DIRECT write ---------------------------------------------------------------------

#[test]
fn t05_direct_write_runs_at_the_synchronous_request_rate() {
    let p = phys();
    let ph = phase(DD_DIRECT, 0);
    assert_eq!(ph.dd.bytes as f64, FILE_BYTES);
    // dd waits for each 1 MiB write: its requests' latency plus their transfer (in series
    // on a write-through device).
    let expected = MIB / p.direct_mib_s;
    let got = ph.dd.bytes_per_sec();
    assert!(within(got, expected, 0.15), "O_DIRECT dd at {got:.3e} B/s ({}), expected ~{expected:.3e} B/s", ph.dd.rate_text);
    assert_eq!(ph.dd.rate_unit, "MB/s");
    // vmstat: bo at that rate while dd runs, and only dd waits on I/O (b = 1).
    let t = ph.dd.secs;
    let full: Vec<&VmRow> = ph.rows[1..].iter().enumerate().filter(|(k, _)| ((k + 1) as f64) < t).map(|(_, r)| r).collect();
    assert!(!full.is_empty(), "no vmstat row inside the O_DIRECT dd ({t} s)");
    for r in &full {
        assert!(within(r.bo as f64 * KIB, expected, 0.15), "bo {} KiB/s, expected ~{:.0}\n{}", r.bo, expected / KIB, rows_text(&ph.rows));
        assert_eq!(r.b, 1, "only dd waits on I/O during an O_DIRECT write\n{}", rows_text(&ph.rows));
    }
}

#[test]
fn t05_direct_write_releases_the_files_page_cache_at_open() {
    let ph = phase(DD_DIRECT, 0);
    let rows = &ph.rows;
    let before = rows[0].cache as f64;
    let after = rows[1].cache as f64;
    assert!(
        within(before - after, FILE_KIB, 0.10),
        "opening `test` with O_TRUNC should free its ~512 MiB of cache: {before} -> {after} KiB\n{}",
        rows_text(rows)
    );
    // O_DIRECT does not fill the cache back.
    for r in &rows[1..] {
        assert!((r.cache as f64) <= after + 0.02 * FILE_KIB, "cache refilled during O_DIRECT\n{}", rows_text(rows));
    }
}

#[test]
fn t05_iotop_shows_only_dd_during_a_direct_write() {
    let p = phys();
    let t = tr();
    let ph = phase(DD_DIRECT, 0);
    let iotop = t.prompts().into_iter().rev().find(|(i, c)| *i < ph.prompt && c.starts_with("iotop ")).expect("iotop before the O_DIRECT dd");
    let frames = t.iotop_frames_after(iotop.0, 3);
    assert_eq!(frames.len(), 3, "iotop -n 3 frames");
    let expected = MIB / p.direct_mib_s;
    for f in &frames {
        assert!(!f.rows.is_empty(), "dd should be listed:\n{}", f.text);
        for r in &f.rows {
            assert!(!r.command.starts_with("[flush"), "no flusher I/O with O_DIRECT:\n{}", f.text);
            assert!(r.command.starts_with("dd "), "only dd does I/O:\n{}", f.text);
        }
        assert!(within(f.total_write, f.actual_write, 0.05), "Total DISK WRITE should equal Actual:\n{}", f.text);
        assert!(within(f.actual_write, expected, 0.15), "Actual DISK WRITE {} B/s, expected ~{expected:.3e}:\n{}", f.actual_write, f.text);
    }
}

// ---- 6. buffered write again -----------------------------------------------------------------

#[test]
fn t06_buffered_write_again_dd_and_the_flusher_both_do_io() {
    let p = phys();
    let t = tr();
    let ph = phase(DD_WRITE, 1);
    let rows = &ph.rows;
    let top = rows.iter().map(|r| r.cache).max().unwrap();
    let grown = top as f64 - rows[0].cache as f64;
    assert!(within(grown, FILE_KIB, 0.10), "cache grew by {grown} KiB\n{}", rows_text(rows));
    assert!(rows[1..].iter().any(|r| r.b >= 2), "b should be 2 (dd + flusher)\n{}", rows_text(rows));
    // dd rewrites the existing file (O_TRUNC): ext4 flushes it at close, and the close
    // sleeps for request slots until all but a queue's worth is written (close_flush.rs).
    // The article's vmstat shows b = 2 for three seconds of this dd.
    let secs = ph.dd.secs;
    assert!(secs > 0.6 * FILE_BYTES / p.write_rate && secs < 1.3 * FILE_BYTES / p.write_rate, "dd took {secs} s");

    let iotop = t.prompts().into_iter().rev().find(|(i, c)| *i < ph.prompt && c.starts_with("iotop ")).expect("iotop before the dd");
    let frames = t.iotop_frames_after(iotop.0, 2);
    assert_eq!(frames.len(), 2);
    let both = frames.iter().any(|f| {
        f.rows.iter().any(|r| r.command == DD_WRITE && r.write > 0.0) && f.rows.iter().any(|r| r.command.starts_with("[kworker/u4:") && r.command.ends_with(&p.flusher))
    });
    assert!(
        both,
        "an iotop frame should list both dd and {}:\n{}",
        p.flusher,
        frames.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join("\n--\n")
    );
}

// ---- 7. a 2 GiB buffer on a 1.9 GB machine -----------------------------------------------
// Not part of seed-000-vmstat.sh (its page-cache half); replayed here on the same machine.

#[test]
fn t07_a_buffer_larger_than_ram_swaps_instead_of_being_killed() {
    let p = phys();
    let script = "\
swapoff -a && swapon -a
echo 1 > /proc/sys/vm/drop_caches
free
vmstat 1 30 &
dd if=/dev/zero of=/dev/null bs=2G count=1
wait
free
";
    let r = run_text("swap.sh", script).unwrap_or_else(|e| panic!("{e}"));
    let t = Transcript::new(&r.transcript);
    let before = t.free_old_after(t.prompt("free", 0));
    // 4 GB of free swap: reclaim swaps the buffer's pages out; nothing is OOM-killed.
    let swap_total_kib = before.swap[0] as f64;
    assert!(swap_total_kib > 2.0 * 1024.0 * 1024.0, "the machine has {swap_total_kib} KiB of swap");
    assert!(!r.transcript.contains("Out of memory"), "OOM kill with {swap_total_kib} KiB of free swap:\n{}", r.transcript);
    // read(2) moves at most MAX_RW_COUNT (2 GiB - 4 KiB) at once: one partial record.
    let dd_prompt = t.prompt("dd if=/dev/zero of=/dev/null bs=2G count=1", 0);
    let (_, dd) = t.dd_after(dd_prompt);
    assert_eq!(dd.records_in, (0, 1));
    assert_eq!(dd.records_out, (0, 1));
    assert_eq!(dd.bytes, 0x7fff_f000);
    // What did not fit in free memory went to the swap device, no faster than it writes.
    let swap_disk = match &p.machine.swaps[0].kind {
        memtwin_machine::SwapKind::Partition { disk } => p.machine.disk(disk).expect("swap disk").model.clone(),
        k => panic!("seed-000 swaps to a partition, not {k:?}"),
    };
    let must_swap = dd.bytes as f64 - before.mem[2] as f64 * KIB;
    assert!(must_swap > 0.0);
    let t_lo = must_swap / swap_disk.write_bw;
    assert!(dd.secs >= 0.9 * t_lo, "dd took {} s; swapping {must_swap:.3e} B out takes >= {t_lo:.2} s", dd.secs);
    let rows = t.vmstat_rows_after(t.prompt("vmstat 1 30 &", 0), 30);
    let peak = rows.iter().map(|r| r.swpd).max().unwrap_or(0);
    assert!(rows.iter().any(|r| r.so > 0), "so should rise\n{}", rows_text(&rows));
    // pswpout counts pages as they are submitted to the swap device: in one second no more
    // than the device writes plus what its queue holds (generously: 128 requests of the
    // largest size) can be submitted.
    let queue = 128.0 * swap_disk.max_request_bytes as f64;
    for (k, r) in rows.iter().enumerate().skip(1) {
        let so = r.so as f64 * KIB;
        assert!(
            so <= swap_disk.write_bw * 1.1 + queue,
            "row {k}: so = {} KiB/s but the swap device writes {:.0} KiB/s\n{}",
            r.so,
            swap_disk.write_bw / KIB,
            rows_text(&rows)
        );
    }
    assert!(peak as f64 >= 0.5 * must_swap / KIB, "swpd peaks at {peak} KiB, {must_swap:.3e} B had to go\n{}", rows_text(&rows));
    assert_no_iowait_without_io(&rows);
    // dd's swap slots are freed when it exits.
    let after = t.free_old_after(t.prompt("free", 1));
    assert!((after.swap[1] as f64) < 0.5 * peak as f64, "swap used after dd exits: {} KiB (peak {peak})", after.swap[1]);
}

// ---- 9. rm -----------------------------------------------------------------------------------

#[test]
fn t09_rm_frees_the_files_cache_at_once() {
    let t = tr();
    let rm = t.prompt("rm -f test", 0);
    let before = t.last_vmstat_row_before(rm).expect("a vmstat row before rm").cache as f64;
    let vm = t.prompt_after(rm, "vmstat 1 2");
    let rows = t.vmstat_rows_after(vm, 2);
    let after = rows[0].cache as f64;
    assert!(within(before - after, FILE_KIB, 0.10), "rm should free ~512 MiB of cache at once: {before} -> {after} KiB");
    // In the series: from "file cached" to "file gone" between two consecutive samples.
    let s = &result().series;
    let cached = col(s, "mi.Cached");
    let low = *cached.iter().min().unwrap() as f64;
    let i = cached.iter().rposition(|&c| c as f64 >= low + 0.9 * FILE_KIB).expect("a sample with the file cached");
    assert!(i + 1 < cached.len());
    assert!(
        cached[i] as f64 - cached[i + 1] as f64 >= 0.9 * FILE_KIB,
        "Cached should fall by ~512 MiB within one sample at t={}\n{}",
        s.t_s[i],
        dump(s, &["mi.Cached"])
    );
}

// ---- 10. raw block device ------------------------------------------------------------------

#[test]
fn t10_raw_device_read_fills_buff_not_cache() {
    let p = phys();
    let t = tr();
    let ph = phase(DD_RAW, 0);
    let rows = &ph.rows;
    assert!(rows.len() >= 2);
    let last = rows.last().unwrap();
    let buff = last.buff as f64 - rows[0].buff as f64;
    let cache = last.cache as f64 - rows[0].cache as f64;
    assert!(within(buff, FILE_KIB, 0.10), "buff should grow by ~512 MiB: +{buff} KiB\n{}", rows_text(rows));
    assert!(cache.abs() <= 0.02 * FILE_KIB, "cache should not move: {cache:+} KiB\n{}", rows_text(rows));
    let bi: u64 = rows[1..].iter().map(|r| r.bi).sum();
    assert!(within(bi as f64, FILE_KIB, 0.05), "bi over the raw read: {bi} KiB\n{}", rows_text(rows));
    // Readahead keeps the device busy: close to its sequential read bandwidth.
    let rate = ph.dd.bytes_per_sec();
    assert!(
        rate >= 0.6 * p.read_bw && rate <= p.read_bw,
        "raw read at {rate:.3e} B/s ({}); device read_bw {:.3e} B/s",
        ph.dd.rate_text,
        p.read_bw
    );
    // At worst readahead keeps one request of the largest size in flight at a time.
    let serial = p.max_request_bytes / (p.read_latency_s + p.max_request_bytes / p.read_bw);
    assert!(rate >= 0.95 * serial, "raw read at {rate:.3e} B/s, below one {}-byte request at a time ({serial:.3e} B/s)", p.max_request_bytes);

    // The second identical read is served from the buffer cache.
    let again = phase(DD_RAW, 1);
    assert!(again.dd.secs * 5.0 < ph.dd.secs, "second raw read {} s vs first {} s", again.dd.secs, ph.dd.secs);
    // Faster than the device can deliver: it cannot have read from the disk...
    assert!(again.dd.bytes_per_sec() > p.read_bw, "second raw read at {} B/s", again.dd.bytes_per_sec());
    // ... and the buffer cache did not grow.
    let free = t.free_old_after(again.prompt);
    assert!((free.mem[4] as f64 - last.buff as f64).abs() <= 0.01 * FILE_KIB, "buffers {} after the second read, {} before", free.mem[4], last.buff);
    // The series: Buffers grows by the device read, Cached does not.
    let s = &result().series;
    let b = col(s, "mi.Buffers");
    let c = col(s, "mi.Cached");
    let i = first_rise("mi.Buffers");
    let grown = (*b.last().unwrap() - b[i - 1]) as f64;
    assert!(within(grown, FILE_KIB, 0.10), "mi.Buffers +{grown}\n{}", dump(s, &["mi.Buffers", "mi.Cached"]));
    assert!(c[i - 1..].iter().all(|&x| (x as f64 - c[i - 1] as f64).abs() <= 0.02 * FILE_KIB), "{}", dump(s, &["mi.Buffers", "mi.Cached"]));
}

// ---- The transcript reads like the article -------------------------------------------------

#[test]
fn transcript_has_the_real_tools_layouts() {
    let t = tr();
    let prompts = t.prompts();
    assert!(!prompts.is_empty());
    for (n, (i, cmd)) in prompts.iter().enumerate() {
        let next = prompts.get(n + 1).map(|(j, _)| *j).unwrap_or(t.lines.len());
        if cmd.starts_with("dd ") {
            let (at, dd) = t.dd_after(*i);
            assert!(at < next || cmd.ends_with('&'), "dd's summary should follow its prompt:\n{}", t.excerpt(*i, next));
            assert!(dd.line.contains(" bytes (") && dd.line.contains(") copied, "), "{}", dd.line);
            assert!(dd.rate_text.ends_with("B/s"));
        }
        if cmd.starts_with("vmstat") {
            let h = (*i + 1..t.lines.len()).find(|&j| t.lines[j].starts_with("procs")).expect("vmstat header");
            let groups = &t.lines[h];
            for g in ["procs", "-memory-", "-swap-", "-io-", "-system-", "-cpu-"] {
                assert!(groups.contains(g), "vmstat group header {groups:?} lacks {g}");
            }
            let cols: Vec<&str> = t.lines[h + 1].split_whitespace().collect();
            assert_eq!(cols, VMSTAT_COLUMNS, "vmstat column header");
        }
        if *cmd == "free --old" {
            let hdr: Vec<&str> = t.lines[*i + 1].split_whitespace().collect();
            assert_eq!(hdr, ["total", "used", "free", "shared", "buffers", "cached"], "free --old header");
            let f = t.free_old_after(*i);
            assert!(t.lines[*i + 3].starts_with("-/+ buffers/cache:"));
            // The old layout's arithmetic.
            assert_eq!(f.mem[1], f.mem[0] - f.mem[2], "used = total - free");
            assert_eq!(f.bufcache[0], f.mem[1] - f.mem[4] - f.mem[5], "-/+ used");
            assert_eq!(f.bufcache[1], f.mem[2] + f.mem[4] + f.mem[5], "-/+ free");
            assert_eq!(f.swap[1], f.swap[0] - f.swap[2]);
        }
    }
    // No iowait without I/O, in every vmstat of the scenario.
    for (i, cmd) in prompts.iter().filter(|(_, c)| c.starts_with("vmstat ")) {
        let n = cmd.split_whitespace().filter_map(|w| w.parse::<usize>().ok()).nth(1).unwrap_or(1);
        assert_no_iowait_without_io(&t.vmstat_rows_after(*i, n));
    }
    // Every dd of the scenario printed its three lines.
    let dds = prompts.iter().filter(|(_, c)| c.starts_with("dd ")).count();
    let summaries = t.lines.iter().filter(|l| l.ends_with("records in")).count();
    assert_eq!(dds, 6);
    assert_eq!(summaries, dds);
    for l in &t.lines {
        let low = l.to_lowercase();
        assert!(!low.contains("error") && !low.contains("unknown") && !low.contains("not supported"), "unexpected line: {l}");
    }
    assert_eq!(result().exit_status, 0);
}

// ---- Whole-run invariants ----------------------------------------------------------------

#[test]
fn every_sample_accounts_for_memory_and_counters_only_grow() {
    let s = &result().series;
    let n = s.t_s.len();
    assert!(n as f64 >= result().sim_seconds.floor(), "one sample per simulated second");
    for w in s.t_s.windows(2) {
        assert!(w[1] > w[0], "sample times increase");
    }
    let g = |name: &str| col(s, name);
    let total = g("mi.MemTotal");
    for i in 0..n {
        let used = g("mi.MemFree")[i]
            + g("mi.Active")[i]
            + g("mi.Inactive")[i]
            + g("mi.Unevictable")[i]
            + g("mi.Slab")[i]
            + g("mi.KernelStack")[i]
            + g("mi.PageTables")[i];
        assert!(used <= total[i], "t={}: accounted {used} KiB > MemTotal {}", s.t_s[i], total[i]);
        assert_eq!(g("mi.Active")[i], g("mi.Active(anon)")[i] + g("mi.Active(file)")[i], "t={}: Active", s.t_s[i]);
        assert_eq!(g("mi.Inactive")[i], g("mi.Inactive(anon)")[i] + g("mi.Inactive(file)")[i], "t={}: Inactive", s.t_s[i]);
        assert_eq!(g("mi.Slab")[i], g("mi.SReclaimable")[i] + g("mi.SUnreclaim")[i], "t={}: Slab", s.t_s[i]);
        assert!(g("mi.SwapFree")[i] <= g("mi.SwapTotal")[i]);
        assert!(g("mi.MemAvailable")[i] <= total[i]);
        // Dirty and writeback pages are page-cache pages.
        assert!(
            g("mi.Dirty")[i] + g("mi.Writeback")[i] <= g("mi.Buffers")[i] + g("mi.Cached")[i],
            "t={}: Dirty + Writeback > Buffers + Cached",
            s.t_s[i]
        );
        assert_eq!(g("mi.MemTotal")[i], total[0]);
    }
    let monotonic = |name: &str| {
        let n = name.strip_prefix("vm.").unwrap();
        matches!(
            n,
            "pgpgin"
                | "pgpgout"
                | "pswpin"
                | "pswpout"
                | "pgfault"
                | "pgmajfault"
                | "nr_dirtied"
                | "nr_written"
                | "pgalloc_normal"
                | "pgfree"
                | "pgactivate"
                | "pgdeactivate"
                | "pgrefill"
                | "allocstall_normal"
                | "slabs_scanned"
                | "pgrotated"
                | "drop_pagecache"
                | "drop_slab"
                | "oom_kill"
                | "pageoutrun"
        ) || n.starts_with("pgsteal_")
            || n.starts_with("pgscan_")
            || (n.starts_with("workingset_") && n != "workingset_nodes")
    };
    let mut checked = 0;
    for (name, v) in &s.columns {
        if name.starts_with("vm.") && monotonic(name) {
            checked += 1;
            for i in 1..v.len() {
                assert!(v[i] >= v[i - 1], "{name} decreased at t={}: {} -> {}", s.t_s[i], v[i - 1], v[i]);
            }
        }
    }
    assert!(checked >= 20, "only {checked} monotonic counters found");
}
