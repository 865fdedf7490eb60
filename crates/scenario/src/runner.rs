//! The shell: walks a parsed script and runs its commands as tasks of the simulated
//! machine, in simulated time. Foreground commands are waited for, `&` runs them in the
//! background, `wait` joins them, `sleep` lets time pass. Every second of simulated time
//! the /proc counters are sampled into the series.

use crate::commands::{self, Cmd};
use crate::lang::{self, AndOr, Command, Connector, ListItem, Pipeline, RedirOp, Redirect, SimpleCommand, Span, Word, WordPart};
use crate::{CommandRecord, RunError, Series};
use memtwin_kernel::{Kernel, Ns, Sink, TaskId, NS_PER_SEC};
use std::collections::HashMap;

/// Longest a scenario may run in simulated time before the run is stopped.
pub const MAX_SIM_NS: Ns = 7 * 24 * 3600 * NS_PER_SEC;

/// Commands the shell itself carries out.
pub const BUILTINS: &[&str] = &[
    "true", ":", "false", "set", "export", "readonly", "declare", "typeset", "local", "unset", "shift", "cd", "pwd", "exit",
    "return", "break", "continue", "wait", "kill", "read", "let", "test", "[", "[[", "sleep", "crash", "reboot", "timeout",
    "exec",
];

/// Why execution of the script stops early.
enum Stop {
    /// `exit N` or `set -e` and a failing command: the script ends with this status.
    Exit(i32),
    Error(RunError),
    /// A limit was reached or the run was interrupted (`Shell::guard` says which).
    Limit,
    /// `break N` / `continue N`: leave / go on with the Nth enclosing loop.
    Break(u32),
    Continue(u32),
    /// `return N` from a shell function.
    Return(i32),
}

pub struct Shell {
    pub k: Kernel,
    file: String,
    vars: HashMap<String, String>,
    /// Indexed arrays (`a=(x y)`, `a[i]=z`): element index -> value.
    arrays: HashMap<String, std::collections::BTreeMap<i64, String>>,
    status: i32,
    errexit: bool,
    jobs: Vec<TaskId>,
    cwd: String,
    /// Redirect targets captured as text: path -> buffer.
    captures: HashMap<String, u32>,
    pub series: Series,
    /// One record per top-level command, in script order.
    pub commands: Vec<CommandRecord>,
    next_tick: Ns,
    depth: u32,
    /// Reclaim passes of the kernels that a crash or reboot replaced.
    reclaim_passes: memtwin_kernel::ReclaimStats,
    /// The kernel threads of the kernels that a crash or reboot replaced, by name.
    kthreads: Vec<crate::KthreadRecord>,
    /// Tasks of the commands being recorded: (task, index in `commands`).
    /// Tasks of the commands being recorded: (task, index in `commands`, whether its time
    /// is the record's breakdown — false for the members of a pipeline before the last).
    task_records: Vec<(TaskId, usize, bool)>,
    /// The niceness and I/O priority `nice`/`ionice` give the command they launch: set
    /// when the task is created, before it runs (setpriority/ioprio_set before exec).
    launch_prio: Option<(Option<i32>, Option<memtwin_kernel::ioprio::IoPrio>)>,
    /// `$$`
    shell_pid: u32,
    /// `$!`
    last_bg_pid: Option<u32>,
    /// `$1`...
    positional: Vec<String>,
    funcs: HashMap<String, std::rc::Rc<Command>>,
    /// Per running function: its `local` variables and their values outside.
    locals: Vec<Vec<(String, Option<String>)>>,
    func_depth: u32,
    /// Default standard output and error of commands (a `$(...)` or a block's redirection
    /// changes them).
    out: Out,
    err_out: Out,
    /// The shell's standard input (`read`), when a block reads a file or a pipe.
    stdin: Option<ShellIn>,
    /// Descriptors 3-9 the shell holds open (`exec 3> file`; a block's `3< file`).
    fds: std::collections::BTreeMap<u32, Fd>,
    /// `<(...)` of the command being started (their /dev/fd/N count down from 63).
    proc_substs: u32,
    pipefail: bool,
    /// Inside a condition (`if`, `while`, ...): `set -e` does not apply.
    errexit_ok: u32,
    /// Limits and output streaming.
    pub(crate) guard: crate::guard::Guard,
}

impl Shell {
    /// Every reclaim invocation of the run per path (ReclaimKind: kswapd, direct, split
    /// page, split slab), the replaced kernels' first.
    pub fn take_reclaim_passes(&mut self) -> memtwin_kernel::ReclaimStats {
        let mut all = std::mem::take(&mut self.reclaim_passes);
        all.append(std::mem::take(&mut self.k.reclaim.stats));
        all
    }

    /// The kernel threads' accounting, summed by name over every kernel of the run.
    pub fn take_kthreads(&mut self) -> Vec<crate::KthreadRecord> {
        self.collect_kthreads();
        std::mem::take(&mut self.kthreads)
    }

    /// Add the running kernel's threads to `kthreads` (at the end, or before a crash or
    /// reboot replaces the kernel). Kernel threads are never reaped: stopped ones are here.
    fn collect_kthreads(&mut self) {
        let tids: Vec<TaskId> = (0..self.k.tasks.len() as TaskId).filter(|&t| self.k.tasks[t as usize].kthread).collect();
        for tid in tids {
            let a = self.k.task_acct(tid);
            let comm = &self.k.tasks[tid as usize].comm;
            let i = match self.kthreads.iter().position(|r| &r.comm == comm) {
                Some(i) => i,
                None => {
                    self.kthreads.push(crate::KthreadRecord { comm: comm.clone(), ..Default::default() });
                    self.kthreads.len() - 1
                }
            };
            let r = &mut self.kthreads[i];
            r.threads += 1;
            r.cpu_user_ns += a.utime_ns;
            r.cpu_sys_ns += a.stime_ns;
            r.breakdown.add(&a.breakdown);
        }
    }

    pub fn new(k: Kernel, file: &str) -> Shell {
        let mut s = Shell {
            k,
            file: file.to_string(),
            vars: HashMap::new(),
            arrays: HashMap::new(),
            status: 0,
            errexit: false,
            jobs: Vec::new(),
            cwd: "/root".to_string(),
            captures: HashMap::new(),
            series: Series::default(),
            commands: Vec::new(),
            next_tick: 0,
            depth: 0,
            reclaim_passes: Default::default(),
            kthreads: Vec::new(),
            task_records: Vec::new(),
            launch_prio: None,
            shell_pid: 0,
            last_bg_pid: None,
            positional: Vec::new(),
            funcs: HashMap::new(),
            locals: Vec::new(),
            func_depth: 0,
            out: Out { sink: Sink::Terminal, file: None },
            err_out: Out { sink: Sink::Terminal, file: None },
            stdin: None,
            fds: Default::default(),
            proc_substs: 0,
            pipefail: false,
            errexit_ok: 0,
            guard: Default::default(),
        };
        s.vars.insert("HOME".into(), "/root".into());
        s.vars.insert("PWD".into(), "/root".into());
        // The login shell's pid: the first after the system's own tasks.
        s.shell_pid = s.k.tasks.iter().map(|t| t.pid).max().unwrap_or(0) + 1;
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
            Err(Stop::Break(_) | Stop::Continue(_)) => self.status,
            Err(Stop::Return(c)) => c,
        };
        // The terminal session ends: whatever still runs in the background is stopped.
        for j in std::mem::take(&mut self.jobs) {
            self.k.kill_at_once(j, 143);
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
        // The era's own names (its /proc/vmstat, or 2.4's /proc/stat paging fields).
        let vm = self.k.vmstat_series();
        let s = &mut self.series;
        if s.columns.is_empty() {
            for (name, _) in &vm {
                s.columns.push((format!("vm.{name}"), Vec::new()));
            }
            for (name, _) in snap_mem.fields() {
                s.columns.push((format!("mi.{name}"), Vec::new()));
            }
        }
        s.t_s.push(self.k.now as f64 / NS_PER_SEC as f64);
        let mut i = 0;
        for (_, v) in vm {
            s.columns[i].1.push(v);
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

    /// waitpid: the exit status of an exited child; its task slot is released.
    /// `report_kill`: bash's own child (not one run under `timeout`) died of SIGKILL.
    fn collect(&mut self, tid: TaskId, report_kill: bool) -> i32 {
        if report_kill && self.k.tasks[tid as usize].killed && self.k.tasks[tid as usize].exit_code == Some(137) {
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
        let Some(i) = self.task_records.iter().position(|&(t, _, _)| t == tid) else { return };
        let (_, ri, timed) = self.task_records.swap_remove(i);
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
        if timed {
            let wall = rec.breakdown.wall_ns;
            rec.breakdown.add(&a.breakdown);
            rec.breakdown.wall_ns = wall;
        }
        rec.job_end_ns = rec.job_end_ns.max(a.end_ns);
        finish_breakdown(rec);
    }

    /// Account every task still alive (end of the run, or the machine going away).
    fn account_all(&mut self) {
        while let Some(&(tid, _, _)) = self.task_records.last() {
            self.account_task(tid);
        }
    }

    // ---- Variables and expansion ----------------------------------------------------------

    fn lookup(&self) -> impl Fn(&str) -> Option<String> + '_ {
        move |name: &str| match name {
            "?" => Some(self.status.to_string()),
            "$" => Some(self.k.memcg.shell_pid.unwrap_or(self.shell_pid).to_string()),
            "!" => self.last_bg_pid.map(|p| p.to_string()),
            "#" => Some(self.positional.len().to_string()),
            "@" | "*" => Some(self.positional.join(" ")),
            "0" => Some(self.file.clone()),
            n if n.len() == 1 && n.as_bytes()[0].is_ascii_digit() => {
                self.positional.get(usize::from(n.as_bytes()[0] - b'1')).cloned()
            }
            n if n.starts_with('#') && n.ends_with("[@]") || n.starts_with('#') && n.ends_with("[*]") => {
                Some(self.arrays.get(&n[1..n.len() - 3]).map_or(usize::from(self.vars.contains_key(&n[1..n.len() - 3])), |a| a.len()).to_string())
            }
            n if n.starts_with('#') && n.len() > 1 => Some(self.array_get(&n[1..]).map_or(0, |v| v.chars().count()).to_string()),
            n => self.array_get(n),
        }
    }

    /// A variable's value; `NAME[i]` is an array element (`i` an arithmetic expression),
    /// `NAME[@]` / `NAME[*]` all elements (joined by [`lang::expand::ARRAY_SEP`] / a blank).
    fn array_get(&self, n: &str) -> Option<String> {
        let Some((name, rest)) = n.split_once('[') else {
            return match self.arrays.get(n) {
                Some(a) => a.get(&0).cloned(),
                None => self.vars.get(n).cloned(),
            };
        };
        let idx = rest.strip_suffix(']').unwrap_or(rest);
        let elems: Vec<&String> = match self.arrays.get(name) {
            Some(a) => a.values().collect(),
            None => self.vars.get(name).into_iter().collect(),
        };
        match idx {
            "@" => Some(elems.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(&lang::expand::ARRAY_SEP.to_string())),
            "*" => Some(elems.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")),
            _ => {
                let i = self.index_value(idx);
                match self.arrays.get(name) {
                    Some(a) => a.get(&i).cloned(),
                    None if i == 0 => self.vars.get(name).cloned(),
                    None => None,
                }
            }
        }
    }

    /// An array subscript: an arithmetic expression on the variables (read only).
    fn index_value(&self, idx: &str) -> i64 {
        struct Ro<'a>(&'a Shell);
        impl lang::arith::ArithVars for Ro<'_> {
            fn get(&self, n: &str) -> Option<String> {
                self.0.array_get(n)
            }
            fn set(&mut self, _: &str, _: i64) {}
        }
        let i = lang::arith::eval(idx, &mut Ro(self)).unwrap_or(0);
        if i < 0 {
            // bash: a negative subscript counts from the end.
            i
        } else {
            i
        }
    }

    /// Evaluate an arithmetic expression on the shell's variables.
    fn arith(&mut self, span: Span, expr: &str) -> Result<i64, Stop> {
        struct Vars<'a>(&'a mut Shell);
        impl lang::arith::ArithVars for Vars<'_> {
            fn get(&self, n: &str) -> Option<String> {
                (self.0.lookup())(n)
            }
            fn set(&mut self, n: &str, v: i64) {
                self.0.set_var(n, v.to_string());
            }
        }
        // `$NAME` and `$(...)` inside are expanded first (bash expands the text, then
        // evaluates it).
        let text = if expr.contains("$(") {
            let w = match lang::parse(&format!("echo \"{}\"", expr.replace('"', "\\\""))) {
                Ok(s) => s,
                Err(e) => return Err(Stop::Error(self.err(span, e.message))),
            };
            match w.items.first().map(|i| &i.and_or.first.commands[0]) {
                Some(Command::Simple(c)) if c.words.len() == 2 => self.expand_word(&c.words[1])?,
                _ => expr.to_string(),
            }
        } else {
            expr.to_string()
        };
        match lang::arith::eval(&text, &mut Vars(self)) {
            Ok(v) => Ok(v),
            Err(m) => Err(Stop::Error(self.err(span, m))),
        }
    }

    fn set_var(&mut self, name: &str, value: String) {
        if let Some((base, rest)) = name.split_once('[') {
            // `NAME[i]=value`
            let idx = rest.strip_suffix(']').unwrap_or(rest);
            let mut i = self.index_value(idx);
            let arr = self.arrays.entry(base.to_string()).or_insert_with(|| {
                let mut a = std::collections::BTreeMap::new();
                if let Some(v) = self.vars.get(base) {
                    a.insert(0, v.clone());
                }
                a
            });
            if i < 0 {
                i += arr.keys().next_back().map_or(0, |k| k + 1);
            }
            arr.insert(i.max(0), value);
            return;
        }
        if let Some(a) = self.arrays.get_mut(name) {
            // `NAME=value` on an array sets element 0.
            a.insert(0, value);
            return;
        }
        if let Some(frame) = self.locals.last_mut() {
            if frame.iter().any(|(n, _)| n == name) {
                // A local of the running function: `vars` holds its current value.
            }
        }
        self.vars.insert(name.to_string(), value);
    }

    /// The values of a word's `$(...)` and `$((...))` parts (the commands run now).
    fn part_values(&mut self, w: &Word) -> Result<lang::expand::PartValues, Stop> {
        let mut vals = Vec::with_capacity(w.parts.len());
        for p in &w.parts {
            vals.push(match p {
                WordPart::CmdSubst { script, .. } => Some(self.command_output(script)?),
                WordPart::ProcSubst(script) => {
                    // `<(LIST)`: bash runs LIST with its output on a pipe and passes the
                    // pipe's /dev/fd/N (63, then 62, ...). Here LIST runs first and the
                    // command reads what it wrote.
                    let b = self.k.new_buffer();
                    let saved = std::mem::replace(&mut self.out, Out { sink: Sink::Buffer(b), file: None });
                    let count = self.proc_substs;
                    self.depth += 1;
                    let r = self.exec_list(&script.items);
                    self.depth -= 1;
                    self.out = saved;
                    self.proc_substs = count;
                    match r {
                        Ok(()) | Err(Stop::Exit(_)) => {}
                        Err(e) => return Err(e),
                    }
                    let path = format!("/dev/fd/{}", 63 - self.proc_substs.min(50));
                    self.proc_substs += 1;
                    self.captures.insert(path.clone(), b);
                    Some(path)
                }
                WordPart::Arith { expr, .. } => Some(self.arith(w.span, expr)?.to_string()),
                WordPart::Param { name, op, arg, arg2, .. } => {
                    let val = match op {
                        lang::ParamOp::Indirect => (self.lookup())(name).and_then(|n| (self.lookup())(&n)),
                        lang::ParamOp::Names { at } => {
                            // bash's varlist_matching_prefix: the set variables, sorted.
                            let mut names: Vec<&String> = self.vars.keys().chain(self.arrays.keys()).filter(|n| n.starts_with(name.as_str())).collect();
                            names.sort();
                            names.dedup();
                            let sep = if *at { lang::expand::ARRAY_SEP.to_string() } else { " ".to_string() };
                            Some(names.into_iter().map(String::as_str).collect::<Vec<_>>().join(&sep))
                        }
                        lang::ParamOp::Keys { at } => {
                            let keys: Vec<String> = match self.arrays.get(name) {
                                Some(a) => a.keys().map(|k| k.to_string()).collect(),
                                None => self.vars.get(name).map(|_| "0".to_string()).into_iter().collect(),
                            };
                            Some(keys.join(&if *at { lang::expand::ARRAY_SEP.to_string() } else { " ".to_string() }))
                        }
                        _ => (self.lookup())(name),
                    };
                    let a = if lang::expand::param_needs_arg(*op, val.as_deref()) { self.expand_word(arg)? } else { String::new() };
                    let b = match arg2 {
                        Some(x) => Some(self.expand_word(x)?),
                        None => None,
                    };
                    let (v, effect) = if *op == lang::ParamOp::Substring {
                        // OFFSET and LENGTH are arithmetic expressions.
                        let off = self.arith(w.span, &a)?.to_string();
                        let len = match &b {
                            Some(e) => Some(self.arith(w.span, e)?.to_string()),
                            None => None,
                        };
                        lang::expand::apply_param(*op, val, &off, len.as_deref(), &mut |e| e.parse().unwrap_or(0))
                    } else {
                        lang::expand::apply_param(*op, val, &a, b.as_deref(), &mut |_| 0)
                    };
                    match effect {
                        lang::expand::ParamEffect::None => {}
                        lang::expand::ParamEffect::Assign => self.set_var(name, v.clone()),
                        lang::expand::ParamEffect::Fail => {
                            // bash (parameter_brace_expand_error): "NAME: message" on stderr,
                            // and a non-interactive shell exits with status 1.
                            let msg = if v.is_empty() { "parameter null or not set".to_string() } else { v };
                            let line = format!("bash: line {}: {name}: {msg}\n", w.span.line);
                            self.shell_err(Sink::Terminal, &line);
                            self.status = 1;
                            return Err(Stop::Exit(1));
                        }
                    }
                    Some(v)
                }
                _ => None,
            });
        }
        Ok(vals)
    }

    fn needs_run(w: &Word) -> bool {
        w.parts.iter().any(|p| matches!(p, WordPart::CmdSubst { .. } | WordPart::Arith { .. } | WordPart::Param { .. } | WordPart::ProcSubst(_)))
    }

    /// Pathname expansion (bash's glob_filename): the names matching `pat` (components with
    /// `*`, `?`, `[...]` matched against the directory's entries, names starting with `.`
    /// only by a pattern starting with `.`), sorted in byte order as bash sorts them in the
    /// C locale; relative patterns are matched from the working directory and stay relative.
    fn glob_paths(&self, pat: &str) -> Vec<String> {
        let has_glob = |c: &str| {
            let mut esc = false;
            for ch in c.chars() {
                if esc {
                    esc = false;
                } else if ch == '\\' {
                    esc = true;
                } else if matches!(ch, '*' | '?' | '[') {
                    return true;
                }
            }
            false
        };
        let unescape = |c: &str| {
            let mut out = String::new();
            let mut esc = false;
            for ch in c.chars() {
                if !esc && ch == '\\' {
                    esc = true;
                    continue;
                }
                esc = false;
                out.push(ch);
            }
            out
        };
        let absolute = pat.starts_with('/');
        // (shown path, absolute path)
        let mut cur: Vec<(String, String)> = vec![(if absolute { "/".into() } else { String::new() }, if absolute { "/".into() } else { self.cwd.clone() })];
        let comps: Vec<&str> = pat.split('/').filter(|c| !c.is_empty()).collect();
        for (k, comp) in comps.iter().enumerate() {
            let last = k + 1 == comps.len();
            let mut next = Vec::new();
            for (shown, abs) in &cur {
                let join = |base: &str, name: &str| if base.is_empty() { name.to_string() } else if base.ends_with('/') { format!("{base}{name}") } else { format!("{base}/{name}") };
                if has_glob(comp) {
                    let Ok(entries) = self.k.sys_readdir(abs) else { continue };
                    for (name, st) in entries {
                        if name.starts_with('.') && !comp.starts_with('.') {
                            continue;
                        }
                        if !last && st.kind != memtwin_kernel::fs::FileKind::Directory {
                            continue;
                        }
                        if crate::builtins::glob_match(comp, &name) {
                            next.push((join(shown, &name), join(abs, &name)));
                        }
                    }
                } else {
                    let name = unescape(comp);
                    let a = join(abs, &name);
                    if self.k.fs.exists(&a) {
                        next.push((join(shown, &name), a));
                    }
                }
            }
            cur = next;
            if cur.is_empty() {
                break;
            }
        }
        let mut out: Vec<String> = cur.into_iter().map(|(s, _)| s).collect();
        if pat.ends_with('/') {
            for o in &mut out {
                o.push('/');
            }
        }
        out.sort();
        out
    }

    /// A word as one string (assignments, redirection targets, `case` words).
    fn expand_word(&mut self, w: &Word) -> Result<String, Stop> {
        if !Self::needs_run(w) {
            return Ok(w.expand(&self.lookup()));
        }
        let vals = self.part_values(w)?;
        Ok(w.expand_with(&self.lookup(), &vals))
    }

    /// Words to arguments: substitutions run, fields split, braces expanded.
    fn expand_argv(&mut self, words: &[Word]) -> Result<Vec<String>, Stop> {
        let mut out = Vec::new();
        for w in words {
            // Written globs, and the values of unquoted expansions, are patterns.
            let globs = w.parts.iter().any(|p| {
                matches!(p, WordPart::Glob(_) | WordPart::Var(_) | WordPart::CmdSubst { quoted: false, .. } | WordPart::Param { quoted: false, .. } | WordPart::ArrayAll { quoted: false, .. })
            });
            let vals = if Self::needs_run(w) { self.part_values(w)? } else { lang::expand::static_values(w, &self.lookup()) };
            if globs {
                let g = |p: &str| self.glob_paths(p);
                w.expand_fields_glob(&self.lookup(), &vals, Some(&g), &mut out);
            } else {
                w.expand_fields_with(&self.lookup(), &vals, &mut out);
            }
        }
        Ok(out)
    }

    /// `$(...)`: run the commands with their standard output captured; trailing newlines
    /// are removed.
    fn command_output(&mut self, script: &lang::Script) -> Result<String, Stop> {
        let b = self.k.new_buffer();
        let saved = std::mem::replace(&mut self.out, Out { sink: Sink::Buffer(b), file: None });
        self.depth += 1;
        let r = self.exec_list(&script.items);
        self.depth -= 1;
        self.out = saved;
        let mut text = std::mem::take(&mut self.k.buffers[b as usize]);
        self.k.release_buffer(b);
        match r {
            Ok(()) | Err(Stop::Exit(_)) => {}
            Err(e) => return Err(e),
        }
        while text.ends_with('\n') {
            text.pop();
        }
        Ok(text)
    }

    /// A message the shell itself prints (bash's errors), to the given stream.
    fn shell_err(&mut self, sink: Sink, msg: &str) {
        match sink {
            Sink::Terminal => self.k.transcript.push_str(msg),
            Sink::Null | Sink::Closed => {}
            Sink::Buffer(b) => self.k.buffers[b as usize].push_str(msg),
            Sink::Pipe(p) => self.k.pipes[p as usize].buf.extend(msg.as_bytes()),
        }
    }

    // ---- Lists ------------------------------------------------------------------------

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
        let vm = self.k.vmstat_series();
        self.commands.push(CommandRecord {
            line: item.span.line,
            source: echoed.trim_start_matches("# ").trim_end().to_string(),
            background: item.background,
            start_ns: self.k.now,
            end_ns: self.k.now,
            exit_status: 0,
            output_start: self.k.transcript.len(),
            output_end: self.k.transcript.len(),
            vmstat_start: vm.into_iter().map(|(_, v)| v).collect(),
            vmstat_end: Vec::new(),
            job_end_ns: self.k.now,
            ..Default::default()
        });
    }

    /// Close the last record: the clock, status and /proc/vmstat when the command returned
    /// (for `cmd &`: when the shell went on, at once).
    fn end_record(&mut self, r: &Result<(), Stop>) {
        let vm = self.k.vmstat_series();
        let (now, len, status) = (self.k.now, self.k.transcript.len(), self.status);
        if let Some(rec) = self.commands.last_mut() {
            rec.end_ns = now;
            rec.output_end = len;
            rec.exit_status = match r {
                Err(Stop::Exit(c)) => *c,
                _ => status,
            };
            rec.vmstat_end = vm.into_iter().map(|(_, v)| v).collect();
            rec.job_end_ns = rec.job_end_ns.max(now);
            finish_breakdown(rec);
        }
    }

    fn exec_background(&mut self, item: &ListItem) -> Result<(), Stop> {
        let p = &item.and_or.first;
        if !item.and_or.rest.is_empty() || p.timed || !p.commands.iter().all(|c| matches!(c, Command::Simple(_))) {
            return Err(Stop::Error(self.err(item.span, "only a command or a pipeline of commands can run in the background ('cmd &', 'a | b &')")));
        }
        let tids = self.start_pipeline(p, true)?;
        if let Some(&last) = tids.last() {
            self.last_bg_pid = Some(self.k.pid_of(last));
            if self.depth > 0 {
                // A job started inside a loop or `if` runs beside the commands that
                // follow: it is not counted in any record.
                self.task_records.retain(|&(t, _, _)| !tids.contains(&t));
            }
        }
        self.jobs.extend(tids);
        self.status = 0;
        Ok(())
    }

    fn exec_and_or(&mut self, ao: &AndOr) -> Result<(), Stop> {
        let mut status = self.exec_pipeline(&ao.first)?;
        let mut last_ran = 0;
        for (i, (c, p)) in ao.rest.iter().enumerate() {
            let run = match c {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if run {
                status = self.exec_pipeline(p)?;
                last_ran = i + 1;
            }
        }
        self.status = status;
        let negated_last = if last_ran == 0 { ao.first.negated } else { ao.rest[last_ran - 1].1.negated };
        if last_ran != ao.rest.len() {
            // The failing command was not the last of the list.
            return Ok(());
        }
        // set -e ignores a failing command that is not the last of an && / || list, and a
        // negated pipeline.
        if self.errexit && status != 0 && self.errexit_ok == 0 && !negated_last {
            return Err(Stop::Exit(status));
        }
        Ok(())
    }

    fn exec_pipeline(&mut self, p: &Pipeline) -> Result<i32, Stop> {
        let start = self.k.now;
        let (u0, s0) = self.children_cpu();
        let mut status = if p.commands.len() == 1 {
            self.exec_command(&p.commands[0])?
        } else if p.commands.iter().all(|c| matches!(c, Command::Simple(_))) {
            let tids = self.start_pipeline(p, false)?;
            self.wait_pipeline(p.span, &tids)?
        } else {
            // A loop or block in a pipeline (`cmd | while read x; do ...; done | tail -1`):
            // the shell runs it itself, so the pipeline runs in stages: each stage's output
            // is kept and is the next stage's input. Runs of plain commands are one stage of
            // concurrent tasks.
            let mut stages: Vec<Vec<Command>> = Vec::new();
            for c in &p.commands {
                match (c, stages.last_mut()) {
                    (Command::Simple(_), Some(last)) if matches!(last.last(), Some(Command::Simple(_))) => last.push(c.clone()),
                    _ => stages.push(vec![c.clone()]),
                }
            }
            let n = stages.len();
            let mut input: Option<String> = None;
            let mut status = 0;
            for (i, stage) in stages.into_iter().enumerate() {
                let b = if i + 1 < n { Some(self.k.new_buffer()) } else { None };
                let saved_out = b.map(|b| std::mem::replace(&mut self.out, Out { sink: Sink::Buffer(b), file: None }));
                let saved_in = match input.take() {
                    Some(text) => Some(self.stdin.replace(ShellIn { text, pos: 0 })),
                    None => None,
                };
                let r = if stage.len() == 1 && !matches!(stage[0], Command::Simple(_)) {
                    self.exec_command(&stage[0])
                } else {
                    let sub = Pipeline { commands: stage, timed: false, negated: false, ..p.clone() };
                    self.start_pipeline(&sub, false).and_then(|t| self.wait_pipeline(p.span, &t))
                };
                if let Some(si) = saved_in {
                    self.stdin = si;
                }
                if let Some(o) = saved_out {
                    self.out = o;
                }
                status = r?;
                if let Some(b) = b {
                    input = Some(std::mem::take(&mut self.k.buffers[b as usize]));
                    self.k.release_buffer(b);
                }
            }
            status
        };
        if p.negated {
            status = i32::from(status == 0);
        }
        if p.timed {
            let real = self.k.now - start;
            let (u1, s1) = self.children_cpu();
            let text = commands::format_time(real, u1.saturating_sub(u0), s1.saturating_sub(s0), p.time_posix);
            self.k.transcript.push_str(&text);
        }
        Ok(status)
    }

    /// Start every command of a pipeline as a task, connected by pipes. Built-ins of the
    /// shell that have no program run at once (and write nothing to the pipe).
    fn start_pipeline(&mut self, p: &Pipeline, background: bool) -> Result<Vec<TaskId>, Stop> {
        let n = p.commands.len();
        let mut tids = Vec::new();
        let mut prev: Option<u32> = None;
        for (i, c) in p.commands.iter().enumerate() {
            let Command::Simple(c) = c else { continue };
            let next = if i + 1 < n { Some(self.k.pipe_create()) } else { None };
            let io = PipeIo { stdin: prev, stdout: next, as_task: n > 1 || background };
            if let Some(t) = self.start_simple(c, io)? {
                tids.push(t);
            }
            prev = next;
        }
        // The members run side by side: the record's breakdown follows the last one (whose
        // status is the pipeline's); the others count in its CPU, I/O and fault totals.
        if let Some((_, side)) = tids.split_last() {
            for r in self.task_records.iter_mut().filter(|r| side.contains(&r.0)) {
                r.2 = false;
            }
        }
        Ok(tids)
    }

    /// Wait for every task of a pipeline; the status is the last one's (with `set -o
    /// pipefail`: the last non-zero one).
    fn wait_pipeline(&mut self, span: Span, tids: &[TaskId]) -> Result<i32, Stop> {
        if tids.is_empty() {
            return Ok(self.status);
        }
        let all: Vec<TaskId> = tids.to_vec();
        self.run_while(span, &mut |k| all.iter().all(|&t| k.task_exited(t)))?;
        let mut status = 0;
        let mut fail = 0;
        for &t in tids {
            status = self.collect(t, true);
            if status != 0 {
                fail = status;
            }
        }
        Ok(if self.pipefail { fail } else { status })
    }

    /// CPU time of all finished user tasks (the shell's children), as the kernel
    /// accumulates it when each exits.
    fn children_cpu(&self) -> (u64, u64) {
        (self.k.children_utime, self.k.children_stime)
    }

    // ---- Compound commands ------------------------------------------------------------

    fn exec_command(&mut self, cmd: &Command) -> Result<i32, Stop> {
        match cmd {
            Command::Simple(c) => self.exec_simple(c),
            Command::FuncDef(f) => {
                self.funcs.insert(f.name.clone(), std::rc::Rc::new((*f.body).clone()));
                self.status = 0;
                Ok(0)
            }
            Command::Arith(a) => {
                let v = self.arith(a.span, &a.expr)?;
                self.status = i32::from(v == 0);
                Ok(self.status)
            }
            other => {
                let redirects = other.redirects().to_vec();
                let span = other.span();
                self.with_redirects(span, &redirects, |sh| sh.exec_compound(other))
            }
        }
    }

    /// Run `f` with the shell's input and output redirected for a whole block.
    fn with_redirects(&mut self, span: Span, redirects: &[Redirect], f: impl FnOnce(&mut Shell) -> Result<i32, Stop>) -> Result<i32, Stop> {
        if redirects.is_empty() {
            return f(self);
        }
        let saved_out = self.out.clone();
        let saved_err = self.err_out.clone();
        let saved_in = self.stdin.clone();
        let saved_fds = self.fds.clone();
        let r = (|| {
            let mut t = self.fd_table(&PipeIo::default());
            let mut red = Redirs::empty();
            for r in redirects {
                let target = self.expand_word(&r.target)?;
                self.redirect_one(r, &target, &mut t, &mut red, true)?;
                if let Some(msg) = red.error.take() {
                    // bash reports the redirection it cannot make and does not run the block.
                    self.shell_err(self.err_out.sink, &msg);
                    self.status = 1;
                    return Ok(false);
                }
            }
            self.create_files(span, &red.creates)?;
            self.install_table(span, &t, red.touched)?;
            Ok(true)
        })();
        let r = r.and_then(|run| if run { f(self) } else { Ok(1) });
        self.out = saved_out;
        self.err_out = saved_err;
        self.stdin = saved_in;
        self.fds = saved_fds;
        r
    }

    /// Make descriptor table `t` the shell's own (a block's redirections, `exec 3> f`):
    /// the descriptors a redirection changed (bits of `touched`).
    fn install_table(&mut self, span: Span, t: &[Fd], touched: u32) -> Result<(), Stop> {
        use commands::text::Input;
        if touched & 1 != 0 {
            self.stdin = match t[0].as_in() {
                Input::Text(text) => Some(ShellIn { text, pos: 0 }),
                Input::Buffer(b) => Some(ShellIn { text: self.k.buffers[b as usize].clone(), pos: 0 }),
                Input::File(p) => Some(ShellIn { text: self.file_text(span, &p)?, pos: 0 }),
                Input::Tty => Some(ShellIn { text: String::new(), pos: 0 }),
                Input::Pipe => self.stdin.take(),
            };
        }
        for (fd, o) in [(1, &mut self.out), (2, &mut self.err_out)] {
            if touched & (1 << fd) != 0 {
                let (sink, file) = t[fd].as_out();
                *o = Out { sink, file };
            }
        }
        for (fd, f) in t.iter().enumerate().skip(3) {
            if touched & (1 << fd) != 0 {
                match f {
                    Fd::Closed => self.fds.remove(&(fd as u32)),
                    f => self.fds.insert(fd as u32, f.clone()),
                };
            }
        }
        Ok(())
    }

    /// Open (create or truncate) the files of redirections to descriptors other than a
    /// command's standard output, as bash's open(2) does before the command runs.
    fn create_files(&mut self, span: Span, files: &[(String, bool)]) -> Result<(), Stop> {
        for (path, append) in files {
            let cmd: Cmd = Box::new(commands::text::FileOut::new(Box::new(crate::commands::text::Noop), path.clone(), *append, Sink::Null));
            let tid = self.k.spawn("bash", "bash", cmd, Sink::Null, Sink::Null);
            self.run_while(span, &mut |k| k.task_exited(tid))?;
            self.collect(tid, false);
        }
        Ok(())
    }

    fn exec_compound(&mut self, cmd: &Command) -> Result<i32, Stop> {
        self.depth += 1;
        let r = self.exec_compound_inner(cmd);
        self.depth -= 1;
        r
    }

    /// Run a loop body; `Ok(true)` when a `break` ends the loop.
    fn loop_body(&mut self, body: &[ListItem]) -> Result<bool, Stop> {
        match self.exec_list(body) {
            Ok(()) => Ok(false),
            Err(Stop::Break(n)) if n > 1 => Err(Stop::Break(n - 1)),
            Err(Stop::Break(_)) => Ok(true),
            Err(Stop::Continue(n)) if n > 1 => Err(Stop::Continue(n - 1)),
            Err(Stop::Continue(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Run a condition list: `set -e` does not apply inside it.
    fn condition(&mut self, cond: &[ListItem]) -> Result<i32, Stop> {
        self.errexit_ok += 1;
        let r = self.exec_list(cond);
        self.errexit_ok -= 1;
        r?;
        Ok(self.status)
    }

    fn exec_compound_inner(&mut self, cmd: &Command) -> Result<i32, Stop> {
        match cmd {
            Command::ArithFor(f) => {
                // bash's execute_arith_for_command: INIT once, then COND (empty: true), BODY,
                // STEP.
                if !f.init.trim().is_empty() {
                    self.arith(f.span, &f.init)?;
                }
                let mut last = 0;
                loop {
                    if !f.cond.trim().is_empty() && self.arith(f.span, &f.cond)? == 0 {
                        break;
                    }
                    let brk = self.loop_body(&f.body)?;
                    last = self.status;
                    if brk {
                        break;
                    }
                    if !f.step.trim().is_empty() {
                        self.arith(f.span, &f.step)?;
                    }
                    if self.guard.poll(&self.k, true, false) {
                        return Err(Stop::Limit);
                    }
                }
                self.status = last;
                Ok(last)
            }
            Command::For(f) if f.select => {
                let words = self.expand_argv(&f.words)?;
                self.select_loop(f, &words)
            }
            Command::For(f) => {
                let words = self.expand_argv(&f.words)?;
                self.status = 0;
                for w in words {
                    self.set_var(&f.var, w);
                    if self.loop_body(&f.body)? {
                        break;
                    }
                }
                Ok(self.status)
            }
            Command::While(w) => {
                let mut last = 0;
                loop {
                    let c = self.condition(&w.cond)?;
                    if (c == 0) == w.until {
                        break;
                    }
                    let brk = self.loop_body(&w.body)?;
                    last = self.status;
                    if brk {
                        break;
                    }
                    // A loop that does nothing but test would spin without time passing.
                    if self.guard.poll(&self.k, true, false) {
                        return Err(Stop::Limit);
                    }
                }
                self.status = last;
                Ok(last)
            }
            Command::If(i) => {
                for (cond, body) in &i.branches {
                    if self.condition(cond)? == 0 {
                        self.exec_list(body)?;
                        return Ok(self.status);
                    }
                }
                match &i.else_body {
                    Some(e) => self.exec_list(e)?,
                    None => self.status = 0,
                }
                Ok(self.status)
            }
            Command::Case(c) => {
                // bash's execute_case_command: `;;` ends the case, `;&` runs the next arm's
                // commands without testing it, `;;&` goes on testing the next arms.
                let word = self.expand_word(&c.word)?;
                self.status = 0;
                let mut fall = false;
                for (k, (patterns, body)) in c.arms.iter().enumerate() {
                    let mut hit = fall;
                    if !hit {
                        for p in patterns {
                            let pat = self.expand_word(p)?;
                            if crate::builtins::glob_match(&pat, &word) {
                                hit = true;
                                break;
                            }
                        }
                    }
                    fall = false;
                    if !hit {
                        continue;
                    }
                    self.exec_list(body)?;
                    match c.ends.get(k).copied().unwrap_or(lang::CaseEnd::Break) {
                        lang::CaseEnd::Break => return Ok(self.status),
                        lang::CaseEnd::FallThrough => fall = true,
                        lang::CaseEnd::Continue => {}
                    }
                }
                Ok(self.status)
            }
            Command::Group(g) => {
                if g.subshell {
                    let (vars, cwd, funcs) = (self.vars.clone(), self.cwd.clone(), self.funcs.clone());
                    let r = self.exec_list(&g.body);
                    self.vars = vars;
                    self.cwd = cwd;
                    self.funcs = funcs;
                    match r {
                        Ok(()) => {}
                        // `exit` in a subshell leaves the subshell only.
                        Err(Stop::Exit(c)) => self.status = c,
                        Err(e) => return Err(e),
                    }
                } else {
                    self.exec_list(&g.body)?;
                }
                Ok(self.status)
            }
            Command::Simple(_) | Command::FuncDef(_) | Command::Arith(_) => self.exec_command(cmd),
        }
    }

    /// `select NAME in WORDS; do LIST; done` (bash's execute_select_command and
    /// select_query): the numbered menu and the PS3 prompt (`#? `) go to standard error, a
    /// line is read from standard input into REPLY; NAME is the word it numbers (empty for
    /// anything else), an empty line shows the menu again, end of file ends the loop
    /// (status 1, after a newline on standard output). The menu is shown again only then.
    fn select_loop(&mut self, f: &lang::ForLoop, words: &[String]) -> Result<i32, Stop> {
        let mut show_menu = true;
        loop {
            let prompt = self.vars.get("PS3").cloned().unwrap_or_else(|| "#? ".to_string());
            let mut selection = None;
            loop {
                if show_menu {
                    let menu = select_menu(words, self.vars.get("COLUMNS").and_then(|c| c.parse().ok()).unwrap_or(80));
                    self.shell_err(self.err_out.sink, &menu);
                }
                self.shell_err(self.err_out.sink, &prompt);
                let line = self.stdin.as_mut().and_then(|si| {
                    let rest = si.text.get(si.pos..).unwrap_or("");
                    if rest.is_empty() {
                        return None;
                    }
                    let (line, adv) = match rest.find('\n') {
                        Some(i) => (rest[..i].to_string(), i + 1),
                        None => (rest.to_string(), rest.len()),
                    };
                    si.pos += adv;
                    Some(line)
                });
                let Some(line) = line else { break };
                let reply = line.trim_matches([' ', '\t']).to_string();
                self.set_var("REPLY", reply.clone());
                if reply.is_empty() {
                    show_menu = true;
                    continue;
                }
                let n: usize = reply.parse().unwrap_or(0);
                selection = Some(if (1..=words.len()).contains(&n) { words[n - 1].clone() } else { String::new() });
                break;
            }
            let Some(sel) = selection else {
                self.shell_err(self.out.sink, "\n");
                self.status = 1;
                return Ok(1);
            };
            self.set_var(&f.var, sel);
            if self.loop_body(&f.body)? {
                return Ok(self.status);
            }
            show_menu = false;
            if self.guard.poll(&self.k, true, false) {
                return Err(Stop::Limit);
            }
        }
    }

    // ---- Simple commands ----------------------------------------------------------------

    fn exec_simple(&mut self, c: &SimpleCommand) -> Result<i32, Stop> {
        match self.start_simple(c, PipeIo::default())? {
            Some(tid) => {
                self.run_while(c.span, &mut |k| k.task_exited(tid))?;
                let st = self.collect(tid, true);
                self.status = st;
                Ok(st)
            }
            None => Ok(self.status),
        }
    }

    /// The text of a file for the shell (`< file` on a block, `read`): a file written by a
    /// redirection, a /proc file, or a file whose data is not text (read as empty).
    fn file_text(&mut self, span: Span, target: &str) -> Result<String, Stop> {
        let abs = memtwin_kernel::fs::normalize(&self.cwd, target);
        if abs.starts_with("/proc/pressure/") {
            self.k.pressure_sync();
        }
        // The shell itself reads it: /proc/self is not a task of the model, so it is absent.
        if let Some(t) = crate::commands::text::proc_text_as(&self.k, None, &abs) {
            return Ok(t);
        }
        if abs == "/dev/null" {
            return Ok(String::new());
        }
        if let (true, Some(&b)) = (abs.starts_with("/dev/fd/"), self.captures.get(&abs)) {
            // A `<(...)`'s output.
            return Ok(self.k.buffers[b as usize].clone());
        }
        if !self.k.fs.exists(&abs) {
            return Err(Stop::Error(self.err(span, format!("bash: {target}: No such file or directory"))));
        }
        Ok(self.captures.get(&abs).map(|&b| self.k.buffers[b as usize].clone()).unwrap_or_default())
    }

    /// A file opened for writing by a redirection: its capture buffer (the text written to
    /// it), truncated unless appending. The file itself is created or truncated by the
    /// task that writes it (see `commands::text::FileOut`).
    fn open_out(&mut self, span: Span, target: &str, append: bool) -> Result<Out, Stop> {
        if target == "/dev/null" {
            return Ok(Out { sink: Sink::Null, file: None });
        }
        if target == "/dev/stdout" {
            return Ok(self.out.clone());
        }
        if target == "/dev/stderr" {
            return Ok(self.err_out.clone());
        }
        let abs = memtwin_kernel::fs::normalize(&self.cwd, target);
        if abs.starts_with("/proc/") || abs.starts_with("/sys/") {
            return Err(Stop::Error(self.err(span, format!("redirecting a block or a command other than echo/printf to '{abs}' is not supported"))));
        }
        let exists = self.k.fs.exists(&abs);
        let buf = match self.captures.get(&abs) {
            Some(&b) => b,
            None => {
                let b = self.k.new_buffer();
                self.captures.insert(abs.clone(), b);
                b
            }
        };
        if !append || !exists {
            self.k.buffers[buf as usize].clear();
        }
        Ok(Out { sink: Sink::Buffer(buf), file: Some((abs, append)) })
    }

    /// Start a simple command. Shell built-ins run at once (None); others become a task.
    fn start_simple(&mut self, c: &SimpleCommand, io: PipeIo) -> Result<Option<TaskId>, Stop> {
        self.proc_substs = 0;
        if c.words.len() > 1 && c.words[0].as_literal().as_deref() == Some("exec") {
            // `exec CMD ARGS`: CMD replaces the shell, whose script ends with CMD's status.
            let mut inner = c.clone();
            inner.words.remove(0);
            if io.as_task {
                return self.start_simple(&inner, io);
            }
            let st = self.exec_simple(&inner)?;
            return Err(Stop::Exit(st));
        }
        let words = self.expand_argv(&c.words)?;
        if words.is_empty() {
            for (name, w) in &c.assignments {
                // `NAME+=value` / `NAME+=(WORDS)` append (the name carries a `+`).
                let (name, append) = match name.strip_suffix('+') {
                    Some(n) => (n, true),
                    None => (name.as_str(), false),
                };
                if let [WordPart::Array(elems)] = w.parts.as_slice() {
                    // `NAME=(WORDS)`: the words expanded as arguments are the elements; an
                    // element `[i]=x` goes to index i, the next ones after it (bash's
                    // assign_compound_array_list). `+=` starts after the last element.
                    let mut arr = if append {
                        self.arrays.remove(name).unwrap_or_else(|| self.vars.get(name).map(|v| [(0, v.clone())].into_iter().collect()).unwrap_or_default())
                    } else {
                        Default::default()
                    };
                    let mut next = arr.keys().next_back().map_or(0, |k| k + 1);
                    for (idx, ew) in elems {
                        if let Some(idx) = idx {
                            let i = self.arith(w.span, idx)?;
                            next = if i < 0 { i + arr.keys().next_back().map_or(0, |k| k + 1) } else { i };
                            let v = self.expand_word(ew)?;
                            arr.insert(next.max(0), v);
                            next = next.max(0) + 1;
                            continue;
                        }
                        for v in self.expand_argv(std::slice::from_ref(ew))? {
                            arr.insert(next, v);
                            next += 1;
                        }
                    }
                    self.vars.remove(name);
                    self.arrays.insert(name.to_string(), arr);
                    continue;
                }
                let mut v = self.expand_word(w)?;
                if append {
                    // `s+=str` appends to the value (to element 0 of an array, or `a[i]+=`).
                    v = format!("{}{v}", self.array_get(name).unwrap_or_default());
                }
                self.set_var(name, v);
            }
            if c.redirects.is_empty() {
                self.status = 0;
                return Ok(None);
            }
        }
        // Per-command assignments (`LC_ALL=C sort`) only matter to the command's environment;
        // the programs here read none.
        let red = self.redirections(c, &io)?;
        if let Some(msg) = red.error {
            // bash reports a redirection it cannot make and does not run the command.
            self.shell_err(red.err, &msg);
            self.status = 1;
            return Ok(None);
        }
        self.create_files(c.span, &red.creates)?;
        if words.first().map(String::as_str) == Some("exec") {
            // `exec` with redirections only: they stay the shell's own (`exec 3> f`,
            // `exec 3>&-`, `exec > log 2>&1`).
            if io.as_task {
                self.status = 0;
                return Ok(None);
            }
            if red.proc_target.is_some() {
                return Err(Stop::Error(self.err(c.span, "'exec' redirections to /proc and /sys are not supported (files are)")));
            }
            self.install_table(c.span, &red.table, red.touched)?;
            self.status = 0;
            return Ok(None);
        }
        let Some(name) = words.first().map(String::as_str) else {
            // `> file` alone creates or truncates the file.
            let tid = self.spawn_program(c, "bash", Box::new(crate::commands::text::Noop), &red, &io)?;
            return self.finish_start(c, tid, &io);
        };
        let args = &words[1..];
        self.check_cgroup_use(c, &words, red.proc_target.as_deref())?;
        if io.as_task
            && matches!(name, "exit" | "return" | "break" | "continue" | "cd" | "export" | "set" | "local" | "unset" | "shift" | "readonly" | "declare" | "typeset" | "read" | "let")
        {
            // In a pipeline or in the background bash runs these in a subshell: the shell
            // itself is not changed.
            self.status = 0;
            return Ok(None);
        }
        if let Some(r) = self.builtin(c, name, args, &red, &io)? {
            if r.is_none() && (red.out_file.is_some() || red.err_file.is_some()) && c.redirects.iter().any(|r| matches!(r.op, RedirOp::Out | RedirOp::Append | RedirOp::OutErr | RedirOp::AppendErr)) {
                // `: > f`, `true > f`: the shell opens (creates, truncates) the file anyway.
                let status = self.status;
                let tid = self.spawn_program(c, "bash", Box::new(crate::commands::text::Noop), &red, &io)?;
                self.run_while(c.span, &mut |k| k.task_exited(tid))?;
                self.collect(tid, false);
                self.status = status;
            }
            return Ok(r);
        }
        if let Some(body) = self.funcs.get(name).cloned() {
            if io.as_task {
                return Err(Stop::Error(self.err(c.span, format!("shell function '{name}' cannot run in a pipeline or in the background here (call it directly)"))));
            }
            let saved_pos = std::mem::replace(&mut self.positional, args.to_vec());
            self.locals.push(Vec::new());
            let saved = (self.out.clone(), self.err_out.clone());
            self.apply_simple_redirects(&red);
            self.depth += 1;
            self.func_depth += 1;
            let r = if self.func_depth > 100 {
                Err(Stop::Error(self.err(c.span, format!("{name}: maximum function nesting level exceeded (100)"))))
            } else {
                self.exec_command(&body)
            };
            self.func_depth -= 1;
            self.depth -= 1;
            (self.out, self.err_out) = saved;
            self.positional = saved_pos;
            if let Some(frame) = self.locals.pop() {
                for (n, old) in frame.into_iter().rev() {
                    match old {
                        Some(v) => self.vars.insert(n, v),
                        None => self.vars.remove(&n),
                    };
                }
            }
            match r {
                Ok(st) => self.status = st,
                Err(Stop::Return(st)) => self.status = st,
                Err(e) => return Err(e),
            }
            return Ok(None);
        }
        let cmd = self.build(c, name, args, &red)?;
        let comm = commands::comm_of(name, args);
        let tid = self.spawn_program(c, &comm, cmd, &red, &io)?;
        self.finish_start(c, tid, &io)
    }

    fn finish_start(&mut self, _c: &SimpleCommand, tid: TaskId, _io: &PipeIo) -> Result<Option<TaskId>, Stop> {
        Ok(Some(tid))
    }

    /// For a function call: its redirections apply to the commands of its body.
    fn apply_simple_redirects(&mut self, red: &Redirs) {
        self.out = Out { sink: red.out, file: red.out_file.clone() };
        self.err_out = Out { sink: red.err, file: red.err_file.clone() };
    }

    /// A command's program: a text tool, or one of the built-in commands.
    fn build(&mut self, c: &SimpleCommand, name: &str, args: &[String], red: &Redirs) -> Result<Cmd, Stop> {
        self.launch_prio = None;
        if name == "ionice" {
            // ionice sets the I/O class (ioprio_set) and execs the command, or reads or sets
            // running processes' (-p). The disks' elevators serve requests by class where
            // the era's does (commands/ionice.rs).
            let a = commands::ionice::parse(args).map_err(|m| Stop::Error(self.err(c.span, m)))?;
            if self.k.machine.kernel == memtwin_machine::KernelProfile::Linux24 {
                return Ok(Box::new(commands::ionice::NoIoprio { set: a.class_set || a.pids.is_empty() }));
            }
            if a.class_set {
                commands::ionice::check_machine(&self.k.machine, a.class, a.level).map_err(|m| Stop::Error(self.err(c.span, m)))?;
            }
            let prio = commands::nice::ioprio_of(a.class, a.level);
            if !a.pids.is_empty() {
                return Ok(Box::new(commands::nice::IonicePid { set: a.class_set.then_some(prio), pids: a.pids, by_user: a.by_user }));
            }
            let warn = commands::ionice::warning(&a);
            let (inner, rest) = (a.command[0].clone(), a.command[1..].to_vec());
            let cmd = self.build(c, &inner, &rest, red)?;
            let ioprio = if a.class_set { prio } else { None };
            self.launch_prio = Some((None, ioprio));
            return Ok(Box::new(commands::nice::WithPrio { warning: warn, inner: cmd }));
        }
        if name == "nice" {
            // nice: setpriority(current + N), then exec the command; alone, it prints
            // the niceness it runs with.
            let a = commands::nice::parse(args).map_err(|m| Stop::Error(self.err(c.span, m)))?;
            if a.command.is_empty() {
                return Ok(Box::new(commands::nice::PrintNice));
            }
            let n = commands::nice::niceness(&a, 0);
            let (inner, rest) = (a.command[0].clone(), a.command[1..].to_vec());
            let cmd = self.build(c, &inner, &rest, red)?;
            self.launch_prio = Some((Some(n), None));
            return Ok(Box::new(commands::nice::WithPrio { warning: None, inner: cmd }));
        }
        if name == "tee" {
            // tee's files get their text like a redirection's.
            for a in args.iter().filter(|a| !a.starts_with('-')) {
                let append = args.iter().any(|a| a == "-a" || a == "--append");
                self.open_out(c.span, a, append)?;
            }
        }
        if args.iter().any(|a| a.starts_with("/proc/pressure/")) {
            // psi_show brings the totals up to date when the file is read.
            self.k.pressure_sync();
        }
        // The text of files removed since it was written is gone.
        let k = &self.k;
        let captures: HashMap<String, u32> = self.captures.iter().filter(|(p, _)| k.fs.exists(p) || p.starts_with("/dev/fd/")).map(|(p, &b)| (p.clone(), b)).collect();
        let ctx = commands::text::Ctx { cwd: &self.cwd, captures: &captures, k: Some(&self.k) };
        if name == "cat" && matches!(red.out, Sink::Pipe(_)) {
            // Into a pipe, cat passes the bytes on (a data file's are NUL bytes).
            return commands::text::build_cat(args, &ctx, red.stdin.clone()).map_err(|m| Stop::Error(self.err(c.span, m)));
        }
        if let Some(r) = commands::text::build(name, args, &ctx, red.stdin.clone()) {
            return r.map_err(|m| Stop::Error(self.err(c.span, m)));
        }
        commands::build(name, args, &self.cwd, &captures).map_err(|m| Stop::Error(self.err(c.span, m)))
    }

    /// Spawn a program with the command's standard streams.
    fn spawn_program(&mut self, c: &SimpleCommand, comm: &str, cmd: Cmd, red: &Redirs, io: &PipeIo) -> Result<TaskId, Stop> {
        let mut cmd = cmd;
        if let Some((path, append)) = &red.out_file {
            cmd = Box::new(commands::text::FileOut::new(cmd, path.clone(), *append, red.out));
        }
        let cmdline = c.source.clone();
        let tid = self.k.spawn(comm, &cmdline, cmd, red.out, red.err);
        if let Some((nice, ioprio)) = self.launch_prio.take() {
            if let Some(n) = nice {
                self.k.set_user_nice(tid, n);
            }
            if ioprio.is_some() {
                self.k.set_ioprio(tid, ioprio);
            }
        }
        if !self.commands.is_empty() {
            // The record of the command being run collects this task's accounting.
            self.task_records.push((tid, self.commands.len() - 1, true));
        }
        if let Some((path, append)) = &red.out_file {
            // cat writes the data it reads straight to the file.
            let _ = append;
            self.k.tasks[tid as usize].stdout_file = Some((path.clone(), true));
        }
        match (&red.stdin, io.stdin) {
            (commands::text::Input::Pipe, Some(p)) => self.k.attach_stdin_pipe(tid, p),
            (commands::text::Input::Pipe, None) => {}
            _ => {}
        }
        Ok(tid)
    }

    /// The descriptors a command starts with: 0-2 from the shell's streams (or the pipes
    /// of its pipeline), 3-9 those the shell holds open (`exec 3> f`).
    fn fd_table(&self, io: &PipeIo) -> Vec<Fd> {
        use commands::text::Input;
        let stdin = match (io.stdin, &self.stdin) {
            (Some(_), _) => Input::Pipe,
            (None, Some(si)) => Input::Text(si.text.get(si.pos..).unwrap_or("").to_string()),
            (None, None) => Input::Tty,
        };
        let out = match io.stdout {
            Some(p) => Out { sink: Sink::Pipe(p), file: None },
            None => Out { sink: self.out.sink, file: self.out.file.clone().map(|(p, _)| (p, true)) },
        };
        let err = Out { sink: self.err_out.sink, file: self.err_out.file.clone().map(|(p, _)| (p, true)) };
        let mut t = vec![Fd::In(stdin), Fd::Out(out), Fd::Out(err)];
        t.extend((3..10).map(|n| self.fds.get(&n).cloned().unwrap_or(Fd::Closed)));
        t
    }

    /// Resolve redirections for a simple command: applied left to right to its descriptor
    /// table, as bash's do_redirections does with open, dup2 and close (so `3>&1 1>&2
    /// 2>&3` swaps the two streams).
    fn redirections(&mut self, c: &SimpleCommand, io: &PipeIo) -> Result<Redirs, Stop> {
        let mut t = self.fd_table(io);
        let mut red = Redirs::empty();
        for r in &c.redirects {
            let target = self.expand_word(&r.target)?;
            self.redirect_one(r, &target, &mut t, &mut red, false)?;
            if red.error.is_some() {
                break;
            }
        }
        let (out, out_file) = t[1].as_out();
        let (err, err_file) = t[2].as_out();
        red.out = out;
        red.out_file = out_file;
        red.err = err;
        red.err_file = err_file;
        red.stdin = t[0].as_in();
        red.table = t;
        Ok(red)
    }

    /// One redirection applied to descriptor table `t` (`block`: written after a compound
    /// command, whose `< file` is read by the shell itself).
    fn redirect_one(&mut self, r: &Redirect, target: &str, t: &mut [Fd], red: &mut Redirs, block: bool) -> Result<(), Stop> {
        use commands::text::Input;
        let fd = r.fd as usize;
        red.touched |= 1 << fd;
        let target = target.to_string();
        match r.op {
            RedirOp::HereDoc => t[fd] = Fd::In(Input::Text(target)),
            RedirOp::In if block => {
                let text = self.file_text(r.span, &target)?;
                t[fd] = Fd::In(Input::Text(text));
            }
            RedirOp::In | RedirOp::ReadWrite => {
                let abs = memtwin_kernel::fs::normalize(&self.cwd, &target);
                if crate::commands::text::is_proc_file(&self.k, &abs) {
                    t[fd] = Fd::In(Input::File(abs));
                } else if !self.k.fs.exists(&abs) && !abs.starts_with("/dev/") && r.op == RedirOp::In {
                    red.error = Some(format!("bash: {target}: No such file or directory\n"));
                } else if r.op == RedirOp::ReadWrite {
                    // `<>`: open(O_RDWR|O_CREAT), not truncated; what is written through it
                    // is appended to the text (a simplification: bash writes at offset 0).
                    if abs.starts_with("/proc/") || abs.starts_with("/sys/") {
                        return Err(Stop::Error(self.err(r.span, format!("'<>' on '{abs}' is not supported (files are)"))));
                    }
                    let o = self.open_out(r.span, &target, true)?;
                    if let Some(f) = o.file.clone() {
                        red.creates.push(f);
                    }
                    let input = match o.sink {
                        Sink::Buffer(b) => Input::Buffer(b),
                        _ => Input::Tty,
                    };
                    t[fd] = Fd::Rw(input, o);
                } else {
                    t[fd] = Fd::In(match self.captures.get(&abs) {
                        Some(&b) => Input::Buffer(b),
                        None => Input::File(abs),
                    });
                }
            }
            RedirOp::Out | RedirOp::Append | RedirOp::OutErr | RedirOp::AppendErr => {
                let abs = memtwin_kernel::fs::normalize(&self.cwd, &target);
                let append = matches!(r.op, RedirOp::Append | RedirOp::AppendErr);
                let cgroup = commands::cgroup::is_cgroup_path(&abs);
                // THP's `enabled` takes "never" (what the model does); commands::proc_write
                // refuses the other values.
                let thp = abs == "/sys/kernel/mm/transparent_hugepage/enabled";
                if !block && (abs.starts_with("/sys/") || abs == "/sys") && !cgroup && !thp {
                    return Err(Stop::Error(self.err(r.span, format!("writing to '{abs}' is not modelled (sysfs is not, except the cgroup files under /sys/fs/cgroup; /proc/sys/... sysctls are)"))));
                }
                let o = if !block && (cgroup || thp) {
                    red.proc_target = Some(abs);
                    Out { sink: Sink::Null, file: None }
                } else if !block && abs.starts_with("/proc/") {
                    match commands::text::special_write_check(&abs) {
                        Ok(()) => red.proc_target = Some(abs),
                        Err(msg) => red.error = Some(format!("bash: {target}: {msg}\n")),
                    }
                    Out { sink: Sink::Null, file: None }
                } else {
                    self.open_out(r.span, &target, append)?
                };
                let both = matches!(r.op, RedirOp::OutErr | RedirOp::AppendErr);
                if fd == 0 {
                    return Err(Stop::Error(self.err(r.span, "redirecting standard input for writing is not supported (0> file)")));
                }
                if fd > 2 && !both {
                    // The command that runs creates (or truncates) only its standard output's
                    // file; the others are made here, as bash opens them before it forks.
                    if let Some(f) = o.file.clone() {
                        red.creates.push(f);
                    }
                }
                t[fd] = Fd::Out(o.clone());
                if both {
                    red.touched |= 1 << 2;
                    t[2] = Fd::Out(o);
                }
            }
            RedirOp::DupOut | RedirOp::DupIn => {
                let m: usize = target.parse().unwrap_or(usize::MAX);
                match t.get(m) {
                    Some(Fd::Closed) | None => {
                        // dup2 of a descriptor that is not open: EBADF (bash: "M: Bad file
                        // descriptor", the command does not run).
                        red.error = Some(format!("bash: {target}: Bad file descriptor\n"));
                    }
                    Some(f) => t[fd] = f.clone(),
                }
            }
            RedirOp::Close => t[fd] = Fd::Closed,
        }
        Ok(())
    }

    /// The shell's own commands. `Ok(Some(r))`: handled (`r` is the task if one was
    /// started); `Ok(None)`: not a built-in.
    fn builtin(&mut self, c: &SimpleCommand, name: &str, args: &[String], red: &Redirs, io: &PipeIo) -> Result<Option<Option<TaskId>>, Stop> {
        let done = |sh: &mut Shell, st: i32| -> Result<Option<Option<TaskId>>, Stop> {
            sh.status = st;
            Ok(Some(None))
        };
        match name {
            "true" | ":" => return done(self, 0),
            "false" => return done(self, 1),
            "set" => {
                let mut i = 0;
                while i < args.len() {
                    match args[i].as_str() {
                        "-e" => self.errexit = true,
                        "+e" => self.errexit = false,
                        "-u" | "+u" | "-x" | "+x" => {}
                        "-o" | "+o" if args.get(i + 1).map(String::as_str) == Some("pipefail") => {
                            self.pipefail = args[i] == "-o";
                            i += 1;
                        }
                        "-o" | "+o" if args.get(i + 1).map(String::as_str) == Some("errexit") => {
                            self.errexit = args[i] == "-o";
                            i += 1;
                        }
                        "-eo" if args.get(i + 1).map(String::as_str) == Some("pipefail") => {
                            self.errexit = true;
                            self.pipefail = true;
                            i += 1;
                        }
                        "--" => {
                            self.positional = args[i + 1..].to_vec();
                            break;
                        }
                        o => return Err(Stop::Error(self.err(c.span, format!("set: unsupported option '{o}' (supported: -e, +e, -o pipefail, -o errexit, -- ARGS)")))),
                    }
                    i += 1;
                }
                return done(self, 0);
            }
            "export" | "readonly" | "declare" | "typeset" | "local" => {
                for a in args {
                    if a.starts_with('-') {
                        if name == "export" && a == "-n" {
                            continue;
                        }
                        return Err(Stop::Error(self.err(c.span, format!("{name}: options are not supported ('{a}')"))));
                    }
                    let (k, v) = match a.split_once('=') {
                        Some((k, v)) => (k.to_string(), Some(v.to_string())),
                        None => (a.clone(), None),
                    };
                    if name == "local" {
                        let old = self.vars.get(&k).cloned();
                        match self.locals.last_mut() {
                            Some(frame) => frame.push((k.clone(), old)),
                            None => {
                                self.shell_err(red.err, "bash: local: can only be used in a function\n");
                                return done(self, 1);
                            }
                        }
                        self.vars.insert(k, v.unwrap_or_default());
                    } else if let Some(v) = v {
                        self.vars.insert(k, v);
                    }
                }
                return done(self, 0);
            }
            "unset" => {
                for a in args.iter().filter(|a| !a.starts_with('-')) {
                    self.vars.remove(a);
                    self.arrays.remove(a);
                    self.funcs.remove(a);
                }
                return done(self, 0);
            }
            "shift" => {
                let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1);
                if n > self.positional.len() {
                    return done(self, 1);
                }
                self.positional.drain(..n);
                return done(self, 0);
            }
            "cd" => {
                let dir = args.first().cloned().unwrap_or_else(|| "/root".into());
                let abs = memtwin_kernel::fs::normalize(&self.cwd, &dir);
                if !self.k.fs.is_dir(&abs) && self.k.fs.exists(&abs) {
                    self.shell_err(red.err, &format!("bash: cd: {dir}: Not a directory\n"));
                    return done(self, 1);
                }
                self.cwd = abs;
                self.vars.insert("PWD".into(), self.cwd.clone());
                return done(self, 0);
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
            "return" => {
                let code = args.first().and_then(|a| a.parse::<i64>().ok()).map_or(self.status, |n| (n & 255) as i32);
                if self.func_depth == 0 {
                    self.shell_err(red.err, "bash: return: can only `return' from a function or sourced script\n");
                    return done(self, 1);
                }
                return Err(Stop::Return(code));
            }
            "break" | "continue" => {
                let n = args.first().and_then(|a| a.parse::<u32>().ok()).unwrap_or(1).max(1);
                return Err(if name == "break" { Stop::Break(n) } else { Stop::Continue(n) });
            }
            "wait" => {
                let jobs = std::mem::take(&mut self.jobs);
                let mut last = 0;
                for j in jobs {
                    self.run_while(c.span, &mut |k| k.task_exited(j))?;
                    last = self.collect(j, false);
                }
                // `wait` with no operand returns 0; `wait $!` the job's status.
                return done(self, if args.is_empty() { 0 } else { last });
            }
            "kill" => return self.builtin_kill(c, args, red).map(|st| {
                self.status = st;
                Some(None)
            }),
            "read" => return self.builtin_read(c, args, red).map(|st| {
                self.status = st;
                Some(None)
            }),
            "let" => {
                let mut v = 0;
                for a in args {
                    v = self.arith(c.span, a)?;
                }
                return done(self, i32::from(v == 0));
            }
            "test" | "[" | "[[" => {
                let mut a: Vec<String> = args.to_vec();
                if name != "test" {
                    let close = if name == "[" { "]" } else { "]]" };
                    if a.last().map(String::as_str) != Some(close) {
                        self.shell_err(red.err, &format!("bash: {name}: missing `{close}'\n"));
                        return done(self, 2);
                    }
                    a.pop();
                }
                let exists = |p: &str| -> crate::builtins::FileKind {
                    let abs = memtwin_kernel::fs::normalize(&self.cwd, p);
                    crate::builtins::file_kind(&self.k, &abs, &self.captures)
                };
                let r = if name == "[[" { crate::builtins::eval_dbracket(&a, &exists) } else { crate::builtins::eval_test(&a, &exists) };
                return match r {
                    Ok(b) => done(self, i32::from(!b)),
                    Err(m) => {
                        self.shell_err(red.err, &format!("bash: {name}: {m}\n"));
                        done(self, 2)
                    }
                };
            }
            "crash" | "reboot" => return self.builtin_restart(c, name == "reboot", args).map(Some),
            "sleep" if !io.as_task => {
                let secs = commands::parse_sleep(args).map_err(|m| Stop::Error(self.err(c.span, m)))?;
                self.advance(c.span, secs)?;
                return done(self, 0);
            }
            "echo" | "printf" if red.proc_target.is_some() => {
                let path = red.proc_target.clone().unwrap_or_default();
                let value = if name == "echo" {
                    args.iter().filter(|a| *a != "-n" && *a != "-e").cloned().collect::<Vec<_>>().join(" ")
                } else {
                    commands::text::printf_format(args).0.trim_end().to_string()
                };
                if path.starts_with("/proc/sys/") || commands::cgroup::is_cgroup_path(&path) || path == "/sys/kernel/mm/transparent_hugepage/enabled" {
                    let cmd = commands::proc_write(&path, &value).map_err(|m| Stop::Error(self.err(c.span, m)))?;
                    let tid = self.k.spawn("bash", &c.source, cmd, red.out, red.err);
                    return Ok(Some(Some(tid)));
                }
                return Err(Stop::Error(self.err(c.span, format!("writing to '{path}' is not modelled (the /proc/sys/... sysctls and the /sys/fs/cgroup files are)"))));
            }
            "timeout" if !io.as_task => return self.start_timeout(c, args, red).map(Some),
            "pwd" => {
                let cmd: Cmd = Box::new(crate::commands::text::Emit::new(format!("{}\n", self.cwd)));
                let tid = self.spawn_program(c, "pwd", cmd, red, io)?;
                return Ok(Some(Some(tid)));
            }
            _ => {}
        }
        if red.proc_target.is_some() {
            return Err(Stop::Error(self.err(c.span, "only 'echo VALUE > /proc/sys/...' (or printf) or '> /sys/fs/cgroup/...' can write to /proc and /sys")));
        }
        Ok(None)
    }

    /// `kill [-SIGNAL] PID|%JOB...`: the task dies with status 128 + the signal.
    fn builtin_kill(&mut self, c: &SimpleCommand, args: &[String], red: &Redirs) -> Result<i32, Stop> {
        if args.is_empty() {
            // bash's kill builtin without operands.
            self.shell_err(red.err, "bash: kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n");
            return Ok(2);
        }
        let mut sig = 15;
        let mut st = 0;
        for a in args {
            if let Some(s) = a.strip_prefix('-') {
                sig = match s.trim_start_matches("SIG") {
                    "9" | "KILL" => 9,
                    "15" | "TERM" => 15,
                    "2" | "INT" => 2,
                    "1" | "HUP" => 1,
                    "s" => continue,
                    other => return Err(Stop::Error(self.err(c.span, format!("kill: unsupported signal '{other}' (supported: -9/-KILL, -15/-TERM, -2/-INT, -1/-HUP)")))),
                };
                continue;
            }
            let tid = if let Some(j) = a.strip_prefix('%') {
                j.parse::<usize>().ok().and_then(|n| self.jobs.get(n.wrapping_sub(1)).copied())
            } else {
                a.parse::<u32>().ok().and_then(|pid| {
                    (0..self.k.tasks.len()).map(|i| i as TaskId).find(|&t| self.k.tasks[t as usize].pid == pid && !self.k.task_exited(t) && !self.k.tasks[t as usize].kthread)
                })
            };
            match tid {
                Some(t) if !self.k.task_exited(t) => self.k.kill(t, 128 + sig),
                _ => {
                    self.shell_err(red.err, &format!("bash: kill: ({a}) - No such process\n"));
                    st = 1;
                }
            }
        }
        Ok(st)
    }

    /// `read [-r] NAME...`: one line of the shell's standard input (a block's `< file` or
    /// the output of the commands piped into a loop), split on blanks.
    fn builtin_read(&mut self, c: &SimpleCommand, args: &[String], red: &Redirs) -> Result<i32, Stop> {
        let mut names = Vec::new();
        for a in args {
            match a.as_str() {
                "-r" => {}
                o if o.starts_with('-') => return Err(Stop::Error(self.err(c.span, format!("read: unsupported option '{o}' (supported: read [-r] NAME...)")))),
                n => names.push(n.to_string()),
            }
        }
        if names.is_empty() {
            names.push("REPLY".into());
        }
        let mut own;
        let mut shared = None;
        let si = if red.touched & 1 != 0 {
            // `read NAME < file` (or `<<<`, `<&3`): this command's standard input, opened
            // afresh, not the shell's.
            use commands::text::Input;
            let text = match &red.stdin {
                Input::Text(t) => t.clone(),
                Input::Buffer(b) => self.k.buffers[*b as usize].clone(),
                Input::File(p) => self.file_text(c.span, p)?,
                Input::Tty | Input::Pipe => String::new(),
            };
            // `read <&N` from a descriptor the shell holds: the offset is shared, the next
            // reader goes on after this line.
            shared = c.redirects.iter().rev().find(|r| r.fd == 0).and_then(|r| match r.op {
                RedirOp::DupIn => r.target.as_literal().and_then(|t| t.parse::<u32>().ok()).filter(|n| self.fds.contains_key(n)),
                _ => None,
            });
            own = ShellIn { text, pos: 0 };
            &mut own
        } else {
            let Some(si) = self.stdin.as_mut() else { return Ok(1) };
            si
        };
        let rest = si.text.get(si.pos..).unwrap_or("");
        if rest.is_empty() {
            return Ok(1);
        }
        let (line, adv) = match rest.find('\n') {
            Some(i) => (rest[..i].to_string(), i + 1),
            None => (rest.to_string(), rest.len()),
        };
        si.pos += adv;
        if let Some(n) = shared {
            let rest = si.text[si.pos..].to_string();
            self.fds.insert(n, Fd::In(commands::text::Input::Text(rest)));
        }
        let mut fields: Vec<&str> = Vec::new();
        let mut rem = line.trim_start_matches([' ', '\t']);
        for _ in 0..names.len().saturating_sub(1) {
            let end = rem.find([' ', '\t']).unwrap_or(rem.len());
            fields.push(&rem[..end]);
            rem = rem[end..].trim_start_matches([' ', '\t']);
        }
        fields.push(rem.trim_end_matches([' ', '\t']));
        for (n, v) in names.iter().zip(fields.iter().chain(std::iter::repeat(&""))) {
            self.set_var(n, v.to_string());
        }
        Ok(0)
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
    fn start_timeout(&mut self, c: &SimpleCommand, args: &[String], red: &Redirs) -> Result<Option<TaskId>, Stop> {
        let Some((dur, rest)) = args.split_first() else {
            return Err(Stop::Error(self.err(c.span, "timeout: missing operand (timeout DURATION COMMAND...)")));
        };
        let Some((name, cargs)) = rest.split_first() else {
            return Err(Stop::Error(self.err(c.span, "timeout: missing command (timeout DURATION COMMAND...)")));
        };
        let limit = commands::parse_sleep(std::slice::from_ref(dur)).map_err(|m| Stop::Error(self.err(c.span, m.replace("sleep", "timeout"))))?;
        let cmd = self.build(c, name, cargs, red)?;
        let comm = commands::comm_of(name, cargs);
        let tid = self.spawn_program(c, &comm, cmd, red, &PipeIo::default())?;
        let deadline = self.k.now.saturating_add(limit);
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
}

/// Where a command's output goes by default: the terminal, a `$(...)` capture, or the file
/// a block is redirected to.
#[derive(Clone, Debug)]
struct Out {
    sink: Sink,
    /// The file written (absolute path, append).
    file: Option<(String, bool)>,
}

/// The shell's standard input for `read`: text and how much was read.
#[derive(Clone, Debug)]
struct ShellIn {
    text: String,
    pos: usize,
}

/// A command's place in a pipeline.
#[derive(Clone, Copy, Debug, Default)]
struct PipeIo {
    /// Read end of the pipe from the previous command.
    stdin: Option<u32>,
    /// Write end of the pipe to the next command.
    stdout: Option<u32>,
    /// Runs as a task alongside others (pipeline or background): built-ins that would
    /// block the shell (sleep, timeout) run as programs.
    as_task: bool,
}

/// A simple command's resolved redirections.
struct Redirs {
    out: Sink,
    out_file: Option<(String, bool)>,
    err: Sink,
    err_file: Option<(String, bool)>,
    stdin: crate::commands::text::Input,
    /// `> /proc/sys/...`: the file written by echo.
    proc_target: Option<String>,
    /// A redirection that fails (bash prints this and does not run the command).
    error: Option<String>,
    /// The descriptor table after the redirections (0-9).
    table: Vec<Fd>,
    /// Files opened for writing on descriptors other than standard output: created or
    /// truncated before the command runs (path, append).
    creates: Vec<(String, bool)>,
    /// Bit N: a redirection changed descriptor N.
    touched: u32,
}

impl Redirs {
    fn empty() -> Redirs {
        Redirs { out: Sink::Null, out_file: None, err: Sink::Null, err_file: None, stdin: crate::commands::text::Input::Tty, proc_target: None, error: None, table: Vec::new(), creates: Vec::new(), touched: 0 }
    }
}

/// What a descriptor of the shell or of a command refers to.
#[derive(Clone, Debug)]
enum Fd {
    In(crate::commands::text::Input),
    Out(Out),
    /// `<>`: open for reading and writing.
    Rw(crate::commands::text::Input, Out),
    Closed,
}

impl Fd {
    /// As standard output or error: where the writes go (nowhere for a descriptor that is
    /// closed or open only for reading: write(2) fails with EBADF).
    fn as_out(&self) -> (Sink, Option<(String, bool)>) {
        match self {
            Fd::Out(o) | Fd::Rw(_, o) => (o.sink, o.file.clone()),
            Fd::In(_) | Fd::Closed => (Sink::Closed, None),
        }
    }
    /// As standard input (a closed or write-only descriptor reads nothing).
    fn as_in(&self) -> crate::commands::text::Input {
        match self {
            Fd::In(i) | Fd::Rw(i, _) => i.clone(),
            Fd::Out(_) | Fd::Closed => crate::commands::text::Input::Tty,
        }
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
        let old = std::mem::take(&mut self.k.reclaim.stats);
        self.reclaim_passes.append(old);
        self.collect_kthreads();
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

/// bash's print_select_list: the menu in columns down then across, COLUMNS wide, each
/// entry `%*d) WORD` padded with tabs and blanks (indent, tab stops every 8); one column
/// when it would fit on one row.
fn select_menu(words: &[String], columns: usize) -> String {
    let n = words.len();
    if n == 0 {
        return "\n".into();
    }
    let indices_len = n.to_string().len();
    let max_elem_len = words.iter().map(|w| w.chars().count()).max().unwrap_or(0) + indices_len + 2 + 2;
    let mut cols = (columns / max_elem_len).max(1);
    let mut rows = n / cols + usize::from(n % cols != 0);
    cols = n / rows + usize::from(n % rows != 0);
    if rows == 1 {
        rows = cols;
    }
    let mut out = String::new();
    for row in 0..rows {
        let mut ind = row;
        let mut pos = 0;
        loop {
            out.push_str(&format!("{:>w$}) {}", ind + 1, words[ind], w = indices_len));
            let elem_len = words[ind].chars().count() + indices_len + 2;
            ind += rows;
            if ind >= n {
                break;
            }
            // indent(pos + elem_len, pos + max_elem_len)
            let (mut from, to) = (pos + elem_len, pos + max_elem_len);
            while to / 8 > from / 8 {
                out.push('\t');
                from += 8 - from % 8;
            }
            while from < to {
                out.push(' ');
                from += 1;
            }
            pos += max_elem_len;
        }
        out.push('\n');
    }
    out
}
