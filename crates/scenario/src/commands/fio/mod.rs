//! fio 3.33: jobs from `--options` or from an INI job file, run as simulated tasks on the
//! model (page cache, readahead, writeback, O_DIRECT), with fio's normal, JSON or terse
//! report.
//!
//! * `options`: the modelled options, their parsing and the job-file parser.
//! * `job`: one job as a task (offsets, engines, per-I/O latencies).
//! * `iowq`: io_uring's io-wq worker threads, for the requests it cannot do without blocking.
//! * `stats`: io_stat moments and the log-linear latency histogram.
//! * `report`: the normal and JSON reports.
//!
//! A job file is a file of the scenario written with `echo ... > job.fio` / `>> job.fio`
//! lines before fio runs (the shell keeps such text); fio reads it when it starts, and an
//! error names `job.fio:LINE`.

mod iowq;
mod job;
mod options;
mod report;
mod stats;

use job::{FioJob, JobStats, Shared};
use memtwin_kernel::fs::{normalize, Errno, OpenFlags};
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};
use memtwin_machine::KernelProfile;
use options::{parse_job_file, Engine, JobOpts, OutputFormat};
use report::{DiskUtil, Group};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The wall clock at boot, as top and the other tools of the twin show it (10:00:00).
const BOOT_WALL_CLOCK_S: u64 = 10 * 3600;
/// Layout writes at most this much per write(2).
const LAYOUT_CHUNK: u64 = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Layout,
    Spawn,
    Wait,
}

/// A job instance (one of numjobs) and the file it works on.
/// A file being laid out: the instance, its descriptor, the bytes written, and whether
/// the writes stand for tmpfs's fallocate of a job that only writes.
#[derive(Clone, Copy)]
struct Layout {
    i: usize,
    fd: usize,
    done: u64,
    fallocate: bool,
}

struct Instance {
    fname: String,
    opts: JobOpts,
    path: String,
}

pub struct Fio {
    cwd: String,
    format: OutputFormat,
    /// Jobs from the command line.
    jobs: Vec<JobOpts>,
    global: JobOpts,
    /// A job file: (name as given, capture buffer).
    job_file: Option<(String, Option<u32>)>,
    instances: Vec<Instance>,
    phase: Phase,
    /// Layout in progress: instance index, fd, bytes written.
    layout: Option<Layout>,
    layout_next: usize,
    shared: Option<Rc<RefCell<Shared>>>,
    start: Ns,
    disks0: Vec<(u32, memtwin_kernel::block::DiskStats)>,
}

const USAGE: &str = "fio [--output-format=normal|json] [JOBFILE] [--name=NAME --rw=... --bs=... --size=... ...]";

impl Fio {
    pub fn parse(args: &[String], cwd: &str, captures: &HashMap<String, u32>) -> Result<Fio, String> {
        let mut global = JobOpts::default();
        let mut jobs: Vec<JobOpts> = Vec::new();
        let mut format = OutputFormat::Normal;
        let mut job_file = None;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            let Some(opt) = a.strip_prefix("--") else {
                if a.starts_with('-') {
                    return Err(format!("fio: unrecognized option '{a}' (usage: {USAGE})"));
                }
                if job_file.is_some() {
                    return Err("fio: one job file is modelled (several were given)".into());
                }
                let path = normalize(cwd, a);
                job_file = Some((a.clone(), captures.get(&path).copied()));
                continue;
            };
            let (k, v) = match opt.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None if options::is_flag(&opt.replace('-', "_")) => (opt.to_string(), None),
                None if matches!(opt, "version" | "help") => (opt.to_string(), None),
                None => {
                    // getopt_long's "--key value".
                    let v = args.get(i).cloned();
                    i += 1;
                    (opt.to_string(), v)
                }
            };
            match k.as_str() {
                "output-format" => {
                    format = match v.as_deref() {
                        Some("normal") => OutputFormat::Normal,
                        Some("json") => OutputFormat::Json,
                        Some("terse") => OutputFormat::Terse,
                        Some(x) => return Err(format!("fio: output-format={x} is not modelled (accepted: normal, json, terse; json+ is not)")),
                        None => return Err("fio: --output-format needs a value (normal, json or terse)".into()),
                    }
                }
                "name" => {
                    let mut j = global.clone();
                    j.given.clear();
                    j.name = v.unwrap_or_default();
                    if j.name.is_empty() {
                        return Err("fio: --name needs a value".into());
                    }
                    // JSON's job options start with the name, as fio records them.
                    j.given.push(("name".into(), j.name.clone()));
                    j.given.extend(global.given.iter().cloned());
                    jobs.push(j);
                }
                _ => {
                    let target = jobs.last_mut().unwrap_or(&mut global);
                    target.set(&k, v.as_deref())?;
                }
            }
        }
        if jobs.is_empty() && job_file.is_none() {
            return Err(format!("fio: no jobs: give --name=NAME and its options, or a job file (usage: {USAGE})"));
        }
        if job_file.is_some() && !jobs.is_empty() {
            return Err("fio: a job file together with --name jobs is not modelled; use one or the other".into());
        }
        for j in &jobs {
            j.check()?;
        }
        Ok(Fio {
            cwd: cwd.to_string(),
            format,
            jobs,
            global,
            job_file,
            instances: Vec::new(),
            phase: Phase::Start,
            layout: None,
            layout_next: 0,
            shared: None,
            start: 0,
            disks0: Vec::new(),
        })
    }

    fn out(&self, k: &mut Kernel, me: TaskId, s: &str) {
        if self.format == OutputFormat::Normal {
            k.print(me, s);
        }
    }

    /// Expand numjobs and name the files (fio's default file name is NAME.JOBNUM.0).
    fn instantiate(&mut self) {
        for j in &self.jobs {
            for n in 0..j.numjobs {
                let file = j.filename.clone().unwrap_or_else(|| format!("{}.{}.0", j.name, n));
                let dir = j.directory.clone().map(|d| normalize(&self.cwd, &d)).unwrap_or_else(|| self.cwd.clone());
                let path = normalize(&dir, &file);
                // f->file_name: the name as given, after `directory` if there is one.
                let fname = match &j.directory {
                    Some(d) => format!("{}/{file}", d.trim_end_matches('/')),
                    None => file,
                };
                self.instances.push(Instance { opts: j.clone(), path, fname });
            }
        }
    }

    fn headers(&self, k: &mut Kernel, me: TaskId) {
        let mut s = String::new();
        for j in &self.jobs {
            let b = report::num2str(j.bs, 4, true, "B");
            s += &format!(
                "{}: (g=0): rw={}, bs=(R) {b}-{b}, (W) {b}-{b}, (T) {b}-{b}, ioengine={}, iodepth={}\n",
                j.name,
                j.rw.name(),
                j.engine.name(),
                j.iodepth
            );
            if j.numjobs > 1 {
                s += "...\n";
            }
        }
        let n = self.instances.len();
        s += &format!("fio-3.33\nStarting {n} process{}\n", if n == 1 { "" } else { "es" });
        if self.jobs.iter().any(|j| j.engine.sync() && j.iodepth > 1) {
            s += "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n";
        }
        self.out(k, me, &s);
    }

    /// Lay out the next file that is missing or short (filesetup.c extend_file). A job that
    /// reads has it written whole through the page cache and fsynced (O_TRUNC, fallocate,
    /// ftruncate to the size, the writes (1 MiB each here), create_fsync). A job that
    /// only writes (overwrite=0) has the short file unlinked, created again and fallocated
    /// (fallocate=native: fallocate(fd, 0, 0, size), its failure ignored), and nothing
    /// written; a trim job's is created (not unlinked) and fallocated. On tmpfs, whose
    /// fallocate allocates the pages (shmem_fallocate, which the model does not have),
    /// those pages are made by writing them; if they do not fit, the file is emptied again
    /// (shmem_fallocate undoes a failed call) and the job goes on.
    fn layout_step(&mut self, k: &mut Kernel, me: TaskId) -> Option<Step> {
        if let Some(l) = self.layout {
            let size = self.instances[l.i].opts.size.unwrap_or(0);
            if l.done < size {
                let n = (size - l.done).min(LAYOUT_CHUNK);
                match k.sys_write(me, l.fd, n) {
                    Ok(r) => {
                        self.layout = Some(Layout { done: l.done + r.bytes, ..l });
                        return Some(r.wait.unwrap_or(Step::Cpu { user: 0, sys: 0 }));
                    }
                    Err(_) if l.fallocate => {
                        // shmem_fallocate's undo: the file is empty again.
                        let _ = k.sys_ftruncate(me, l.fd, 0);
                        let _ = k.sys_close(me, l.fd);
                        self.layout = None;
                        return Some(Step::Cpu { user: 0, sys: 0 });
                    }
                    Err(e) => {
                        // extend_file: "ENOSPC on laying out file, stopping", then
                        // td_verror(errno, "write"); setup_files fails before the job
                        // starts (its pid still 0) and the report has no job.
                        if e == Errno::ENOSPC {
                            self.out(k, me, "fio: ENOSPC on laying out file, stopping\n");
                        }
                        k.eprint(me, &format!("fio: pid=0, err={}/file:filesetup.c:240, func=write, error={}\n", e.code(), e.strerror()));
                        self.out(k, me, "\n\nRun status group 0 (all jobs):\n");
                        let _ = k.sys_close(me, l.fd);
                        return Some(Step::Exit(1));
                    }
                }
            }
            self.layout = None;
            if !l.fallocate {
                // create_fsync=1: the laid-out file is synced before the jobs start.
                let wait = k.sys_fsync(me, l.fd).ok().flatten();
                let _ = k.sys_close(me, l.fd);
                if let Some(w) = wait {
                    return Some(w);
                }
            } else {
                let _ = k.sys_close(me, l.fd);
            }
        }
        while self.layout_next < self.instances.len() {
            let i = self.layout_next;
            self.layout_next += 1;
            let inst = &self.instances[i];
            let size = inst.opts.size.unwrap_or(0);
            if inst.opts.rw.trims() {
                // A trim of a block device is BLKDISCARD: the model's disks have no discard.
                let path = inst.path.clone();
                if let Ok((fd, _)) = k.sys_open(me, &path, OpenFlags { read: true, ..Default::default() }) {
                    let bdev = matches!(k.file(me, fd).map(|f| f.target), Some(memtwin_kernel::fs::Target::BlockDev(_)));
                    let _ = k.sys_close(me, fd);
                    if bdev {
                        k.eprint(me, &format!("fio: rw={} on block device {path}: discard (BLKDISCARD) is not modelled; trims of a regular file fail as on Linux\n", inst.opts.rw.name()));
                        return Some(Step::Exit(1));
                    }
                }
            }
            if self.instances[..i].iter().any(|o| o.path == inst.path) {
                continue;
            }
            let stat = k.sys_stat(&inst.path).ok();
            let have = stat.as_ref().map(|s| s.size).unwrap_or(0);
            if have >= size {
                continue;
            }
            // extend_file: reads need the data; writes without overwrite=1 do not.
            let new_layout = inst.opts.rw.reads();
            // unlink_file: a job that writes without overwrite=1 starts from a new file.
            let inst_writes = inst.opts.rw.writes();
            let msg = format!("{}: Laying out IO file (1 file / {}MiB)\n", inst.opts.name, size >> 20);
            let path = inst.path.clone();
            self.out(k, me, &msg);
            let mut wait = None;
            if !new_layout && inst_writes && stat.is_some() {
                wait = k.sys_unlink(me, &path).ok().flatten();
            }
            let fd = match k.sys_open(me, &path, OpenFlags { write: true, create: true, trunc: new_layout, ..Default::default() }) {
                Ok((fd, w)) => {
                    wait = wait.max(w);
                    fd
                }
                Err(e) => {
                    k.eprint(me, &format!("fio: pid=0, err={}/file:filesetup.c:174, func=open, error={}\n", e.code(), e.strerror()));
                    self.out(k, me, "\n\nRun status group 0 (all jobs):\n");
                    return Some(Step::Exit(1));
                }
            };
            // fallocate_file (fallocate=native): failures are not reported.
            let tmpfs = match k.sys_fallocate(me, fd, size) {
                Ok(w) => {
                    wait = wait.max(w);
                    false
                }
                Err(e) => e == Errno::EOPNOTSUPP,
            };
            if new_layout {
                wait = wait.max(k.sys_ftruncate(me, fd, size).ok().flatten());
            }
            if new_layout || tmpfs {
                self.layout = Some(Layout { i, fd, done: 0, fallocate: !new_layout });
            } else {
                let _ = k.sys_close(me, fd);
            }
            if let Some(t) = wait {
                return Some(Step::SleepUntil { t, io: true });
            }
            if self.layout.is_some() {
                return Some(Step::Cpu { user: 0, sys: 0 });
            }
        }
        None
    }

    /// The device's /proc/diskstats counters now (fio's disk_util reads that file).
    fn disks_now(k: &Kernel, dev: u32) -> memtwin_kernel::block::DiskStats {
        k.block.devs[dev as usize].stats_at(k.now)
    }

    /// Print the report; true if a job failed.
    fn report(&mut self, k: &mut Kernel, me: TaskId) -> bool {
        let shared = self.shared.clone().expect("jobs were started");
        let results: Vec<JobStats> = shared.borrow_mut().results.iter_mut().map(|r| r.take().unwrap_or_default()).collect();
        let failed = results.iter().any(|r| r.error != 0);
        let grouped = self.instances.iter().any(|i| i.opts.group_reporting);
        let stats: Vec<JobStats> = if grouped {
            let mut all = results[0].clone();
            for r in &results[1..] {
                all.merge(r);
            }
            vec![all]
        } else {
            results
        };
        let g = Group::of(&stats);
        let elapsed = k.now - self.start;
        let wall = BOOT_WALL_CLOCK_S + k.now / NS_PER_SEC;
        let when = report::ctime(wall);
        let disks: Vec<DiskUtil> = self
            .disks0
            .iter()
            .map(|&(dev, s0)| {
                let s = Fio::disks_now(k, dev);
                let ios = [s.ios[0] - s0.ios[0], s.ios[1] - s0.ios[1]];
                let ticks = [(s.nsecs[0] - s0.nsecs[0]) / 1_000_000, (s.nsecs[1] - s0.nsecs[1]) / 1_000_000];
                // update_io_stat: util is the time with requests in flight (io_ticks) over
                // the run.
                let busy = s.io_ticks - s0.io_ticks;
                let util = if elapsed > 0 { (busy as f64 / elapsed as f64 * 100.0).min(100.0) } else { 0.0 };
                DiskUtil { name: k.block.devs[dev as usize].disk.name.clone(), ios, ticks, util }
            })
            .collect();
        let mut out = String::new();
        match self.format {
            OutputFormat::Normal => {
                out.push('\n');
                let show_slat = self.instances.iter().any(|i| !i.opts.engine.sync());
                for ts in &stats {
                    report::normal(&mut out, &g, ts, show_slat, &when);
                }
                report::group_status(&mut out, &g);
                report::disk_stats(&mut out, &disks);
            }
            OutputFormat::Json => {
                let elapsed_s = elapsed.div_ceil(NS_PER_SEC);
                let jobs = stats
                    .iter()
                    .enumerate()
                    .map(|(i, ts)| {
                        let opts = self.jobs.iter().find(|j| j.name == ts.name).map(|j| j.given.clone()).unwrap_or_default();
                        let _ = i;
                        report::job_json(&g, ts, &opts, elapsed_s)
                    })
                    .collect();
                let dj = disks.iter().map(report::disk_json).collect();
                out = report::top_json(&when, wall, jobs, dj, &self.global.given).render();
            }
            OutputFormat::Terse => {
                for ts in &stats {
                    report::terse(&mut out, &g, ts, &disks);
                }
            }
        }
        k.print(me, &out);
        failed
    }
}

/// What the machine's kernel lacks for a job's engine: io_setup(2) came with 2.6 (2.5.23),
/// io_uring_setup(2) with 5.1.
fn engine_on_kernel(j: &JobOpts, kernel: KernelProfile) -> Option<String> {
    let name = kernel.name();
    match j.engine {
        Engine::Libaio if kernel == KernelProfile::Linux24 => {
            Some(format!("job '{}': ioengine=libaio: io_setup(2) does not exist in {name} (Linux 2.6 added native AIO)", j.name))
        }
        Engine::IoUring if matches!(kernel, KernelProfile::Linux24 | KernelProfile::Linux2639) => {
            Some(format!("job '{}': ioengine=io_uring: io_uring_setup(2) does not exist in {name} (Linux 5.1 added it)", j.name))
        }
        _ => None,
    }
}

impl Program for Fio {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        loop {
            match self.phase {
                Phase::Start => {
                    if let Some((name, buf)) = self.job_file.clone() {
                        let Some(b) = buf else {
                            k.eprint(me, &format!("fio: job file '{name}' not found (write it in the scenario first: echo '[job]' > {name}; echo 'rw=randread' >> {name})\n"));
                            return Step::Exit(1);
                        };
                        let text = k.buffers[b as usize].clone();
                        match parse_job_file(&name, &text, &self.global).and_then(|jobs| {
                            for j in &jobs {
                                j.check().map_err(|e| format!("{name}: {}", e.trim_start_matches("fio: ")))?;
                            }
                            Ok(jobs)
                        }) {
                            Ok(jobs) => self.jobs = jobs,
                            Err(e) => {
                                let e = if e.starts_with("fio: ") { e } else { format!("fio: {e}") };
                                k.eprint(me, &format!("{e}\n"));
                                return Step::Exit(1);
                            }
                        }
                    }
                    if let Some(e) = self.jobs.iter().find_map(|j| engine_on_kernel(j, k.machine.kernel)) {
                        k.eprint(me, &format!("fio: {e}\n"));
                        return Step::Exit(1);
                    }
                    self.instantiate();
                    self.headers(k, me);
                    self.phase = Phase::Layout;
                }
                Phase::Layout => {
                    if let Some(s) = self.layout_step(k, me) {
                        return s;
                    }
                    self.phase = Phase::Spawn;
                }
                Phase::Spawn => {
                    let n = self.instances.len();
                    let shared = Rc::new(RefCell::new(Shared { results: vec![None; n], parent: me }));
                    self.start = k.now;
                    for inst in &self.instances {
                        if let Some(m) = k.fs.mount_of(&inst.path) {
                            if let Some(dev) = k.fs.mounts[m as usize].dev {
                                if !self.disks0.iter().any(|d| d.0 == dev) {
                                    let s0 = Fio::disks_now(k, dev);
                                    self.disks0.push((dev, s0));
                                }
                            }
                        }
                    }
                    let cmd = k.tasks[me as usize].cmdline.clone();
                    for (i, inst) in self.instances.iter().enumerate() {
                        // randrepeat=1: the same offsets on every run of the job; else the
                        // system's entropy, which is the twin's --seed.
                        let rng = match inst.opts.repeatable_seed(i as u64 + 1) {
                            Some(seed) => memtwin_engine::Rng::new(seed),
                            None => k.rng.fork(),
                        };
                        let job = FioJob::new(inst.opts.clone(), inst.path.clone(), inst.fname.clone(), i, shared.clone(), rng);
                        k.spawn_task("fio", &cmd, false, Some(me), Some(Box::new(job)));
                    }
                    self.shared = Some(shared);
                    self.phase = Phase::Wait;
                }
                Phase::Wait => {
                    let done = self.shared.as_ref().is_some_and(|s| s.borrow().results.iter().all(|r| r.is_some()));
                    if !done {
                        return Step::Block { io: false };
                    }
                    let err = self.report(k, me);
                    return Step::Exit(if err { 1 } else { 0 });
                }
            }
        }
    }
}
