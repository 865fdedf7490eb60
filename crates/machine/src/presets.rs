//! Machine presets shipped with memtwin (the TOML files under machines/).
use crate::{Machine, MachineError};

pub struct PresetInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub toml: &'static str,
}

pub const PRESETS: &[PresetInfo] = &[];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

pub fn preset(name: &str) -> Result<Machine, MachineError> {
    let _ = name;
    todo!()
}
