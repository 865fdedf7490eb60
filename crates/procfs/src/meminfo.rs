//! /proc/meminfo (fs/proc/meminfo.c, meminfo_proc_show).

/// All values in kB, as the file prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub mem_total: u64,
    pub mem_free: u64,
    pub mem_available: u64,
    pub buffers: u64,
    pub cached: u64,
    pub swap_cached: u64,
    pub active: u64,
    pub inactive: u64,
    pub active_anon: u64,
    pub inactive_anon: u64,
    pub active_file: u64,
    pub inactive_file: u64,
    pub unevictable: u64,
    pub mlocked: u64,
    pub swap_total: u64,
    pub swap_free: u64,
    pub zswap: u64,
    pub zswapped: u64,
    pub dirty: u64,
    pub writeback: u64,
    pub anon_pages: u64,
    pub mapped: u64,
    pub shmem: u64,
    pub kreclaimable: u64,
    pub slab: u64,
    pub sreclaimable: u64,
    pub sunreclaim: u64,
    pub kernel_stack: u64,
    pub page_tables: u64,
    pub commit_limit: u64,
    pub committed_as: u64,
}

impl MemInfo {
    /// (name, value) in the kernel's order; the order /proc/meminfo prints.
    pub fn fields(&self) -> [(&'static str, u64); 31] {
        [
            ("MemTotal", self.mem_total),
            ("MemFree", self.mem_free),
            ("MemAvailable", self.mem_available),
            ("Buffers", self.buffers),
            ("Cached", self.cached),
            ("SwapCached", self.swap_cached),
            ("Active", self.active),
            ("Inactive", self.inactive),
            ("Active(anon)", self.active_anon),
            ("Inactive(anon)", self.inactive_anon),
            ("Active(file)", self.active_file),
            ("Inactive(file)", self.inactive_file),
            ("Unevictable", self.unevictable),
            ("Mlocked", self.mlocked),
            ("SwapTotal", self.swap_total),
            ("SwapFree", self.swap_free),
            ("Zswap", self.zswap),
            ("Zswapped", self.zswapped),
            ("Dirty", self.dirty),
            ("Writeback", self.writeback),
            ("AnonPages", self.anon_pages),
            ("Mapped", self.mapped),
            ("Shmem", self.shmem),
            ("KReclaimable", self.kreclaimable),
            ("Slab", self.slab),
            ("SReclaimable", self.sreclaimable),
            ("SUnreclaim", self.sunreclaim),
            ("KernelStack", self.kernel_stack),
            ("PageTables", self.page_tables),
            ("CommitLimit", self.commit_limit),
            ("Committed_AS", self.committed_as),
        ]
    }

    /// The text of /proc/meminfo: `show_val_kb` prints "%-16s%8lu kB" with the colon
    /// part of the name (names longer than 15 characters push the number right).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(1200);
        for (name, v) in self.fields() {
            let label = format!("{name}:");
            out.push_str(&format!("{label:<16}{v:>8} kB\n"));
        }
        out
    }
}
