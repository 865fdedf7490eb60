//! Tasks (struct task_struct, reduced) and the Program trait: what a task does when it runs.

use crate::fs::FdTable;
use crate::Kernel;
use memtwin_engine::{Ns, TaskId};

/// What a task asks for when it has done its current piece of work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Burn CPU: user ns then system ns, on one CPU.
    Cpu { user: Ns, sys: Ns },
    /// Sleep until an absolute time. `io`: uninterruptible I/O wait (D, iowait, blkio delay).
    SleepUntil { t: Ns, io: bool },
    /// Sleep until the kernel wakes the task (a wait queue).
    Block { io: bool },
    /// Wait in the kernel for an I/O event (a page's read, writeback, a timeout): the task
    /// sleeps in a wait path until it happens (wait.rs), then its program runs again.
    Wait(crate::wait::Wait),
    /// Let other runnable tasks have the CPU.
    Yield,
    Exit(i32),
}

/// A task's behaviour: a resumable state machine. `step` is called each time the task gets
/// a CPU; kernel work done inside it (copies, faults, reclaim) is charged to the task through
/// `Kernel::charge_*` and becomes a CPU burst before the returned step takes effect.
pub trait Program {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step;
    /// Called once if the task is killed (e.g. by the OOM killer) instead of exiting.
    fn killed(&mut self, _k: &mut Kernel, _me: TaskId) {}
}

/// Where a task's output goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    Terminal,
    Null,
    /// A capture buffer (a redirected file), by index.
    Buffer(u32),
    /// The write end of a pipe (`Kernel::pipes`), by index.
    Pipe(u32),
    /// A closed descriptor (or one open only for reading): write(2) fails with EBADF.
    Closed,
}

pub struct Task {
    pub pid: u32,
    pub comm: String,
    pub cmdline: String,
    pub kthread: bool,
    pub parent: Option<TaskId>,
    pub program: Option<Box<dyn Program>>,
    /// The descriptor table (struct files_struct): descriptors -> open files (fs/file.rs).
    pub files: FdTable,
    pub stdout: Sink,
    pub stderr: Sink,
    /// The file stdout is redirected to (`> PATH`, `>> PATH`: append), for programs that
    /// write data rather than text (cat of a device or file).
    pub stdout_file: Option<(String, bool)>,
    /// Standard input is the read end of this pipe (otherwise it is the terminal, at end
    /// of file for a script).
    pub stdin_pipe: Option<u32>,
    /// Work charged during the current step, to be run as a CPU burst.
    pub pending_user: Ns,
    pub pending_sys: Ns,
    /// The step to apply once the pending burst is over.
    pub after_burst: Option<Step>,
    /// A write to standard output failed (EBADF): the program reports it when it exits
    /// (close_stdout) and its status becomes 1.
    pub stdout_failed: bool,
    /// The burst on the CPU now: (sys, duration).
    pub burst: Option<(bool, Ns)>,
    pub exit_code: Option<i32>,
    pub start: Ns,
    pub end: Ns,
    /// Storage I/O caused (/proc/PID/io read_bytes, write_bytes).
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Bytes passed through read()/write() and the calls made (/proc/PID/io rchar, wchar,
    /// syscr, syscw).
    pub rchar: u64,
    pub wchar: u64,
    pub syscr: u64,
    pub syscw: u64,
    pub swapin_delay: u64,
    /// Why the sleep the current step asks for happens (delayacct.rs); reset at each step.
    pub wait_reason: Option<crate::delayacct::WaitReason>,
    /// Delay accounting and PSI state (delayacct.rs, psi.rs).
    pub delay: crate::delayacct::TaskDelay,
    /// Page faults: minor, major (/proc/PID/stat minflt, majflt).
    pub min_flt: u64,
    pub maj_flt: u64,
    /// The file page whose major fault this task is retrying after the read
    /// (FAULT_FLAG_TRIED): the retry maps it without counting another fault.
    pub fault_tried: Option<(u32, u64)>,
    /// balance_dirty_pages state: pages dirtied since the last check.
    pub nr_dirtied: u64,
    /// When the task last dirtied pages (for counting concurrent dirtiers).
    pub last_dirtied: Ns,
    /// Direct-reclaim retries without progress (should_reclaim_retry).
    pub reclaim_retries: u32,
    /// When the task's last split-reclaim slab reclaim ended: the operation it interrupted
    /// is retried at that instant and its slab allocations go on without another.
    pub split_slab_done_at: Option<Ns>,
    /// Time spent waiting for kernel locks (spinning or asleep).
    pub lock_wait_ns: u64,
    /// CPU time of reaped children (for `time`).
    pub child_utime: u64,
    pub child_stime: u64,
    pub killed: bool,
    /// Killed by the OOM killer and not yet exited (tsk_is_oom_victim): while it lives,
    /// the OOM killer of its scope picks no other victim.
    pub oom_victim: bool,
    /// The exit status was collected and the slot is free (`Kernel::reap`).
    pub reaped: bool,
    /// Process memory: anonymous address space, if any, and its resident pages.
    pub anon_mapping: Option<u32>,
    /// The page-table pages mapping its anonymous memory (`mm::memory::PgTables`).
    pub pgtables: crate::mm::memory::PgTables,
    /// Its kernel stack's pages (alloc_thread_stack_node), each with the memory cgroup it
    /// is charged to; and whether fork and exec have given it its process image
    /// (`exec::exec_image`), and whether it has one now (its pages are touched as it runs:
    /// `exec::touch_image`).
    pub kstack: Vec<(crate::mm::page::Pfn, crate::mm::memcontrol::MemcgId)>,
    pub image_done: bool,
    pub image: bool,
    /// Other mappings it maps: shared anonymous memory and files.
    pub vmas: Vec<u32>,
    /// Its file mappings' advice and the mapped files' readahead state (`FileVma`),
    /// made at mmap (or at the first fault of a mapping the boot gave it).
    pub file_vmas: Vec<crate::mm::FileVma>,
    pub vm_kb: u64,
    /// Pages of its accountable mappings (private writable, shared anonymous) charged to
    /// vm_committed_as (__vm_enough_memory -> vm_acct_memory), uncharged at exit.
    pub committed: u64,
    pub rss_anon: u64,
    pub rss_file: u64,
    pub rss_shmem: u64,
    pub swap_ents: u64,
    pub oom_score_adj: i32,
    /// The memory cgroup the task is in (mm/memcontrol.rs; 0: the root).
    pub memcg: u16,
    /// Pages charged over memory.high since the last return to user space
    /// (current->memcg_nr_pages_over_high).
    pub memcg_nr_pages_over_high: u64,
    /// try_charge's reclaim retries without progress (nr_retries).
    pub memcg_retries: u32,
    /// The charge in progress failed once: it asks for its own pages only, no batch for
    /// the stock (try_charge_memcg's `batch = nr_pages; goto retry`).
    pub memcg_charge_retry: bool,
    /// The charge in progress drained the CPUs' stocks once (`drained`).
    pub memcg_stock_drained: bool,
    /// mem_cgroup_handle_over_high in progress: its reclaim paths run one after the other.
    pub memcg_high: Option<crate::mm::memcontrol::HighReclaim>,
    /// The I/O priority set by ioprio_set (None: IOPRIO_CLASS_NONE, which follows the
    /// niceness: task_nice_ioprio).
    pub ioprio: Option<crate::ioprio::IoPrio>,
    /// A write to a cgroup file that reclaims, in progress: its reclaim rounds are paths run
    /// one after the other in simulated time (cgroup.rs).
    pub cg_write: Option<crate::cgroup::CgWriteReclaim>,
    /// A wait a kernel call made during the task's step asks for once the step's CPU work is
    /// done (flush_work of lru_add_drain_all).
    pub wait_after: Option<crate::wait::Wait>,
    /// The program exited in a step whose kernel call must wait first: the exit status,
    /// taken once the wait is over.
    pub exit_after_wait: Option<i32>,
    /// exit_mmap's teardown of the task's memory has been charged (its last system time):
    /// the next exit is do_exit itself.
    pub exit_teardown: bool,
}

impl Task {
    pub fn new(pid: u32, comm: &str, cmdline: &str, kthread: bool, parent: Option<TaskId>, now: Ns) -> Task {
        Task {
            pid,
            comm: comm.to_string(),
            cmdline: cmdline.to_string(),
            kthread,
            parent,
            program: None,
            files: FdTable::default(),
            stdout: Sink::Terminal,
            stderr: Sink::Terminal,
            stdout_file: None,
            stdin_pipe: None,
            pending_user: 0,
            pending_sys: 0,
            after_burst: None,
            stdout_failed: false,
            burst: None,
            exit_code: None,
            start: now,
            end: 0,
            read_bytes: 0,
            write_bytes: 0,
            rchar: 0,
            wchar: 0,
            syscr: 0,
            syscw: 0,
            swapin_delay: 0,
            wait_reason: None,
            delay: crate::delayacct::TaskDelay::new(now),
            min_flt: 0,
            maj_flt: 0,
            fault_tried: None,
            nr_dirtied: 0,
            last_dirtied: 0,
            reclaim_retries: 0,
            split_slab_done_at: None,
            lock_wait_ns: 0,
            child_utime: 0,
            child_stime: 0,
            killed: false,
            oom_victim: false,
            reaped: false,
            anon_mapping: None,
            pgtables: Default::default(),
            kstack: Vec::new(),
            image_done: false,
            image: false,
            vmas: Vec::new(),
            file_vmas: Vec::new(),
            vm_kb: 0,
            committed: 0,
            rss_anon: 0,
            rss_file: 0,
            rss_shmem: 0,
            swap_ents: 0,
            oom_score_adj: 0,
            memcg: 0,
            memcg_nr_pages_over_high: 0,
            memcg_retries: 0,
            memcg_charge_retry: false,
            memcg_stock_drained: false,
            memcg_high: None,
            ioprio: None,
            cg_write: None,
            wait_after: None,
            exit_after_wait: None,
            exit_teardown: false,
        }
    }
}
