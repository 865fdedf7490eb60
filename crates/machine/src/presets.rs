//! Machine presets shipped with memtwin: the TOML files under machines/, embedded in the
//! binary and parsed on demand.
use crate::{Machine, MachineError};

pub struct PresetInfo {
    pub name: &'static str,
    /// One line; the same text as the file's `description`.
    pub description: &'static str,
    /// The machine file.
    pub toml: &'static str,
}

pub const PRESETS: &[PresetInfo] = &[
    PresetInfo {
        name: "default",
        description: "An ordinary small server: 8 GiB RAM, 4 CPUs, a SATA SSD with ext4 on /, a 2 GiB swap partition.",
        toml: include_str!("../../../machines/default.toml"),
    },
    PresetInfo {
        name: "seed-000",
        description: "Seed 000's VM (Qiita 2016): 2 GiB RAM (MemTotal 1924020 kB), 2 CPUs, a virtio disk vda, a 4 GB swap partition, CentOS 6's tools; modern page-cache model (the article ran CentOS 6's 2.6.32).",
        toml: include_str!("../../../machines/seed-000.toml"),
    },
    PresetInfo {
        name: "seed-003",
        description: "Seed 003's laptop: 16 GiB RAM (MemTotal 15670 MiB), 4 cores/8 threads, an NVMe SSD with ext4 on /, a 16 GiB swap file; Linux 5.8 (Fedora 33).",
        toml: include_str!("../../../machines/seed-003.toml"),
    },
    PresetInfo {
        name: "seed-002",
        description: "Seed 002's 2002 PC: 128 MB PC133 SDRAM, 1 GHz Pentium III class CPU, a 7200 rpm IDE disk, gigabit Ethernet (e1000 on 32-bit PCI), Linux 2.4 (bdflush, tcp_rmem 4096 87380 174760).",
        toml: include_str!("../../../machines/seed-002.toml"),
    },
    PresetInfo {
        name: "optiplex-gx115",
        description: "Dell OptiPlex GX115 (seed 001): Pentium III 1 GHz, 512 MB PC133 SDRAM, a 40 GB 7200 rpm IDE disk, Red Hat 8.0 (Linux 2.4), a 384 MB tmpfs on /mnt/ram.",
        toml: include_str!("../../../machines/optiplex-gx115.toml"),
    },
    PresetInfo {
        name: "ml110-g4",
        description: "HP ProLiant ML110 G4 (seed 001): Xeon 3040 (2 cores), 2 GB PC2-5300 DDR2, two 160 GB 7200 rpm SATA disks in RAID 1, CentOS 3.6 (Linux 2.4), a 384 MB tmpfs on /mnt/ram.",
        toml: include_str!("../../../machines/ml110-g4.toml"),
    },
    PresetInfo {
        name: "ml110-g6",
        description: "HP ProLiant ML110 G6 (seed 001): Xeon X3430 (4 cores), 2 GB PC3-10600 DDR3, a 7200 rpm SATA disk, CentOS 6.0 (Linux 2.6.32, linux-2.6.39 profile), a 1 GB tmpfs on /mnt/ram.",
        toml: include_str!("../../../machines/ml110-g6.toml"),
    },
    PresetInfo {
        name: "seed-004",
        description: "Seed 004's NFS server: 4x Xeon 7550 (32 cores at 2.0 GHz), 64 GB DDR3-1066, 28 SSDs striped in one ext3 volume, 10 GbE; Linux 2.6.39 (split reclaim patch).",
        toml: include_str!("../../../machines/seed-004.toml"),
    },
    PresetInfo {
        name: "qemu-6.1",
        description: "The QEMU reference guest: Debian 12's 6.1 kernel, 2 GiB RAM (MemTotal 2012108 kB), 2 vCPUs, virtio data disk vda (ext4) and a 4 GiB virtio swap disk vdb, no daemons.",
        toml: include_str!("../../../machines/qemu-6.1.toml"),
    },
    PresetInfo {
        name: "example",
        description: "The default machine with every setting spelled out and commented: the reference for machine files.",
        toml: include_str!("../../../machines/example.toml"),
    },
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

pub(crate) fn find(name: &str) -> Option<&'static PresetInfo> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn preset(name: &str) -> Result<Machine, MachineError> {
    let info = find(name).ok_or_else(|| MachineError {
        message: format!(
            "unknown machine preset '{name}' (presets: {})",
            preset_names().join(", ")
        ),
    })?;
    crate::parse_toml(info.toml, &format!("machines/{name}.toml"))
}
