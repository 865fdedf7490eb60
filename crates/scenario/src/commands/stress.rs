//! Memory load generators: `stress-ng --vm` (0.15) and `stress --vm` (1.0.4). Each
//! spawns N worker tasks that load the model's anonymous memory the way the real tool does:
//! stress-ng's vm stressor maps the region, writes a pattern over every page and reads it
//! back to check it, unmapping and mapping it again each cycle unless --vm-keep; stress
//! mallocs, touches one byte per page, optionally sleeps (--vm-hang), and frees.

use memtwin_kernel::{Kernel, Ns, Program, Sink, Step, TaskId, NS_PER_SEC};

const PAGE: u64 = 4096;
/// Pages a worker handles per step (bounds the work done between scheduling points).
const BATCH: u64 = 512;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavour {
    StressNg,
    Stress,
}

/// One vm worker.
struct VmWorker {
    flavour: Flavour,
    pages: u64,
    keep: bool,
    hang: Option<Ns>,
    pos: u64,
    /// 0: write pass, 1: check pass (stress-ng), 2: hang (stress).
    phase: u8,
    hang_until: Ns,
    mapped: bool,
}

impl Program for VmWorker {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.mapped {
            // mmap / malloc: the commit charge is checked here (__vm_enough_memory).
            if !k.vm_account(me, self.pages) {
                let pid = k.tasks[me as usize].pid;
                let msg = match self.flavour {
                    Flavour::StressNg => format!("stress-ng: info:  [{pid}] stress-ng-vm: gave up trying to mmap, no available memory\n"),
                    Flavour::Stress => format!("stress: FAIL: [{pid}] (494) hogvm malloc failed: Cannot allocate memory\n"),
                };
                k.eprint(me, &msg);
                return Step::Exit(1);
            }
            self.mapped = true;
            // The worker's mapping joins its process image (exec.rs).
            k.tasks[me as usize].vm_kb += self.pages * 4;
        }
        let m = k.anon_mapping(me);
        match self.phase {
            0 | 1 => {
                let write = self.phase == 0;
                // stress-ng writes and verifies whole pages (memset-like); stress stores one
                // byte per page (vm-stride 4096): the fault and the zeroing are the cost.
                let per_page = match (self.flavour, write) {
                    (Flavour::StressNg, true) => (PAGE as f64 / k.machine.cpu_model.zero_bw * 1e9) as Ns,
                    (Flavour::StressNg, false) => (PAGE as f64 / k.machine.cpu_model.copy_bw * 1e9) as Ns,
                    (Flavour::Stress, _) => 5,
                };
                let end = (self.pos + BATCH).min(self.pages);
                while self.pos < end {
                    if let Err(s) = k.touch(me, m, self.pos, write) {
                        return s;
                    }
                    k.charge_user(me, per_page);
                    self.pos += 1;
                }
                if self.pos < self.pages {
                    return Step::Cpu { user: 0, sys: 0 };
                }
                self.pos = 0;
                match (self.flavour, self.phase) {
                    (Flavour::StressNg, 0) => self.phase = 1,
                    (Flavour::Stress, _) if self.hang.is_some() => {
                        self.phase = 2;
                        self.hang_until = k.now + self.hang.unwrap_or(0);
                    }
                    _ => self.end_cycle(k, m),
                }
                Step::Cpu { user: 0, sys: 0 }
            }
            _ => {
                if k.now < self.hang_until {
                    return Step::SleepUntil { t: self.hang_until, io: false };
                }
                self.end_cycle(k, m);
                Step::Cpu { user: 0, sys: 0 }
            }
        }
    }
}

impl VmWorker {
    /// The end of a cycle: munmap / free gives the pages back (zap_page_range), unless the
    /// mapping is kept (stress-ng --vm-keep).
    fn end_cycle(&mut self, k: &mut Kernel, m: u32) {
        self.phase = 0;
        if !self.keep {
            k.truncate_mapping(m, 0);
        }
    }
}

pub struct StressVm {
    flavour: Flavour,
    workers: u32,
    bytes: u64,
    keep: bool,
    hang: Option<Ns>,
    timeout: Option<Ns>,
    started: Option<Ns>,
    tids: Vec<TaskId>,
    restarts: u32,
    failed: bool,
    /// The run is over and the workers were signalled: the parent waits for each to exit
    /// (waitpid), as they tear their memory down.
    stopping: bool,
}

fn parse_duration(s: &str) -> Option<Ns> {
    let (num, mult) = match s.chars().last()? {
        's' => (&s[..s.len() - 1], 1.0),
        'm' => (&s[..s.len() - 1], 60.0),
        'h' => (&s[..s.len() - 1], 3600.0),
        'd' => (&s[..s.len() - 1], 86400.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().ok()?;
    (v >= 0.0).then(|| (v * mult * NS_PER_SEC as f64) as Ns)
}

const NG_USAGE: &str = "stress-ng --vm N [--vm-bytes SIZE|P%] [--vm-keep] [--vm-method all|write64|read64|flip|zero-one] [--vm-hang S] [--timeout T]";
const STRESS_USAGE: &str = "stress --vm N [--vm-bytes SIZE] [--vm-hang S] [--vm-keep] [--timeout T]";

impl StressVm {
    pub fn parse(tool: &str, args: &[String]) -> Result<StressVm, String> {
        let flavour = if tool == "stress-ng" { Flavour::StressNg } else { Flavour::Stress };
        let usage = if flavour == Flavour::StressNg { NG_USAGE } else { STRESS_USAGE };
        let mut s = StressVm {
            flavour,
            workers: 0,
            // Defaults: stress-ng 256 MiB per worker, stress 256 MiB.
            bytes: 256 << 20,
            keep: false,
            hang: None,
            timeout: None,
            started: None,
            tids: Vec::new(),
            restarts: 0,
            failed: false,
            stopping: false,
        };
        let mut percent = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (key, inline) = match a.split_once('=') {
                Some((k2, v)) if a.starts_with("--") => (k2.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            let mut val = || -> Result<String, String> {
                match &inline {
                    Some(v) => Ok(v.clone()),
                    None => it.next().cloned().ok_or(format!("{tool}: option '{key}' requires an argument ({usage})")),
                }
            };
            match key.as_str() {
                "--vm" | "-m" => s.workers = val()?.parse().map_err(|_| format!("{tool}: invalid number of vm workers ({usage})"))?,
                "--vm-bytes" => {
                    let v = val()?;
                    if let Some(p) = v.strip_suffix('%').filter(|_| flavour == Flavour::StressNg) {
                        percent = Some(p.parse::<f64>().map_err(|_| format!("{tool}: invalid --vm-bytes '{v}'"))?);
                    } else {
                        s.bytes = super::parse_coreutils_size(&v.replace(['b', 'B'], "")).ok_or(format!("{tool}: invalid --vm-bytes '{v}' (e.g. 512M, 2G{})", if flavour == Flavour::StressNg { ", 90%" } else { "" }))?;
                    }
                }
                "--vm-keep" => s.keep = true,
                "--vm-hang" => s.hang = Some(parse_duration(&val()?).ok_or(format!("{tool}: invalid --vm-hang ({usage})"))?),
                "--vm-method" if flavour == Flavour::StressNg => {
                    let m = val()?;
                    // Methods that write and verify whole pages load memory alike in this
                    // model; the others depend on cache behaviour it does not have.
                    if !matches!(m.as_str(), "all" | "write64" | "read64" | "flip" | "zero-one" | "inc-nybble" | "incdec") {
                        return Err(format!("stress-ng: --vm-method {m} is not modelled (modelled: all, write64, read64, flip, zero-one, inc-nybble, incdec: every page written and verified)"));
                    }
                }
                "--timeout" | "-t" => s.timeout = Some(parse_duration(&val()?).ok_or(format!("{tool}: invalid --timeout ({usage})"))?),
                "--metrics" | "--metrics-brief" | "-q" | "--quiet" | "-v" | "--verbose" if flavour == Flavour::StressNg => {
                    return Err(format!("stress-ng: {key} is not modelled ({usage})"));
                }
                "--cpu" | "-c" | "--io" | "-i" | "--hdd" | "-d" => {
                    return Err(format!("{tool}: only --vm workers are modelled ({usage})"));
                }
                o => return Err(format!("{tool}: unrecognized option '{o}' ({usage})")),
            }
        }
        if s.workers == 0 {
            return Err(format!("{tool}: no vm workers requested ({usage})"));
        }
        if let Some(p) = percent {
            // Resolved against MemTotal when the run starts; kept as a negative marker.
            s.bytes = u64::MAX - (p * 100.0) as u64;
        }
        Ok(s)
    }
}

impl Program for StressVm {
    fn killed(&mut self, k: &mut Kernel, _me: TaskId) {
        self.kill_workers(k);
    }

    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let pid = k.tasks[me as usize].pid;
        let name = if self.flavour == Flavour::StressNg { "stress-ng" } else { "stress" };
        if self.started.is_none() {
            self.started = Some(k.now);
            if self.bytes > u64::MAX - 1_000_000 {
                // stress-ng --vm-bytes P%: that share of memory split over the workers.
                let pct = (u64::MAX - self.bytes) as f64 / 100.0;
                self.bytes = (k.mm.managed as f64 * PAGE as f64 * pct / 100.0 / self.workers as f64) as u64;
            }
            let msg = match self.flavour {
                Flavour::StressNg => {
                    let mut m = String::new();
                    if let Some(t) = self.timeout {
                        m.push_str(&format!("{name}: info:  [{pid}] setting to a {} second run per stressor\n", t / NS_PER_SEC));
                    }
                    m.push_str(&format!("{name}: info:  [{pid}] dispatching hogs: {} vm\n", self.workers));
                    m
                }
                Flavour::Stress => format!("{name}: info: [{pid}] dispatching hogs: 0 cpu, 0 io, {} vm, 0 hdd\n", self.workers),
            };
            k.print(me, &msg);
            for _ in 0..self.workers {
                self.spawn_worker(k, me);
            }
        }
        let start = self.started.unwrap_or(0);
        let deadline = self.timeout.map(|t| start + t);
        // Workers that died: stress-ng restarts one the OOM killer took; stress fails.
        for i in 0..self.tids.len() {
            let t = self.tids[i];
            if !k.task_exited(t) {
                continue;
            }
            let code = k.tasks[t as usize].exit_code.unwrap_or(0);
            let wpid = k.tasks[t as usize].pid;
            k.reap(t);
            if self.stopping {
                self.tids[i] = TaskId::MAX;
                continue;
            }
            if code == 137 && self.flavour == Flavour::StressNg && deadline.is_none_or(|d| k.now < d) {
                k.print(me, &format!("{name}: info:  [{pid}] stress-ng-vm: assuming killed by OOM killer, restarting again (instance {i})\n"));
                self.restarts += 1;
                let nt = self.new_worker(k, me);
                self.tids[i] = nt;
            } else if code != 0 {
                self.failed = true;
                if self.flavour == Flavour::Stress && code < 128 {
                    k.eprint(me, &format!("{name}: FAIL: [{pid}] (421) <-- worker {wpid} returned error {code}\n"));
                    k.eprint(me, &format!("{name}: WARN: [{pid}] (423) now reaping child worker processes\n"));
                } else if self.flavour == Flavour::Stress {
                    k.eprint(me, &format!("{name}: FAIL: [{pid}] (415) <-- worker {wpid} got signal {}\n", code - 128));
                    k.eprint(me, &format!("{name}: WARN: [{pid}] (417) now reaping child worker processes\n"));
                }
                self.tids[i] = TaskId::MAX;
            } else {
                self.tids[i] = TaskId::MAX;
            }
        }
        self.tids.retain(|&t| t != TaskId::MAX);
        let over = deadline.is_some_and(|d| k.now >= d);
        if (over || self.tids.is_empty() || (self.failed && self.flavour == Flavour::Stress)) && !self.tids.is_empty() && !self.stopping {
            // The run ends: SIGALRM / SIGKILL to the workers.
            for &t in &self.tids {
                k.kill(t, 143);
            }
            self.stopping = true;
            self.tids.retain(|&t| {
                if k.task_exited(t) {
                    k.reap(t);
                    return false;
                }
                // Woken when it has exited (do_exit wakes the waiters of a task).
                k.exit_waiters.push((me, t));
                true
            });
        }
        if self.stopping && !self.tids.is_empty() {
            return Step::Block { io: false };
        }
        if self.tids.is_empty() {
            let secs = (k.now - start) as f64 / 1e9;
            let msg = match (self.flavour, self.failed) {
                (Flavour::StressNg, false) => format!("{name}: info:  [{pid}] successful run completed in {secs:.2}s\n"),
                (Flavour::StressNg, true) => format!("{name}: info:  [{pid}] unsuccessful run completed in {secs:.2}s\n"),
                (Flavour::Stress, false) => format!("{name}: info: [{pid}] successful run completed in {}s\n", secs.round() as u64),
                (Flavour::Stress, true) => format!("{name}: FAIL: [{pid}] (451) failed run completed in {}s\n", secs.round() as u64),
            };
            if self.failed && self.flavour == Flavour::Stress {
                k.eprint(me, &msg);
            } else {
                k.print(me, &msg);
            }
            return Step::Exit(if self.failed { if self.flavour == Flavour::Stress { 1 } else { 2 } } else { 0 });
        }
        // Look again in 10 ms or at the deadline (the parent waits in waitpid / alarm).
        let next = (k.now + NS_PER_SEC / 100).min(deadline.unwrap_or(Ns::MAX)).max(k.now + 1);
        Step::SleepUntil { t: next, io: false }
    }
}

impl StressVm {
    /// The parent was killed: its workers go with it (the process group's signal).
    fn kill_workers(&mut self, k: &mut Kernel) {
        for t in std::mem::take(&mut self.tids) {
            k.kill(t, 137);
        }
    }

    fn new_worker(&mut self, k: &mut Kernel, me: TaskId) -> TaskId {
        let w = VmWorker {
            flavour: self.flavour,
            pages: self.bytes.div_ceil(PAGE).max(1),
            keep: self.keep,
            hang: self.hang,
            pos: 0,
            phase: 0,
            hang_until: 0,
            mapped: false,
        };
        let (comm, cmd) = match self.flavour {
            Flavour::StressNg => ("stress-ng-vm", "stress-ng-vm [run]"),
            Flavour::Stress => ("stress", "stress --vm"),
        };
        let out: Sink = k.tasks[me as usize].stdout;
        let err: Sink = k.tasks[me as usize].stderr;
        k.spawn(comm, cmd, Box::new(w), out, err)
    }
    fn spawn_worker(&mut self, k: &mut Kernel, me: TaskId) {
        let t = self.new_worker(k, me);
        self.tids.push(t);
    }
}
