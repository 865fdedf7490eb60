//! The /proc view of a simulated machine: plain data the kernel model fills in (as
//! fs/proc/meminfo.c, mm/vmstat.c and fs/proc/stat.c do) and that formatters only read.
//!
//! Nothing here knows how the numbers came about; everything here is a snapshot.

mod diskstats;
mod meminfo;
mod slabinfo;
mod vmstat;

pub use diskstats::{render_diskstats, DiskStat, DiskstatsLayout};
pub use meminfo::{MemInfo, MeminfoExtra, MeminfoLayout};
pub use slabinfo::{parse_slabinfo, slabinfo, SlabInfo, SlabinfoVersion};
pub use vmstat::{VmCompaction, VmItem, VmStat, VmstatLayout, VM_ITEMS};

/// CPU time split as in /proc/stat, in nanoseconds summed over all CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStat {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuStat {
    pub fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
    /// Field-wise difference `self - earlier` (saturating: counters never run backwards).
    pub fn delta(&self, earlier: &CpuStat) -> CpuStat {
        CpuStat {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// Process state letter as ps/top print it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Running,
    Sleeping,
    DiskSleep,
    Zombie,
    Idle,
}

impl TaskState {
    pub fn letter(self) -> char {
        match self {
            TaskState::Running => 'R',
            TaskState::Sleeping => 'S',
            TaskState::DiskSleep => 'D',
            TaskState::Zombie => 'Z',
            TaskState::Idle => 'I',
        }
    }
}

/// One task as /proc/PID/{stat,status,io} and the taskstats interface describe it.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskInfo {
    pub pid: u32,
    /// Short name (`comm`), e.g. `dd`, `kswapd0`.
    pub comm: String,
    /// Full command line; kernel threads have none (tools print `[comm]`).
    pub cmdline: String,
    pub kthread: bool,
    pub user: String,
    pub state: TaskState,
    /// Scheduler priority as top prints it (20 for nice 0).
    pub prio: i32,
    pub nice: i32,
    pub virt_kb: u64,
    pub res_kb: u64,
    pub shr_kb: u64,
    pub swap_kb: u64,
    /// CPU time in ns.
    pub utime_ns: u64,
    pub stime_ns: u64,
    /// Bytes this task caused to be read from / written to storage (/proc/PID/io).
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Time spent waiting for swap-in and for block I/O (taskstats), ns.
    pub swapin_delay_ns: u64,
    pub blkio_delay_ns: u64,
    /// Start time since boot, ns.
    pub start_ns: u64,
    /// The kernel function a sleeping task sleeps in (/proc/PID/wchan; "" when running).
    pub wchan: &'static str,
    /// The CPU it last ran on (task_cpu: /proc/PID/stat's processor, ps's PSR).
    pub cpu: u32,
}

/// Everything the tools read at one instant.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Simulated time since boot, ns.
    pub uptime_ns: u64,
    pub ncpus: u32,
    pub mem: MemInfo,
    pub vm: VmStat,
    pub cpu: CpuStat,
    /// /proc/stat `intr` total and `ctxt`.
    pub intr: u64,
    pub ctxt: u64,
    /// /proc/stat `processes` (forks since boot).
    pub processes: u64,
    pub procs_running: u32,
    pub procs_blocked: u32,
    pub tasks: Vec<TaskInfo>,
    /// Load averages (1, 5, 15 min).
    pub loadavg: [f64; 3],
    /// /proc/diskstats, in (major, minor) order.
    pub disks: Vec<DiskStat>,
}
