//! TOML machine files.
use crate::{Machine, MachineError};

/// Parse a machine file's text; `origin` names it in errors.
pub fn parse_toml(text: &str, origin: &str) -> Result<Machine, MachineError> {
    let _ = (text, origin);
    todo!()
}

/// A preset name or a path to a TOML file.
pub fn load(spec: &str) -> Result<Machine, MachineError> {
    let _ = spec;
    todo!()
}

/// Apply one "KEY=VALUE" override (a machine field or a sysctl).
pub fn apply_set(m: &mut Machine, kv: &str) -> Result<(), MachineError> {
    let _ = (m, kv);
    todo!()
}
