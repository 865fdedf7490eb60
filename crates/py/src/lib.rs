//! Python bindings (memtwin._core). Thin: converts arguments and delegates.
