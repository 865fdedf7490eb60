//! `ionice -c CLASS [-n LEVEL] COMMAND...` (util-linux) and the block devices' I/O
//! schedulers it depends on (/sys/block/DEV/queue/scheduler).
//!
//! A request carries its submitter's I/O priority class; the device's elevator
//! (memtwin_kernel::block::Elevator) serves the queued requests of the better class first:
//!
//! * 2.4: no ioprio_set system call (2.6.13+): ionice fails as it does there (ENOSYS).
//! * 2.6.39: CFQ is every disk's default: RT before BE before IDLE. CFQ also gives each
//!   level of a class a time slice of its own length (cfq_prio_slice), which is not
//!   modelled: a level other than the default (4) of the real-time or best-effort class is
//!   refused there.
//! * 5.x: blk-mq; a multi-queue device (NVMe, virtio-blk with a queue per vCPU, Xen) gets
//!   `none`, a single-queue one (SCSI/SATA) `mq-deadline` (elevator_get_default), which
//!   reads no I/O priority before 5.14: accepted, no effect, as in those kernels.
//! * 6.x: mq-deadline serves requests by priority class since 5.14 ("mq-deadline: Add I/O
//!   priority support"), levels within a class alike, with prio_aging_expire (10 s);
//!   `none` ignores priorities.

use memtwin_kernel::{Kernel, Program, Step, TaskId};
use memtwin_machine::{Disk, KernelProfile, Machine};

/// The scheduler line of /sys/block/DEV/queue/scheduler (the active one in brackets),
/// and the active one's name.
pub fn scheduler(m: &Machine, d: &Disk) -> (String, &'static str) {
    let (line, active) = memtwin_kernel::block::default_elevator(m.kernel, m.cpus, &d.name);
    (line.to_string(), active)
}

/// Whether the requested priority is one the disks' elevators are modelled for: Err
/// names the disk and what is not modelled.
pub fn check_machine(m: &Machine, class: u32, level: Option<u32>) -> Result<(), String> {
    for d in &m.disks {
        let (_, active) = scheduler(m, d);
        if m.kernel == KernelProfile::Linux2639 && active == "cfq" && matches!(class, 1 | 2) && level.is_some_and(|l| l != 4) {
            return Err(format!(
                "ionice: not modelled on this machine: /dev/{} uses CFQ ({}), which gives each level of a class a time slice of its own length (cfq_prio_slice); the model serves classes in order (RT, BE, IDLE) with every level alike, so only the default level 4 is accepted with -c 1 or -c 2",
                d.name,
                m.kernel.name()
            ));
        }
    }
    Ok(())
}

/// Parsed `ionice` options; the command follows, or the processes (`-p PID...`).
pub struct IoniceArgs<'a> {
    pub class: u32,
    pub level: Option<u32>,
    /// -c or -n given: the priority is set (else `-p` prints it).
    pub class_set: bool,
    pub command: &'a [String],
    pub pids: Vec<u32>,
    /// `-u`: the identifiers are user IDs (IOPRIO_WHO_USER), not process IDs.
    pub by_user: bool,
}

/// util-linux ionice's options for the COMMAND form.
pub fn parse(args: &[String]) -> Result<IoniceArgs<'_>, String> {
    let mut class = 2; // IOPRIO_CLASS_BE when only -n is given
    let mut class_set = false;
    let mut level = None;
    let mut i = 0;
    let value = |i: usize, opt: &str| -> Result<&String, String> { args.get(i).ok_or_else(|| format!("ionice: option requires an argument -- '{opt}'")) };
    while i < args.len() {
        let a = &args[i];
        let (opt, inline) = if let Some(r) = a.strip_prefix("--class=") {
            ("c", Some(r.to_string()))
        } else if let Some(r) = a.strip_prefix("--classdata=") {
            ("n", Some(r.to_string()))
        } else if a == "--class" {
            ("c", None)
        } else if a == "--classdata" {
            ("n", None)
        } else if a == "-t" || a == "--ignore" {
            i += 1;
            continue;
        } else if a == "-P" || a == "--pgid" {
            return Err("ionice: -P (process groups) is not modelled; use ionice [-c CLASS] [-n LEVEL] -p PID... | -u UID... or ionice -c CLASS [-n LEVEL] COMMAND".into());
        } else if a == "-p" || a == "--pid" || a.starts_with("-p") || a.starts_with("--pid=") || a == "-u" || a == "--uid" || a.starts_with("-u") || a.starts_with("--uid=") {
            // -p PID / -u UID: this and every following argument is a process (user) ID.
            let by_user = a.starts_with("-u") || a.starts_with("--uid");
            let (flag, what) = if by_user { ("u", "UID") } else { ("p", "PID") };
            let first = a.strip_prefix("--pid=").or_else(|| a.strip_prefix("--uid=")).or_else(|| a.strip_prefix("-p")).or_else(|| a.strip_prefix("-u")).filter(|r| !r.is_empty());
            let mut pids = Vec::new();
            let rest = if first.is_some() { &args[i + 1..] } else { &args[(i + 1).min(args.len())..] };
            for v in first.into_iter().chain(rest.iter().map(|s| s.as_str())) {
                pids.push(v.parse::<u32>().map_err(|_| format!("ionice: invalid {what} argument: '{v}'"))?);
            }
            if pids.is_empty() {
                return Err(format!("ionice: option requires an argument -- '{flag}'"));
            }
            return Ok(IoniceArgs { class, level, class_set: class_set || level.is_some(), command: &[], pids, by_user });
        } else if let Some(r) = a.strip_prefix("-c") {
            ("c", if r.is_empty() { None } else { Some(r.to_string()) })
        } else if let Some(r) = a.strip_prefix("-n") {
            ("n", if r.is_empty() { None } else { Some(r.to_string()) })
        } else if a.starts_with('-') && a.len() > 1 {
            return Err(format!("ionice: invalid option '{a}' (accepted: -c CLASS, -n LEVEL, -t, then the command)"));
        } else {
            break;
        };
        let v = match inline {
            Some(v) => v,
            None => {
                i += 1;
                value(i, opt)?.clone()
            }
        };
        if opt == "c" {
            class = match v.as_str() {
                "0" | "none" => 0,
                "1" | "realtime" => 1,
                "2" | "best-effort" => 2,
                "3" | "idle" => 3,
                _ => return Err(format!("ionice: unknown scheduling class: '{v}' (0/none, 1/realtime, 2/best-effort, 3/idle)")),
            };
            class_set = true;
        } else {
            let n: u32 = v.parse().map_err(|_| format!("ionice: invalid class data argument: '{v}'"))?;
            if n > 7 {
                return Err(format!("ionice: invalid class data argument: '{v}' (0 to 7)"));
            }
            level = Some(n);
        }
        i += 1;
    }
    let command = &args[i..];
    if command.is_empty() {
        // util-linux: without a command or -p, ionice prints its own priority.
        return Err("ionice: give a command (ionice -c CLASS [-n LEVEL] COMMAND) or processes (ionice [-c CLASS [-n LEVEL]] -p PID...)".into());
    }
    Ok(IoniceArgs { class, level, class_set: class_set || level.is_some(), command, pids: Vec::new(), by_user: false })
}

/// What ionice prints before it runs the command on the accepting eras (util-linux: a
/// level with the idle class is ignored with a warning).
pub fn warning(a: &IoniceArgs<'_>) -> Option<&'static str> {
    (a.class == 3 && a.level.is_some()).then_some("ionice: ignoring given class data for idle class\n")
}

/// 2.4: ioprio_set/ioprio_get do not exist; ionice exits 1 without running the command.
pub struct NoIoprio {
    /// Setting (ioprio_set) rather than reading (ioprio_get).
    pub set: bool,
}

impl Program for NoIoprio {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.eprint(me, if self.set { "ionice: ioprio_set failed: Function not implemented\n" } else { "ionice: ioprio_get failed: Function not implemented\n" });
        Step::Exit(1)
    }
}
