//! Memory cgroups from the shell: writes to /sys/fs/cgroup files (`echo 512M >
//! memory.max`), rmdir, `systemd-run --scope -p MemoryMax=...` and `cgexec -g memory:NAME`.
//! Reading the files is `cat`'s (files.rs), creating them `mkdir`'s (fs_admin.rs).

use super::Cmd;
use memtwin_kernel::cgroup::CgError;
use memtwin_kernel::fs::normalize;
use memtwin_kernel::mm::memcontrol::{CgroupMode, ROOT_MEMCG};
use memtwin_kernel::{Kernel, Program, Step, TaskId};

/// Paths of the cgroup filesystem (either hierarchy).
pub fn is_cgroup_path(abs: &str) -> bool {
    abs == "/sys/fs/cgroup" || abs.starts_with("/sys/fs/cgroup/")
}

/// What a failed cgroup operation prints: the kernel's errno as the program reports it, or
/// the model's refusal.
fn report(k: &mut Kernel, me: TaskId, prefix: &str, e: CgError) {
    match e {
        CgError::Errno(e) => k.eprint(me, &format!("{prefix}: {}\n", e.strerror())),
        CgError::Unmodelled(m) => k.eprint(me, &format!("memtwin: {m}\n")),
    }
}

/// `echo VALUE > /sys/fs/cgroup/.../FILE` (bash's builtin echo: a failed write prints
/// "bash: echo: write error: ERROR" and the status is 1). A write that reclaims takes the
/// simulated time its reclaim takes (`Kernel::cgroup_write_timed`).
pub struct CgroupWrite {
    path: String,
    value: String,
    started: bool,
}

impl CgroupWrite {
    pub fn new(path: &str, value: &str) -> CgroupWrite {
        CgroupWrite { path: path.to_string(), value: value.to_string(), started: false }
    }
}

impl Program for CgroupWrite {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !std::mem::replace(&mut self.started, true) {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 4);
        }
        // `echo $$ > cgroup.procs` moves the shell itself, not the echo.
        let value = self.value.clone();
        match k.cgroup_write_timed(me, &self.path, &value) {
            Ok(Some(step)) => step,
            Ok(None) => Step::Exit(0),
            Err(e) => {
                report(k, me, "bash: echo: write error", e);
                Step::Exit(1)
            }
        }
    }
}

/// `rmdir DIR...` (cgroup directories; other directories are not modelled).
pub struct Rmdir {
    dirs: Vec<(String, String)>,
}

impl Rmdir {
    pub fn parse(args: &[String], cwd: &str) -> Result<Rmdir, String> {
        let mut dirs = Vec::new();
        for a in args {
            if a.starts_with('-') {
                return Err(format!("rmdir: unsupported option '{a}' (supported: rmdir DIR...)"));
            }
            let abs = normalize(cwd, a);
            if !is_cgroup_path(&abs) {
                return Err(format!("rmdir: '{a}': only cgroup directories under /sys/fs/cgroup can be removed (rm removes files)"));
            }
            dirs.push((a.clone(), abs));
        }
        if dirs.is_empty() {
            return Err("rmdir: missing operand (rmdir DIR...)".into());
        }
        Ok(Rmdir { dirs })
    }
}

impl Program for Rmdir {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for (given, abs) in &self.dirs {
            k.charge_sys(me, k.machine.cpu_model.syscall_ns * 10);
            if let Err(e) = k.cgroup_rmdir(abs) {
                report(k, me, &format!("rmdir: failed to remove '{given}'"), e);
                status = 1;
            }
        }
        Step::Exit(status)
    }
}

/// `mkdir [-p] /sys/fs/cgroup/...`: create cgroups.
pub fn cgroup_mkdir(k: &mut Kernel, abs: &str, parents: bool) -> Result<(), CgError> {
    if parents {
        let mount = k.cgroup_mount()?;
        let rest = abs.strip_prefix(mount).unwrap_or("");
        let mut p = mount.to_string();
        for c in rest.split('/').filter(|c| !c.is_empty()) {
            p.push('/');
            p.push_str(c);
            if let Ok((_, None)) = k.cgroup_resolve(&p) {
                continue;
            }
            k.cgroup_mkdir(&p)?;
        }
        return Ok(());
    }
    k.cgroup_mkdir(abs)
}

/// A cgroup setting to apply before the command runs: (file, value).
type Setting = (String, String);

/// `systemd-run --scope [-p PROP=VALUE]... CMD...` and `cgexec -g memory:PATH CMD...`: put
/// the task in a cgroup, then it runs CMD (both exec the command: the task is CMD's).
pub struct RunIn {
    /// systemd-run: create a transient scope with these settings; cgexec: the cgroup path.
    scope: Option<Vec<Setting>>,
    group: String,
    inner: Option<Cmd>,
    inner_comm: String,
    started: bool,
}

/// systemd's resource-control properties the model has, and the cgroup files they set
/// (v2 name, v1 name).
const PROPERTIES: &[(&str, &str, &str)] = &[
    ("MemoryMax", "memory.max", "memory.limit_in_bytes"),
    ("MemoryLimit", "memory.max", "memory.limit_in_bytes"),
    ("MemoryHigh", "memory.high", ""),
    ("MemoryLow", "memory.low", ""),
    ("MemoryMin", "memory.min", ""),
    ("MemorySwapMax", "memory.swap.max", ""),
];

impl RunIn {
    pub fn systemd_run(args: &[String], cwd: &str, build: &dyn Fn(&str, &[String]) -> Result<(Cmd, String), String>) -> Result<RunIn, String> {
        let usage = "systemd-run --scope [-p PROPERTY=VALUE]... COMMAND [ARGS...] (properties: MemoryMax, MemoryHigh, MemoryLow, MemoryMin, MemorySwapMax)";
        let _ = cwd;
        let mut scope = false;
        let mut settings = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "--scope" => scope = true,
                "-q" | "--quiet" => {}
                "-p" | "--property" => {
                    i += 1;
                    let kv = args.get(i).ok_or(format!("systemd-run: -p needs PROPERTY=VALUE ({usage})"))?;
                    settings.push(Self::property(kv, usage)?);
                }
                s if s.starts_with("--property=") => settings.push(Self::property(&s["--property=".len()..], usage)?),
                s if s.starts_with('-') => return Err(format!("systemd-run: unsupported option '{s}' ({usage})")),
                _ => break,
            }
            i += 1;
        }
        if !scope {
            return Err(format!("systemd-run: only --scope units are modelled (a service would run detached from the terminal) ({usage})"));
        }
        let Some((name, rest)) = args[i..].split_first() else {
            return Err(format!("systemd-run: missing command ({usage})"));
        };
        let (inner, comm) = build(name, rest)?;
        Ok(RunIn { scope: Some(settings), group: String::new(), inner: Some(inner), inner_comm: comm, started: false })
    }

    fn property(kv: &str, usage: &str) -> Result<Setting, String> {
        let (k, v) = kv.split_once('=').ok_or(format!("systemd-run: property '{kv}' is not PROPERTY=VALUE ({usage})"))?;
        let Some(&(_, v2, _)) = PROPERTIES.iter().find(|(n, _, _)| *n == k) else {
            return Err(format!("systemd-run: property '{k}' is not modelled ({usage})"));
        };
        // systemd accepts "infinity" and sizes with K/M/G/T suffixes (base 1024).
        let val = if v == "infinity" { "max".to_string() } else { v.to_string() };
        if val != "max" && memtwin_kernel::mm::memcontrol::memparse_pages(&val, "max").is_err() {
            return Err(format!("systemd-run: invalid value '{v}' for {k}= (a size such as 512M, or infinity)"));
        }
        Ok((v2.to_string(), val))
    }

    pub fn cgexec(args: &[String], build: &dyn Fn(&str, &[String]) -> Result<(Cmd, String), String>) -> Result<RunIn, String> {
        let usage = "cgexec -g memory:PATH COMMAND [ARGS...]";
        let mut group = None;
        let mut i = 0;
        while i < args.len() {
            match args[i].as_str() {
                "-g" => {
                    i += 1;
                    let g = args.get(i).ok_or(format!("cgexec: -g needs CONTROLLERS:PATH ({usage})"))?;
                    let (ctrls, path) = g.split_once(':').ok_or(format!("cgexec: '{g}' is not CONTROLLERS:PATH ({usage})"))?;
                    if ctrls.split(',').any(|c| c != "memory" && c != "*") {
                        return Err(format!("cgexec: only the memory controller is modelled ('{ctrls}') ({usage})"));
                    }
                    group = Some(path.trim_start_matches('/').to_string());
                }
                "--sticky" => {}
                s if s.starts_with('-') => return Err(format!("cgexec: unsupported option '{s}' ({usage})")),
                _ => break,
            }
            i += 1;
        }
        let group = group.ok_or(format!("cgexec: missing -g memory:PATH ({usage})"))?;
        let Some((name, rest)) = args[i..].split_first() else {
            return Err(format!("cgexec: missing command ({usage})"));
        };
        let (inner, comm) = build(name, rest)?;
        Ok(RunIn { scope: None, group, inner: Some(inner), inner_comm: comm, started: false })
    }

    /// Create the scope (systemd-run) or find the group (cgexec) and move the task there.
    fn start(&mut self, k: &mut Kernel, me: TaskId) -> Result<(), (String, i32)> {
        let mount = k.cgroup_mount().map_err(|e| (msg(e), 1))?;
        let path = match &self.scope {
            Some(settings) => {
                // Transient scopes started by root go to system.slice (v2: the memory
                // controller is enabled down to it, as systemd does for slices).
                let slice = format!("{mount}/system.slice");
                if !matches!(k.cgroup_resolve(&slice), Ok((_, None))) {
                    k.cgroup_mkdir(&slice).map_err(|e| (msg(e), 1))?;
                }
                if k.memcg.mode == CgroupMode::V2 {
                    let (sid, _) = k.cgroup_resolve(&slice).map_err(|e| (msg(e), 1))?;
                    k.memcg.cgs[sid as usize].subtree_memory = true;
                }
                k.memcg.scopes += 1;
                let hex: String = (0..2).map(|_| format!("{:016x}", k.rng.next_u64())).collect();
                let unit = format!("run-r{hex}.scope");
                let p = format!("{slice}/{unit}");
                k.cgroup_mkdir(&p).map_err(|e| (msg(e), 1))?;
                for (file, value) in settings.clone() {
                    let file = if k.memcg.mode == CgroupMode::V1 {
                        match PROPERTIES.iter().find(|(_, v2, _)| *v2 == file) {
                            Some((_, _, v1)) if !v1.is_empty() => v1.to_string(),
                            _ => return Err((format!("systemd-run: {file} has no cgroup v1 equivalent (v1 has memory.limit_in_bytes only)\n"), 1)),
                        }
                    } else {
                        file
                    };
                    let value = if k.memcg.mode == CgroupMode::V1 && value == "max" { "-1".to_string() } else { value };
                    k.cgroup_write(me, &format!("{p}/{file}"), &value).map_err(|e| (msg(e), 1))?;
                }
                k.eprint(me, &format!("Running scope as unit: {unit}\n"));
                p
            }
            None => format!("{mount}/{}", self.group),
        };
        let id = match k.cgroup_resolve(&path) {
            Ok((id, None)) => id,
            _ => {
                // libcgroup's message for a group that does not exist.
                return Err((format!("cgroup change of group failed\n"), 96));
            }
        };
        if id == ROOT_MEMCG && self.scope.is_some() {
            return Err(("systemd-run: could not create the scope\n".into(), 1));
        }
        k.cgroup_attach(me, id).map_err(|e| (msg(e), 1))?;
        k.tasks[me as usize].comm = self.inner_comm.clone();
        Ok(())
    }
}

fn msg(e: CgError) -> String {
    match e {
        CgError::Errno(e) => format!("{}\n", e.strerror()),
        CgError::Unmodelled(m) => format!("memtwin: {m}\n"),
    }
}

impl Program for RunIn {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.started {
            self.started = true;
            if let Err((m, code)) = self.start(k, me) {
                k.eprint(me, &m);
                return Step::Exit(code);
            }
            // It then executes the command: the command's image is made in the cgroup.
            k.exec_replace_image(me);
            return Step::Cpu { user: 0, sys: k.machine.cpu_model.syscall_ns * 50 };
        }
        match self.inner.as_mut() {
            Some(p) => p.step(k, me),
            None => Step::Exit(0),
        }
    }
    fn killed(&mut self, k: &mut Kernel, me: TaskId) {
        if let Some(p) = self.inner.as_mut() {
            p.killed(k, me);
        }
    }
}
