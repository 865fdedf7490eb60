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

/// Which kernel's /proc/meminfo to print: the fields that exist differ by era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeminfoLayout {
    /// 2.4 (fs/proc/proc_misc.c meminfo_read_proc): the `total: used: free:` table, then
    /// kB lines; no MemAvailable, no Slab, no Dirty.
    V24,
    /// 2.6.39: no MemAvailable (3.14), no KReclaimable (4.20), AnonHugePages (2.6.38).
    V2639,
    /// 5.4 .. 5.18: KReclaimable, FileHugePages; no Zswap lines (5.19), no SecPageTables (6.0).
    V5,
    /// 6.1: Zswap/Zswapped, SecPageTables.
    V6,
}

/// Figures of /proc/meminfo that the snapshot does not carry: the machine's RAM and the
/// counters the model has none for (printed as a kernel without such allocations would).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeminfoExtra {
    /// Installed RAM in kB (the direct mapping covers it).
    pub ram_kb: u64,
    /// Swap in use (2.4's table), kB.
    pub swap_used_kb: u64,
}

impl MemInfo {
    /// /proc/meminfo of the given era, every field the kernel of that era prints
    /// (fs/proc/meminfo.c meminfo_proc_show). The model keeps no huge pages, vmalloc areas,
    /// per-cpu chunks or bounce buffers: those lines are 0, as on a kernel that has none.
    pub fn render_layout(&self, layout: MeminfoLayout, x: &MeminfoExtra) -> String {
        let mut out = String::with_capacity(1600);
        let kb = |out: &mut String, name: &str, v: u64| {
            let label = format!("{name}:");
            out.push_str(&format!("{label:<16}{v:>8} kB\n"));
        };
        let plain = |out: &mut String, name: &str, v: u64| {
            let label = format!("{name}:");
            out.push_str(&format!("{label:<16}{v:>8}\n"));
        };
        if layout == MeminfoLayout::V24 {
            // 2.4.18 meminfo_read_proc: a byte table, then "%-13s%8lu kB" lines.
            let used = self.mem_total - self.mem_free;
            out.push_str("        total:    used:    free:  shared: buffers:  cached:\n");
            out.push_str(&format!(
                "Mem:  {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}\n",
                self.mem_total * 1024,
                used * 1024,
                self.mem_free * 1024,
                0,
                self.buffers * 1024,
                self.cached * 1024
            ));
            out.push_str(&format!("Swap: {:>8} {:>8} {:>8}\n", self.swap_total * 1024, x.swap_used_kb * 1024, self.swap_free * 1024));
            for (n, v) in [
                ("MemTotal", self.mem_total),
                ("MemFree", self.mem_free),
                ("MemShared", 0),
                ("Buffers", self.buffers),
                ("Cached", self.cached),
                ("SwapCached", self.swap_cached),
                ("Active", self.active),
                ("Inactive", self.inactive),
                ("HighTotal", 0),
                ("HighFree", 0),
                ("LowTotal", self.mem_total),
                ("LowFree", self.mem_free),
                ("SwapTotal", self.swap_total),
                ("SwapFree", self.swap_free),
            ] {
                out.push_str(&format!("{:<13}{v:>8} kB\n", format!("{n}:")));
            }
            return out;
        }
        let v6 = layout == MeminfoLayout::V6;
        let modern = layout != MeminfoLayout::V2639;
        kb(&mut out, "MemTotal", self.mem_total);
        kb(&mut out, "MemFree", self.mem_free);
        if modern {
            kb(&mut out, "MemAvailable", self.mem_available);
        }
        for (n, v) in [
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
        ] {
            kb(&mut out, n, v);
        }
        if v6 {
            kb(&mut out, "Zswap", self.zswap);
            kb(&mut out, "Zswapped", self.zswapped);
        }
        for (n, v) in [("Dirty", self.dirty), ("Writeback", self.writeback), ("AnonPages", self.anon_pages), ("Mapped", self.mapped), ("Shmem", self.shmem)] {
            kb(&mut out, n, v);
        }
        if modern {
            kb(&mut out, "KReclaimable", self.kreclaimable);
        }
        for (n, v) in [("Slab", self.slab), ("SReclaimable", self.sreclaimable), ("SUnreclaim", self.sunreclaim), ("KernelStack", self.kernel_stack), ("PageTables", self.page_tables)] {
            kb(&mut out, n, v);
        }
        if v6 {
            kb(&mut out, "SecPageTables", 0);
        }
        for (n, v) in [
            ("NFS_Unstable", 0),
            ("Bounce", 0),
            ("WritebackTmp", 0),
            ("CommitLimit", self.commit_limit),
            ("Committed_AS", self.committed_as),
            // x86-64: VMALLOC_END - VMALLOC_START (32 TiB - 1 kB with 4-level paging).
            ("VmallocTotal", 34359738367),
            ("VmallocUsed", 0),
            ("VmallocChunk", 0),
        ] {
            kb(&mut out, n, v);
        }
        if modern {
            kb(&mut out, "Percpu", 0);
        }
        kb(&mut out, "HardwareCorrupted", 0);
        kb(&mut out, "AnonHugePages", 0);
        if modern {
            for n in ["ShmemHugePages", "ShmemPmdMapped", "FileHugePages", "FilePmdMapped"] {
                kb(&mut out, n, 0);
            }
        }
        for n in ["HugePages_Total", "HugePages_Free", "HugePages_Rsvd", "HugePages_Surp"] {
            plain(&mut out, n, 0);
        }
        kb(&mut out, "Hugepagesize", 2048);
        if modern {
            kb(&mut out, "Hugetlb", 0);
        }
        // The direct mapping: 4 KiB pages for the first 2 MiB-unaligned part, 2 MiB pages
        // up to 1 GiB boundaries, 1 GiB pages beyond 4 GiB (x86-64 with GB pages).
        let four_k = x.ram_kb.min(14336);
        let rest = x.ram_kb - four_k;
        let one_g = if x.ram_kb > 4 << 20 && modern { (x.ram_kb - (4 << 20)) / (1 << 20) * (1 << 20) } else { 0 };
        let two_m = (rest - one_g).div_ceil(2048) * 2048;
        kb(&mut out, "DirectMap4k", four_k);
        kb(&mut out, "DirectMap2M", two_m);
        if modern {
            kb(&mut out, "DirectMap1G", one_g);
        }
        out
    }
}
