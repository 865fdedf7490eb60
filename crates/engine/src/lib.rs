//! Discrete-event engine: simulated time, events, tasks, CPUs and locks. Knows nothing of memory.
