//! Errors in machine descriptions.

/// A bad machine description or override. `Display` gives one line: "FILE:LINE: message".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineError {
    pub message: String,
}

impl std::fmt::Display for MachineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MachineError {}
