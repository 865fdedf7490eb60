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
        description: "Seed 000's VM (Qiita 2016): 2 GiB RAM (MemTotal 1924020 kB), 2 CPUs, a virtio disk vda, a 4 GB swap partition; modern page-cache model (the article ran CentOS 6's 2.6.32).",
        toml: include_str!("../../../machines/seed-000.toml"),
    },
    PresetInfo {
        name: "seed-003",
        description: "Seed 003's laptop: 16 GiB RAM (MemTotal 15670 MiB), 4 cores/8 threads, an NVMe SSD with ext4 on /, a 16 GiB swap file; Linux 5.4-era reclaim.",
        toml: include_str!("../../../machines/seed-003.toml"),
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
