//! The shell: walks a parsed script and runs its commands as tasks of the simulated
//! machine, in simulated time. Foreground commands are waited for, `&` runs them in the
//! background, `wait` joins them, `sleep` lets time pass. Every second of simulated time
//! the /proc counters are sampled into the series.

use crate::commands::{self, Cmd};
use crate::lang::{self, AndOr, Command, Connector, ListItem, Pipeline, RedirOp, SimpleCommand, Span};
use crate::{CommandRecord, RunError, Series};
use memtwin_kernel::{Kernel, Ns, Sink, TaskId, NS_PER_SEC};
use std::collections::HashMap;

/// Longest a scenario may run in simulated time before the run is stopped.
pub const MAX_SIM_NS: Ns = 7 * 24 * 3600 * NS_PER_SEC;

/// Commands the shell itself carries out.
pub const BUILTINS: &[&str] = &["true", ":", "false", "set", "export", "cd", "exit", "wait", "sleep", "crash", "reboot", "timeout"];

/// Why execution of the script stops early.
enum Stop {
    /// `exit N` or `set -e` and a failing command: the script ends with this status.
    Exit(i32),
    Error(RunError),
    /// A limit was reached or the run was interrupted (`Shell::guard` says which).
    Limit,
}

pub struct Shell {
    pub k: Kernel,
    file: String,
    vars: HashMap<String, String>,
    status: i32,
    errexit: bool,
    jobs: Vec<TaskId>,
    cwd: String,
    /// Redirect targets captured as text: path -> buffer.
    captures: HashMap<String, u32>,
    /// The process id of the last command started with `&` ($!).
    last_bg_pid: Option<u32>,
    pub series: Series,
    /// One record per top-level command, in script order.
    pub commands: Vec<CommandRecord>,
    next_tick: Ns,
    depth: u32,
    /// Reclaim passes of the kernels that a crash or reboot replaced.
    reclaim_passes: [Vec<u64>; 2],
    /// Tasks of the commands being recorded: (task, index in `commands`).
    task_records: Vec<(TaskId, usize)>,
    /// Limits and output streaming.
    pub(crate) guard: crate::guard::Guard,
}

impl Shell {
    /// Every reclaim pass of the run, [kswapd, direct], the replaced kernels' first.
    pub fn take_reclaim_passes(&mut self) -> [Vec<u64>; 2] {
        let mut all = std::mem::take(&mut self.reclaim_passes);
        for (a, now) in all.iter_mut().zip(std::mem::take(&mut self.k.reclaim.stats.passes)) {
            a.extend(now);
        }
        all
    }

    pub fn new(k: Kernel, file: &str) -> Shell {
        let mut s = Shell {
            k,
            file: file.to_string(),
            vars: HashMap::new(),
            status: 0,
            errexit: false,
            jobs: Vec::new(),
            cwd: "/root".to_string(),
            captures: HashMap::new(),
            last_bg_pid: None,
            series: Series::default(),
            commands: Vec::new(),
            next_tick: 0,
            depth: 0,
            reclaim_passes: [Vec::new(), Vec::new()],
            task_records: Vec::new(),
            guard: Default::default(),
        };
        s.vars.insert("HOME".into(), "/root".into());
        s.vars.insert("PWD".into(), "/root".into());
        s.sample();
        s
    }

    fn err(&self, span: Span, msg: impl std::fmt::Display) -> RunError {
        RunError::bad_input(crate::one_line(&format!("{}:{}: {}", self.file, span.line, msg)))
    }

    /// Run the whole script; returns its exit status.
    pub fn run(&mut self, script: &lang::Script) -> Result<i32, RunError> {
        let status = match self.exec_list(&script.items) {
            Ok(()) => self.status,
            Err(Stop::Exit(c)) => c,
            Err(Stop::Error(e)) => return Err(e),
            Err(Stop::Limit) => self.status,
        };
        // The terminal session ends: whatever still runs in the background is stopped.
        for j in std::mem::take(&mut self.jobs) {
            self.k.kill(j, 143);
        }
        self.account_all();
        self.sample_through(self.k.now);
        if self.series.t_s.last().is_some_and(|&t| t < self.k.now as f64 / NS_PER_SEC as f64) {
            // The last, partial second.
            self.sample();
        }
        Ok(status)
    }

    // ---- Time and sampling ------------------------------------------------------------

    fn sample(&mut self) {
        let snap_mem = self.k.meminfo();
        let vm = self.k.vmstat();
        let s = &mut self.series;
        if s.columns.is_empty() {
            for &item in memtwin_procfs::VM_ITEMS {
                s.columns.push((format!("vm.{}", item.name()), Vec::new()));
            }
            for (name, _) in snap_mem.fields() {
                s.columns.push((format!("mi.{name}"), Vec::new()));
            }
        }
        s.t_s.push(self.k.now as f64 / NS_PER_SEC as f64);
        let mut i = 0;
        for &item in memtwin_procfs::VM_ITEMS {
            s.columns[i].1.push(vm.get(item));
            i += 1;
        }
        for (_, v) in snap_mem.fields() {
            s.columns[i].1.push(v);
            i += 1;
        }
        self.next_tick = self.k.now - self.k.now % NS_PER_SEC + NS_PER_SEC;
    }

    fn sample_through(&mut self, t: Ns) {
        while self.next_tick <= t {
            let tick = self.next_tick;
            self.k.run_until(tick, &mut |_| false);
            self.sample();
        }
    }

    /// Let simulated time run until `done` holds, sampling on the way.
    fn run_while(&mut self, span: Span, done: &mut dyn FnMut(&Kernel) -> bool) -> Result<(), Stop> {
        self.run_while_until(span, Ns::MAX, done)
    }

    /// `run_while`, never running the clock past `deadline` (the kernel checks `done` only at
    /// events, so a time condition alone would let the clock run on to the next tick).
    fn run_while_until(&mut self, _span: Span, deadline: Ns, done: &mut dyn FnMut(&Kernel) -> bool) -> Result<(), Stop> {
        loop {
            let tick = self.next_tick;
            let guard = &mut self.guard;
            let until = tick.min(guard.limits.max_sim_ns).min(deadline);
            self.k.run_until(until, &mut |k| done(k) || guard.on_event(k));
            if done(&self.k) {
                return Ok(());
            }
            if self.k.now >= tick {
                self.sample();
            }
            if self.guard.poll(&self.k, true, false) {
                return Err(Stop::Limit);
            }
        }
    }

    /// Let exactly `dt` pass (`sleep`): the kernel checks a stop condition only at events,
    /// so with none due the clock would run on to the next tick; land on `until` itself.
    fn advance(&mut self, _span: Span, dt: Ns) -> Result<(), Stop> {
        let until = self.k.now.saturating_add(dt);
        loop {
            let guard = &mut self.guard;
            let target = self.next_tick.min(until).min(guard.limits.max_sim_ns);
            self.k.run_until(target, &mut |k| guard.on_event(k));
            if self.k.now >= self.next_tick {
                self.sample();
            }
            if self.k.now >= until {
                return Ok(());
            }
            if self.guard.poll(&self.k, true, false) {
                return Err(Stop::Limit);
            }
        }
    }

    fn wait_task(&mut self, span: Span, tid: TaskId) -> Result<i32, Stop> {
        self.run_while(span, &mut |k| k.task_exited(tid))?;
        Ok(self.collect(tid, true))
    }

    /// waitpid: the exit status of an exited child; its task slot is released.
    /// `report_kill`: bash's own child (not one run under `timeout`) died of SIGKILL.
    fn collect(&mut self, tid: TaskId, report_kill: bool) -> i32 {
        if report_kill && self.k.tasks[tid as usize].killed {
            // bash reports a foreground job killed by SIGKILL.
            self.k.transcript.push_str("Killed\n");
        }
        let code = self.k.tasks[tid as usize].exit_code.unwrap_or(0);
        self.account_task(tid);
        self.k.reap(tid);
        code
    }

    /// Add task `tid`'s accounting to the record of the command that ran it.
    fn account_task(&mut self, tid: TaskId) {
        let Some(i) = self.task_records.iter().position(|&(t, _)| t == tid) else { return };
        let (_, ri) = self.task_records.swap_remove(i);
        let a = self.k.task_acct(tid);
        let oom = a.killed && self.k.tasks[tid as usize].exit_code == Some(137);
        let rec = &mut self.commands[ri];
        rec.tasks += 1;
        rec.cpu_user_ns += a.utime_ns;
        rec.cpu_sys_ns += a.stime_ns;
        rec.rchar += a.rchar;
        rec.wchar += a.wchar;
        rec.read_bytes += a.read_bytes;
        rec.write_bytes += a.write_bytes;
        rec.min_flt += a.min_flt;
        rec.maj_flt += a.maj_flt;
        rec.oom_kills += oom as u32;
        let wall = rec.breakdown.wall_ns;
        rec.breakdown.add(&a.breakdown);
        rec.breakdown.wall_ns = wall;
        rec.job_end_ns = rec.job_end_ns.max(a.end_ns);
        finish_breakdown(rec);
    }

    /// Account every task still alive (end of the run, or the machine going away).
    fn account_all(&mut self) {
        while let Some(&(tid, _)) = self.task_records.last() {
            self.account_task(tid);
        }
    }

    // ---- Lists ------------------------------------------------------------------------

    fn lookup(&self) -> impl Fn(&str) -> Option<String> + '_ {
        move |name: &str| {
            if name == "?" {
                Some(self.status.to_string())
            } else if name == "$" {
                self.k.memcg.shell_pid.map(|p| p.to_string())
            } else if name == "!" {
                Some(self.last_bg_pid.map_or(String::new(), |p| p.to_string()))
            } else {
                self.vars.get(name).cloned()
            }
        }
    }

    fn exec_list(&mut self, items: &[ListItem]) -> Result<(), Stop> {
        for item in items {
            if item.and_or.first.source.contains("$$") && self.k.memcg.shell_pid.is_none() {
                // The shell's own process id, given out the first time a script asks.
                self.k.memcg.shell_pid = Some(self.k.alloc_pid());
            }
            if self.depth == 0 {
                // Echo the command as a root prompt would show it.
                let src = &item.and_or.first.source;
                let mut line = format!("# {}", src);
                for (c, p) in &item.and_or.rest {
                    line.push_str(if *c == Connector::And { " && " } else { " || " });
                    line.push_str(&p.source);
                }
                if item.background {
                    line.push_str(" &");
                }
                line.push('\n');
                self.k.transcript.push_str(&line);
                self.begin_record(item, &line);
            }
            let r = if item.background { self.exec_background(item) } else { self.exec_and_or(&item.and_or) };
            if self.depth == 0 {
                self.end_record(&r);
            }
            r?;
            if self.depth == 0 && self.guard.poll(&self.k, false, true) {
                return Err(Stop::Limit);
            }
        }
        Ok(())
    }

    /// Start the record of a top-level command: its line, the clock and /proc/vmstat now.
    fn begin_record(&mut self, item: &ListItem, echoed: &str) {
        let vm = self.k.vmstat();
        self.commands.push(CommandRecord {
            line: item.span.line,
            source: echoed.trim_start_matches("# ").trim_end().to_string(),
            background: item.background,
            start_ns: self.k.now,
            end_ns: self.k.now,
            exit_status: 0,
            output_start: self.k.transcript.len(),
            output_end: self.k.transcript.len(),
            vmstat_start: memtwin_procfs::VM_ITEMS.iter().map(|&i| vm.get(i)).collect(),
            vmstat_end: Vec::new(),
            job_end_ns: self.k.now,
            ..Default::default()
        });
    }

    /// Close the last record: the clock, status and /proc/vmstat when the command returned
    /// (for `cmd &`: when the shell went on, at once).
    fn end_record(&mut self, r: &Result<(), Stop>) {
        let vm = self.k.vmstat();
        let (now, len, status) = (self.k.now, self.k.transcript.len(), self.status);
        if let Some(rec) = self.commands.last_mut() {
            rec.end_ns = now;
            rec.output_end = len;
            rec.exit_status = match r {
                Err(Stop::Exit(c)) => *c,
                _ => status,
            };
            rec.vmstat_end = memtwin_procfs::VM_ITEMS.iter().map(|&i| vm.get(i)).collect();
            rec.job_end_ns = rec.job_end_ns.max(now);
            finish_breakdown(rec);
        }
    }

    fn exec_background(&mut self, item: &ListItem) -> Result<(), Stop> {
        if !item.and_or.rest.is_empty() || item.and_or.first.commands.len() != 1 || item.and_or.first.timed {
            return Err(Stop::Error(self.err(item.span, "only a single simple command can run in the background ('cmd &')")));
        }
        match &item.and_or.first.commands[0] {
            Command::Simple(c) => {
                if let Some(tid) = self.start_simple(c)? {
                    self.jobs.push(tid);
                    self.last_bg_pid = Some(self.k.pid_of(tid));
                    if self.depth > 0 {
                        // A job started inside a loop or `if` runs beside the commands
                        // that follow: it is not counted in any record.
                        self.task_records.retain(|&(t, _)| t != tid);
                    }
                }
                self.status = 0;
                Ok(())
            }
            _ => Err(Stop::Error(self.err(item.span, "'for' and 'if' blocks cannot run in the background"))),
        }
    }

    fn exec_and_or(&mut self, ao: &AndOr) -> Result<(), Stop> {
        let mut status = self.exec_pipeline(&ao.first)?;
        for (c, p) in &ao.rest {
            let run = match c {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if run {
                status = self.exec_pipeline(p)?;
            }
        }
        self.status = status;
        if self.errexit && status != 0 {
            return Err(Stop::Exit(status));
        }
        Ok(())
    }

    fn exec_pipeline(&mut self, p: &Pipeline) -> Result<i32, Stop> {
        if p.commands.len() > 1 {
            return Err(Stop::Error(self.err(p.span, "pipelines ('a | b') are not supported; redirect to a file or /dev/null instead")));
        }
        let start = self.k.now;
        let (u0, s0) = self.children_cpu();
        let status = match &p.commands[0] {
            Command::Simple(c) => self.exec_simple(c)?,
            Command::For(f) => {
                let words = lang::expand_words(&f.words, &self.lookup());
                self.depth += 1;
                for w in words {
                    self.vars.insert(f.var.clone(), w);
                    let r = self.exec_list(&f.body);
                    if r.is_err() {
                        self.depth -= 1;
                        return r.map(|_| 0);
                    }
                }
                self.depth -= 1;
                self.status
            }
            Command::If(i) => {
                self.depth += 1;
                let mut ran = false;
                let saved = self.errexit;
                for (cond, body) in &i.branches {
                    self.errexit = false;
                    let r = self.exec_list(cond);
                    self.errexit = saved;
                    r?;
                    if self.status == 0 {
                        self.exec_list(body)?;
                        ran = true;
                        break;
                    }
                }
                if !ran {
                    if let Some(e) = &i.else_body {
                        self.exec_list(e)?;
                    } else {
                        self.status = 0;
                    }
                }
                self.depth -= 1;
                self.status
            }
        };
        if p.timed {
            let real = self.k.now - start;
            let (u1, s1) = self.children_cpu();
            let text = commands::format_time(real, u1.saturating_sub(u0), s1.saturating_sub(s0), p.time_posix);
            self.k.transcript.push_str(&text);
        }
        Ok(status)
    }

    /// CPU time of all finished user tasks (the shell's children), as the kernel
    /// accumulates it when each exits.
    fn children_cpu(&self) -> (u64, u64) {
        (self.k.children_utime, self.k.children_stime)
    }

    // ---- Simple commands ----------------------------------------------------------------

    fn exec_simple(&mut self, c: &SimpleCommand) -> Result<i32, Stop> {
        match self.start_simple(c)? {
            Some(tid) => {
                let st = self.wait_task(c.span, tid)?;
                Ok(st)
            }
            None => Ok(self.status),
        }
    }

    /// Resolve redirections: (stdout, stderr, path written by `>` if any).
    fn redirections(&mut self, c: &SimpleCommand) -> Result<(Sink, Sink, Option<String>), Stop> {
        let mut out = Sink::Terminal;
        let mut err = Sink::Terminal;
        let mut target_path = None;
        for r in &c.redirects {
            let target = r.target.expand(&self.lookup());
            let sink_for = |s: &mut Shell, path: &str, append: bool| -> Sink {
                if path == "/dev/null" {
                    return Sink::Null;
                }
                let abs = memtwin_kernel::fs::normalize(&s.cwd, path);
                let buf = match s.captures.get(&abs) {
                    Some(&b) => b,
                    None => {
                        let b = s.k.new_buffer();
                        s.captures.insert(abs, b);
                        b
                    }
                };
                if !append {
                    s.k.buffers[buf as usize].clear();
                }
                Sink::Buffer(buf)
            };
            match r.op {
                RedirOp::Out | RedirOp::Append => {
                    let abs = memtwin_kernel::fs::normalize(&self.cwd, &target);
                    let cgroup = commands::cgroup::is_cgroup_path(&abs);
                    if (abs.starts_with("/sys/") || abs == "/sys") && !cgroup {
                        return Err(Stop::Error(self.err(r.span, format!("writing to '{abs}' is not modelled (sysfs is not, except the cgroup files under /sys/fs/cgroup; /proc/sys/... sysctls are)"))));
                    }
                    let sink = if abs.starts_with("/proc/") || cgroup {
                        target_path = Some(abs);
                        Sink::Null
                    } else {
                        sink_for(self, &target, r.op == RedirOp::Append)
                    };
                    match r.fd {
                        1 => out = sink,
                        2 => err = sink,
                        _ => return Err(Stop::Error(self.err(r.span, format!("redirection of file descriptor {} is not supported (1 and 2 are)", r.fd)))),
                    }
                }
                RedirOp::OutErr => {
                    let sink = sink_for(self, &target, false);
                    out = sink;
                    err = sink;
                }
                RedirOp::DupOut => {
                    let from = match target.as_str() {
                        "1" => out,
                        "2" => err,
                        _ => return Err(Stop::Error(self.err(r.span, format!("'>&{target}' is not supported (>&1 and >&2 are)")))),
                    };
                    match r.fd {
                        1 => out = from,
                        2 => err = from,
                        _ => return Err(Stop::Error(self.err(r.span, "only file descriptors 1 and 2 can be redirected"))),
                    }
                }
                RedirOp::In => {
                    return Err(Stop::Error(self.err(r.span, "input redirection ('<') is not supported")));
                }
            }
        }
        Ok((out, err, target_path))
    }

    /// Start a simple command. Shell built-ins run at once (None); others become a task.
    fn start_simple(&mut self, c: &SimpleCommand) -> Result<Option<TaskId>, Stop> {
        let words = lang::expand_words(&c.words, &self.lookup());
        if words.is_empty() {
            for (name, w) in &c.assignments {
                let v = w.expand(&self.lookup());
                self.vars.insert(name.clone(), v);
            }
            self.status = 0;
            return Ok(None);
        }
        let (out, err, proc_target) = self.redirections(c)?;
        let name = words[0].as_str();
        self.check_cgroup_use(c, &words, proc_target.as_deref())?;
        let args = &words[1..];
        match name {
            "true" | ":" => {
                self.status = 0;
                return Ok(None);
            }
            "false" => {
                self.status = 1;
                return Ok(None);
            }
            "set" => {
                for a in args {
                    match a.as_str() {
                        "-e" => self.errexit = true,
                        "+e" => self.errexit = false,
                        "-u" | "+u" | "-x" | "+x" => {}
                        o => return Err(Stop::Error(self.err(c.span, format!("set: unsupported option '{o}' (supported: -e, +e)")))),
                    }
                }
                self.status = 0;
                return Ok(None);
            }
            "export" => {
                for a in args {
                    if let Some((k, v)) = a.split_once('=') {
                        self.vars.insert(k.to_string(), v.to_string());
                    }
                }
                self.status = 0;
                return Ok(None);
            }
            "cd" => {
                let dir = args.first().cloned().unwrap_or_else(|| "/root".into());
                self.cwd = memtwin_kernel::fs::normalize(&self.cwd, &dir);
                self.vars.insert("PWD".into(), self.cwd.clone());
                self.status = 0;
                return Ok(None);
            }
            "exit" => {
                // bash: the status is N & 255 (`exit 300` is 44, `exit -1` is 255); a
                // non-numeric argument is an error and the status 2.
                let code = match args.first() {
                    None => self.status,
                    Some(a) => match a.trim().parse::<i64>() {
                        Ok(n) => (n & 255) as i32,
                        Err(_) => {
                            self.k.transcript.push_str(&format!("bash: exit: {a}: numeric argument required\n"));
                            2
                        }
                    },
                };
                return Err(Stop::Exit(code));
            }
            "wait" => {
                let jobs = std::mem::take(&mut self.jobs);
                for j in jobs {
                    self.wait_task(c.span, j)?;
                }
                self.status = 0;
                return Ok(None);
            }
            "crash" | "reboot" => return self.builtin_restart(c, name == "reboot", args),
            "sleep" => {
                let secs = commands::parse_sleep(args).map_err(|m| Stop::Error(self.err(c.span, m)))?;
                self.advance(c.span, secs)?;
                self.status = 0;
                return Ok(None);
            }
            "echo" if proc_target.is_some() => {
                let path = proc_target.unwrap_or_default();
                let value = args.iter().filter(|a| *a != "-n").cloned().collect::<Vec<_>>().join(" ");
                let cmd = commands::proc_write(&path, &value).map_err(|m| Stop::Error(self.err(c.span, m)))?;
                return self.spawn(c, "bash", cmd, out, err).map(Some);
            }
            _ => {}
        }
        if proc_target.is_some() {
            return Err(Stop::Error(self.err(c.span, "only 'echo VALUE > /proc/sys/...' or '> /sys/fs/cgroup/...' can write to /proc and /sys")));
        }
        if name == "timeout" {
            return self.start_timeout(c, args, out, err);
        }
        // kill %N: the shell turns a job number into its process id.
        let job_args: Vec<String>;
        let args = if name == "kill" {
            job_args = args
                .iter()
                .map(|a| match a.strip_prefix('%').and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n >= 1 && n <= self.jobs.len() && !self.k.task_exited(self.jobs[n - 1]) => self.k.pid_of(self.jobs[n - 1]).to_string(),
                    _ => a.clone(),
                })
                .collect();
            &job_args[..]
        } else {
            args
        };
        let cmd = commands::build(name, args, &self.cwd, &self.captures).map_err(|m| Stop::Error(self.err(c.span, m)))?;
        let comm = commands::comm_of(name, args);
        self.spawn(c, &comm, cmd, out, err).map(Some)
    }

    /// Cgroup paths and commands on a kernel without control groups (2.4), and cgroup
    /// files the model does not have, are refused before anything runs.
    fn check_cgroup_use(&self, c: &SimpleCommand, words: &[String], target: Option<&str>) -> Result<(), Stop> {
        let uses = matches!(words[0].as_str(), "systemd-run" | "cgexec")
            || words.iter().chain(target.map(|t| t.to_string()).iter()).any(|w| {
                let abs = memtwin_kernel::fs::normalize(&self.cwd, w);
                commands::cgroup::is_cgroup_path(&abs) || (abs.starts_with("/proc/") && abs.ends_with("/cgroup"))
            });
        if !uses {
            return Ok(());
        }
        if let Err(memtwin_kernel::cgroup::CgError::Unmodelled(m)) = self.k.cgroup_mount() {
            return Err(Stop::Error(self.err(c.span, m)));
        }
        for w in words.iter().chain(target.map(|t| t.to_string()).iter()) {
            let abs = memtwin_kernel::fs::normalize(&self.cwd, w);
            if !commands::cgroup::is_cgroup_path(&abs) {
                continue;
            }
            if let Err(memtwin_kernel::cgroup::CgError::Unmodelled(m)) = self.k.cgroup_resolve(&abs).and_then(|(id, f)| match f {
                Some(f) => self.k.cgroup_check_modelled(id, &f),
                None => Ok(()),
            }) {
                return Err(Stop::Error(self.err(c.span, m)));
            }
        }
        Ok(())
    }

    /// `timeout DURATION CMD...` (coreutils): run CMD, kill it with SIGTERM when DURATION
    /// has passed; the status is then 124. Runs in the foreground here.
    fn start_timeout(&mut self, c: &SimpleCommand, args: &[String], out: Sink, err: Sink) -> Result<Option<TaskId>, Stop> {
        let Some((dur, rest)) = args.split_first() else {
            return Err(Stop::Error(self.err(c.span, "timeout: missing operand (timeout DURATION COMMAND...)")));
        };
        let Some((name, cargs)) = rest.split_first() else {
            return Err(Stop::Error(self.err(c.span, "timeout: missing command (timeout DURATION COMMAND...)")));
        };
        let limit = commands::parse_sleep(std::slice::from_ref(dur)).map_err(|m| Stop::Error(self.err(c.span, m.replace("sleep", "timeout"))))?;
        let cmd = commands::build(name, cargs, &self.cwd, &self.captures).map_err(|m| Stop::Error(self.err(c.span, m)))?;
        let comm = commands::comm_of(name, cargs);
        let tid = self.spawn(c, &comm, cmd, out, err)?;
        let deadline = self.k.now + limit;
        self.run_while_until(c.span, deadline, &mut |k| k.task_exited(tid) || k.now >= deadline)?;
        if !self.k.task_exited(tid) {
            self.k.kill(tid, 124);
            self.run_while(c.span, &mut |k| k.task_exited(tid))?;
            self.k.tasks[tid as usize].killed = false;
            self.collect(tid, false);
            self.status = 124;
            return Ok(None);
        }
        self.status = self.collect(tid, false);
        Ok(None)
    }

    fn spawn(&mut self, c: &SimpleCommand, comm: &str, cmd: Cmd, out: Sink, err: Sink) -> Result<TaskId, Stop> {
        let cmdline = c.source.clone();
        let tid = self.k.spawn(comm, &cmdline, cmd, out, err);
        if !self.commands.is_empty() {
            self.task_records.push((tid, self.commands.len() - 1));
        }
        if let Sink::Buffer(_) = out {
            // The last stdout redirection names the file data goes to.
            for r in c.redirects.iter().rev() {
                let append = match r.op {
                    RedirOp::Out if r.fd == 1 => false,
                    RedirOp::Append if r.fd == 1 => true,
                    RedirOp::OutErr => false,
                    _ => continue,
                };
                let target = r.target.expand(&self.lookup());
                let abs = memtwin_kernel::fs::normalize(&self.cwd, &target);
                self.k.tasks[tid as usize].stdout_file = Some((abs, append));
                break;
            }
        }
        Ok(tid)
    }
}

/// Close a record's breakdown: its wall time runs from the start to the end of its last
/// task (`job_end_ns`); whatever its tasks do not cover is the shell's own time.
fn finish_breakdown(rec: &mut CommandRecord) {
    let b = &mut rec.breakdown;
    b.shell_ns = 0;
    b.wall_ns = rec.job_end_ns.max(rec.end_ns).saturating_sub(rec.start_ns);
    b.shell_ns = b.wall_ns.saturating_sub(b.sum());
    let secs = b.wall_ns as f64 / 1e9;
    rec.throughput_bytes_per_s = if secs > 0.0 { rec.rchar.max(rec.wchar) as f64 / secs } else { 0.0 };
}

// ---- crash and reboot ---------------------------------------------------------------------

impl Shell {
    /// `crash` (power loss) and `reboot` (clean): the machine boots again and the script
    /// goes on in a new session on it. The simulated clock continues; memory, caches,
    /// tmpfs, run-time sysctl settings and counters start afresh; files keep what reached
    /// the disk (everything for `reboot`, which first stops the background jobs and syncs).
    /// Transcript: after the echoed command, one line
    /// `--- crash: power lost at T s, the machine boots again ---` or
    /// `--- reboot: synced and restarted at T s ---`.
    fn builtin_restart(&mut self, c: &SimpleCommand, clean: bool, args: &[String]) -> Result<Option<TaskId>, Stop> {
        let name = if clean { "reboot" } else { "crash" };
        if let Some(a) = args.first() {
            return Err(Stop::Error(self.err(c.span, format!("{name}: unexpected argument '{a}' ({name} takes none)"))));
        }
        if clean {
            // systemd stops the services (SIGTERM), then syncs before unmounting.
            for j in std::mem::take(&mut self.jobs) {
                self.k.kill(j, 143);
            }
            let sync = commands::build("sync", &[], &self.cwd, &self.captures).map_err(|m| Stop::Error(self.err(c.span, m)))?;
            let tid = self.k.spawn("systemd-shutdow", "/usr/lib/systemd/systemd-shutdown reboot", sync, Sink::Null, Sink::Null);
            self.run_while(c.span, &mut |k| k.task_exited(tid))?;
        } else {
            // Whatever ran dies with the machine.
            self.jobs.clear();
        }
        self.account_all();
        let at = self.k.now as f64 / NS_PER_SEC as f64;
        // Captured output written to a tmpfs is gone with it.
        let old = &self.k;
        self.captures.retain(|path, _| old.fs.mount_of(path).is_none_or(|m| !old.fs.mounts[m as usize].is_tmpfs()));
        let old_passes = std::mem::take(&mut self.k.reclaim.stats.passes);
        for (all, old) in self.reclaim_passes.iter_mut().zip(old_passes) {
            all.extend(old);
        }
        let new = Kernel::reboot_from(&mut self.k, clean).map_err(|e| Stop::Error(self.err(c.span, e)))?;
        self.k = new;
        self.k.transcript.push_str(&if clean {
            format!("--- reboot: synced and restarted at {at:.3} s ---\n")
        } else {
            format!("--- crash: power lost at {at:.3} s, the machine boots again ---\n")
        });
        self.status = 0;
        Ok(None)
    }
}
