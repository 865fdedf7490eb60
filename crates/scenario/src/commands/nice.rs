//! `nice [-n N] COMMAND` (coreutils), `renice [-n] N -p PID...` (util-linux) and the
//! process forms of `ionice` (`ionice -p PID`, `ionice -c CLASS [-n LEVEL] -p PID`).
//!
//! A niceness changes the task's load weight in the scheduler (memtwin_engine::sched:
//! sched_prio_to_weight on CFS kernels, the timeslice ticks of NICE_TO_TICKS on 2.4) and,
//! while no I/O class is set, its best-effort I/O level (task_nice_ioprio).

use memtwin_kernel::ioprio::{IoClass, IoPrio};
use memtwin_kernel::{Kernel, Program, Step, TaskId};
use memtwin_machine::KernelProfile;

/// Parsed `nice` options: the adjustment (None: none given) and the command.
pub struct NiceArgs<'a> {
    pub adjustment: Option<i32>,
    pub command: &'a [String],
}

/// coreutils nice: `-n N`, `-nN`, `--adjustment=N`, `--adjustment N`, the obsolete `-N`
/// and `--N` (negative); the command follows. Without -n the adjustment is 10.
pub fn parse(args: &[String]) -> Result<NiceArgs<'_>, String> {
    let mut adjustment = None;
    let mut i = 0;
    let num = |v: &str| -> Result<i32, String> {
        v.parse::<i64>().map(|n| n.clamp(-40, 40) as i32).map_err(|_| format!("nice: invalid adjustment '{v}'"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        if a == "-n" || a == "--adjustment" {
            let v = args.get(i + 1).ok_or_else(|| format!("nice: option requires an argument -- '{}'", if a == "-n" { "n" } else { "adjustment" }))?;
            adjustment = Some(num(v)?);
            i += 2;
        } else if let Some(v) = a.strip_prefix("--adjustment=") {
            adjustment = Some(num(v)?);
            i += 1;
        } else if a == "--" {
            i += 1;
            break;
        } else if let Some(v) = a.strip_prefix("--").filter(|v| v.parse::<i32>().is_ok()) {
            adjustment = Some(-num(v)?);
            i += 1;
        } else if let Some(v) = a.strip_prefix("-n") {
            adjustment = Some(num(v)?);
            i += 1;
        } else if let Some(v) = a.strip_prefix('-').filter(|v| v.parse::<i32>().is_ok()) {
            adjustment = Some(num(v)?);
            i += 1;
        } else if a.starts_with('-') && a.len() > 1 {
            return Err(format!("nice: invalid option '{a}' (accepted: -n N, --adjustment=N, -N, then the command)"));
        } else {
            break;
        }
    }
    let command = &args[i..];
    if command.is_empty() && adjustment.is_some() {
        return Err("nice: a command must be given with an adjustment".into());
    }
    Ok(NiceArgs { adjustment, command })
}

/// The niceness a command gets: its parent's plus the adjustment (10 by default), within
/// -20..=19 (setpriority clamps).
pub fn niceness(a: &NiceArgs<'_>, current: i32) -> i32 {
    (current + a.adjustment.unwrap_or(10)).clamp(-20, 19)
}

/// `nice` alone: prints the niceness it runs with.
pub struct PrintNice;

impl Program for PrintNice {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let n = k.task_nice(me);
        k.print(me, &format!("{n}\n"));
        Step::Exit(0)
    }
}

/// The command nice or ionice execs, after ionice's warning on standard error. The
/// niceness and I/O priority are set when its task is created (the shell's runner), so
/// that they hold from its first instant and a renice before it first runs sticks.
pub struct WithPrio {
    pub warning: Option<&'static str>,
    pub inner: Box<dyn Program>,
}

impl Program for WithPrio {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(w) = self.warning.take() {
            k.eprint(me, w);
        }
        self.inner.step(k, me)
    }
    fn killed(&mut self, k: &mut Kernel, me: TaskId) {
        self.inner.killed(k, me);
    }
}

/// ionice's class and level as the kernel's priority (IOPRIO_CLASS_NONE: None). The
/// idle class has no level; a level without a class is best effort.
pub fn ioprio_of(class: u32, level: Option<u32>) -> Option<IoPrio> {
    match class {
        1 => Some(IoPrio { class: IoClass::Rt, level: level.unwrap_or(4) as u8 }),
        2 => Some(IoPrio { class: IoClass::Be, level: level.unwrap_or(4) as u8 }),
        3 => Some(IoPrio { class: IoClass::Idle, level: 0 }),
        _ => None,
    }
}

/// A live user-visible process by PID.
fn task_of_pid(k: &Kernel, pid: u32) -> Option<TaskId> {
    (0..k.tasks.len() as TaskId).find(|&t| k.tasks[t as usize].pid == pid && !k.task_exited(t))
}

/// `renice [-n] N [[-p] PID...] [-u USER...]`: util-linux's renice with absolute priorities.
/// `-p` and `-u` switch how the identifiers after them are read. Every task of the model
/// runs as root (uid 0); setpriority(PRIO_USER, 0) renices every one of them, kernel
/// threads included, as it does on a real host.
pub struct Renice {
    pub nice: i32,
    pub pids: Vec<u32>,
    /// User IDs (`-u`; "root" is 0), in order after the process IDs.
    pub users: Vec<Result<u32, String>>,
}

impl Renice {
    pub fn parse(args: &[String]) -> Result<Renice, String> {
        let usage = "(accepted: renice [-n] PRIORITY [-p] PID... [-u USER...])";
        let mut it = args.iter().map(|s| s.as_str()).peekable();
        if it.peek() == Some(&"-n") || it.peek() == Some(&"--priority") {
            it.next();
        }
        let prio = it.next().ok_or_else(|| format!("renice: not enough arguments {usage}"))?;
        let nice = prio.parse::<i64>().map_err(|_| format!("renice: invalid priority '{prio}' {usage}"))?.clamp(-20, 19) as i32;
        let (mut pids, mut users) = (Vec::new(), Vec::new());
        let mut by_user = false;
        for a in it {
            match a {
                "-p" | "--pid" => by_user = false,
                "-u" | "--user" => by_user = true,
                "-g" | "--pgrp" => return Err(format!("renice: {a} (process groups) is not modelled {usage}")),
                v if by_user => users.push(match v {
                    "root" => Ok(0),
                    v => v.parse::<u32>().map_err(|_| v.to_string()),
                }),
                v => pids.push(v.parse::<u32>().map_err(|_| format!("renice: invalid process ID '{v}' {usage}"))?),
            }
        }
        if pids.is_empty() && users.is_empty() {
            return Err(format!("renice: not enough arguments {usage}"));
        }
        Ok(Renice { nice, pids, users })
    }
}

impl Program for Renice {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let mut status = 0;
        for &pid in &self.pids {
            match task_of_pid(k, pid) {
                Some(t) => {
                    // donice: getpriority, setpriority, getpriority again.
                    let old = k.task_nice(t);
                    k.set_user_nice(t, self.nice);
                    let new = k.task_nice(t);
                    k.print(me, &format!("{pid} (process ID) old priority {old}, new priority {new}\n"));
                }
                None => {
                    k.eprint(me, &format!("renice: failed to get priority for {pid} (process ID): No such process\n"));
                    status = 1;
                }
            }
        }
        for u in self.users.clone() {
            match u {
                Err(name) => {
                    // getpwnam found no such user.
                    k.eprint(me, &format!("renice: unknown user {name}\n"));
                    status = 1;
                }
                Ok(uid) if uid != 0 => {
                    k.eprint(me, &format!("renice: failed to get priority for {uid} (user ID): No such process\n"));
                    status = 1;
                }
                Ok(uid) => {
                    // getpriority(PRIO_USER) reports the best (lowest) niceness among the
                    // user's tasks; setpriority sets every one of them.
                    let tasks: Vec<TaskId> = (0..k.tasks.len() as TaskId).filter(|&t| !k.task_exited(t)).collect();
                    let old = tasks.iter().map(|&t| k.task_nice(t)).min().unwrap_or(0);
                    for &t in &tasks {
                        k.set_user_nice(t, self.nice);
                    }
                    let new = tasks.iter().map(|&t| k.task_nice(t)).min().unwrap_or(0);
                    k.print(me, &format!("{uid} (user ID) old priority {old}, new priority {new}\n"));
                }
            }
        }
        Step::Exit(status)
    }
}

/// `ionice -p PID...` (print_prio) and `ionice -c CLASS [-n LEVEL] -p PID...`
/// (ioprio_setpid); with `-u UID...`, IOPRIO_WHO_USER: every task of the user (all of the
/// model's run as root, uid 0, kernel threads included) is set, and reading gives the best
/// priority among them (ioprio_best). Several IDs prefix each line with "ID: ".
pub struct IonicePid {
    pub set: Option<Option<IoPrio>>,
    pub pids: Vec<u32>,
    pub by_user: bool,
}

impl Program for IonicePid {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        let several = self.pids.len() > 1;
        for &id in &self.pids {
            let tasks: Vec<TaskId> = if self.by_user {
                if id == 0 { (0..k.tasks.len() as TaskId).filter(|&t| !k.task_exited(t)).collect() } else { Vec::new() }
            } else {
                task_of_pid(k, id).into_iter().collect()
            };
            if tasks.is_empty() {
                let op = if self.set.is_some() { "ioprio_set" } else { "ioprio_get" };
                k.eprint(me, &format!("ionice: {op} failed: No such process\n"));
                return Step::Exit(1);
            }
            if let Some(p) = self.set {
                for &t in &tasks {
                    k.set_ioprio(t, p);
                }
                continue;
            }
            // ioprio_best: the lowest class number that is set, then the lowest level.
            let (c, l) = tasks.iter().map(|&t| get_task_ioprio(k, t)).min_by_key(|&(c, l)| (if c == 0 { 2 } else { c }, l)).unwrap_or((0, 4));
            let line = match (c, l) {
                (3, _) => "idle\n".to_string(),
                (c, l) => format!("{}: prio {l}\n", ["none", "realtime", "best-effort"][c as usize]),
            };
            let line = if several { format!("{id}: {line}") } else { line };
            k.print(me, &line);
        }
        Step::Exit(0)
    }
}

/// ioprio_get(IOPRIO_WHO_PROCESS): class and level. Before 6.0 an unset priority reads
/// as IOPRIO_CLASS_NONE: level IOPRIO_NORM without an io_context, the context's 0 once
/// the task has done block I/O (get_task_ioprio); 6.0+ reports the effective priority
/// (__get_task_ioprio: class and level from the niceness).
fn get_task_ioprio(k: &Kernel, t: TaskId) -> (u32, u8) {
    if let Some(p) = k.tasks[t as usize].ioprio {
        return (p.class as u32, p.level);
    }
    if k.machine.kernel == KernelProfile::Linux6 {
        let p = k.effective_ioprio(t);
        return (p.class as u32, p.level);
    }
    let task = &k.tasks[t as usize];
    let has_ioc = task.read_bytes + task.write_bytes > 0;
    (0, if has_ioc { 0 } else { memtwin_kernel::ioprio::IOPRIO_NORM })
}

#[cfg(test)]
mod tests {
    use super::*;
    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }
    #[test]
    fn nice_options() {
        let a = v(&["-n", "19", "dd", "if=x"]);
        let p = parse(&a).unwrap();
        assert_eq!((p.adjustment, p.command.len()), (Some(19), 2));
        assert_eq!(niceness(&parse(&v(&["dd"])).unwrap(), 0), 10, "default adjustment");
        assert_eq!(niceness(&parse(&v(&["-5", "dd"])).unwrap(), 0), 5);
        assert_eq!(niceness(&parse(&v(&["--5", "dd"])).unwrap(), 0), -5);
        assert_eq!(niceness(&parse(&v(&["--adjustment=30", "dd"])).unwrap(), 0), 19, "clamped");
        assert!(parse(&v(&["-n", "3"])).is_err(), "adjustment without a command");
        assert!(parse(&v(&["-x", "dd"])).is_err());
        assert!(parse(&v(&[])).unwrap().command.is_empty());
    }
    #[test]
    fn renice_options() {
        let r = Renice::parse(&v(&["-n", "5", "-p", "100", "101"])).unwrap();
        assert_eq!((r.nice, r.pids.clone()), (5, vec![100, 101]));
        let r = Renice::parse(&v(&["+19", "100"])).unwrap();
        assert_eq!(r.nice, 19);
        assert!(Renice::parse(&v(&["5"])).is_err());
        let r = Renice::parse(&v(&["5", "-p", "7", "-u", "root", "1000"])).unwrap();
        assert_eq!((r.pids.clone(), r.users.clone()), (vec![7], vec![Ok(0), Ok(1000)]));
        assert!(Renice::parse(&v(&["5", "-g", "1"])).is_err());
    }
}
