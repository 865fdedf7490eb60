//! Memory cgroups (mm/memcontrol.c, mm/page_counter.c): the cgroup tree, hierarchical
//! page counters with max/high/low/min, charging of pages to the cgroup of the task that
//! first touched them, limit reclaim, the memcg OOM killer, memory.high throttling and the
//! files of /sys/fs/cgroup (v2) and /sys/fs/cgroup/memory (v1).
//!
//! Which cgroup a page is charged to (folio_memcg) is kept without growing the frame
//! table (16 bytes per frame, all used): every address_space records the cgroup its
//! pages are usually charged to (`mapping_memcg`), and the few pages charged to another
//! cgroup — a file page first read by a task of another cgroup than the one that filled the
//! rest of the file — are listed in an exception table by frame. Anonymous memory belongs
//! to one task, so its pages are never exceptions; a file shared by containers is the
//! only source of exceptions, and those pages are what the table holds. The owner of a
//! mapping is set by the first page charged into it and forgotten when it is empty again,
//! so the representation is exact per page (what the kernel keeps in folio->memcg_data).
//! Swap entries remember their cgroup per slot (2 bytes a slot, as swap_cgroup does).

use super::lru::LruvecId;
use super::page::{Lru, Pfn};
use super::{MappingKind, Slot, PAGE_SIZE};
use crate::Kernel;
use memtwin_engine::{Ns, TaskId, NS_PER_SEC};
use memtwin_machine::KernelProfile;

/// A cgroup id (mem_cgroup_id); 0 is the root cgroup.
pub type MemcgId = u16;
pub const ROOT_MEMCG: MemcgId = 0;
/// PAGE_COUNTER_MAX on 64-bit: LONG_MAX / PAGE_SIZE.
pub const PAGE_COUNTER_MAX: u64 = (i64::MAX as u64) / PAGE_SIZE;
/// Largest number of cgroups the model keeps (the kernel's MEM_CGROUP_ID_MAX is 65535;
/// the reclaim structures reserve room for this many).
pub const MAX_MEMCGS: usize = 1024;
/// MEMCG_CHARGE_BATCH (include/linux/memcontrol.h): pages charged at once per CPU stock
/// and the unit of memory.high's penalty.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// The scheduler tick the penalty is counted in (CONFIG_HZ=250 on distribution kernels).
pub const HZ: u64 = 250;
/// MEMCG_MAX_HIGH_DELAY_JIFFIES: at most 2 s of penalty per return to user space.
pub const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2 * HZ;
const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;
/// Swap slot flag: the page is not in memory (the entry alone holds the data).
const SWAP_OUT: u16 = 1 << 15;

/// The hierarchy interface a machine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupMode {
    /// Linux 2.4: no control groups.
    None,
    /// cgroup v1: the memory controller mounted at /sys/fs/cgroup/memory.
    V1,
    /// cgroup v2 (the unified hierarchy) at /sys/fs/cgroup.
    V2,
}

impl CgroupMode {
    /// The era's default: v2 on 5.x and 6.x (systemd's unified hierarchy), v1 on 2.6.39,
    /// nothing on 2.4. `v1` (the machine file's `cgroup = "v1"`, as
    /// systemd.unified_cgroup_hierarchy=0 chooses) selects v1 on a 5.x/6.x kernel.
    pub fn for_profile(p: KernelProfile, v1: bool) -> CgroupMode {
        match p {
            KernelProfile::Linux24 => CgroupMode::None,
            KernelProfile::Linux2639 => CgroupMode::V1,
            _ if v1 => CgroupMode::V1,
            _ => CgroupMode::V2,
        }
    }
    /// Where the memory hierarchy is mounted.
    pub fn mount(self) -> &'static str {
        match self {
            CgroupMode::V1 => "/sys/fs/cgroup/memory",
            _ => "/sys/fs/cgroup",
        }
    }
}

/// struct page_counter: usage and limits in pages, with its high watermark.
#[derive(Clone, Copy, Debug)]
pub struct PageCounter {
    pub usage: u64,
    pub max: u64,
    pub high: u64,
    pub low: u64,
    pub min: u64,
    /// Effective protection computed by the last reclaim walk (emin, elow).
    pub emin: u64,
    pub elow: u64,
    pub watermark: u64,
    pub failcnt: u64,
}

impl Default for PageCounter {
    fn default() -> Self {
        PageCounter { usage: 0, max: PAGE_COUNTER_MAX, high: PAGE_COUNTER_MAX, low: 0, min: 0, emin: 0, elow: 0, watermark: 0, failcnt: 0 }
    }
}

/// enum memcg_memory_event, in memory.events order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgEvent {
    Low = 0,
    High = 1,
    Max = 2,
    Oom = 3,
    OomKill = 4,
    OomGroupKill = 5,
    SwapHigh = 6,
    SwapMax = 7,
    SwapFail = 8,
}
pub const MEMCG_EVENT_NAMES: [&str; 6] = ["low", "high", "max", "oom", "oom_kill", "oom_group_kill"];

/// Per-cgroup event counters of memory.stat (vm_event_item, reduced), local to the cgroup.
#[derive(Clone, Copy, Debug, Default)]
pub struct MemcgVmEvents {
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgrefill: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub workingset_refault_anon: u64,
    pub workingset_refault_file: u64,
    pub workingset_activate_anon: u64,
    pub workingset_activate_file: u64,
    /// v1: pages charged and uncharged (PGPGIN / PGPGOUT of memcg1_stat_format).
    pub pgpgin: u64,
    pub pgpgout: u64,
}

/// struct mem_cgroup, reduced.
#[derive(Clone, Debug)]
pub struct MemCgroup {
    /// The path below the hierarchy's root ("/" for the root, "/a/b").
    pub path: String,
    pub parent: Option<MemcgId>,
    pub children: Vec<MemcgId>,
    pub online: bool,
    pub memory: PageCounter,
    pub swap: PageCounter,
    /// v1: memory + swap (memsw).
    pub memsw: PageCounter,
    /// v1 memory.swappiness (mem_cgroup_swappiness); None: the global vm.swappiness.
    pub swappiness: Option<u32>,
    pub oom_group: bool,
    /// v1 memory.use_hierarchy: this cgroup's children charge, are limited by and are
    /// reclaimed with it (their page counters have it as parent). Always true on v2.
    pub use_hierarchy: bool,
    /// v2: "+memory" in this cgroup's cgroup.subtree_control.
    pub subtree_memory: bool,
    /// memory.events (hierarchical) and memory.events.local, indexed by MemcgEvent.
    pub events: [u64; 9],
    pub events_local: [u64; 9],
    pub vm: MemcgVmEvents,
    /// Pages charged by type (local): anon, file (incl. shmem), shmem.
    pub nr_anon: u64,
    pub nr_file: u64,
    pub nr_shmem: u64,
    /// Swap entries whose page is not in memory (v1 memsw counts memory + these).
    pub nr_swapped_out: u64,
    /// The lruvec of this cgroup on the node (mem_cgroup_lruvec; 0: the root's).
    pub lruvec: LruvecId,
    /// Workingset eviction clock of this cgroup's lruvec (lruvec->nonresident_age).
    pub nonresident_age: u64,
    /// Time its tasks slept in memory.high throttling.
    pub high_throttled_ns: Ns,
    /// 2.6.39: the id of the cgroup of this subtree its limit reclaim took last
    /// (mem_cgroup->last_scanned_child; mem_cgroup_select_victim goes on after it).
    pub last_scanned_child: MemcgId,
    /// Kernel memory (6.x): pages charged for slab objects (MEMCG_KMEM, local), the bytes
    /// of them not used by objects (obj_cgroup->nr_charged_bytes), and the objects'
    /// bytes by kind (NR_SLAB_RECLAIMABLE_B, NR_SLAB_UNRECLAIMABLE_B; local).
    pub nr_kmem: u64,
    /// Of `nr_kmem`, page-table pages of the cgroup's tasks (NR_PAGETABLE: memory.stat
    /// `pagetables`).
    pub nr_pagetables: u64,
    /// Of `nr_kmem`, kernel-stack pages of the cgroup's tasks (NR_KERNEL_STACK_KB:
    /// memory.stat `kernel_stack`).
    pub nr_kernel_stack: u64,
    pub objcg_bytes: u64,
    pub slab_bytes: [u64; 2],
    /// Of `nr_kmem`, pages an allocation made after its event could not charge without
    /// going over a limit (`ObjCharge::Defer`): the page counters take them with the
    /// cgroup's next charge by a task, which reclaims for them if it must.
    pub kmem_owed: u64,
    /// v1 memory.kmem.* (memcg->kmem; hierarchical like `memory`).
    pub kmem: PageCounter,
    /// css->serial_nr: cgroups numbered in the order they were made (the root is 1).
    pub serial: u64,
}

impl MemCgroup {
    /// The count of kernel pages of `owner`'s kind charged to the cgroup (page tables or
    /// kernel stacks).
    fn kernel_pages_mut(&mut self, owner: super::KernelOwner) -> &mut u64 {
        match owner {
            super::KernelOwner::KernelStack => &mut self.nr_kernel_stack,
            _ => &mut self.nr_pagetables,
        }
    }
    fn new(path: String, parent: Option<MemcgId>) -> MemCgroup {
        MemCgroup {
            path,
            parent,
            children: Vec::new(),
            online: true,
            memory: PageCounter::default(),
            swap: PageCounter::default(),
            memsw: PageCounter::default(),
            swappiness: None,
            oom_group: false,
            use_hierarchy: true,
            subtree_memory: false,
            events: [0; 9],
            events_local: [0; 9],
            vm: MemcgVmEvents::default(),
            nr_anon: 0,
            nr_file: 0,
            nr_shmem: 0,
            nr_swapped_out: 0,
            lruvec: 0,
            nonresident_age: 0,
            high_throttled_ns: 0,
            last_scanned_child: 0,
            nr_kmem: 0,
            nr_pagetables: 0,
            nr_kernel_stack: 0,
            objcg_bytes: 0,
            slab_bytes: [0; 2],
            kmem_owed: 0,
            kmem: PageCounter::default(),
            serial: 1,
        }
    }
}

/// How an object's charge is made (`Kernel::obj_cgroup_charge_by`): by a task that may
/// reclaim in the cgroup first, forced past the limit (__GFP_NOFAIL outside a task), or,
/// for an allocation made after the event that needed it, owed by the cgroup while it
/// would go over its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjCharge {
    Task(TaskId),
    Force,
    Defer,
}

/// All memory cgroups of the machine and the page -> cgroup records.
#[derive(Clone, Debug)]
pub struct MemCgroups {
    pub mode: CgroupMode,
    pub cgs: Vec<MemCgroup>,
    free_ids: Vec<MemcgId>,
    /// The cgroup a mapping's pages are charged to, by mapping id (0: root / none yet).
    mapping_memcg: Vec<MemcgId>,
    /// Pages charged to another cgroup than their mapping's.
    exceptions: crate::idhash::IdMap<Pfn, MemcgId>,
    /// A page allocated and charged, not yet in a mapping: (frame, cgroup).
    pending: Option<(Pfn, MemcgId)>,
    /// The cgroup of each swap slot (swap_cgroup), SWAP_OUT set while the page is out.
    swap_memcg: Vec<u16>,
    /// The cgroup owning each lruvec of the node (lruvec_memcg), by lruvec id.
    lruvec_memcg: Vec<MemcgId>,
    /// systemd-run's unit counter (run-rXXXX.scope names).
    pub scopes: u64,
    /// The cgroup of the scenario's shell: where the commands it starts begin.
    pub shell: MemcgId,
    /// memcg_stock_pcp, by CPU: the cgroup whose pages the CPU's stock holds (charged to
    /// its page counters, not yet to a page) and how many.
    stock: Vec<(MemcgId, u64)>,
    /// MEMCG_CHARGE_BATCH of the era (`Profile::memcg_charge_batch`).
    pub charge_batch: u64,
    /// The shell's process id, once the script asked for it (`$$`).
    pub shell_pid: Option<u32>,
}

impl MemCgroups {
    pub fn new(mode: CgroupMode) -> MemCgroups {
        MemCgroups::with_root_hierarchy(mode, true)
    }

    /// As `new`, with the v1 root's memory.use_hierarchy (`Profile::memcg_root_use_hierarchy`;
    /// v2 is always hierarchical).
    pub fn with_root_hierarchy(mode: CgroupMode, use_hierarchy: bool) -> MemCgroups {
        let mut root = MemCgroup::new("/".into(), None);
        root.use_hierarchy = use_hierarchy || mode != CgroupMode::V1;
        // systemd enables the memory controller for the root's children at boot.
        root.subtree_memory = mode == CgroupMode::V2;
        MemCgroups {
            mode,
            cgs: vec![root],
            free_ids: Vec::new(),
            mapping_memcg: Vec::new(),
            exceptions: Default::default(),
            pending: None,
            swap_memcg: Vec::new(),
            lruvec_memcg: vec![ROOT_MEMCG],
            scopes: 0,
            shell: ROOT_MEMCG,
            shell_pid: None,
            stock: Vec::new(),
            charge_batch: MEMCG_CHARGE_BATCH,
        }
    }

    /// consume_stock: take `n` pages from CPU `cpu`'s stock if it holds that many of `id`'s
    /// (never more than a batch at once).
    pub fn consume_stock(&mut self, cpu: usize, id: MemcgId, n: u64) -> bool {
        if n > self.charge_batch {
            return false;
        }
        match self.stock.get_mut(cpu) {
            Some(s) if s.0 == id && s.1 >= n => {
                s.1 -= n;
                true
            }
            _ => false,
        }
    }

    /// refill_stock: `n` pages charged to `id` go to CPU `cpu`'s stock; a stock of another
    /// cgroup is drained first, and a stock grown past a batch is drained.
    pub fn refill_stock(&mut self, cpu: usize, id: MemcgId, n: u64) {
        if self.stock.len() <= cpu {
            self.stock.resize(cpu + 1, (ROOT_MEMCG, 0));
        }
        if self.stock[cpu].0 != id {
            self.drain_stock(cpu);
            self.stock[cpu].0 = id;
        }
        self.stock[cpu].1 += n;
        if self.stock[cpu].1 > self.charge_batch {
            self.drain_stock(cpu);
        }
    }

    /// drain_stock: the pages CPU `cpu`'s stock holds are uncharged from its cgroup's
    /// counters (memory and memory+swap).
    fn drain_stock(&mut self, cpu: usize) {
        let (id, n) = std::mem::replace(&mut self.stock[cpu], (ROOT_MEMCG, 0));
        if n > 0 && id != ROOT_MEMCG {
            self.counter_uncharge(id, n, true);
        }
    }

    /// drain_all_stock: drain every CPU's stock that holds pages of `root` or a cgroup
    /// below it. (The kernel drains the other CPUs' from a work item on each; here at once.)
    pub fn drain_all_stock(&mut self, root: MemcgId) {
        for cpu in 0..self.stock.len() {
            let (id, n) = self.stock[cpu];
            if n > 0 && self.is_descendant(id, root) {
                self.drain_stock(cpu);
            }
        }
    }

    /// Pages the CPUs' stocks hold for cgroup `id` itself: charged to it (its usage counts
    /// them) but to no page.
    pub fn stock_pages(&self, id: MemcgId) -> u64 {
        self.stock.iter().filter(|s| s.0 == id).map(|s| s.1).sum()
    }

    /// Whether any cgroup besides the root exists (charging has work to do).
    #[inline]
    pub fn active(&self) -> bool {
        self.cgs.len() > 1
    }

    pub fn lookup(&self, path: &str) -> Option<MemcgId> {
        let p = if path.is_empty() { "/" } else { path };
        self.cgs.iter().position(|c| c.online && c.path == p).map(|i| i as MemcgId)
    }

    /// Create a cgroup below `parent` (cgroup_mkdir -> mem_cgroup_css_alloc).
    pub fn create(&mut self, parent: MemcgId, name: &str) -> Result<MemcgId, &'static str> {
        let path = if parent == ROOT_MEMCG { format!("/{name}") } else { format!("{}/{name}", self.cgs[parent as usize].path) };
        if self.lookup(&path).is_some() {
            return Err("File exists");
        }
        let online = self.cgs.iter().filter(|c| c.online).count();
        if online >= MAX_MEMCGS {
            return Err("No space left on device");
        }
        let mut c = MemCgroup::new(path, Some(parent));
        c.serial = self.cgs.iter().map(|g| g.serial).max().unwrap_or(1) + 1;
        // memory.swappiness of a new v1 cgroup is its parent's (mem_cgroup_css_alloc).
        c.swappiness = self.cgs[parent as usize].swappiness;
        // ... and so is its use_hierarchy.
        c.use_hierarchy = self.cgs[parent as usize].use_hierarchy;
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.cgs[id as usize] = c;
                id
            }
            None => {
                self.cgs.push(c);
                (self.cgs.len() - 1) as MemcgId
            }
        };
        self.cgs[parent as usize].children.push(id);
        Ok(id)
    }

    /// Remove an empty cgroup (cgroup_rmdir). Pages still charged to it are reparented
    /// (memcg_reparent_objcgs / the v1 force_empty-less rmdir: charges move to the parent).
    pub fn remove(&mut self, id: MemcgId) {
        let parent = self.cgs[id as usize].parent.expect("not the root");
        self.cgs[parent as usize].children.retain(|&c| c != id);
        self.move_charges_to_parent(id);
        let lv = self.cgs[id as usize].lruvec;
        if lv != 0 {
            self.lruvec_memcg[lv as usize] = ROOT_MEMCG;
        }
        let c = &mut self.cgs[id as usize];
        c.online = false;
        c.path.clear();
        self.free_ids.push(id);
    }

    /// Charge everything cgroup `id` holds itself to its parent: its pages, page-cache
    /// ownership and swap entries. The ancestors' usage already counts them (hierarchical
    /// counters); the cgroup's own counters drop to what its children hold. (The caller
    /// moves the pages of its lruvec.)
    pub fn move_charges_to_parent(&mut self, id: MemcgId) {
        self.pay_kmem_owed(id, self.cgs[id as usize].kmem_owed);
        let parent = self.cgs[id as usize].parent.expect("not the root");
        let c = self.cgs[id as usize].clone();
        // Move the local charges to the parent: usage of ancestors is unchanged.
        let p = &mut self.cgs[parent as usize];
        p.nr_anon += c.nr_anon;
        p.nr_file += c.nr_file;
        p.nr_shmem += c.nr_shmem;
        p.nr_swapped_out += c.nr_swapped_out;
        // memcg_reparent_objcgs: the objects charged to it are the parent's from now on,
        // and so are the unused bytes of its pages.
        p.nr_kmem += c.nr_kmem;
        p.nr_pagetables += c.nr_pagetables;
        p.nr_kernel_stack += c.nr_kernel_stack;
        p.objcg_bytes += c.objcg_bytes;
        p.slab_bytes[0] += c.slab_bytes[0];
        p.slab_bytes[1] += c.slab_bytes[1];
        if parent != ROOT_MEMCG && self.parent_mem_cgroup(id).is_none() {
            // A flat v1 child's pages were never in its parent's counters: charge them now
            // (2.6.39's mem_cgroup_move_parent charges the parent before moving a page).
            // A hierarchical parent's usage already includes the child's.
            let (own, out) = (c.nr_anon + c.nr_file + c.nr_kmem, c.nr_swapped_out);
            self.counter_charge(parent, own);
            self.kmem_counter_charge(parent, c.nr_kmem);
            for i in self.ancestors(parent) {
                if i == ROOT_MEMCG {
                    break;
                }
                let cg = &mut self.cgs[i as usize];
                cg.memsw.usage += out;
                cg.memsw.watermark = cg.memsw.watermark.max(cg.memsw.usage);
                cg.swap.usage += out;
                cg.swap.watermark = cg.swap.watermark.max(cg.swap.usage);
            }
        }
        for m in self.mapping_memcg.iter_mut() {
            if *m == id {
                *m = parent;
            }
        }
        for v in self.exceptions.values_mut() {
            if *v == id {
                *v = parent;
            }
        }
        for s in self.swap_memcg.iter_mut() {
            if *s & !SWAP_OUT == id && *s != 0 {
                *s = (*s & SWAP_OUT) | parent;
            }
        }
        let own = c.nr_anon + c.nr_file + c.nr_kmem;
        let c = &mut self.cgs[id as usize];
        c.memory.usage -= own.min(c.memory.usage);
        c.kmem.usage -= c.nr_kmem.min(c.kmem.usage);
        (c.nr_kmem, c.nr_pagetables, c.nr_kernel_stack, c.objcg_bytes, c.slab_bytes) = (0, 0, 0, 0, [0; 2]);
        c.memsw.usage -= (own + c.nr_swapped_out).min(c.memsw.usage);
        c.swap.usage -= c.nr_swapped_out.min(c.swap.usage);
        (c.nr_anon, c.nr_file, c.nr_shmem, c.nr_swapped_out) = (0, 0, 0, 0);
    }

    /// Give cgroup `id` lruvec `lv` (created with it).
    pub fn set_lruvec(&mut self, id: MemcgId, lv: LruvecId) {
        self.cgs[id as usize].lruvec = lv;
        let i = lv as usize;
        if self.lruvec_memcg.len() <= i {
            self.lruvec_memcg.resize(i + 1, ROOT_MEMCG);
        }
        self.lruvec_memcg[i] = id;
    }
    /// The lruvec of the cgroup page `p` is being charged to (allocated, not yet added).
    #[inline]
    pub fn charging_lruvec(&self, p: Pfn) -> Option<LruvecId> {
        match self.pending {
            Some((q, id)) if q == p => Some(self.cgs[id as usize].lruvec),
            _ => None,
        }
    }
    /// lruvec_memcg: the cgroup whose lruvec `lv` is.
    #[inline]
    pub fn lruvec_memcg(&self, lv: LruvecId) -> MemcgId {
        self.lruvec_memcg.get(lv as usize).copied().unwrap_or(ROOT_MEMCG)
    }

    /// parent_mem_cgroup: the cgroup above `id` in the memory hierarchy, i.e. the parent of
    /// its page counters. None for the root, and for a cgroup whose parent has
    /// memory.use_hierarchy 0 (v1 before 5.11: page_counter_init(&memcg->memory, NULL) in
    /// mem_cgroup_css_alloc), which charges, limits and reclaims on its own.
    #[inline]
    pub fn parent_mem_cgroup(&self, id: MemcgId) -> Option<MemcgId> {
        let p = self.cgs[id as usize].parent?;
        self.cgs[p as usize].use_hierarchy.then_some(p)
    }

    /// id and its ancestors in the memory hierarchy, nearest first (the root last, when
    /// included): the page counters a charge to `id` reaches.
    pub fn ancestors(&self, id: MemcgId) -> Vec<MemcgId> {
        let mut v = Vec::new();
        let mut c = Some(id);
        while let Some(i) = c {
            v.push(i);
            c = self.parent_mem_cgroup(i);
        }
        v
    }

    /// mem_cgroup_is_descendant: `root` itself, or below it when `root` is hierarchical (a
    /// flat v1 cgroup has no descendants for memory purposes). The root cgroup holds every
    /// cgroup whatever its use_hierarchy.
    pub fn is_descendant(&self, id: MemcgId, root: MemcgId) -> bool {
        if id == root || root == ROOT_MEMCG {
            return true;
        }
        if !self.cgs[root as usize].use_hierarchy {
            return false;
        }
        let mut c = Some(id);
        while let Some(i) = c {
            if i == root {
                return true;
            }
            c = self.cgs[i as usize].parent;
        }
        false
    }

    /// The subtree of `root` in pre-order (mem_cgroup_iter's order: css_next_descendant_pre).
    /// mem_cgroup_iter visits only `root` itself when it is a flat v1 cgroup (use_hierarchy
    /// 0) other than the root cgroup.
    pub fn subtree(&self, root: MemcgId) -> Vec<MemcgId> {
        if root != ROOT_MEMCG && !self.cgs[root as usize].use_hierarchy {
            return vec![root];
        }
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            out.push(i);
            for &c in self.cgs[i as usize].children.iter().rev() {
                stack.push(c);
            }
        }
        out
    }

    /// The cgroup a page is charged to (folio_memcg).
    #[inline]
    pub fn page_memcg(&self, p: Pfn, mapping: u32) -> MemcgId {
        if !self.exceptions.is_empty() {
            if let Some(&m) = self.exceptions.get(&p) {
                return m;
            }
        }
        self.mapping_memcg.get(mapping as usize).copied().unwrap_or(ROOT_MEMCG)
    }

    /// The charge of page `old` now belongs to `new`, which replaced it in its mapping
    /// (mem_cgroup_migrate: the new folio takes over the old one's memcg).
    pub fn migrate(&mut self, old: Pfn, new: Pfn) {
        if let Some(id) = self.exceptions.remove(&old) {
            self.exceptions.insert(new, id);
        }
    }

    /// The usual owner of a mapping's pages.
    pub fn mapping_owner(&self, mapping: u32) -> MemcgId {
        self.mapping_memcg.get(mapping as usize).copied().unwrap_or(ROOT_MEMCG)
    }

    /// Apply `f` to cgroup `id` and each cgroup above it whose page counters it charges
    /// (page_counter's parent chain: parent_mem_cgroup), the root excluded (it is not
    /// counted: mem_cgroup_is_root).
    fn for_each_counter(&mut self, id: MemcgId, mut f: impl FnMut(&mut MemCgroup)) {
        let mut c = Some(id);
        while let Some(i) = c {
            if i == ROOT_MEMCG {
                break;
            }
            f(&mut self.cgs[i as usize]);
            c = self.parent_mem_cgroup(i);
        }
    }

    /// page_counter_charge up the tree (no limit check; the root is not counted, as
    /// mem_cgroup_is_root skips it).
    pub fn counter_charge(&mut self, id: MemcgId, n: u64) {
        self.for_each_counter(id, |cg| {
            cg.memory.usage += n;
            cg.memory.watermark = cg.memory.watermark.max(cg.memory.usage);
            cg.memsw.usage += n;
            cg.memsw.watermark = cg.memsw.watermark.max(cg.memsw.usage);
        });
    }
    /// `n` of the kernel-memory pages cgroup `id` owes (`MemCgroup::kmem_owed`) go into its
    /// page counters.
    pub fn pay_kmem_owed(&mut self, id: MemcgId, n: u64) {
        if n > 0 {
            self.cgs[id as usize].kmem_owed -= n;
            self.counter_charge(id, n);
            self.kmem_counter_charge(id, n);
        }
    }
    /// v1's kmem page counter up the tree (memcg_account_kmem: charged with `memory`).
    pub fn kmem_counter_charge(&mut self, id: MemcgId, n: u64) {
        self.for_each_counter(id, |cg| {
            cg.kmem.usage += n;
            cg.kmem.watermark = cg.kmem.watermark.max(cg.kmem.usage);
        });
    }
    pub fn kmem_counter_uncharge(&mut self, id: MemcgId, n: u64) {
        self.for_each_counter(id, |cg| cg.kmem.usage -= n.min(cg.kmem.usage));
    }

    pub fn counter_uncharge(&mut self, id: MemcgId, n: u64, memsw_too: bool) {
        self.for_each_counter(id, |cg| {
            cg.memory.usage -= n.min(cg.memory.usage);
            if memsw_too {
                cg.memsw.usage -= n.min(cg.memsw.usage);
            }
        });
    }

    /// page_counter_try_charge: the first cgroup up the tree whose limit `n` more pages
    /// would exceed (its failcnt counts the failure). v1 also checks memory+swap.
    pub fn over_limit(&mut self, id: MemcgId, n: u64) -> Option<MemcgId> {
        self.over_limit_which(id, n).map(|(i, _)| i)
    }

    /// As `over_limit`, and whether it was v1's memory+swap limit (reclaim must then not
    /// swap: it would not lower memsw usage).
    pub fn over_limit_which(&mut self, id: MemcgId, n: u64) -> Option<(MemcgId, bool)> {
        let v1 = self.mode == CgroupMode::V1;
        for i in self.ancestors(id) {
            if i == ROOT_MEMCG {
                break;
            }
            let cg = &mut self.cgs[i as usize];
            // try_charge_memcg checks memsw first, then memory.
            if v1 && cg.memsw.usage + n > cg.memsw.max {
                cg.memsw.failcnt += 1;
                return Some((i, true));
            }
            if cg.memory.usage + n > cg.memory.max {
                cg.memory.failcnt += 1;
                return Some((i, false));
            }
        }
        None
    }

    /// mem_cgroup_margin: pages that can still be charged to `id` itself.
    pub fn margin(&self, id: MemcgId) -> u64 {
        let c = &self.cgs[id as usize];
        let mut m = c.memory.max.saturating_sub(c.memory.usage);
        if self.mode == CgroupMode::V1 {
            m = m.min(c.memsw.max.saturating_sub(c.memsw.usage));
        }
        m
    }

    /// memcg_memory_event: count in the cgroup (local) and in it and its ancestors
    /// (memory.events is hierarchical since 5.2 unless memory_localevents).
    pub fn event(&mut self, id: MemcgId, e: MemcgEvent) {
        self.cgs[id as usize].events_local[e as usize] += 1;
        for i in self.ancestors(id) {
            if i == ROOT_MEMCG {
                break;
            }
            self.cgs[i as usize].events[e as usize] += 1;
        }
    }

    /// Record that page `p` of `mapping` (a `kind` page) is charged to `id`.
    /// `empty`: the mapping held no pages and no swap entries before this one.
    fn commit(&mut self, p: Pfn, mapping: u32, kind: MappingKind, empty: bool, id: MemcgId) {
        let m = mapping as usize;
        if self.mapping_memcg.len() <= m {
            self.mapping_memcg.resize(m + 1, ROOT_MEMCG);
        }
        if empty {
            // The first page of an empty mapping decides its usual owner.
            self.mapping_memcg[m] = id;
        }
        if self.mapping_memcg[m] != id {
            self.exceptions.insert(p, id);
        }
        let c = &mut self.cgs[id as usize];
        c.vm.pgpgin += 1;
        match kind {
            MappingKind::Anon => c.nr_anon += 1,
            MappingKind::Shmem => {
                c.nr_file += 1;
                c.nr_shmem += 1;
            }
            _ => c.nr_file += 1,
        }
    }

    /// Forget page `p`'s charge record; returns the cgroup it was charged to.
    fn release(&mut self, p: Pfn, mapping: u32, kind: MappingKind, nrpages_after: u64) -> MemcgId {
        let id = match self.exceptions.remove(&p) {
            Some(id) => id,
            None => self.mapping_owner(mapping),
        };
        let c = &mut self.cgs[id as usize];
        c.vm.pgpgout += 1;
        match kind {
            MappingKind::Anon => c.nr_anon = c.nr_anon.saturating_sub(1),
            MappingKind::Shmem => {
                c.nr_file = c.nr_file.saturating_sub(1);
                c.nr_shmem = c.nr_shmem.saturating_sub(1);
            }
            _ => c.nr_file = c.nr_file.saturating_sub(1),
        }
        if nrpages_after == 0 && kind == MappingKind::File {
            if let Some(o) = self.mapping_memcg.get_mut(mapping as usize) {
                *o = ROOT_MEMCG;
            }
        }
        id
    }

    /// A mapping id is reused: it starts with no owner.
    pub fn mapping_reset(&mut self, mapping: u32) {
        if let Some(o) = self.mapping_memcg.get_mut(mapping as usize) {
            *o = ROOT_MEMCG;
        }
    }

    /// Set the usual owner of a mapping (anonymous memory and shmem of a task).
    pub fn set_mapping_owner(&mut self, mapping: u32, id: MemcgId) {
        let m = mapping as usize;
        if self.mapping_memcg.len() <= m {
            self.mapping_memcg.resize(m + 1, ROOT_MEMCG);
        }
        self.mapping_memcg[m] = id;
    }

    fn swap_slot(&mut self, slot: u32) -> &mut u16 {
        let s = slot as usize;
        if self.swap_memcg.len() <= s {
            self.swap_memcg.resize(s + 1, 0);
        }
        &mut self.swap_memcg[s]
    }
    pub fn swap_owner(&self, slot: u32) -> MemcgId {
        self.swap_memcg.get(slot as usize).map_or(ROOT_MEMCG, |&s| s & !SWAP_OUT)
    }
}

// ---- Protection (mem_cgroup_calculate_protection) ------------------------------------------

/// effective_protection (6.1, without memory_recursiveprot): a cgroup's protection is its
/// setting, capped by its usage; when the siblings together claim more than the parent's
/// effective protection, each gets its share of it in proportion to its claim.
pub fn effective_protection(usage: u64, setting: u64, parent_effective: u64, siblings_protected: u64) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    protected
}

/// calculate_overage: how far usage is above high, in 2^-20 units of high.
pub fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    let high = high.max(1);
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high
}

/// calculate_high_delay: the penalty in jiffies for `nr_pages` charged over high: quadratic
/// in the overage, scaled so that a cgroup 2x over high sleeps the maximum; per `batch`
/// pages (MEMCG_CHARGE_BATCH of the era).
pub fn calculate_high_delay(nr_pages: u64, max_overage: u64, batch: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let mut penalty = (max_overage as u128 * max_overage as u128 * HZ as u128) as u128;
    penalty >>= MEMCG_DELAY_PRECISION_SHIFT;
    penalty >>= MEMCG_DELAY_SCALING_SHIFT;
    (penalty * nr_pages as u128 / batch as u128) as u64
}

/// Jiffies to simulated time.
pub fn jiffies_ns(j: u64) -> Ns {
    j * (NS_PER_SEC / HZ)
}

/// page_counter_memparse: "max" or a size with an optional K/M/G/T/P/E suffix (memparse),
/// in pages (rounded down). Anything else is EINVAL.
pub fn memparse_pages(s: &str, max_word: &str) -> Result<u64, Errno> {
    let s = s.trim();
    if s == max_word {
        return Ok(PAGE_COUNTER_MAX);
    }
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if digits == 0 {
        return Err(Errno::EINVAL);
    }
    let n: u64 = s[..digits].parse().map_err(|_| Errno::ERANGE)?;
    let shift = match &s[digits..] {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        "p" | "P" => 50,
        "e" | "E" => 60,
        _ => return Err(Errno::EINVAL),
    };
    let bytes = n.checked_shl(shift).filter(|b| b >> shift == n).unwrap_or(u64::MAX);
    Ok((bytes / PAGE_SIZE).min(PAGE_COUNTER_MAX))
}

/// Errors of cgroup file operations, printed as the C library spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    EINVAL,
    EBUSY,
    ENOENT,
    EEXIST,
    EAGAIN,
    ERANGE,
    ENOTSUP,
    EACCES,
    ESRCH,
    ENOTEMPTY,
    ENOSPC,
    ENODEV,
    EISDIR,
}

impl Errno {
    pub fn strerror(self) -> &'static str {
        match self {
            Errno::EINVAL => "Invalid argument",
            Errno::EBUSY => "Device or resource busy",
            Errno::ENOENT => "No such file or directory",
            Errno::EEXIST => "File exists",
            Errno::EAGAIN => "Resource temporarily unavailable",
            Errno::ERANGE => "Numerical result out of range",
            Errno::ENOTSUP => "Operation not supported",
            Errno::EACCES => "Permission denied",
            Errno::ESRCH => "No such process",
            Errno::ENOTEMPTY => "Directory not empty",
            Errno::ENOSPC => "No space left on device",
            Errno::ENODEV => "No such device",
            Errno::EISDIR => "Is a directory",
        }
    }
}

// ---- Charging hooks -------------------------------------------------------------------

/// What try_charge decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Charged.
    Ok,
    /// Over the limit of this cgroup: reclaim in it before trying again.
    OverLimit(MemcgId),
}

impl Kernel {
    /// The cgroup of a task (task_css(current, memory_cgrp_id)); kernel threads are in the root.
    #[inline]
    pub fn task_memcg(&self, tid: TaskId) -> MemcgId {
        self.tasks[tid as usize].memcg
    }

    /// The cgroup a page is charged to.
    #[inline]
    pub fn page_memcg(&self, p: Pfn) -> MemcgId {
        if !self.memcg.active() {
            return ROOT_MEMCG;
        }
        self.memcg.page_memcg(p, self.mm.pages.mapping(p))
    }

    /// count_memcg_event_mm(PGFAULT / PGMAJFAULT): a major fault counts as both.
    #[inline]
    pub fn memcg_count_fault(&mut self, tid: TaskId, major: bool) {
        let id = self.tasks[tid as usize].memcg;
        if id != ROOT_MEMCG {
            let v = &mut self.memcg.cgs[id as usize].vm;
            v.pgfault += 1;
            v.pgmajfault += major as u64;
        }
    }

    /// A frame was allocated for `tid` (mem_cgroup_charge): charge it to the task's cgroup.
    /// Ok(()) when charged; Err(step) when the cgroup is at its limit and the task must
    /// reclaim (done here, charged to the task), wait, or was OOM-killed — the frame is
    /// given back and the caller retries as after any failed allocation.
    pub fn mem_cgroup_charge(&mut self, tid: TaskId, p: Pfn) -> Result<(), crate::task::Step> {
        let id = self.task_memcg(tid);
        if id == ROOT_MEMCG {
            return Ok(());
        }
        match self.try_charge(tid, id, 1) {
            Ok(()) => {
                self.memcg.pending = Some((p, id));
                Ok(())
            }
            Err(step) => {
                // The page was never used: put_page frees it (free_unref_page).
                self.free_page(p);
                Err(step)
            }
        }
    }

    /// filemap_add_folio's charge record: the page joins mapping `m`.
    /// `activated`: a refault that workingset_refault activated.
    pub(crate) fn memcg_page_added(&mut self, p: Pfn, m: u32, prev: Slot, activated: bool) {
        if !self.memcg.active() {
            return;
        }
        let kind = self.mm.mappings[m as usize].kind;
        let nrpages_before = self.mm.mappings[m as usize].nrpages - 1;
        let empty = nrpages_before == 0 && self.mm.mappings[m as usize].nr_swapped == 0;
        let mut id = match self.memcg.pending.take() {
            Some((q, id)) if q == p => id,
            other => {
                self.memcg.pending = other;
                ROOT_MEMCG
            }
        };
        // Swap-in: the page goes back to the cgroup that owns the swap entry
        // (mem_cgroup_swapin_charge_folio looks up swap_cgroup).
        if let Slot::Swap(slot) = prev {
            let owner = self.memcg.swap_owner(slot);
            let s = self.memcg.swap_slot(slot);
            if *s & SWAP_OUT != 0 {
                *s &= !SWAP_OUT;
                let c = &mut self.memcg.cgs[owner as usize];
                c.nr_swapped_out = c.nr_swapped_out.saturating_sub(1);
                // memsw: the entry's share moves back to memory.
                self.memcg.counter_uncharge(owner, 1, true);
            }
            if owner != id {
                self.memcg.counter_uncharge(id, 1, true);
                self.memcg.counter_charge(owner, 1);
                id = owner;
            }
        } else if id == ROOT_MEMCG && !empty && kind != MappingKind::File {
            // Pages added without a charging task stay with the mapping's owner.
            id = self.memcg.mapping_owner(m);
            self.memcg.counter_charge(id, 1);
        }
        self.memcg.commit(p, m, kind, empty, id);
        // commit_charge: the page belongs to its cgroup's lruvec from now on.
        let lv = self.memcg.cgs[id as usize].lruvec;
        self.mm.set_page_lruvec(p, lv);
        if let Slot::Shadow(_) | Slot::Swap(_) = prev {
            let file = !self.mm.mappings[m as usize].swap_backed();
            let v = &mut self.memcg.cgs[id as usize].vm;
            match (file, activated) {
                (true, a) => {
                    v.workingset_refault_file += 1;
                    v.workingset_activate_file += a as u64;
                }
                (false, a) => {
                    v.workingset_refault_anon += 1;
                    v.workingset_activate_anon += a as u64;
                }
            }
        }
    }

    /// __filemap_remove_folio's uncharge (mem_cgroup_uncharge / mem_cgroup_swapout): the
    /// page leaves mapping `m`; `swapped_to`: its data now lives only in this swap slot.
    pub(crate) fn memcg_page_removed(&mut self, p: Pfn, m: u32, swapped_to: Option<u32>) {
        if !self.memcg.active() {
            return;
        }
        let kind = self.mm.mappings[m as usize].kind;
        let after = self.mm.mappings[m as usize].nrpages;
        let id = self.memcg.release(p, m, kind, after);
        if id == ROOT_MEMCG {
            return;
        }
        match swapped_to {
            Some(slot) => {
                // mem_cgroup_swapout: memory is uncharged, memsw keeps the entry.
                *self.memcg.swap_slot(slot) = id | SWAP_OUT;
                self.memcg.cgs[id as usize].nr_swapped_out += 1;
                self.memcg.counter_uncharge(id, 1, false);
            }
            None => self.memcg.counter_uncharge(id, 1, true),
        }
    }

    /// A frame charged but never added to a mapping goes back (mem_cgroup_uncharge).
    pub(crate) fn memcg_page_freed_unused(&mut self, p: Pfn) {
        if let Some((q, id)) = self.memcg.pending {
            if q == p {
                self.memcg.pending = None;
                self.memcg.counter_uncharge(id, 1, true);
            }
        }
    }

    /// __mem_cgroup_try_charge_swap: a swap slot for page `p`; refused (false) when its
    /// cgroup or an ancestor is at memory.swap.max (counted in memory.swap.events max).
    pub(crate) fn memcg_try_charge_swap(&mut self, p: Pfn, slot: u32) -> bool {
        if !self.memcg.active() {
            return true;
        }
        let id = self.page_memcg(p);
        if id == ROOT_MEMCG {
            return true;
        }
        if self.memcg.mode == CgroupMode::V2 {
            for i in self.memcg.ancestors(id) {
                if i == ROOT_MEMCG {
                    break;
                }
                let c = &mut self.memcg.cgs[i as usize];
                if c.swap.usage + 1 > c.swap.max {
                    c.swap.failcnt += 1;
                    self.memcg.event(i, MemcgEvent::SwapMax);
                    self.memcg.event(id, MemcgEvent::SwapFail);
                    return false;
                }
            }
        }
        for i in self.memcg.ancestors(id) {
            if i == ROOT_MEMCG {
                break;
            }
            let c = &mut self.memcg.cgs[i as usize];
            c.swap.usage += 1;
            c.swap.watermark = c.swap.watermark.max(c.swap.usage);
        }
        *self.memcg.swap_slot(slot) = id;
        true
    }

    /// __mem_cgroup_uncharge_swap: the slot is freed.
    pub(crate) fn memcg_uncharge_swap(&mut self, slot: u32) {
        if !self.memcg.active() {
            return;
        }
        let v = std::mem::take(self.memcg.swap_slot(slot));
        let id = v & !SWAP_OUT;
        if id == ROOT_MEMCG {
            return;
        }
        for i in self.memcg.ancestors(id) {
            if i == ROOT_MEMCG {
                break;
            }
            let c = &mut self.memcg.cgs[i as usize];
            c.swap.usage = c.swap.usage.saturating_sub(1);
        }
        if v & SWAP_OUT != 0 {
            let c = &mut self.memcg.cgs[id as usize];
            c.nr_swapped_out = c.nr_swapped_out.saturating_sub(1);
            for i in self.memcg.ancestors(id) {
                if i == ROOT_MEMCG {
                    break;
                }
                let c = &mut self.memcg.cgs[i as usize];
                c.memsw.usage = c.memsw.usage.saturating_sub(1);
            }
        }
    }

    /// mem_cgroup_calculate_protection for every cgroup of `root`'s subtree (top-down):
    /// fills emin/elow. The reclaim root itself and its children use their settings.
    pub fn memcg_calculate_protection(&mut self, root: MemcgId) {
        for id in self.memcg.subtree(root) {
            let (usage, min, low, parent) = {
                let c = &self.memcg.cgs[id as usize];
                (c.memory.usage, c.memory.min, c.memory.low, c.parent)
            };
            if id == root || id == ROOT_MEMCG {
                let c = &mut self.memcg.cgs[id as usize];
                c.memory.emin = 0;
                c.memory.elow = 0;
                continue;
            }
            let parent = parent.expect("not the root");
            if parent == root {
                let c = &mut self.memcg.cgs[id as usize];
                c.memory.emin = min;
                c.memory.elow = low;
                continue;
            }
            let (pemin, pelow) = {
                let p = &self.memcg.cgs[parent as usize];
                (p.memory.emin, p.memory.elow)
            };
            // children_min_usage / children_low_usage: the siblings' protected usage.
            let (mut smin, mut slow) = (0, 0);
            for &s in &self.memcg.cgs[parent as usize].children {
                let sc = &self.memcg.cgs[s as usize];
                smin += sc.memory.usage.min(sc.memory.min);
                slow += sc.memory.usage.min(sc.memory.low);
            }
            let c = &mut self.memcg.cgs[id as usize];
            c.memory.emin = effective_protection(usage, min, pemin, smin);
            c.memory.elow = effective_protection(usage, low, pelow, slow);
        }
    }

    /// mem_cgroup_below_min / mem_cgroup_below_low (6.1: usage <= effective protection).
    pub fn memcg_below_min(&self, id: MemcgId) -> bool {
        let c = &self.memcg.cgs[id as usize].memory;
        id != ROOT_MEMCG && c.emin > 0 && c.usage <= c.emin
    }
    pub fn memcg_below_low(&self, id: MemcgId) -> bool {
        let c = &self.memcg.cgs[id as usize].memory;
        id != ROOT_MEMCG && c.elow > 0 && c.usage <= c.elow
    }
    /// mem_cgroup_protection: what get_scan_count keeps out of reach.
    pub fn memcg_protection(&self, id: MemcgId, low_reclaim: bool) -> u64 {
        let c = &self.memcg.cgs[id as usize].memory;
        if low_reclaim {
            c.emin
        } else {
            c.emin.max(c.elow)
        }
    }

    /// mem_find_max_overage: the largest memory.high overage of the cgroup and its ancestors.
    pub fn mem_find_max_overage(&self, id: MemcgId) -> u64 {
        self.memcg
            .ancestors(id)
            .into_iter()
            .filter(|&i| i != ROOT_MEMCG)
            .map(|i| {
                let c = &self.memcg.cgs[i as usize];
                calculate_overage(c.memory.usage, c.memory.high)
            })
            .max()
            .unwrap_or(0)
    }

    /// Per-page statistics of every cgroup (local, not hierarchical), counted from the
    /// frames: what memory.stat's page counters show. Indexed by cgroup id.
    pub fn memcg_page_stats(&self) -> Vec<MemcgPageStat> {
        let mut out = vec![MemcgPageStat::default(); self.memcg.cgs.len()];
        for (mi, s) in self.mm.mappings.iter().enumerate() {
            if !s.live || s.nrpages == 0 {
                continue;
            }
            let mut at = 0;
            while let Some((index, slot)) = self.mm.next_slot(mi as u32, at, u64::MAX) {
                at = index + 1;
                let Slot::Page(p) = slot else { continue };
                let id = self.memcg.page_memcg(p, mi as u32) as usize;
                let st = &mut out[id];
                match s.kind {
                    MappingKind::Anon => st.anon += 1,
                    MappingKind::Shmem => {
                        st.file += 1;
                        st.shmem += 1;
                    }
                    _ => st.file += 1,
                }
                if s.mapped && s.kind != MappingKind::Anon {
                    st.file_mapped += 1;
                }
                if self.mm.pages.dirty(p) && !s.swap_backed() {
                    st.file_dirty += 1;
                }
                if self.mm.pages.writeback(p) && !s.swap_backed() {
                    st.file_writeback += 1;
                }
                if s.swap_backed() && self.mm.swap_cache_slot(mi as u32, index).is_some() {
                    st.swapcached += 1;
                }
                match self.mm.pages.lru(p) {
                    Lru::InactiveAnon => st.lru[0] += 1,
                    Lru::ActiveAnon => st.lru[1] += 1,
                    Lru::InactiveFile => st.lru[2] += 1,
                    Lru::ActiveFile => st.lru[3] += 1,
                    Lru::Unevictable => st.lru[4] += 1,
                    _ => {}
                }
            }
        }
        out
    }
}


// ---- try_charge, memory.high, the memcg OOM killer ------------------------------------------

/// mem_cgroup_handle_over_high in progress (`Task::memcg_high`): the pages charged over
/// high, the retries left, and where reclaim_high's walk up the tree is.
#[derive(Clone, Copy, Debug, Default)]
pub struct HighReclaim {
    pub nr_pages: u64,
    pub nr_retries: u32,
    pub in_retry: bool,
    /// Rounds of reclaim_high done.
    pub rounds: u32,
    /// The next ancestor (index in `MemCgroups::ancestors`) reclaim_high looks at.
    pub level: usize,
    /// Pages the paths of this round reclaimed.
    pub reclaimed: u64,
}

impl Kernel {
    /// The cgroup an object of cache `c` allocated by `tid` is charged to: on kernels that
    /// charge slab objects one by one (obj_cgroup, 5.9+: the 6.x profile), for a cache
    /// created with SLAB_ACCOUNT (dentry, the inode caches: dcache_init, inode_init,
    /// ext4's init_inodecache) and a task outside the root (memcg_slab_pre_alloc_hook ->
    /// get_obj_cgroup_from_current). ROOT_MEMCG: not charged.
    pub fn slab_account_memcg(&self, tid: TaskId, c: super::slab::CacheId) -> MemcgId {
        if !self.profile.kmem_accounting || self.mm.slab.caches[c as usize].flags & super::slab::SLAB_ACCOUNT == 0 {
            return ROOT_MEMCG;
        }
        self.task_memcg(tid)
    }

    /// obj_cgroup_charge: `size` bytes (obj_full_size: the object with its alignment and
    /// the obj_cgroup pointer) for one object of cgroup `id`, taken from what its charged
    /// pages have left (nr_charged_bytes); short of that, whole pages are charged
    /// (obj_cgroup_charge_pages -> try_charge_memcg: over memory.max the task reclaims in
    /// the cgroup, its dentries and inodes included, or is OOM-killed; Err is what it does
    /// before it retries) and the object's remainder is kept for the next one. The kernel
    /// also keeps bytes in a per-CPU stock; the model keeps them in the cgroup.
    pub fn obj_cgroup_charge(&mut self, tid: TaskId, id: MemcgId, size: u64, reclaimable: bool) -> Result<(), crate::task::Step> {
        self.obj_cgroup_charge_by(ObjCharge::Task(tid), id, size, reclaimable)
    }

    /// `obj_cgroup_charge` for task `tid` (`ObjCharge::Task`), or with no task to reclaim:
    /// whole pages from the CPU's stock, else charged past any limit (a __GFP_NOFAIL
    /// allocation: try_charge_memcg's `force`), or owed while they would go over one
    /// (`ObjCharge::Defer`: `MemCgroup::kmem_owed`).
    pub(crate) fn obj_cgroup_charge_by(&mut self, how: ObjCharge, id: MemcgId, size: u64, reclaimable: bool) -> Result<(), crate::task::Step> {
        let have = self.memcg.cgs[id as usize].objcg_bytes;
        if have < size {
            let pages = (size - have).div_ceil(PAGE_SIZE);
            let mut owed = false;
            match how {
                ObjCharge::Task(t) => self.try_charge(t, id, pages)?,
                ObjCharge::Force | ObjCharge::Defer => {
                    let cpu = self.this_cpu();
                    if !self.memcg.consume_stock(cpu, id, pages) {
                        owed = how == ObjCharge::Defer && self.memcg.over_limit_which(id, pages).is_some();
                        if owed {
                            self.memcg.cgs[id as usize].kmem_owed += pages;
                        } else {
                            self.memcg.counter_charge(id, pages);
                        }
                    }
                }
            }
            // memcg_account_kmem: MEMCG_KMEM, and v1's kmem counter.
            if !owed {
                self.memcg.kmem_counter_charge(id, pages);
            }
            let c = &mut self.memcg.cgs[id as usize];
            c.nr_kmem += pages;
            c.objcg_bytes += pages * PAGE_SIZE;
        }
        let c = &mut self.memcg.cgs[id as usize];
        c.objcg_bytes -= size;
        c.slab_bytes[!reclaimable as usize] += size;
        Ok(())
    }

    /// memcg_kmem_get_cache (5.x): the cache a task allocates an object of `c` from. For a
    /// SLAB_ACCOUNT cache and a task in a cgroup other than the root, the cgroup's copy of
    /// `c`; a copy that does not exist yet is made (memcg_schedule_kmem_cache_create: by a
    /// work item, so this one object still comes from `c` itself). Named as the kernel
    /// names it: "root(serial:cgroup)".
    pub(crate) fn memcg_kmem_get_cache(&mut self, tid: TaskId, c: super::slab::CacheId) -> super::slab::CacheId {
        if !self.profile.memcg_kmem_caches || self.mm.slab.caches[c as usize].flags & super::slab::SLAB_ACCOUNT == 0 {
            return c;
        }
        let id = self.task_memcg(tid);
        if id == ROOT_MEMCG || self.tasks[tid as usize].kthread {
            return c;
        }
        if let Some(copy) = self.mm.slab.memcg_cache(c, id) {
            return copy;
        }
        let g = &self.memcg.cgs[id as usize];
        let leaf = g.path.rsplit('/').next().unwrap_or("");
        let name = format!("{}({}:{})", self.mm.slab.caches[c as usize].name, g.serial, leaf);
        // Beyond the model's number of copies the objects stay in the root cache.
        let _ = self.mm.slab.memcg_cache_create(c, id, name);
        c
    }

    /// memcg_charge_slab (5.x): the `pages` of a new slab of a cgroup's cache copy are
    /// charged to it (__memcg_kmem_charge_memcg: try_charge, v1's kmem counter, the
    /// cgroup's NR_SLAB_(UN)RECLAIMABLE).
    pub(crate) fn memcg_charge_slab(&mut self, tid: TaskId, id: MemcgId, pages: u64, reclaimable: bool) -> Result<(), crate::task::Step> {
        self.try_charge(tid, id, pages)?;
        self.memcg.kmem_counter_charge(id, pages);
        let c = &mut self.memcg.cgs[id as usize];
        c.nr_kmem += pages;
        c.slab_bytes[!reclaimable as usize] += pages * PAGE_SIZE;
        Ok(())
    }

    /// memcg_kmem_charge_page for page-table pages (GFP_PGTABLE_USER has __GFP_ACCOUNT,
    /// 4.6+: "x86: charge page table pages to kmemcg") and kernel-stack pages (4.9+:
    /// THREADINFO_GFP has __GFP_ACCOUNT; a vmapped stack's pages through
    /// memcg_charge_kernel_stack): try_charge, v1's kmem counter, MEMCG_KMEM and the
    /// cgroup's NR_PAGETABLE or NR_KERNEL_STACK_KB.
    pub(crate) fn memcg_charge_kernel_pages(&mut self, tid: TaskId, id: MemcgId, pages: u64, owner: super::KernelOwner) -> Result<(), crate::task::Step> {
        self.try_charge(tid, id, pages)?;
        self.memcg.kmem_counter_charge(id, pages);
        let c = &mut self.memcg.cgs[id as usize];
        c.nr_kmem += pages;
        *c.kernel_pages_mut(owner) += pages;
        Ok(())
    }

    /// memcg_kmem_uncharge_page of freed page-table or kernel-stack pages: on 6.x
    /// obj_cgroup_uncharge_pages gives them to the freeing CPU's stock (refill_stock); on
    /// 5.x the page counters are uncharged directly (__memcg_kmem_uncharge_memcg).
    pub(crate) fn memcg_uncharge_kernel_pages(&mut self, id: MemcgId, pages: u64, owner: super::KernelOwner) {
        if id == ROOT_MEMCG || !self.memcg.cgs[id as usize].online {
            return;
        }
        let c = &mut self.memcg.cgs[id as usize];
        let pages = pages.min(c.nr_kmem).min(*c.kernel_pages_mut(owner));
        c.nr_kmem -= pages;
        *c.kernel_pages_mut(owner) -= pages;
        self.memcg.kmem_counter_uncharge(id, pages);
        if self.profile.kmem_accounting {
            let cpu = self.this_cpu();
            self.memcg.refill_stock(cpu, id, pages);
        } else {
            self.memcg.counter_uncharge(id, pages, true);
        }
    }

    /// memcg_uncharge_slab (5.x): a released slab's pages leave the cgroup's counters (the
    /// page counters directly: __memcg_kmem_uncharge).
    pub(crate) fn memcg_uncharge_slab(&mut self, id: MemcgId, pages: u64, reclaimable: bool) {
        if id == ROOT_MEMCG {
            return;
        }
        let c = &mut self.memcg.cgs[id as usize];
        let pages = pages.min(c.nr_kmem);
        c.nr_kmem -= pages;
        let k = !reclaimable as usize;
        c.slab_bytes[k] -= (pages * PAGE_SIZE).min(c.slab_bytes[k]);
        self.memcg.kmem_counter_uncharge(id, pages);
        self.memcg.counter_uncharge(id, pages, true);
    }

    /// obj_cgroup_uncharge: the bytes of a freed object go back to its cgroup; once they
    /// exceed a page, the whole pages leave its kernel memory (refill_obj_stock ->
    /// obj_cgroup_uncharge_pages: `if (stock->nr_bytes > PAGE_SIZE)`) for the CPU's charge
    /// stock.
    pub fn obj_cgroup_uncharge(&mut self, id: MemcgId, size: u64, reclaimable: bool) {
        if id == ROOT_MEMCG {
            return;
        }
        let c = &mut self.memcg.cgs[id as usize];
        let k = !reclaimable as usize;
        c.slab_bytes[k] -= size.min(c.slab_bytes[k]);
        c.objcg_bytes += size;
        if c.objcg_bytes > PAGE_SIZE {
            let pages = (c.objcg_bytes / PAGE_SIZE).min(c.nr_kmem);
            c.objcg_bytes -= pages * PAGE_SIZE;
            c.nr_kmem -= pages;
            // Pages still owed leave without having reached the page counters.
            let cancel = pages.min(c.kmem_owed);
            c.kmem_owed -= cancel;
            let pages = pages - cancel;
            // obj_cgroup_uncharge_pages: no longer kernel memory, the pages go to the
            // freeing CPU's stock (refill_stock), charged until it is drained or used.
            self.memcg.kmem_counter_uncharge(id, pages);
            let cpu = self.this_cpu();
            self.memcg.refill_stock(cpu, id, pages);
        }
    }
}

impl Kernel {
    /// try_charge_memcg: charge `n` pages to `id` for `tid`. Over memory.max somewhere up
    /// the tree: MEMCG_MAX, then the task reclaims in that cgroup
    /// (try_to_free_mem_cgroup_pages, a reclaim path run in simulated time before its
    /// program is called again) and the charge is retried when the program retries:
    /// at once while reclaim makes progress; after MAX_RECLAIM_RETRIES reclaims without
    /// progress, MEMCG_OOM and mem_cgroup_out_of_memory. Err(step): what the task does
    /// before it tries again. A charge is taken from the CPU's stock when it holds enough
    /// of the cgroup's pages; otherwise a batch (MEMCG_CHARGE_BATCH of the era) is charged
    /// to the counters and what the charge does not need goes to the stock, so usage counts
    /// up to a batch per CPU that no page uses yet. Near the limit the batch fails (counted
    /// in failcnt) and the charge asks for its own pages only.
    pub fn try_charge(&mut self, tid: TaskId, id: MemcgId, n: u64) -> Result<(), crate::task::Step> {
        // Kernel memory the cgroup owes (`MemCgroup::kmem_owed`) is charged with this.
        let owed = self.memcg.cgs[id as usize].kmem_owed;
        self.try_charge_pages(tid, id, n + owed)?;
        if owed > 0 {
            // Charged above with the task's pages; kernel memory, so v1's kmem counter too.
            self.memcg.cgs[id as usize].kmem_owed -= owed;
            self.memcg.kmem_counter_charge(id, owed);
        }
        Ok(())
    }

    fn try_charge_pages(&mut self, tid: TaskId, id: MemcgId, n: u64) -> Result<(), crate::task::Step> {
        use crate::task::Step;
        // The previous charges left the task over memory.high: the return to user space
        // (resume_user_mode_work -> mem_cgroup_handle_over_high) reclaims and may sleep.
        let t = &self.tasks[tid as usize];
        if t.memcg_nr_pages_over_high >= self.memcg.charge_batch || t.memcg_high.is_some() {
            if let Some(step) = self.mem_cgroup_handle_over_high(tid) {
                return Err(step);
            }
        }
        if self.reclaim.in_path(tid) {
            // Started in this step: the path runs before the task retries.
            return Err(Step::Yield);
        }
        let done = self.reclaim.take_done_memcg(tid);
        let cpu = self.sched.task_cpu(tid) as usize;
        // consume_stock: pages this CPU charged ahead for the cgroup (no limit check, no
        // memory.high check).
        if self.memcg.consume_stock(cpu, id, n) {
            self.memcg_charge_finished(tid);
            return Ok(());
        }
        // A batch for the stock, unless this charge already failed once.
        let batch = if self.tasks[tid as usize].memcg_charge_retry { n } else { n.max(self.memcg.charge_batch) };
        let mut charged = batch;
        let mut fail = self.memcg.over_limit_which(id, batch);
        if fail.is_some() && batch > n {
            // "Never reclaim on behalf of optional batching, retry with a single page
            // instead" (the failed batch counted in failcnt).
            self.tasks[tid as usize].memcg_charge_retry = true;
            charged = n;
            fail = self.memcg.over_limit_which(id, n);
        }
        if let Some((over, _)) = fail {
            if done.is_some() && !self.tasks[tid as usize].memcg_stock_drained {
                // Reclaim left too little margin: `if (!drained) { drain_all_stock(
                // mem_over_limit); drained = true; goto retry; }`.
                self.tasks[tid as usize].memcg_stock_drained = true;
                self.memcg.drain_all_stock(over);
                fail = self.memcg.over_limit_which(id, n);
            }
        }
        let Some((over, memsw)) = fail else {
            self.memcg.counter_charge(id, charged);
            if charged > n {
                self.memcg.refill_stock(cpu, id, charged - n);
            }
            self.memcg_charge_finished(tid);
            // Over memory.high anywhere up the tree: remember it for the return to user
            // (`current->memcg_nr_pages_over_high += batch`).
            let over_high = self.memcg.ancestors(id).into_iter().any(|i| {
                let c = &self.memcg.cgs[i as usize].memory;
                i != ROOT_MEMCG && c.usage > c.high
            });
            if over_high {
                self.tasks[tid as usize].memcg_nr_pages_over_high += charged;
            }
            return Ok(());
        };
        let progress = match &done {
            None => true,
            Some(path) => {
                let sc = path.sc;
                if sc.nr_reclaimed == 0 && (sc.nr_congested > 0 || sc.nr_writeback > 0 || sc.nr_dirty > 0) {
                    // Reclaim found pages it must wait for (being written): the charging
                    // task is throttled (reclaim_throttle) instead of failing a retry.
                    let until = self.block.next_completion().unwrap_or(self.now + 100 * memtwin_engine::NS_PER_MS);
                    let until = until.min(self.now + 100 * memtwin_engine::NS_PER_MS).max(self.now + 1);
                    if sc.nr_dirty > 0 {
                        self.wakeup_flusher_threads();
                    }
                    return Err(Step::SleepUntil { t: until, io: sc.nr_congested > 0 });
                }
                sc.nr_reclaimed > 0
            }
        };
        if !progress {
            let t = &mut self.tasks[tid as usize];
            t.memcg_retries += 1;
            if t.memcg_retries > super::page_alloc::MAX_RECLAIM_RETRIES {
                t.memcg_retries = 0;
                // mem_cgroup_oom.
                self.memcg.event(over, MemcgEvent::Oom);
                self.mem_cgroup_out_of_memory(over, tid);
                return Err(Step::Yield);
            }
        }
        // `goto retry`: MEMCG_MAX and another reclaim of the cgroup over its limit.
        self.memcg.event(over, MemcgEvent::Max);
        self.start_memcg_reclaim(tid, over, n, !memsw);
        Err(Step::Yield)
    }

    /// A charge of `tid` succeeded: its retry state starts afresh.
    fn memcg_charge_finished(&mut self, tid: TaskId) {
        let t = &mut self.tasks[tid as usize];
        t.memcg_retries = 0;
        t.memcg_charge_retry = false;
        t.memcg_stock_drained = false;
    }

    /// mem_cgroup_handle_over_high: reclaim the pages charged over memory.high
    /// (reclaim_high), then sleep the penalty calculate_high_delay gives for the overage
    /// left, at most MEMCG_MAX_HIGH_DELAY_JIFFIES; nothing below HZ/100. Each reclaim is a
    /// path the task runs in simulated time; the state in between is the task's
    /// `memcg_high`. Returns what the task does before it goes on (None: go on now).
    pub fn mem_cgroup_handle_over_high(&mut self, tid: TaskId) -> Option<crate::task::Step> {
        let id = self.task_memcg(tid);
        let mut st = match self.tasks[tid as usize].memcg_high.take() {
            Some(st) => st,
            None => {
                let nr_pages = std::mem::take(&mut self.tasks[tid as usize].memcg_nr_pages_over_high);
                if nr_pages == 0 || id == ROOT_MEMCG {
                    return None;
                }
                HighReclaim { nr_pages, nr_retries: super::page_alloc::MAX_RECLAIM_RETRIES, ..Default::default() }
            }
        };
        if self.reclaim.in_path(tid) {
            self.tasks[tid as usize].memcg_high = Some(st);
            return Some(crate::task::Step::Yield);
        }
        if let Some(path) = self.reclaim.take_done_memcg(tid) {
            st.reclaimed += path.sc.nr_reclaimed;
        }
        let ancestors = self.memcg.ancestors(id);
        loop {
            // reclaim_high: every cgroup from `id` up that is over memory.high counts
            // MEMCG_HIGH and has the pages reclaimed from it.
            while let Some(&i) = ancestors.get(st.level) {
                st.level += 1;
                if i == ROOT_MEMCG {
                    st.level = ancestors.len();
                    break;
                }
                let c = &self.memcg.cgs[i as usize].memory;
                if c.usage <= c.high {
                    continue;
                }
                self.memcg.event(i, MemcgEvent::High);
                let want = if st.in_retry { super::SWAP_CLUSTER_MAX } else { st.nr_pages };
                self.start_memcg_reclaim(tid, i, want, true);
                self.tasks[tid as usize].memcg_high = Some(st);
                return Some(crate::task::Step::Yield);
            }
            let reclaimed = std::mem::take(&mut st.reclaimed);
            st.level = 0;
            st.rounds += 1;
            let overage = self.mem_find_max_overage(id);
            let penalty = calculate_high_delay(st.nr_pages, overage, self.memcg.charge_batch).min(MEMCG_MAX_HIGH_DELAY_JIFFIES);
            if penalty <= HZ / 100 {
                return None;
            }
            // `if (nr_reclaimed || nr_retries--) { in_retry = true; goto retry_reclaim; }`
            // (the model bounds the rounds of one return to user at 64).
            if st.rounds < 64 && (reclaimed > 0 || st.nr_retries > 0) {
                if reclaimed == 0 {
                    st.nr_retries -= 1;
                }
                st.in_retry = true;
                continue;
            }
            return Some(self.high_penalty_sleep(tid, penalty));
        }
    }

    fn high_penalty_sleep(&mut self, tid: TaskId, penalty: u64) -> crate::task::Step {
        let ns = jiffies_ns(penalty);
        let id = self.task_memcg(tid);
        self.memcg.cgs[id as usize].high_throttled_ns += ns;
        // schedule_timeout_killable: a sleep the memory-pressure accounting counts.
        self.set_wait_reason(tid, crate::delayacct::WaitReason::MemcgHigh);
        crate::task::Step::SleepUntil { t: self.now + ns, io: false }
    }

    /// Tasks alive in the subtree of `root`, in task-table order.
    pub fn memcg_tasks(&self, root: MemcgId) -> Vec<TaskId> {
        (0..self.tasks.len() as TaskId)
            .filter(|&t| {
                let task = &self.tasks[t as usize];
                task.exit_code.is_none() && !task.kthread && !task.reaped && self.memcg.is_descendant(task.memcg, root)
            })
            .collect()
    }

    /// mem_cgroup_out_of_memory -> out_of_memory with constraint CONSTRAINT_MEMCG: the task
    /// with the largest oom_badness in the cgroup is killed (all of the cgroup's tasks when
    /// memory.oom.group is set, mem_cgroup_get_oom_group); prints what the kernel logs.
    /// Returns whether a task was killed.
    pub fn mem_cgroup_out_of_memory(&mut self, over: MemcgId, trigger: TaskId) -> bool {
        // oom_evaluate_task: an earlier victim of this cgroup still exiting aborts the
        // selection (its memory is about to be freed); the charge is retried.
        if self
            .memcg_tasks(over)
            .into_iter()
            .any(|t| self.tasks[t as usize].oom_victim)
        {
            return true;
        }
        let victim = self
            .memcg_tasks(over)
            .into_iter()
            .filter_map(|t| self.oom_badness(t).map(|b| (b, t)))
            .max_by_key(|&(b, t)| (b, std::cmp::Reverse(self.tasks[t as usize].pid)))
            .map(|(_, t)| t);
        let Some(v) = victim else { return false };
        let path = self.memcg.cgs[over as usize].path.clone();
        let task_memcg = self.memcg.cgs[self.tasks[v as usize].memcg as usize].path.clone();
        let lvl = crate::printk::KERN_INFO;
        let modern = self.machine.kernel != KernelProfile::Linux2639;
        if !modern {
            self.mem_cgroup_oom_report_2639(over, trigger, v, &path, &task_memcg);
            self.oom_kill_one(v, "", over);
            return true;
        }
        let t = &self.tasks[trigger as usize];
        let head = format!(
            "{} invoked oom-killer: gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj={}\n",
            t.comm, t.oom_score_adj
        );
        self.printk(crate::printk::KERN_WARNING, &head);
        // mem_cgroup_print_oom_meminfo.
        let c = self.memcg.cgs[over as usize].clone();
        let kb = |p: u64| p.min(PAGE_COUNTER_MAX) * 4;
        let mut info = format!("memory: usage {}kB, limit {}kB, failcnt {}\n", kb(c.memory.usage), kb(c.memory.max), c.memory.failcnt);
        if self.memcg.mode == CgroupMode::V2 {
            info += &format!("swap: usage {}kB, limit {}kB, failcnt {}\n", kb(c.swap.usage), kb(c.swap.max), c.swap.failcnt);
        } else {
            info += &format!("memory+swap: usage {}kB, limit {}kB, failcnt {}\n", kb(c.memsw.usage), kb(c.memsw.max), c.memsw.failcnt);
            info += &format!("kmem: usage 0kB, limit {}kB, failcnt 0\n", kb(PAGE_COUNTER_MAX));
        }
        self.printk(lvl, &info);
        let stat = self.memcg_stat_text(over, self.memcg.mode == CgroupMode::V1);
        self.printk(lvl, &format!("Memory cgroup stats for {path}:\n{stat}"));
        // dump_tasks.
        let mut tasks = String::from("Tasks state (memory values in pages):\n");
        tasks += "[  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n";
        for t in self.memcg_tasks(over) {
            let (anon, file, shmem, swap) = self.task_mem(t);
            let task = &self.tasks[t as usize];
            let rss = anon + file + shmem;
            tasks += &format!(
                "[{:>7}] {:>5} {:>5} {:>8} {:>8} {:>8} {:>8}         {:>5} {}\n",
                task.pid,
                0,
                task.pid,
                task.vm_kb / 4,
                rss,
                ((rss + swap) / 512 + 1) * PAGE_SIZE,
                swap,
                task.oom_score_adj,
                task.comm
            );
        }
        self.printk(lvl, &tasks);
        let vt = &self.tasks[v as usize];
        let ctx = format!(
            "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg={path},task_memcg={task_memcg},task={},pid={},uid=0\n",
            vt.comm, vt.pid
        );
        self.printk(lvl, &ctx);
        // mem_cgroup_get_oom_group: the highest cgroup from the victim's up to the OOM
        // domain that has memory.oom.group set.
        let mut group = None;
        for i in self.memcg.ancestors(self.tasks[v as usize].memcg) {
            if self.memcg.cgs[i as usize].oom_group {
                group = Some(i);
            }
            if i == over {
                break;
            }
        }
        self.oom_kill_one(v, if modern { "Memory cgroup out of memory" } else { "Memory cgroup out of memory" }, over);
        if let Some(g) = group {
            self.memcg.event(g, MemcgEvent::OomGroupKill);
            for t in self.memcg_tasks(g) {
                if t != v && self.oom_badness(t).is_some() {
                    self.oom_kill_one(t, "Memory cgroup out of memory", over);
                }
            }
        }
        true
    }

    /// 2.6.39's report of a cgroup OOM (mem_cgroup_out_of_memory -> oom_kill_process with
    /// "Memory cgroup out of memory"): dump_header prints the invoking task, the cgroup's
    /// counters (mem_cgroup_print_oom_info), show_mem and the cgroup's tasks, then
    /// oom_kill_process names the victim with its score in thousandths of the limit.
    fn mem_cgroup_oom_report_2639(
        &mut self,
        over: MemcgId,
        trigger: TaskId,
        v: TaskId,
        path: &str,
        task_memcg: &str,
    ) {
        use crate::printk::{KERN_ERR, KERN_INFO, KERN_WARNING};
        let t = &self.tasks[trigger as usize];
        let head = format!(
            "{} invoked oom-killer: gfp_mask=0x200da, order=0, oom_adj=0, oom_score_adj={}",
            t.comm, t.oom_score_adj
        );
        self.printk(KERN_WARNING, &head);
        let c = self.memcg.cgs[over as usize].clone();
        let kb = |p: u64| p.min(PAGE_COUNTER_MAX) * 4;
        self.printk(
            KERN_INFO,
            &format!("Task in {task_memcg} killed as a result of limit of {path}"),
        );
        self.printk(
            KERN_INFO,
            &format!(
                "memory: usage {}kB, limit {}kB, failcnt {}",
                kb(c.memory.usage),
                kb(c.memory.max),
                c.memory.failcnt
            ),
        );
        self.printk(
            KERN_INFO,
            &format!(
                "memory+swap: usage {}kB, limit {}kB, failcnt {}",
                kb(c.memsw.usage),
                kb(c.memsw.max),
                c.memsw.failcnt
            ),
        );
        self.oom_show_mem(true);
        self.oom_dump_tasks(true, Some(over));
        // oom_badness against the cgroup's limit (mem_cgroup_get_limit).
        let limit = c
            .memory
            .max
            .min(self.mm.managed + self.swap_totals().0)
            .max(1);
        let points = (self.oom_badness(v).unwrap_or(0).max(0) as u64 * 1000 / limit).clamp(1, 1000);
        let vt = &self.tasks[v as usize];
        let line = format!(
            "Memory cgroup out of memory: Kill process {} ({}) score {} or sacrifice child",
            vt.pid, vt.comm, points
        );
        self.printk(KERN_ERR, &line);
    }

    fn oom_kill_one(&mut self, v: TaskId, message: &str, _over: MemcgId) {
        let (anon, file, shmem, swap) = self.task_mem(v);
        let t = &self.tasks[v as usize];
        let msg = if self.machine.kernel == KernelProfile::Linux2639 {
            // 2.6.39 oom_kill_task: "Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB,
            // file-rss:%lukB" (no prefix; the "Kill process ... or sacrifice child" line
            // before it names the cause).
            let _ = message;
            format!(
                "Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB\n",
                t.pid,
                t.comm,
                t.vm_kb,
                anon * 4,
                (file + shmem) * 4
            )
        } else {
            format!(
                "{message}: Killed process {} ({}) total-vm:{}kB, anon-rss:{}kB, file-rss:{}kB, shmem-rss:{}kB, UID:0 pgtables:{}kB oom_score_adj:{}\n",
                t.pid,
                t.comm,
                t.vm_kb,
                anon * 4,
                file * 4,
                shmem * 4,
                (anon + file + shmem + swap) / 512 * 4 + 4,
                t.oom_score_adj
            )
        };
        let line = format!("[{:>12.6}] {msg}", self.now as f64 / 1e9);
        self.transcript.push_str(&line);
        self.printk(crate::printk::KERN_ERR, &msg);
        self.vm.inc(memtwin_procfs::VmItem::OomKill);
        let id = self.tasks[v as usize].memcg;
        self.memcg.event(id, MemcgEvent::OomKill);
        self.tasks[v as usize].oom_victim = true;
        self.oom_reap(v);
        self.kill(v, 137);
    }
}

/// Page counts of one cgroup (memcg_page_state items).
#[derive(Clone, Copy, Debug, Default)]
pub struct MemcgPageStat {
    pub anon: u64,
    pub file: u64,
    pub shmem: u64,
    pub file_mapped: u64,
    pub file_dirty: u64,
    pub file_writeback: u64,
    pub swapcached: u64,
    /// inactive_anon, active_anon, inactive_file, active_file, unevictable.
    pub lru: [u64; 5],
}

impl MemcgPageStat {
    pub fn add(&mut self, o: &MemcgPageStat) {
        self.anon += o.anon;
        self.file += o.file;
        self.shmem += o.shmem;
        self.file_mapped += o.file_mapped;
        self.file_dirty += o.file_dirty;
        self.file_writeback += o.file_writeback;
        self.swapcached += o.swapcached;
        for i in 0..5 {
            self.lru[i] += o.lru[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memparse_accepts_max_and_suffixes_and_rejects_the_rest() {
        assert_eq!(memparse_pages("max", "max"), Ok(PAGE_COUNTER_MAX));
        assert_eq!(memparse_pages("512M", "max"), Ok(512 * 256));
        assert_eq!(memparse_pages("1g", "max"), Ok(262144));
        assert_eq!(memparse_pages("4097", "max"), Ok(1));
        assert_eq!(memparse_pages("-1", "-1"), Ok(PAGE_COUNTER_MAX));
        assert_eq!(memparse_pages("abc", "max"), Err(Errno::EINVAL));
        assert_eq!(memparse_pages("12Q", "max"), Err(Errno::EINVAL));
        assert_eq!(memparse_pages("", "max"), Err(Errno::EINVAL));
        assert_eq!(memparse_pages("-5", "max"), Err(Errno::EINVAL));
    }

    #[test]
    fn usage_propagates_to_ancestors_and_limits_are_checked_up_the_tree() {
        let mut m = MemCgroups::new(CgroupMode::V2);
        let a = m.create(ROOT_MEMCG, "a").unwrap();
        let b = m.create(a, "b").unwrap();
        assert_eq!(m.cgs[b as usize].path, "/a/b");
        assert_eq!(m.create(a, "b"), Err("File exists"));
        m.cgs[a as usize].memory.max = 10;
        m.counter_charge(b, 10);
        assert_eq!(m.cgs[a as usize].memory.usage, 10);
        assert_eq!(m.cgs[b as usize].memory.usage, 10);
        assert_eq!(m.cgs[ROOT_MEMCG as usize].memory.usage, 0, "the root is not counted");
        // b has no limit of its own, but its parent is full.
        assert_eq!(m.over_limit(b, 1), Some(a));
        assert_eq!(m.cgs[a as usize].memory.failcnt, 1);
        m.counter_uncharge(b, 4, true);
        assert_eq!(m.over_limit(b, 1), None);
        assert_eq!(m.cgs[a as usize].memory.watermark, 10, "peak remembers the high point");
        assert_eq!(m.subtree(ROOT_MEMCG), vec![0, a, b]);
    }

    #[test]
    fn a_flat_v1_parent_neither_counts_nor_limits_nor_reclaims_its_children() {
        let mut m = MemCgroups::with_root_hierarchy(CgroupMode::V1, false);
        let a = m.create(ROOT_MEMCG, "a").unwrap();
        let b = m.create(a, "b").unwrap();
        assert!(!m.cgs[b as usize].use_hierarchy, "inherited from the root");
        m.cgs[a as usize].memory.max = 10;
        m.counter_charge(b, 20);
        assert_eq!(
            (
                m.cgs[a as usize].memory.usage,
                m.cgs[b as usize].memory.usage
            ),
            (0, 20)
        );
        assert_eq!(m.over_limit(b, 1), None, "a's limit does not reach b");
        assert_eq!(
            m.subtree(a),
            vec![a],
            "mem_cgroup_iter stops at a flat cgroup"
        );
        assert_eq!(
            m.subtree(ROOT_MEMCG),
            vec![0, a, b],
            "the root walks everything"
        );
        assert!(!m.is_descendant(b, a) && m.is_descendant(b, ROOT_MEMCG));
        // A hierarchical cgroup under the flat root: its children count in it.
        let c = m.create(ROOT_MEMCG, "c").unwrap();
        m.cgs[c as usize].use_hierarchy = true;
        let d = m.create(c, "d").unwrap();
        m.counter_charge(d, 5);
        assert_eq!(m.cgs[c as usize].memory.usage, 5);
        assert_eq!(m.ancestors(d), vec![d, c], "the flat root ends the walk");
    }

    #[test]
    fn events_count_locally_and_up_the_tree() {
        let mut m = MemCgroups::new(CgroupMode::V2);
        let a = m.create(ROOT_MEMCG, "a").unwrap();
        let b = m.create(a, "b").unwrap();
        m.event(b, MemcgEvent::OomKill);
        assert_eq!(m.cgs[a as usize].events[MemcgEvent::OomKill as usize], 1);
        assert_eq!(m.cgs[a as usize].events_local[MemcgEvent::OomKill as usize], 0);
        assert_eq!(m.cgs[b as usize].events_local[MemcgEvent::OomKill as usize], 1);
    }

    #[test]
    fn effective_low_is_shared_when_siblings_claim_more_than_the_parent_has() {
        // Parent protects 100; children claim 100 and 300 of it: they get 1/4 and 3/4.
        assert_eq!(effective_protection(200, 100, 100, 400), 25);
        assert_eq!(effective_protection(500, 300, 100, 400), 75);
        // Enough for everyone: each keeps its own claim, capped at its usage.
        assert_eq!(effective_protection(50, 100, 1000, 150), 50);
        assert_eq!(effective_protection(500, 100, 1000, 150), 100);
    }

    #[test]
    fn high_delay_is_quadratic_in_overage_and_capped_by_the_caller() {
        assert_eq!(calculate_overage(100, 100), 0);
        assert_eq!(calculate_high_delay(64, 0, MEMCG_CHARGE_BATCH), 0);
        // 10% over high: overage = 0.1 * 2^20.
        let o10 = calculate_overage(110, 100);
        assert_eq!(o10, (10 << 20) / 100);
        let d10 = calculate_high_delay(MEMCG_CHARGE_BATCH, o10, MEMCG_CHARGE_BATCH);
        let d20 = calculate_high_delay(MEMCG_CHARGE_BATCH, calculate_overage(120, 100), MEMCG_CHARGE_BATCH);
        assert!(d20 >= 3 * d10 && d20 <= 5 * d10, "quadratic: {d10} {d20}");
        // 2x over high for one batch: 2^20 * 2^20 * HZ >> 34 = 64 * HZ jiffies before the cap.
        let d = calculate_high_delay(MEMCG_CHARGE_BATCH, calculate_overage(200, 100), MEMCG_CHARGE_BATCH);
        assert_eq!(d, 64 * HZ);
        assert!(d.min(MEMCG_MAX_HIGH_DELAY_JIFFIES) == 2 * HZ);
        assert_eq!(jiffies_ns(HZ), NS_PER_SEC);
    }

    #[test]
    fn a_file_page_charged_elsewhere_is_an_exception_and_the_owner_resets_when_empty() {
        let mut m = MemCgroups::new(CgroupMode::V2);
        let a = m.create(ROOT_MEMCG, "a").unwrap();
        let b = m.create(ROOT_MEMCG, "b").unwrap();
        m.commit(10, 5, MappingKind::File, true, a);
        m.commit(11, 5, MappingKind::File, false, b);
        assert_eq!(m.page_memcg(10, 5), a);
        assert_eq!(m.page_memcg(11, 5), b);
        assert_eq!(m.exceptions.len(), 1);
        assert_eq!(m.release(11, 5, MappingKind::File, 1), b);
        assert!(m.exceptions.is_empty());
        assert_eq!(m.release(10, 5, MappingKind::File, 0), a);
        m.commit(12, 5, MappingKind::File, true, b);
        assert_eq!(m.page_memcg(12, 5), b, "an emptied file is owned by the next toucher");
        assert_eq!(m.cgs[b as usize].nr_file, 1);
        assert_eq!(m.cgs[a as usize].nr_file, 0);
    }
}
