//! Shared helpers for the scenario integration tests: running the seed-000 scenario, and
//! small parsers for what the simulated tools print (dd's summary, vmstat rows, iotop
//! frames, `free --old` tables) and for the sampled /proc series.
//!
//! Every test binary (tests/*.rs) compiles its own copy of this module, so not every helper
//! is used by every binary.
#![allow(dead_code)]

use memtwin_scenario::{RunOptions, RunResult, Series};

pub const KIB: f64 = 1024.0;
pub const MIB: f64 = 1024.0 * 1024.0;

/// Run `text` (named t.sh in messages) on `machine` with `--set` overrides; panics on bad input.
pub fn run_on(text: &str, machine: &str, sets: &[&str]) -> RunResult {
    memtwin_scenario::run(&RunOptions {
        script_path: Some("t.sh".into()),
        script_text: Some(text.to_string()),
        machine: machine.into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Path of the seed-000 scenario in the repository.
pub fn seed000_path() -> String {
    format!("{}/../../scenarios/seed-000-vmstat.sh", env!("CARGO_MANIFEST_DIR"))
}

/// Options that run the seed-000 scenario from its file; the machine comes from the
/// script's own `# machine: seed-000` line.
pub fn seed000_options(seed: u64) -> RunOptions {
    RunOptions { script_path: Some(seed000_path()), seed, ..Default::default() }
}

pub fn run_seed000(seed: u64) -> RunResult {
    match memtwin_scenario::run(&seed000_options(seed)) {
        Ok(r) => r,
        Err(e) => panic!("the seed-000 scenario failed to run: {e}"),
    }
}

/// A script given as text, on the seed-000 machine.
pub fn run_text(name: &str, text: &str) -> Result<RunResult, memtwin_scenario::RunError> {
    memtwin_scenario::run(&RunOptions {
        script_path: Some(name.to_string()),
        script_text: Some(text.to_string()),
        machine: "seed-000".into(),
        ..Default::default()
    })
}

// ---- Series --------------------------------------------------------------------------------

/// The values of one sampled column ("vm.pgpgout", "mi.Cached").
pub fn col<'a>(s: &'a Series, name: &str) -> &'a [u64] {
    match s.columns.iter().find(|(n, _)| n == name) {
        Some((_, v)) => v,
        None => {
            let names: Vec<&str> = s.columns.iter().map(|(n, _)| n.as_str()).collect();
            panic!("no column '{name}' in the series (columns: {})", names.join(", "))
        }
    }
}

pub fn has_col(s: &Series, name: &str) -> bool {
    s.columns.iter().any(|(n, _)| n == name)
}

/// A compact dump of some columns, for assertion messages.
pub fn dump(s: &Series, names: &[&str]) -> String {
    let mut out = format!("{:>7}", "t_s");
    for n in names {
        out.push_str(&format!(" {n:>16}"));
    }
    out.push('\n');
    for (i, t) in s.t_s.iter().enumerate() {
        out.push_str(&format!("{t:>7.1}"));
        for n in names {
            out.push_str(&format!(" {:>16}", col(s, n)[i]));
        }
        out.push('\n');
    }
    out
}

// ---- Transcript ----------------------------------------------------------------------------

/// dd's three summary lines.
#[derive(Clone, Debug, PartialEq)]
pub struct DdSummary {
    pub records_in: (u64, u64),
    pub records_out: (u64, u64),
    pub bytes: u64,
    pub secs: f64,
    /// The rate as printed, e.g. "308 MB/s".
    pub rate_text: String,
    /// Its unit, e.g. "MB/s", "GB/s".
    pub rate_unit: String,
    /// The rate in bytes per second, from the printed number and its (SI) unit.
    pub rate: f64,
    /// The third line verbatim.
    pub line: String,
}

impl DdSummary {
    /// bytes / seconds, computed (not the rounded printed rate).
    pub fn bytes_per_sec(&self) -> f64 {
        self.bytes as f64 / self.secs
    }
}

/// "512+0 records in" -> (512, 0).
pub fn parse_records(line: &str, what: &str) -> Option<(u64, u64)> {
    let rest = line.strip_suffix(what)?.trim_end();
    let (a, b) = rest.split_once('+')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// dd's third line: "N bytes (537 MB, 512 MiB) copied, S s, R MB/s" (also the old coreutils
/// "N bytes (537 MB) copied, ..." and the short "N bytes copied, ..." forms).
pub fn parse_dd_copied(line: &str) -> Option<(u64, f64, String, String, f64)> {
    let (left, right) = line.split_once(" copied, ")?;
    let bytes: u64 = left.split_whitespace().next()?.parse().ok()?;
    if left.split_whitespace().nth(1)? != "bytes" {
        return None;
    }
    let (secs_part, rate_part) = right.split_once(", ")?;
    let secs: f64 = secs_part.strip_suffix(" s")?.trim().parse().ok()?;
    let rate_text = rate_part.trim().to_string();
    let (num, unit) = rate_text.split_once(' ')?;
    let mult = match unit {
        "B/s" => 1.0,
        "kB/s" => 1e3,
        "MB/s" => 1e6,
        "GB/s" => 1e9,
        "TB/s" => 1e12,
        _ => return None,
    };
    let rate = if num == "Infinity" { f64::INFINITY } else { num.parse::<f64>().ok()? * mult };
    Some((bytes, secs, rate_text.clone(), unit.to_string(), rate))
}

/// One row of `vmstat` (the 17 columns of the default layout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VmRow {
    pub r: u64,
    pub b: u64,
    pub swpd: u64,
    pub free: u64,
    pub buff: u64,
    pub cache: u64,
    pub si: u64,
    pub so: u64,
    pub bi: u64,
    pub bo: u64,
    pub inr: u64,
    pub cs: u64,
    pub us: u64,
    pub sy: u64,
    pub id: u64,
    pub wa: u64,
    pub st: u64,
    /// False for procps 2.0's layout (Linux 2.4: `r b w ... us sy id`, I/O wait counted as
    /// idle), whose `wa` and `st` read 0.
    pub wa_reported: bool,
}

pub const VMSTAT_COLUMNS: [&str; 17] =
    ["r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id", "wa", "st"];

pub fn parse_vm_row(line: &str) -> Option<VmRow> {
    let v: Vec<u64> = line.split_whitespace().map(|t| t.parse::<u64>().ok()).collect::<Option<Vec<_>>>()?;
    if v.len() == 16 {
        // procps 2.0: r b w swpd free buff cache si so bi bo in cs us sy id.
        return Some(VmRow {
            r: v[0],
            b: v[1],
            swpd: v[3],
            free: v[4],
            buff: v[5],
            cache: v[6],
            si: v[7],
            so: v[8],
            bi: v[9],
            bo: v[10],
            inr: v[11],
            cs: v[12],
            us: v[13],
            sy: v[14],
            id: v[15],
            wa: 0,
            st: 0,
            wa_reported: false,
        });
    }
    if v.len() != 17 {
        return None;
    }
    Some(VmRow {
        r: v[0],
        b: v[1],
        swpd: v[2],
        free: v[3],
        buff: v[4],
        cache: v[5],
        si: v[6],
        so: v[7],
        bi: v[8],
        bo: v[9],
        inr: v[10],
        cs: v[11],
        us: v[12],
        sy: v[13],
        id: v[14],
        wa: v[15],
        st: v[16],
        wa_reported: true,
    })
}

/// One task line of an iotop frame.
#[derive(Clone, Debug, PartialEq)]
pub struct IotopRow {
    pub tid: u64,
    pub prio: String,
    pub user: String,
    /// Bytes per second.
    pub read: f64,
    pub write: f64,
    pub swapin_pct: f64,
    pub io_pct: f64,
    pub command: String,
}

/// One iteration of `iotop -b`.
#[derive(Clone, Debug, PartialEq)]
pub struct IotopFrame {
    pub total_read: f64,
    pub total_write: f64,
    pub actual_read: f64,
    pub actual_write: f64,
    pub rows: Vec<IotopRow>,
    pub text: String,
}

/// iotop's human_size with "/s": "129.00 M/s" -> bytes per second (binary units).
pub fn parse_iotop_rate(s: &str) -> Option<f64> {
    let s = s.trim();
    let s = s.strip_suffix("/s").unwrap_or(s);
    let (num, unit) = s.trim().split_once(' ')?;
    let v: f64 = num.parse().ok()?;
    let e = ["B", "K", "M", "G", "T", "P", "E"].iter().position(|u| *u == unit.trim())?;
    Some(v * 1024f64.powi(e as i32))
}

/// "Total DISK READ :       0.00 B/s | Total DISK WRITE :     129.00 M/s" -> (read, write).
fn parse_iotop_summary(line: &str) -> Option<(f64, f64)> {
    let (a, b) = line.split_once('|')?;
    let r = parse_iotop_rate(a.split_once(':')?.1)?;
    let w = parse_iotop_rate(b.split_once(':')?.1)?;
    Some((r, w))
}

/// "   16 be/4 root        0.00 B/s  129.00 M/s  0.00 % 98.47 % dd if=..."
fn parse_iotop_row(line: &str) -> Option<IotopRow> {
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.len() < 12 || !t[1].contains('/') || t[8] != "%" || t[10] != "%" {
        return None;
    }
    let tid = t[0].parse().ok()?;
    let read = parse_iotop_rate(&format!("{} {}", t[3], t[4]))?;
    let write = parse_iotop_rate(&format!("{} {}", t[5], t[6]))?;
    let swapin_pct = t[7].parse().ok()?;
    let io_pct = t[9].parse().ok()?;
    // The command is whatever follows the second '%'.
    let mut rest = line;
    for _ in 0..2 {
        rest = &rest[rest.find('%')? + 1..];
    }
    Some(IotopRow {
        tid,
        prio: t[1].to_string(),
        user: t[2].to_string(),
        read,
        write,
        swapin_pct,
        io_pct,
        command: rest.trim().to_string(),
    })
}

/// `free --old`: the Mem, -/+ buffers/cache and Swap lines (KiB).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FreeOld {
    /// total used free shared buffers cached
    pub mem: [u64; 6],
    /// used free
    pub bufcache: [u64; 2],
    /// total used free
    pub swap: [u64; 3],
}

/// The terminal transcript of a run, split into lines.
pub struct Transcript {
    pub lines: Vec<String>,
}

impl Transcript {
    pub fn new(text: &str) -> Transcript {
        Transcript { lines: text.lines().map(str::to_string).collect() }
    }

    /// Indices and command text of the echoed prompts ("# CMD").
    pub fn prompts(&self) -> Vec<(usize, &str)> {
        self.lines.iter().enumerate().filter_map(|(i, l)| l.strip_prefix("# ").map(|c| (i, c))).collect()
    }

    /// Line index of the `nth` (0-based) prompt whose command is exactly `cmd`.
    pub fn prompt(&self, cmd: &str, nth: usize) -> usize {
        match self.prompts().into_iter().filter(|(_, c)| *c == cmd).nth(nth) {
            Some((i, _)) => i,
            None => panic!("prompt #{nth} '# {cmd}' not found in the transcript:\n{}", self.lines.join("\n")),
        }
    }

    /// Index of the first prompt after line `from` whose command is exactly `cmd`.
    pub fn prompt_after(&self, from: usize, cmd: &str) -> usize {
        match self.prompts().into_iter().find(|(i, c)| *i > from && *c == cmd) {
            Some((i, _)) => i,
            None => panic!("no prompt '# {cmd}' after line {from} in the transcript:\n{}", self.lines.join("\n")),
        }
    }

    /// The first `count` vmstat rows printed after line `from` (by the vmstat started there).
    pub fn vmstat_rows_after(&self, from: usize, count: usize) -> Vec<VmRow> {
        self.lines[from..].iter().filter_map(|l| parse_vm_row(l)).take(count).collect()
    }

    /// Line indices of the vmstat rows printed after line `from`.
    pub fn vmstat_row_lines_after(&self, from: usize, count: usize) -> Vec<usize> {
        (from..self.lines.len()).filter(|&i| parse_vm_row(&self.lines[i]).is_some()).take(count).collect()
    }

    /// The last vmstat row printed before line `before`.
    pub fn last_vmstat_row_before(&self, before: usize) -> Option<VmRow> {
        self.lines[..before].iter().rev().find_map(|l| parse_vm_row(l))
    }

    /// The first dd summary (three lines) after line `from`, and the index of its first line.
    pub fn dd_after(&self, from: usize) -> (usize, DdSummary) {
        for i in from..self.lines.len() {
            if let Some(rin) = parse_records(&self.lines[i], "records in") {
                let rout = self.lines.get(i + 1).and_then(|l| parse_records(l, "records out"));
                let copied = self.lines.get(i + 2).and_then(|l| parse_dd_copied(l));
                match (rout, copied) {
                    (Some(rout), Some((bytes, secs, rate_text, rate_unit, rate))) => {
                        return (
                            i,
                            DdSummary {
                                records_in: rin,
                                records_out: rout,
                                bytes,
                                secs,
                                rate_text,
                                rate_unit,
                                rate,
                                line: self.lines[i + 2].clone(),
                            },
                        )
                    }
                    _ => panic!(
                        "dd's summary at line {i} is not the three coreutils lines:\n{}",
                        self.lines[i..(i + 3).min(self.lines.len())].join("\n")
                    ),
                }
            }
        }
        panic!("no dd summary after line {from} in the transcript:\n{}", self.lines.join("\n"))
    }

    /// All iotop frames printed after line `from` (up to `count`).
    pub fn iotop_frames_after(&self, from: usize, count: usize) -> Vec<IotopFrame> {
        let mut frames = Vec::new();
        let mut i = from;
        while i < self.lines.len() && frames.len() < count {
            let l = &self.lines[i];
            if !l.starts_with("Total DISK READ") {
                i += 1;
                continue;
            }
            let start = i;
            let (total_read, total_write) =
                parse_iotop_summary(l).unwrap_or_else(|| panic!("bad iotop summary line {i}: {l:?}"));
            i += 1;
            let (actual_read, actual_write) = match self.lines.get(i) {
                Some(a) if a.starts_with("Actual DISK READ") || a.starts_with("Current DISK READ") => {
                    i += 1;
                    parse_iotop_summary(a).unwrap_or_else(|| panic!("bad iotop summary line: {a:?}"))
                }
                _ => (f64::NAN, f64::NAN),
            };
            if self.lines.get(i).is_some_and(|h| h.contains("TID") && h.contains("COMMAND")) {
                i += 1;
            }
            let mut rows = Vec::new();
            while let Some(r) = self.lines.get(i).and_then(|l| parse_iotop_row(l)) {
                rows.push(r);
                i += 1;
            }
            frames.push(IotopFrame {
                total_read,
                total_write,
                actual_read,
                actual_write,
                rows,
                text: self.lines[start..i].join("\n"),
            });
        }
        frames
    }

    /// The first `free --old` table after line `from`.
    pub fn free_old_after(&self, from: usize) -> FreeOld {
        let nums = |l: &str, skip: usize| -> Vec<u64> {
            l.split_whitespace().skip(skip).map(|t| t.parse::<u64>().unwrap_or_else(|_| panic!("bad number in {l:?}"))).collect()
        };
        for i in from..self.lines.len() {
            if self.lines[i].starts_with("Mem:") {
                let mem = nums(&self.lines[i], 1);
                let bc = self.lines.get(i + 1).cloned().unwrap_or_default();
                let sw = self.lines.get(i + 2).cloned().unwrap_or_default();
                assert!(
                    bc.starts_with("-/+ buffers/cache:"),
                    "free --old has no '-/+ buffers/cache:' line after line {i}:\n{}",
                    self.lines[i.saturating_sub(1)..(i + 3).min(self.lines.len())].join("\n")
                );
                assert!(sw.starts_with("Swap:"), "free --old has no Swap line: {sw:?}");
                let bcv = nums(&bc, 2);
                let swv = nums(&sw, 1);
                assert_eq!(mem.len(), 6, "free --old Mem line: {:?}", self.lines[i]);
                assert_eq!(bcv.len(), 2, "free --old -/+ line: {bc:?}");
                assert_eq!(swv.len(), 3, "free --old Swap line: {sw:?}");
                return FreeOld {
                    mem: [mem[0], mem[1], mem[2], mem[3], mem[4], mem[5]],
                    bufcache: [bcv[0], bcv[1]],
                    swap: [swv[0], swv[1], swv[2]],
                };
            }
        }
        panic!("no free --old table after line {from}")
    }

    /// Lines from `from` (inclusive) to `to` (exclusive), for messages.
    pub fn excerpt(&self, from: usize, to: usize) -> String {
        self.lines[from.min(self.lines.len())..to.min(self.lines.len())].join("\n")
    }
}

/// The count argument of `vmstat DELAY COUNT` or iotop's `-n N` from a prompt command line.
pub fn vmstat_count(cmd: &str) -> usize {
    let nums: Vec<usize> = cmd.split_whitespace().filter_map(|t| t.parse().ok()).collect();
    *nums.get(1).unwrap_or_else(|| panic!("'{cmd}' has no vmstat count"))
}

/// |a - b| <= tol * |b|
pub fn within(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs()
}

// ---- Unit tests of the parsers themselves ----------------------------------------------------

/// Checks the parsers on the article's own text (run from one of the test binaries).
pub fn self_test_parsers() {
    let article = "\
# dd if=/dev/zero of=test bs=1M count=512
512+0 records in
512+0 records out
536870912 bytes (537 MB) copied, 1.76426 s, 304 MB/s
 0  2      0 1326248   1328 455184    0    0   176 177156 653  286  1 32   0 67  0
Total DISK READ :       0.00 B/s | Total DISK WRITE :     136.81 M/s
Actual DISK READ:       0.00 B/s | Actual DISK WRITE:     130.00 M/s
  TID  PRIO  USER     DISK READ  DISK WRITE  SWAPIN      IO    COMMAND
 1009 be/4 root        0.00 B/s   51.47 K/s  0.00 % 96.35 % [flush-253:0]
 2071 be/4 root        0.00 B/s   81.78 M/s  0.00 % 93.61 % dd if=/dev/zero of=test bs=1M count=512
             total       used       free     shared    buffers     cached
Mem:       1924020     206496    1717524          0        184       8280
-/+ buffers/cache:     198032    1725988
Swap:      4128760          0    4128760
";
    let t = Transcript::new(article);
    let p = t.prompt("dd if=/dev/zero of=test bs=1M count=512", 0);
    let (_, dd) = t.dd_after(p);
    assert_eq!(dd.records_in, (512, 0));
    assert_eq!(dd.bytes, 536870912);
    assert!((dd.secs - 1.76426).abs() < 1e-9);
    assert_eq!(dd.rate_unit, "MB/s");
    assert!((dd.rate - 304e6).abs() < 1.0);
    let rows = t.vmstat_rows_after(p, 10);
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].b, rows[0].bo, rows[0].wa), (2, 177156, 67));
    let f = t.iotop_frames_after(p, 10);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rows.len(), 2);
    assert_eq!(f[0].rows[0].command, "[flush-253:0]");
    assert!((f[0].rows[0].write - 51.47 * 1024.0).abs() < 1.0);
    assert!((f[0].total_write - 136.81 * MIB).abs() < 1.0);
    assert_eq!(f[0].rows[1].tid, 2071);
    let fr = t.free_old_after(p);
    assert_eq!(fr.mem, [1924020, 206496, 1717524, 0, 184, 8280]);
    assert_eq!(fr.bufcache, [198032, 1725988]);
    assert_eq!(fr.swap, [4128760, 0, 4128760]);
    let new_style = parse_dd_copied("536870912 bytes (537 MB, 512 MiB) copied, 0.106109 s, 5.1 GB/s").unwrap();
    assert_eq!(new_style.3, "GB/s");
    assert!((new_style.4 - 5.1e9).abs() < 1.0);
}

// ---- Command outputs in a transcript -------------------------------------------------------

/// The output of the command echoed as `# CMD` (up to the next prompt line).
pub fn output_of<'a>(t: &'a str, cmd: &str) -> Vec<&'a str> {
    let mut lines = t.lines();
    let prompt = format!("# {cmd}");
    let mut found = None;
    for l in lines.by_ref() {
        if l == prompt {
            found = Some(());
            break;
        }
    }
    assert!(found.is_some(), "no command '{cmd}' in:\n{t}");
    lines.take_while(|l| !l.starts_with("# ")).collect()
}

/// The outputs of every run of `cmd`, in order.
pub fn outputs_of<'a>(t: &'a str, cmd: &str) -> Vec<Vec<&'a str>> {
    let prompt = format!("# {cmd}");
    let lines: Vec<&str> = t.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l == prompt {
            out.push(lines[i + 1..].iter().take_while(|l| !l.starts_with("# ")).copied().collect());
        }
    }
    out
}

pub fn number(t: &str, cmd: &str) -> u64 {
    let o = output_of(t, cmd);
    o[0].trim().parse().unwrap_or_else(|_| panic!("'{cmd}' printed {o:?}"))
}

/// The number after `prefix` on the `nth` line of the transcript that starts with it (a
/// /proc/slabinfo line's active objects, a /proc/meminfo line's kB).
pub fn nth_value(t: &str, prefix: &str, nth: usize) -> u64 {
    let line = t.lines().filter(|l| l.starts_with(prefix)).nth(nth).unwrap_or_else(|| panic!("no '{prefix}' line {nth}:\n{t}"));
    line[prefix.len()..].split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no number after '{prefix}': {line}"))
}

/// `key value` lines (memory.events, memory.stat).
pub fn keyed(lines: &[&str], key: &str) -> u64 {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no '{key}' in {lines:?}"))
        .trim()
        .parse()
        .unwrap()
}
