//! The user-space tools people read: free, vmstat, top, iotop. They only read snapshots.
