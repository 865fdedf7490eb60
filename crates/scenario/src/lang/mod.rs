//! The scenario language: a small POSIX-shell subset.
