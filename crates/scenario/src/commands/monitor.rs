//! The observation tools: free, vmstat, iotop, top. They read /proc snapshots at the
//! simulated instants the real tools would and print the real tools' layouts.

use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};
use memtwin_procfs::Snapshot;
use memtwin_tools::{free, parse_free_args, FreeOptions};
use memtwin_tools::{parse_vmstat_args, vmstat_header, vmstat_header_due, vmstat_row, VmstatMode, VmstatOptions};

/// CPU cost of one sample: opening and parsing the /proc files.
const SAMPLE_NS: Ns = 150_000;

fn secs(s: f64) -> Ns {
    (s * NS_PER_SEC as f64) as Ns
}

pub struct Free {
    o: FreeOptions,
    args: Vec<String>,
    printed: u64,
    next: Ns,
}

impl Free {
    pub fn parse(args: &[String]) -> Result<Free, String> {
        let o = parse_free_args(args)?;
        Ok(Free { o, args: args.to_vec(), printed: 0, next: 0 })
    }
}

impl Program for Free {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let userland = k.machine.userland();
        if self.printed == 0 {
            // The userland's free: procps-ng has no -o (free.c's getopt_long fails on it);
            // procps 3.2.8 (CentOS 6, and the layout of 2.4's procps 2.0) has only
            // -b -k -m -g -l -o -t -s -c -V and prints the "-/+ buffers/cache" layout by
            // default.
            if userland.procps_ng() {
                if self.o.old_no_buffers_line {
                    let usage = memtwin_tools::FREE_USAGE.trim_end_matches('\n');
                    k.eprint(me, &format!("free: invalid option -- 'o'\n{usage}\n"));
                    return Step::Exit(1);
                }
                if self.o.version && userland == memtwin_machine::Userland::Ubuntu2004 {
                    self.o.print_and_exit = Some("free from procps-ng 3.3.16\n".to_string());
                }
            } else {
                if let Some(m) = memtwin_tools::procps3_free_rejects(&self.args) {
                    k.eprint(me, &format!("{m}\n{}", memtwin_tools::FREE_USAGE_PROCPS3));
                    return Step::Exit(1);
                }
                if self.o.version {
                    // -V (display_version): the procps release.
                    let v = if userland == memtwin_machine::Userland::Centos6 { "3.2.8" } else { "2.0.17" };
                    self.o.print_and_exit = Some(format!("procps version {v}\n"));
                }
                self.o.old_layout = true;
            }
        }
        if let Some(text) = self.o.print_and_exit.clone() {
            k.print(me, &text);
            return Step::Exit(0);
        }
        if self.printed > 0 && k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        let s = k.snapshot();
        let mut text = free(&s, &self.o);
        if self.o.repeats() {
            text.push('\n');
        }
        k.print(me, &text);
        self.printed += 1;
        k.charge_sys(me, SAMPLE_NS);
        let more = self.o.repeats() && self.o.count.is_none_or(|c| self.printed < c);
        if !more {
            return Step::Exit(0);
        }
        self.next = k.now + secs(self.o.interval_s());
        Step::Cpu { user: 0, sys: 0 }
    }
}

pub struct Vmstat {
    o: VmstatOptions,
    prev: Option<Snapshot>,
    rows: u64,
    next: Ns,
}

impl Vmstat {
    pub fn parse(args: &[String]) -> Result<Vmstat, String> {
        let o = parse_vmstat_args(args)?;
        Ok(Vmstat { o, prev: None, rows: 0, next: 0 })
    }
}

impl Program for Vmstat {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.rows == 0 && self.prev.is_none() {
            use memtwin_machine::Userland;
            use memtwin_tools::VmstatLayout;
            let userland = k.machine.userland();
            self.o.layout = match userland {
                Userland::Debian12 | Userland::Ubuntu2004 => VmstatLayout::ProcpsNg,
                Userland::Centos6 => VmstatLayout::Procps3,
                Userland::Centos3 => VmstatLayout::Procps2,
            };
            // Options the userland's vmstat did not have: -w, -t and -y came with procps-ng;
            // procps 2.0's vmstat knew only -a, -n and -V.
            let lacking = if self.o.wide {
                Some("-w")
            } else if self.o.timestamp {
                Some("-t")
            } else if self.o.no_first {
                Some("-y")
            } else if userland == Userland::Centos3 && self.o.mode != VmstatMode::Rows {
                Some("-s/-d/-D/-p/-m/-f")
            } else if userland == Userland::Centos3 && self.o.unit != memtwin_tools::VmstatUnit::Kibi {
                Some("-S")
            } else {
                None
            };
            if let Some(opt) = lacking.filter(|_| !userland.procps_ng()) {
                let procps = if userland == Userland::Centos6 { "procps 3.2.8" } else { "procps 2.0" };
                k.eprint(me, &format!("vmstat: {opt} is not an option of {procps} (userland {}); it came later\n", userland.name()));
                return Step::Exit(1);
            }
        }
        if let Some(text) = self.o.print_and_exit.clone() {
            k.print(me, &text);
            return Step::Exit(0);
        }
        if matches!(self.o.mode, VmstatMode::Disks | VmstatMode::DiskSum) {
            if k.machine.kernel == memtwin_machine::KernelProfile::Linux24 {
                k.eprint(me, "vmstat: disk statistics need /proc/diskstats, which Linux 2.4 did not have (its disk counters were the disk_io line of /proc/stat)\n");
                return Step::Exit(1);
            }
            if self.o.mode == VmstatMode::Disks && self.o.has_delay {
                // diskformat: the header once, then every disk's absolute counters each delay.
                if self.rows > 0 && k.now < self.next {
                    return Step::SleepUntil { t: self.next, io: false };
                }
                let s = k.snapshot();
                let mut text = memtwin_tools::vmstat_disks(&s);
                if self.rows > 0 {
                    text = text.lines().skip(2).map(|l| format!("{l}\n")).collect();
                }
                k.print(me, &text);
                k.charge_sys(me, SAMPLE_NS);
                self.rows += 1;
                if self.o.count.is_some_and(|c| self.rows >= c) {
                    return Step::Exit(0);
                }
                self.next = k.now + secs(self.o.delay_s);
                return Step::Cpu { user: 0, sys: 0 };
            }
        }
        match self.o.mode {
            VmstatMode::Rows => {}
            VmstatMode::Slabs => {
                let text = memtwin_tools::vmstat_slabs(&k.slabinfo(), self.o.height, self.o.one_header);
                k.print(me, &text);
                k.charge_sys(me, SAMPLE_NS);
                return Step::Exit(0);
            }
            _ => {
                let s = k.snapshot();
                let text = memtwin_tools::vmstat_report(&[s], &self.o);
                k.print(me, &text);
                return Step::Exit(0);
            }
        }
        if self.rows > 0 && k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        let cur = k.snapshot();
        let mut text = String::new();
        if vmstat_header_due(&self.o, self.rows) {
            text.push_str(&vmstat_header(&self.o));
        }
        text.push_str(&vmstat_row(self.prev.as_ref(), &cur, &self.o));
        k.print(me, &text);
        self.rows += 1;
        self.prev = Some(cur);
        k.charge_sys(me, SAMPLE_NS);
        let total = if self.o.has_delay { self.o.count } else { Some(1) };
        if total.is_some_and(|c| self.rows >= c) {
            return Step::Exit(0);
        }
        // procps sleeps `delay` between samples; the rows are divided by that delay.
        self.next = k.now + secs(self.o.delay_s);
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// `iostat [-c] [-d] [-x] [-y] [-z] [DEVICE...] [interval [count]]`: sysstat's reports from
/// /proc/stat and /proc/diskstats, in the layout of the profile's userland.
pub struct Iostat {
    o: memtwin_tools::IostatOptions,
    prev: Option<Snapshot>,
    reports: u64,
    next: Ns,
}

impl Iostat {
    pub fn parse(args: &[String]) -> Result<Iostat, String> {
        Ok(Iostat { o: memtwin_tools::parse_iostat_args(args)?, prev: None, reports: 0, next: 0 })
    }
}

impl Program for Iostat {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        use memtwin_machine::KernelProfile::*;
        use memtwin_tools::IostatStyle;
        if k.machine.kernel == Linux24 {
            k.eprint(me, "iostat: not modelled on Linux 2.4: it had no /proc/diskstats (per-device statistics came with 2.6; 2.4's were the disk_io line of /proc/stat)\n");
            return Step::Exit(1);
        }
        // The userland's sysstat (CentOS 3's 4.0 is not modelled: its 2.4 kernel is refused
        // above; on a newer kernel it prints 9.0.4's reports).
        let style = match k.machine.userland() {
            memtwin_machine::Userland::Debian12 => IostatStyle::Sysstat126,
            memtwin_machine::Userland::Ubuntu2004 => IostatStyle::Sysstat122,
            memtwin_machine::Userland::Centos6 | memtwin_machine::Userland::Centos3 => IostatStyle::Sysstat904,
        };
        if self.prev.is_some() && k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        let cur = k.snapshot();
        k.charge_sys(me, SAMPLE_NS);
        let mut text = String::new();
        if self.prev.is_none() {
            text.push_str(&memtwin_tools::iostat_banner(style, super::memtools::release_of(k.machine.kernel), k.machine.cpus));
        }
        let first = self.prev.is_none();
        if !(first && self.o.omit_first) {
            text.push_str(&memtwin_tools::iostat_report(style, &self.o, self.prev.as_ref(), &cur));
            self.reports += 1;
        }
        k.print(me, &text);
        self.prev = Some(cur);
        let Some(interval) = self.o.interval_s else {
            return Step::Exit(0);
        };
        if self.o.count.is_some_and(|c| self.reports >= c) {
            return Step::Exit(0);
        }
        self.next = k.now + interval * NS_PER_SEC;
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// Wall-clock time of day at boot (seconds since midnight) shown by top: 10:00:00.
const BOOT_WALL_CLOCK_S: u64 = 10 * 3600;

pub struct Iotop {
    o: memtwin_tools::IotopOptions,
    prev: Option<Snapshot>,
    frames: u64,
    next: Ns,
}

impl Iotop {
    pub fn parse(args: &[String]) -> Result<Iotop, String> {
        let o = memtwin_tools::parse_iotop_args(args)?;
        if !o.batch && o.print_and_exit.is_none() {
            return Err("iotop: only batch mode (-b) can be replayed in a scenario".into());
        }
        Ok(Iotop { o, prev: None, frames: 0, next: 0 })
    }
}

impl Program for Iotop {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(text) = self.o.print_and_exit.clone() {
            k.print(me, &text);
            return Step::Exit(0);
        }
        if self.prev.is_some() && k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        let cur = k.snapshot();
        k.charge_sys(me, SAMPLE_NS * 4);
        self.next = k.now + secs(self.o.delay_s);
        let Some(prev) = self.prev.replace(cur) else {
            // iotop's first display needs two readings: the first is taken now.
            return Step::Cpu { user: 0, sys: 0 };
        };
        let cur = self.prev.as_ref().expect("just set");
        let (ar, aw) = memtwin_tools::iotop_actual_from_vmstat(&prev, cur);
        let text = memtwin_tools::iotop_frame(&prev, cur, ar, aw, &self.o);
        k.print(me, &text);
        self.frames += 1;
        if self.o.iterations.is_some_and(|n| self.frames >= n) {
            return Step::Exit(0);
        }
        Step::Cpu { user: 0, sys: 0 }
    }
}

pub struct Top {
    o: memtwin_tools::TopOptions,
    prev: Option<Snapshot>,
    frames: u64,
    next: Ns,
}

impl Top {
    pub fn parse(args: &[String]) -> Result<Top, String> {
        let o = memtwin_tools::parse_top_args(args)?;
        if !o.batch && o.print_and_exit.is_none() {
            return Err("top: only batch mode (-b) can be replayed in a scenario (e.g. top -b -n 1)".into());
        }
        Ok(Top { o, prev: None, frames: 0, next: 0 })
    }
}

impl Program for Top {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(text) = self.o.print_and_exit.clone() {
            k.print(me, &text);
            return Step::Exit(0);
        }
        if self.frames > 0 && k.now < self.next {
            return Step::SleepUntil { t: self.next, io: false };
        }
        let cur = k.snapshot();
        let wall = memtwin_tools::wall_clock_at(BOOT_WALL_CLOCK_S, &cur);
        // The first frame compares with a reading taken as top starts (all but idle).
        let prev = self.prev.take().unwrap_or_else(|| cur.clone());
        let text = memtwin_tools::top_frame(Some(&prev), &cur, &self.o, wall);
        k.print(me, &text);
        k.charge_sys(me, SAMPLE_NS * 10);
        self.prev = Some(cur);
        self.frames += 1;
        if self.o.iterations.is_none_or(|n| self.frames >= n) {
            return Step::Exit(0);
        }
        self.next = k.now + secs(self.o.delay_s);
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// `slabtop -o`: one reading of /proc/slabinfo, the summary and the caches.
pub struct Slabtop {
    o: memtwin_tools::SlabtopOptions,
}

impl Slabtop {
    pub fn parse(args: &[String]) -> Result<Slabtop, String> {
        Ok(Slabtop { o: memtwin_tools::parse_slabtop_args(args)? })
    }
}

impl Program for Slabtop {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(text) = self.o.print_and_exit.clone() {
            k.print(me, &text);
            return Step::Exit(0);
        }
        let text = memtwin_tools::slabtop_once(&k.slabinfo(), &self.o);
        k.print(me, &text);
        k.charge_sys(me, SAMPLE_NS);
        Step::Exit(0)
    }
}
