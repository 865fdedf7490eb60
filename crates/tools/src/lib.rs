//! The user-space tools people read: free, vmstat, iostat, top, iotop. They only read snapshots.
//!
//! Every formatter is a pure function of [`memtwin_procfs::Snapshot`]s (and, for interval
//! tools, the previous snapshot): nothing here changes state. The text is the real tools'
//! byte for byte — column widths, headers, rounding, units and quirks included — for the
//! versions named in each module:
//!
//! * [`mod@free`]: procps-ng 4.0.2 (Debian 12), and procps 3.2.8's layout with the
//!   `-/+ buffers/cache` line via `--old`.
//! * [`vmstat`]: procps-ng 4.0.2.
//! * [`top`]: procps-ng 4.0.2, batch mode.
//! * [`iotop`]: Python iotop 0.6 (and Debian 12's 0.6-42 snapshot), batch mode.
//! * [`mod@iostat`]: sysstat 12.6 / 12.2 / 9.0.4 `iostat`, procps-ng 4.0.2 `vmstat -d/-D`.
//!
//! Each tool also has a `parse_*_args` that accepts the real tool's command-line syntax
//! (option clusters, attached arguments, long options and their abbreviations, operands
//! anywhere) and returns `Err` with exactly what the real tool prints on stderr for what it
//! would reject (without the final newline), or options whose `print_and_exit` holds what
//! `--help`/`-V` print on stdout. Options memtwin cannot honour (disk statistics, per-CPU
//! lines...) are rejected with a message that says so.
//!
//! Verification: `tests/golden/*.case` hold snapshots together with the output the real
//! procps-ng 4.0.2 tools printed for them (run by `tests/golden/capture.py` over a fake
//! /proc on Debian 12), `tests/golden/args.errors` their messages for bad command lines;
//! `tests/golden.rs` replays both, plus the tables of the 2016 Qiita article (seed 000).

mod getopt;

pub mod dmesg;
pub mod free;
pub mod iostat;
pub mod ps;
pub mod sar;
pub mod slabtop;
pub mod table;
pub mod iotop;
pub mod top;
pub mod vmstat;

pub use dmesg::{dmesg, parse_dmesg_args, DmesgOptions, DmesgRecord, DmesgTime};
pub use iostat::{iostat_banner, iostat_report, parse_iostat_args, vmstat_disk_sum, vmstat_disks, IostatOptions, IostatStyle};
pub use ps::{parse_ps_args, ps, uptime_line, PsOptions, PsTaskExtra};
pub use slabtop::{parse_slabtop_args, slabtop_once, vmstat_slabs, SlabSort, SlabtopOptions};
pub use sar::{sar_average, sar_banner, sar_header, sar_row, SarReport};
pub use table::{size_to_human, smartcols};
pub use free::{free, free_repeated, parse_free_args, procps3_free_rejects, FreeOptions, FreeUnit, FREE_USAGE, FREE_USAGE_PROCPS3};
pub use iotop::{
    iotop_actual_from_vmstat, iotop_frame, iotop_frame_ext, parse_iotop_args, IotopFrameContext,
    IotopOptions, IotopStyle,
};
pub use top::{
    parse_top_args, top_batch, top_frame, wall_clock_at, TopOptions, TopScale, TopSortField,
};
pub use vmstat::{
    parse_vmstat_args, vmstat_forks, vmstat_header, vmstat_header_due, vmstat_report, vmstat_row,
    vmstat_samples, vmstat_stats, VmstatLayout, VmstatMode, VmstatOptions, VmstatUnit,
};
