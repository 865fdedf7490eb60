//! dd (coreutils): copy with block sizes, O_DIRECT flags, counts and the three summary lines.

use super::{human, parse_coreutils_size};
use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};

/// Linux caps one read(2)/write(2) at MAX_RW_COUNT (INT_MAX rounded down to a page).
const MAX_RW_COUNT: u64 = 0x7fff_f000;
/// dd's user buffer is touched (faulted in) and copied at most this much per step.
const STEP_BYTES: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Default,
    None,
    Noxfer,
    Progress,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Open,
    Read,
    Write,
    Fsync,
    Finish,
    /// The files are closed (close(2) may have waited: the filesystem's flush at close);
    /// dd prints its statistics after closing, as coreutils' quit() does (cleanup, then
    /// print_stats), so the time it reports includes the close.
    Report,
}

pub struct Dd {
    ifile: String,
    ofile: Option<String>,
    /// The operands as the user wrote them (dd's messages quote these).
    if_arg: String,
    of_arg: String,
    ibs: u64,
    obs: u64,
    count: Option<u64>,
    skip: u64,
    seek: u64,
    idirect: bool,
    odirect: bool,
    notrunc: bool,
    fsync: bool,
    /// oflag=dsync|sync: O_DSYNC / O_SYNC, every write(2) returns once its data is on the
    /// device (generic_write_sync -> vfs_fsync_range).
    osync: bool,
    sync_due: bool,
    /// iflag=nocache / oflag=nocache: posix_fadvise(POSIX_FADV_DONTNEED) of the file
    /// (coreutils invalidate_cache).
    inocache: bool,
    onocache: bool,
    status: Status,
    phase: Phase,
    in_fd: usize,
    out_fd: Option<usize>,
    /// Bytes of the current input record read so far, and the record's target.
    rec_got: u64,
    /// Bytes waiting in the buffer to be written, and written of the current output record.
    pending: u64,
    out_done: u64,
    out_len: u64,
    in_full: u64,
    in_part: u64,
    out_full: u64,
    out_part: u64,
    bytes: u64,
    start: Ns,
    faulted_pages: u64,
    eof: bool,
    error: Option<String>,
}

const OPERANDS: &str = "if=, of=, bs=, ibs=, obs=, count=, skip=, seek=, iflag=direct|nocache, oflag=direct|dsync|sync|nocache, conv=notrunc|fsync|fdatasync, status=none|noxfer|progress";

impl Dd {
    pub fn parse(args: &[String], cwd: &str) -> Result<Dd, String> {
        let mut d = Dd {
            ifile: String::new(),
            ofile: None,
            if_arg: String::new(),
            of_arg: "standard output".into(),
            ibs: 512,
            obs: 512,
            count: None,
            skip: 0,
            seek: 0,
            idirect: false,
            odirect: false,
            notrunc: false,
            fsync: false,
            osync: false,
            sync_due: false,
            inocache: false,
            onocache: false,
            status: Status::Default,
            phase: Phase::Open,
            in_fd: 0,
            out_fd: None,
            rec_got: 0,
            pending: 0,
            out_done: 0,
            out_len: 0,
            in_full: 0,
            in_part: 0,
            out_full: 0,
            out_part: 0,
            bytes: 0,
            start: 0,
            faulted_pages: 0,
            eof: false,
            error: None,
        };
        let size = |k: &str, v: &str| -> Result<u64, String> {
            match parse_coreutils_size(v) {
                Some(n) if n > 0 || k == "count" || k == "skip" || k == "seek" => Ok(n),
                _ => Err(format!("dd: invalid number: '{v}' (e.g. 512, 4K, 1M, 2G, 1MB)")),
            }
        };
        let mut have_if = false;
        for a in args {
            let Some((k, v)) = a.split_once('=') else {
                return Err(format!("dd: unrecognized operand '{a}' (supported: {OPERANDS})"));
            };
            match k {
                "if" => {
                    d.ifile = normalize(cwd, v);
                    d.if_arg = v.to_string();
                    have_if = true;
                }
                "of" => {
                    d.ofile = Some(normalize(cwd, v));
                    d.of_arg = v.to_string();
                }
                "bs" => {
                    d.ibs = size(k, v)?;
                    d.obs = d.ibs;
                }
                "ibs" => d.ibs = size(k, v)?,
                "obs" => d.obs = size(k, v)?,
                "count" => d.count = Some(size(k, v)?),
                "skip" => d.skip = size(k, v)?,
                "seek" => d.seek = size(k, v)?,
                "iflag" | "oflag" => {
                    for f in v.split(',') {
                        match f {
                            "direct" => {
                                if k == "iflag" { d.idirect = true } else { d.odirect = true }
                            }
                            "sync" | "dsync" if k == "oflag" => d.osync = true,
                            "nocache" => {
                                if k == "iflag" { d.inocache = true } else { d.onocache = true }
                            }
                            _ => return Err(format!("dd: unsupported {k} '{f}' (supported: direct, nocache{})", if k == "oflag" { ", dsync, sync" } else { "" })),
                        }
                    }
                }
                "conv" => {
                    for f in v.split(',') {
                        match f {
                            "notrunc" => d.notrunc = true,
                            "fsync" | "fdatasync" => d.fsync = true,
                            _ => {
                                return Err(format!(
                                "dd: unsupported conv '{f}' (supported: notrunc, fsync, fdatasync)"
                            ))
                            }
                        }
                    }
                }
                "status" => {
                    d.status = match v {
                        "none" => Status::None,
                        "noxfer" => Status::Noxfer,
                        "progress" => Status::Progress,
                        _ => return Err(format!("dd: invalid status level '{v}' (none, noxfer, progress)")),
                    }
                }
                _ => return Err(format!("dd: unrecognized operand '{a}' (supported: {OPERANDS})")),
            }
        }
        if !have_if {
            return Err("dd: reading standard input is not supported: give if=FILE (e.g. if=/dev/zero)".into());
        }
        // An offset must fit in off_t (dd's skip/seek are multiplied out to a byte offset).
        for (k, n, bs) in [("skip", d.skip, d.ibs), ("seek", d.seek, d.obs)] {
            if n.checked_mul(bs).map_or(true, |b| b > i64::MAX as u64) {
                return Err(format!("dd: invalid number: '{k}={n}': Value too large for defined data type (the byte offset {k} x block size must be below 8E)"));
            }
        }
        Ok(d)
    }

    fn fail(&mut self, k: &mut Kernel, me: TaskId, msg: String) -> Step {
        k.eprint(me, &format!("{msg}\n"));
        self.error = Some(msg);
        self.phase = Phase::Finish;
        Step::Yield
    }

    /// A failed open ends dd before any transfer: only the error is printed.
    fn fail_open(&mut self, k: &mut Kernel, me: TaskId, msg: String) -> Step {
        k.eprint(me, &format!("{msg}\n"));
        let _ = k.sys_close(me, self.in_fd);
        Step::Exit(1)
    }

    /// The user-space buffer is ibs bytes; its pages fault in the first time data lands.
    fn fault_buffer(&mut self, k: &mut Kernel, me: TaskId, upto: u64) -> Option<Step> {
        let need = upto.min(self.ibs).div_ceil(4096);
        if need > self.faulted_pages {
            let first = self.faulted_pages == 0;
            match k.fault_anon_pages(me, self.faulted_pages, need - self.faulted_pages) {
                Ok(n) => self.faulted_pages += n,
                Err((n, step)) => {
                    self.faulted_pages += n;
                    return Some(step);
                }
            }
            let t = &mut k.tasks[me as usize];
            if first {
                // The buffer's mapping joins the process image (exec.rs).
                t.vm_kb += self.ibs.div_ceil(1024);
            }
            // malloc of the buffer: a private writable mapping, committed whole.
            t.committed = t.committed.max(self.ibs.div_ceil(4096));
        }
        None
    }

    fn summary(&self, k: &Kernel) -> String {
        let mut s = format!(
            "{}+{} records in\n{}+{} records out\n",
            self.in_full, self.in_part, self.out_full, self.out_part
        );
        if self.status == Status::Noxfer {
            return s;
        }
        let secs = (k.now - self.start) as f64 / NS_PER_SEC as f64;
        // gnulib human_readable on the inexact (floating) path autoscales to at least kB:
        // a rate below 1000 B/s prints as "0.0 kB/s".
        let rate = if secs > 0.0 {
            let r = self.bytes as f64 / secs;
            if r < 1000.0 { format!("{:.1} kB/s", r / 1000.0) } else { format!("{}/s", human(r, true)) }
        } else {
            "Infinity B/s".into()
        };
        let si = human(self.bytes as f64, true);
        let iec = human(self.bytes as f64, false);
        let t = format_g(secs);
        if self.bytes < 1000 {
            s.push_str(&format!("{} bytes copied, {} s, {}\n", self.bytes, t, rate));
        } else if self.bytes < 1024 {
            s.push_str(&format!("{} bytes ({}) copied, {} s, {}\n", self.bytes, si, t, rate));
        } else {
            s.push_str(&format!("{} bytes ({}, {}) copied, {} s, {}\n", self.bytes, si, iec, t, rate));
        }
        s
    }
}

/// printf("%g") with 6 significant digits.
pub fn format_g(x: f64) -> String {
    format_g_prec(x, 6)
}

/// printf("%.Ng"): `prec` significant digits, trailing zeros removed.
pub fn format_g_prec(x: f64, prec: i32) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.abs().log10().floor() as i32;
    if exp < -4 || exp >= prec {
        let s = format!("{:.*e}", (prec - 1).max(0) as usize, x);
        // Rust prints 1.23450e-7; C prints 1.2345e-07.
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let decimals = (prec - 1 - exp).max(0) as usize;
    let s = format!("{:.*}", decimals, x);
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

impl Program for Dd {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        loop {
            if self.sync_due {
                // O_DSYNC: the write just completed waits for its data to reach the device.
                self.sync_due = false;
                if let Some(out) = self.out_fd {
                    if let Ok(Some(w)) = k.sys_fsync(me, out) {
                        return w;
                    }
                }
            }
            match self.phase {
                Phase::Open => {
                    self.start = k.now;
                    let rf = OpenFlags { read: true, direct: self.idirect, ..Default::default() };
                    match k.sys_open(me, &self.ifile, rf) {
                        Ok((fd, _)) => self.in_fd = fd,
                        Err(e) => {
                            let m = format!("dd: failed to open '{}': {}", self.if_arg, e.strerror());
                            return Step::Exit({
                                k.eprint(me, &format!("{m}\n"));
                                1
                            });
                        }
                    }
                    let of = self.ofile.clone().unwrap_or_else(|| "/dev/null".into());
                    let wf = OpenFlags {
                        write: true,
                        create: true,
                        trunc: !self.notrunc && self.seek == 0,
                        direct: self.odirect,
                        ..Default::default()
                    };
                    match k.sys_open(me, &of, wf) {
                        Ok((fd, wait)) => {
                            self.out_fd = Some(fd);
                            if let Ok(f) = k.file_mut(me, fd) {
                                f.pos = self.seek * self.obs;
                            }
                            if let Ok(f) = k.file_mut(me, self.in_fd) {
                                f.pos = self.skip * self.ibs;
                            }
                            self.phase = Phase::Read;
                            if let Some(t) = wait {
                                return Step::SleepUntil { t, io: true };
                            }
                        }
                        Err(e) => {
                            let _ = of;
                            let m = format!("dd: failed to open '{}': {}", self.of_arg, e.strerror());
                            return self.fail_open(k, me, m);
                        }
                    }
                }
                Phase::Read => {
                    let records = self.in_full + self.in_part;
                    if self.eof || self.count.is_some_and(|c| records >= c) {
                        if self.pending > 0 {
                            self.out_len = self.pending;
                            self.phase = Phase::Write;
                            continue;
                        }
                        self.phase = if self.fsync { Phase::Fsync } else { Phase::Finish };
                        continue;
                    }
                    let want = self.ibs.min(MAX_RW_COUNT);
                    // An O_DIRECT read is one read(2) of the whole block, as dd makes it:
                    // one dio, its bios in flight together. A buffered one is copied in
                    // steps.
                    let step = if self.idirect { want } else { STEP_BYTES };
                    let n = (want - self.rec_got).min(step);
                    if let Some(s) = self.fault_buffer(k, me, self.rec_got + n) {
                        return s;
                    }
                    let r = match k.sys_read(me, self.in_fd, n) {
                        Ok(r) => r,
                        Err(e) => {
                            let m = format!("dd: error reading '{}': {}", self.if_arg, e.strerror());
                            return self.fail(k, me, m);
                        }
                    };
                    self.rec_got += r.bytes;
                    let record_done = r.eof || self.rec_got >= want || (r.bytes < n && r.wait.is_none());
                    if record_done {
                        if self.rec_got == self.ibs {
                            self.in_full += 1;
                        } else if self.rec_got > 0 {
                            self.in_part += 1;
                        }
                        if r.eof || self.rec_got == 0 {
                            self.eof = true;
                        }
                        self.pending += self.rec_got;
                        self.rec_got = 0;
                        if self.pending >= self.obs || (self.eof && self.pending > 0) || self.ibs == self.obs && self.pending > 0 {
                            self.out_len = if self.ibs == self.obs { self.pending } else { self.obs.min(self.pending) };
                            self.phase = Phase::Write;
                        }
                    }
                    if let Some(w) = r.wait {
                        return w;
                    }
                    if self.phase == Phase::Read && !record_done {
                        // A long record: let the CPU time of this piece pass first.
                        return Step::Cpu { user: 0, sys: 0 };
                    }
                    if self.phase == Phase::Read {
                        return Step::Cpu { user: 1_000, sys: 0 };
                    }
                }
                Phase::Write => {
                    let Some(out) = self.out_fd else {
                        self.phase = Phase::Finish;
                        continue;
                    };
                    let n = (self.out_len - self.out_done).min(STEP_BYTES.max(self.obs.min(MAX_RW_COUNT)));
                    let r = match k.sys_write(me, out, n) {
                        Ok(r) => r,
                        Err(e) => {
                            let m = format!("dd: error writing '{}': {}", self.of_arg, e.strerror());
                            return self.fail(k, me, m);
                        }
                    };
                    self.out_done += r.bytes;
                    self.bytes += r.bytes;
                    if self.out_done >= self.out_len {
                        self.sync_due = self.osync;
                        if self.out_len == self.obs { self.out_full += 1 } else { self.out_part += 1 }
                        self.pending -= self.out_len;
                        self.out_done = 0;
                        self.out_len = 0;
                        if self.pending >= self.obs {
                            self.out_len = self.obs;
                        } else {
                            self.phase = Phase::Read;
                        }
                    }
                    if let Some(w) = r.wait {
                        return w;
                    }
                    return Step::Cpu { user: 1_000, sys: 0 };
                }
                Phase::Fsync => {
                    self.phase = Phase::Finish;
                    if let Some(out) = self.out_fd {
                        if let Ok(Some(w)) = k.sys_fsync(me, out) {
                            return w;
                        }
                    }
                }
                Phase::Finish => {
                    // coreutils invalidate_cache: drop what the run left in the page cache
                    // (dirty pages of the output stay until written back).
                    if self.inocache {
                        let _ = k.sys_fadvise_dontneed(me, self.in_fd);
                    }
                    if let (true, Some(o)) = (self.onocache, self.out_fd) {
                        let _ = k.sys_fadvise_dontneed(me, o);
                    }
                    let _ = k.sys_close(me, self.in_fd);
                    if let Some(o) = self.out_fd.take() {
                        let _ = k.sys_close(me, o);
                    }
                    self.phase = Phase::Report;
                    if k.call_must_wait(me) {
                        // The wait follows this step; the report comes after it.
                        return Step::Yield;
                    }
                }
                Phase::Report => {
                    if self.status != Status::None {
                        let s = self.summary(k);
                        k.eprint(me, &s);
                    }
                    return Step::Exit(if self.error.is_some() { 1 } else { 0 });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn g_format() {
        assert_eq!(format_g(1.76426), "1.76426");
        assert_eq!(format_g(0.277886), "0.277886");
        assert_eq!(format_g(8.88384), "8.88384");
        assert_eq!(format_g(12.0), "12");
        assert_eq!(format_g(0.000123456789), "0.000123457");
    }
}
