//! Machine descriptions: RAM, CPUs, kernel profile, block devices, filesystems, swap and
//! sysctls. Parsed from TOML files or taken from the presets shipped with memtwin.
//!
//! The types here are the contract with the kernel model. Machine files and `--set` live in
//! `parse` (on a position-keeping TOML tree, `tree`); what makes a machine possible in
//! `validate`; block-device presets and Linux device numbers in `device`; the shipped presets
//! (machines/*.toml) in `presets`; size strings ("512M", "1.9G") in `size`.

mod device;
mod error;
mod parse;
mod presets;
pub mod size;
mod sysctl;
mod tree;
mod validate;

pub use device::DEFAULT_READ_AHEAD_KB;
pub use error::MachineError;
pub use parse::{apply_set, load, parse_toml, settable_fields};
pub use presets::{preset, preset_names, PresetInfo, PRESETS};
pub use sysctl::{not_modelled, Bdflush, SysctlError, Sysctls, NOT_MODELLED};

/// Every sysctl name the model knows.
pub fn sysctl_names() -> &'static [&'static str] {
    sysctl::KNOWN
}

/// Which kernel generation's behaviour to emulate where eras differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelProfile {
    /// Linux 6.x (two-list LRU; anon/file balancing by reclaim cost since 5.8; since 5.9 new
    /// anon pages start on the inactive list, need two references to be activated and have
    /// refault detection of their own).
    Linux6,
    /// Linux 5.8: the reclaim-cost balancing and the file workingset that challenges anon
    /// (5.8), with the anon LRU rules of before 5.9.
    Linux58,
    /// Linux 5.4 .. 5.7: anon/file balancing by recent_rotated/recent_scanned.
    Linux5Pre59,
    /// Linux 2.6.39 (seed 004): no refault detection, writes mark pages accessed, reclaim
    /// stops once enough is reclaimed below DEF_PRIORITY (shrink_zone). The rules it borrows
    /// from later kernels are listed in docs/profiles.md.
    Linux2639,
    /// Linux 2.4 (seed 002): bdflush.
    Linux24,
}

impl KernelProfile {
    pub const NAMES: &'static [(&'static str, KernelProfile)] = &[
        ("linux-6.x", KernelProfile::Linux6),
        ("linux-5.8", KernelProfile::Linux58),
        ("linux-5.4", KernelProfile::Linux5Pre59),
        ("linux-2.6.39", KernelProfile::Linux2639),
        ("linux-2.4", KernelProfile::Linux24),
    ];
    pub fn name(self) -> &'static str {
        KernelProfile::NAMES.iter().find(|(_, p)| *p == self).map(|(n, _)| *n).unwrap()
    }
    pub fn from_name(s: &str) -> Option<KernelProfile> {
        KernelProfile::NAMES.iter().find(|(n, _)| *n == s).map(|(_, p)| *p)
    }
    /// get_scan_count weighs anon against file by each type's reclaim cost (pages written
    /// out, workingset refaults): "mm: balance LRU lists based on relative thrashing", 5.8.
    /// Before, by the share of recently scanned pages that were rotated.
    pub fn cost_balance(self) -> bool {
        matches!(self, KernelProfile::Linux6 | KernelProfile::Linux58)
    }
    /// The anon LRU of 5.9+ ("protect the workingset on anonymous LRU", "implement
    /// workingset detection for anonymous LRU"): new anon pages go to the inactive list,
    /// one young PTE no longer activates a swap-backed page, anon evictions leave shadows.
    pub fn anon_workingset(self) -> bool {
        matches!(self, KernelProfile::Linux6)
    }
    /// Refault detection of the page cache (mm/workingset.c, shadow entries): 3.15+.
    pub fn has_workingset(self) -> bool {
        !matches!(self, KernelProfile::Linux2639 | KernelProfile::Linux24)
    }
    /// A buffered write marks the page accessed: SetPageReferenced in 2.4's
    /// generic_file_write, mark_page_accessed in generic_perform_write (2.6 .. 3.15),
    /// FGP_ACCESSED in grab_cache_page_write_begin (3.16 .. 4.6). Since 4.7 ("mm: filemap:
    /// only do access activations on reads", bbddabe2e436) only reads do.
    pub fn write_marks_accessed(self) -> bool {
        matches!(self, KernelProfile::Linux2639 | KernelProfile::Linux24)
    }
    /// get_scan_count reclaims file pages only while the inactive file list is large enough
    /// and not thrashing ("file is plenty": "mm,vmscan: only evict file pages when we have
    /// plenty", 3.8; sc->cache_trim_mode since 5.5). 2.6.39 balances by swappiness alone.
    pub fn file_is_plenty(self) -> bool {
        !matches!(self, KernelProfile::Linux2639 | KernelProfile::Linux24)
    }
}

/// The distribution whose tools print the output: free, vmstat and iostat print what that
/// userland's procps and sysstat printed. By default it follows the kernel profile
/// ([`Userland::default_for`]); a machine file sets it with `userland = "..."` (seed 000's
/// article ran CentOS 6's tools, whatever kernel profile models its page cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Userland {
    /// Debian 12: procps-ng 4.0.2, sysstat 12.6.1, util-linux 2.38.1, coreutils 9.1.
    Debian12,
    /// Ubuntu 20.04: procps-ng 3.3.16 (the same free and vmstat layouts as 4.0.2),
    /// sysstat 12.2.0.
    Ubuntu2004,
    /// CentOS 6: procps 3.2.8 (free's `-/+ buffers/cache` line, `-o`), sysstat 9.0.4.
    Centos6,
    /// CentOS 3 / Red Hat Linux 8-9: procps 2.0.x (vmstat's `r b w` layout with no wa/st
    /// columns), the free of procps 3.2.8's layout.
    Centos3,
}

impl Userland {
    pub const NAMES: &'static [(&'static str, Userland)] = &[
        ("debian-12", Userland::Debian12),
        ("ubuntu-20.04", Userland::Ubuntu2004),
        ("centos-6", Userland::Centos6),
        ("centos-3", Userland::Centos3),
    ];
    pub fn name(self) -> &'static str {
        Userland::NAMES.iter().find(|(_, u)| *u == self).map(|(n, _)| *n).unwrap()
    }
    pub fn from_name(s: &str) -> Option<Userland> {
        Userland::NAMES.iter().find(|(n, _)| *n == s).map(|(_, u)| *u)
    }
    /// The userland of the kernel's era: linux-6.x Debian 12, 5.x Ubuntu 20.04, 2.6.39
    /// CentOS 6, 2.4 CentOS 3.
    pub fn default_for(kernel: KernelProfile) -> Userland {
        match kernel {
            KernelProfile::Linux6 => Userland::Debian12,
            KernelProfile::Linux58 | KernelProfile::Linux5Pre59 => Userland::Ubuntu2004,
            KernelProfile::Linux2639 => Userland::Centos6,
            KernelProfile::Linux24 => Userland::Centos3,
        }
    }
    /// procps-ng (3.3+): free's `available` layout, -h/-w/--si; no `-o`.
    pub fn procps_ng(self) -> bool {
        matches!(self, Userland::Debian12 | Userland::Ubuntu2004)
    }
}

/// Physical performance of a block device. Everything the device model derives (service
/// times, queueing, throughput seen by tools) comes from these numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceModel {
    /// Preset it was built from ("hdd-7200", "sata-ssd", "nvme", "virtio", "ramdisk") or "custom".
    pub preset: String,
    /// Sustained transfer rates, bytes per second, per direction.
    pub read_bw: f64,
    pub write_bw: f64,
    /// Fixed per-request overhead of a read (controller, protocol, interrupt), ns.
    pub latency_ns: u64,
    /// The same for a write (write paths often differ: caches, flushes, host write-through).
    pub write_latency_ns: u64,
    /// Extra cost of a request that does not continue the previous one (rotational media), ns.
    pub seek_ns: u64,
    pub rotational: bool,
    /// Requests the device works on at once (NCQ / virtqueue depth).
    pub queue_depth: u32,
    /// Largest request the block layer sends (max_sectors_kb), bytes.
    pub max_request_bytes: u64,
    /// Writes are completed one at a time on stable storage (a VM disk whose host writes
    /// through, e.g. a virtio-blk with cache=writethrough/directsync): a write's per-request
    /// latency occupies the device instead of overlapping with the next transfer.
    pub write_through: bool,
}

/// A block device attached to the machine, e.g. `vda`.
#[derive(Clone, Debug, PartialEq)]
pub struct Disk {
    /// Kernel name without /dev/ ("vda", "sda", "nvme0n1").
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub size_bytes: u64,
    pub model: DeviceModel,
    /// Block-layer readahead, KiB (/sys/block/X/queue/read_ahead_kb).
    pub read_ahead_kb: u32,
}

impl Disk {
    /// "major:minor" ("253:0"), as in iotop's `[flush-253:0]` and /sys/dev/block.
    pub fn dev(&self) -> String {
        format!("{}:{}", self.major, self.minor)
    }
}

/// A file tree that already exists on a disk filesystem at boot (`[[tree]]`): `files`
/// regular files of `file_size` bytes in directories of `files_per_dir`, the directories in
/// a tree of `dirs_per_dir` subdirectories per directory, under `at`. Generated from `seed`
/// on demand: only what the kernel caches costs memory.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSpec {
    pub at: String,
    pub files: u64,
    pub files_per_dir: u64,
    pub dirs_per_dir: u64,
    pub file_size: u64,
    pub seed: u64,
}

/// A mounted filesystem.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    /// "/dev/vda" for a disk, "tmpfs" for tmpfs.
    pub source: String,
    pub mountpoint: String,
    /// "ext4", "ext3", "xfs", "tmpfs".
    pub fstype: String,
    /// tmpfs size limit in bytes (None: half of RAM, the kernel's default).
    pub size_bytes: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SwapKind {
    /// A whole disk or partition (named disk from `disks`).
    Partition { disk: String },
    /// A swap file on a mounted filesystem.
    File { path: String },
    /// zram with a compression algorithm name ("lzo-rle", "lz4", "zstd").
    Zram { algorithm: String },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SwapDevice {
    pub kind: SwapKind,
    pub size_bytes: u64,
    /// swapon priority; higher is used first. None: the kernel assigns -2, -3, ... in order.
    pub priority: Option<i32>,
    /// Active at boot (listed in fstab and enabled).
    pub enabled: bool,
}

/// CPU and memory-system cost model. Calibrated from hardware parameters, not outcomes.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuModel {
    /// copy_to_user bandwidth, bytes/s: one core copying a page-cache page (in DRAM) into a
    /// user buffer that stays in cache (read(2), a pipe read, a socket read). One byte of
    /// DRAM traffic per byte copied.
    pub copy_bw: f64,
    /// copy_from_user bandwidth into a page-cache page, bytes/s (write(2) into the page
    /// cache or tmpfs). The destination is a page just allocated and not in cache: each
    /// line is read for ownership and written back, two bytes of DRAM traffic per byte
    /// copied, unless the core's string stores skip the read.
    pub copy_in_bw: f64,
    /// Single-core memset/clear_page bandwidth, bytes/s.
    pub zero_bw: f64,
    /// Cost of allocating and freeing one page frame (buddy allocator + accounting), ns.
    pub page_alloc_ns: u64,
    /// Cost of one page-cache lookup (find_get_page / filemap_get_read_batch, with
    /// mark_page_accessed), ns.
    pub page_cache_ns: u64,
    /// Cost of inserting a new page in a mapping's page-cache tree (add_to_page_cache /
    /// __filemap_add_folio: the radix-tree or xarray store under the tree lock, with the
    /// NR_FILE_PAGES and memcg statistics), ns.
    pub page_cache_add_ns: u64,
    /// Cost of putting a new page on an LRU list (lru_cache_add / folio_add_lru through the
    /// per-CPU batch, the LRU lock taken once per batch), ns.
    pub lru_add_ns: u64,
    /// A disk filesystem's own work per page of a buffered write (write_begin/write_end:
    /// block reservation or allocation, buffer heads, the journal handle), ns. tmpfs has
    /// none of it.
    pub fs_write_page_ns: u64,
    /// A disk filesystem's and the block layer's own work per page read into the page cache
    /// (readpage(s): block mapping, buffer heads or bio pages, completion), ns.
    pub fs_read_page_ns: u64,
    /// zram's compression and decompression time on this core relative to the reference
    /// core the per-algorithm figures were measured on (docs/costs.md): 1.0 is as fast,
    /// 2.0 twice as slow.
    pub compress_scale: f64,
    /// Cost of scanning one page on an LRU list during reclaim, ns.
    pub reclaim_scan_ns: u64,
    /// Cost of a minor page fault (trap, PTE install), ns.
    pub page_fault_ns: u64,
    /// Cost of a system call entry/exit, ns.
    pub syscall_ns: u64,
    /// Cost of submitting one block I/O request and taking its completion interrupt, ns.
    pub io_request_ns: u64,
    /// User-space cost of moving one character through stdio (putc()/getc() on a FILE:
    /// the buffer-pointer check, the store or load, and the stream lock glibc takes for
    /// putc/getc), ns. bonnie++'s per-character tests are made of these.
    pub stdio_char_ns: u64,
    /// One load that misses every cache level (DRAM load-to-use latency), ns. The VFS's
    /// costs per dentry/inode operation are counted in these (docs/vfs.md).
    pub cache_miss_ns: u64,
}

impl Default for CpuModel {
    /// A 2010s server core (Xeon E5 / EPYC class) at ~2.5-3 GHz.
    fn default() -> Self {
        CpuModel {
            // Single-threaded memcpy of data already in cache/DRAM, as copy_to_user does it
            // (rep movsb / ERMS): 5-8 GB/s on one core of that class.
            copy_bw: 6e9,
            // copy_from_user into a freshly allocated page: its lines are not in cache, so
            // each is read for ownership and written back (2 bytes of traffic per byte):
            // half of copy_bw. Measured on a 2020s Xeon core (docs/costs.md): 11 GB/s out,
            // 3.7 GB/s into new tmpfs pages.
            copy_in_bw: 3e9,
            // clear_page/memset only writes (no read stream): ~10 GB/s on one core.
            zero_bw: 10e9,
            // __alloc_pages + free_unref_page fast paths through the per-cpu lists, with
            // memcg and zone counter updates: ~150 ns.
            page_alloc_ns: 150,
            // One xarray walk and mark_page_accessed, mostly cache misses: ~120 ns (a 2020s
            // Xeon: 120 ns per page of a cached re-read beside the copy, docs/costs.md).
            page_cache_ns: 120,
            // xarray store under the i_pages lock with the node and memcg statistics.
            page_cache_add_ns: 150,
            // folio_add_lru: a per-CPU batch of 15, the lru_lock taken once per batch.
            lru_add_ns: 50,
            // ext4 delayed allocation: ext4_da_write_begin/_end, buffer heads, reservation.
            // Measured: an ext4 write costs 0.65 µs per page more than a tmpfs write on a
            // 2020s Xeon core (docs/costs.md).
            fs_write_page_ns: 650,
            // ext4_mpage_readpages: an extent lookup shared by the pages of a bio, one
            // bio_add_folio and one end_io per page.
            fs_read_page_ns: 100,
            // A 2010s-2020s server core compresses at the reference core's speed.
            compress_scale: 1.0,
            // Isolating and checking one page in shrink_inactive_list (folio flags,
            // rmap reference check on mapped pages amortised): ~80 ns.
            reclaim_scan_ns: 80,
            // Exception entry/exit, VMA lookup, page-table walk and PTE install with
            // KPTI-era entry costs: ~0.7 µs for a minor fault.
            page_fault_ns: 700,
            // syscall/sysret round trip with speculative-execution mitigations: ~150 ns.
            syscall_ns: 150,
            // Block-layer submit (bio, request, tag), driver doorbell and the completion
            // interrupt with its softirq: ~5 µs of CPU per request.
            io_request_ns: 5000,
            // putc() in glibc: a lock-prefixed acquire of the stream lock (~20 cycles on
            // this class of core), the buffer bounds check and the store: ~6 ns at 3 GHz.
            stdio_char_ns: 6,
            // Idle load-to-use latency of DRAM on a 2010s multi-socket Xeon: 80-100 ns
            // locally (more on a remote node).
            cache_miss_ns: 90,
        }
    }
}

/// The machine's network interface and the path to the peer it talks to (seed 002's FTP
/// transfers). Calibrated from hardware parameters: line rate, path RTT, MTU and the CPU
/// cost of the receive path; the throughput a transfer gets follows from them and from the
/// TCP tunables (net.ipv4.tcp_rmem, tcp_adv_win_scale).
#[derive(Clone, Debug, PartialEq)]
pub struct NetModel {
    /// Interface name as the kernel calls it ("eth0").
    pub nic: String,
    /// Line rate, bits per second (1e9 for gigabit Ethernet).
    pub link_bps: f64,
    /// Round-trip time to the peer for a full-sized segment and its ACK: wire, switches,
    /// both NICs' interrupt moderation and the peer's own turnaround, ns. The receiver's
    /// CPU time is not in it: the model adds it where the receiving task spends it.
    pub rtt_ns: u64,
    /// Largest IP packet on the link, bytes (1500 for Ethernet; 9000 with jumbo frames).
    pub mtu: u32,
    /// CPU cost of receiving one TCP segment: the NIC interrupt (or its share of a
    /// moderated one), the driver's descriptor and buffer refill, IP and TCP input
    /// processing, waking the reader and the share of an ACK (one per two segments), ns.
    pub rx_packet_ns: u64,
    /// CPU cost per received byte on top of the copy to user space (which is charged at
    /// copy_bw): a software checksum when the NIC does not verify it; 0 with offload.
    pub rx_byte_ns: f64,
    /// What the bus between NIC and memory can carry, bytes/s (a 32-bit/33 MHz PCI slot
    /// is 133 MB/s peak); None when the bus is faster than the link.
    pub bus_bw: Option<f64>,
}

impl Default for NetModel {
    /// A gigabit Ethernet port on a 2010s server in a LAN: ~0.1 ms round trip through one
    /// switch (two 1500-byte serialisations of 12 µs, switch and PHY latencies, interrupt
    /// coalescing of tens of µs on both ends); ~1.5 µs of CPU per segment with NAPI
    /// polling and checksum offload.
    fn default() -> Self {
        NetModel { nic: "eth0".into(), link_bps: 1e9, rtt_ns: 100_000, mtu: 1500, rx_packet_ns: 1500, rx_byte_ns: 0.0, bus_bw: None }
    }
}

/// What the CPU says it is (CPUID, as /proc/cpuinfo prints it): the `[cpu]` table's
/// identity keys. A machine file without them gets `CpuIdentity::generic()`.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuIdentity {
    /// CPUID vendor string: GenuineIntel, AuthenticAMD.
    pub vendor_id: String,
    /// The brand string ("model name"), as the CPU reports it (with its padding spaces).
    pub model_name: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    /// The clock /proc/cpuinfo shows ("cpu MHz", the TSC's rate).
    pub mhz: f64,
    /// The cache "cache size" names (L2 on older CPUs, the last level since), KiB.
    pub cache_kb: u32,
    /// Cores per package and hardware threads per core (physical id, siblings, core id,
    /// cpu cores follow from them and `cpus`).
    pub cores_per_package: u32,
    pub threads_per_core: u32,
    /// Highest standard CPUID leaf ("cpuid level").
    pub cpuid_level: u32,
    /// Feature flags, space-separated, in the kernel's order.
    pub flags: String,
    /// CPU bugs the kernel knows of ("bugs", 3.18+), space-separated.
    pub bugs: String,
    /// Physical and virtual address bits ("address sizes", 2.6.x+).
    pub address_bits: (u32, u32),
    /// The loaded microcode revision ("microcode", 3.x+); None (or 0): the line is not
    /// printed, as show_cpuinfo skips it when c->microcode is 0 (virtual CPUs).
    pub microcode: Option<u32>,
    /// VMX features ("vmx flags", 5.8+, CONFIG_X86_VMX_FEATURE_NAMES), space-separated;
    /// printed only when `flags` has vmx and this is not empty.
    pub vmx_flags: String,
}

impl CpuIdentity {
    /// The identity of a machine file that names no CPU: QEMU's default x86-64 model
    /// ("qemu64"), which is what a virtual machine without CPU passthrough reports, at
    /// the default cost model's 3 GHz.
    pub fn generic() -> CpuIdentity {
        CpuIdentity {
            vendor_id: "GenuineIntel".into(),
            model_name: "QEMU Virtual CPU version 2.5+".into(),
            family: 15,
            model: 107,
            stepping: 1,
            mhz: 3000.0,
            cache_kb: 16384,
            cores_per_package: 1,
            threads_per_core: 1,
            cpuid_level: 13,
            flags: "fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 syscall nx lm rep_good nopl xtopology cpuid tsc_known_freq pni cx16 x2apic hypervisor lahf_lm cpuid_fault pti".into(),
            bugs: "cpu_meltdown spectre_v1 spectre_v2 spec_store_bypass l1tf mds swapgs itlb_multihit mmio_unknown".into(),
            address_bits: (40, 48),
            microcode: None,
            vmx_flags: String::new(),
        }
    }
}

/// A whole machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub name: String,
    pub description: String,
    /// Installed RAM, bytes.
    pub ram_bytes: u64,
    /// RAM the kernel keeps for itself before MemTotal (firmware, kernel image, memmap).
    /// None: the default reserve (see `kernel_reserve`).
    pub kernel_reserve_bytes: Option<u64>,
    pub cpus: u32,
    pub kernel: KernelProfile,
    pub cpu_model: CpuModel,
    /// What /proc/cpuinfo says the CPU is.
    pub cpu_id: CpuIdentity,
    pub disks: Vec<Disk>,
    pub mounts: Vec<Mount>,
    pub swaps: Vec<SwapDevice>,
    /// Generated file trees on the disk filesystems (`[[tree]]`).
    pub trees: Vec<TreeSpec>,
    pub sysctl: Sysctls,
    /// The network interface (`[net]` in machine files).
    pub net: NetModel,
    /// Memory the idle system already uses at boot (init, daemons): anonymous and file bytes.
    pub boot_anon_bytes: u64,
    pub boot_file_bytes: u64,
    /// Hostname shown by tools.
    pub hostname: String,
    /// `cgroup = "v1"`: the v1 memory controller (as systemd.unified_cgroup_hierarchy=0
    /// chooses) instead of 5.x/6.x's default v2. 2.6.39 has only v1, 2.4 no cgroups.
    pub cgroup_v1: bool,
    /// `userland = "..."`; None: the kernel profile's (see [`Machine::userland`]).
    pub userland: Option<Userland>,
}

impl Machine {
    /// The userland whose tools print the output: the machine file's, else the kernel's era's.
    pub fn userland(&self) -> Userland {
        self.userland.unwrap_or(Userland::default_for(self.kernel))
    }

    /// MemTotal in bytes: RAM less the kernel's reserve.
    pub fn mem_total_bytes(&self) -> u64 {
        self.ram_bytes.saturating_sub(self.kernel_reserve())
    }

    /// The default reserve: the memmap (64 bytes per 4 KiB page, ~1.6%) plus the kernel
    /// image, firmware and early allocations (1/32 of RAM, at most 64 MiB).
    pub fn kernel_reserve(&self) -> u64 {
        self.kernel_reserve_bytes
            .unwrap_or(self.ram_bytes / 64 + (self.ram_bytes / 32).min(64 * 1024 * 1024))
    }

    /// Check that the machine is possible (RAM and CPU ranges, disks named as Linux names
    /// them with their device numbers, mounts and swap devices on existing disks, sizes that
    /// fit). Machines from `parse_toml`, `load`, `preset` and `apply_set` are already valid;
    /// this is for machines built or changed in code.
    pub fn validate(&self) -> Result<(), MachineError> {
        validate::check(self).map_err(|p| MachineError { message: format!("machine '{}': {}", self.name, p.message) })
    }

    /// The disk of this name ("vda"), if the machine has one.
    pub fn disk(&self, name: &str) -> Option<&Disk> {
        self.disks.iter().find(|d| d.name == name)
    }
}
