//! The kernel log buffer (kernel/printk/printk.c, reduced): what `dmesg` and
//! /dev/kmsg read. Each record keeps its time, log level and text; the console (the
//! scenario's terminal) is a separate sink that only messages above console_loglevel reach.

use memtwin_engine::Ns;

/// Log levels (include/linux/kern_levels.h).
pub const KERN_EMERG: u8 = 0;
pub const KERN_ALERT: u8 = 1;
pub const KERN_CRIT: u8 = 2;
pub const KERN_ERR: u8 = 3;
pub const KERN_WARNING: u8 = 4;
pub const KERN_NOTICE: u8 = 5;
pub const KERN_INFO: u8 = 6;
pub const KERN_DEBUG: u8 = 7;

/// One record of the log (struct printk_info, reduced).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Simulated time of the message (ts_nsec).
    pub ts: Ns,
    pub level: u8,
    /// Sequence number since boot.
    pub seq: u64,
    pub text: String,
}

/// The ring of records. The kernel's ring is __LOG_BUF_LEN bytes; the oldest records are
/// dropped once the text held exceeds `capacity` bytes.
#[derive(Clone, Debug)]
pub struct LogBuf {
    pub records: std::collections::VecDeque<LogRecord>,
    bytes: usize,
    pub capacity: usize,
    next_seq: u64,
}

impl Default for LogBuf {
    fn default() -> Self {
        // CONFIG_LOG_BUF_SHIFT=18 on distribution kernels: 256 KiB.
        LogBuf { records: Default::default(), bytes: 0, capacity: 256 * 1024, next_seq: 0 }
    }
}

impl LogBuf {
    /// Append one message (one line; a trailing newline is dropped).
    pub fn push(&mut self, ts: Ns, level: u8, text: &str) {
        let text = text.strip_suffix('\n').unwrap_or(text).to_string();
        self.bytes += text.len();
        self.records.push_back(LogRecord { ts, level, seq: self.next_seq, text });
        self.next_seq += 1;
        while self.bytes > self.capacity {
            match self.records.pop_front() {
                Some(r) => self.bytes -= r.text.len(),
                None => break,
            }
        }
    }
    /// dmesg -C / syslog(SYSLOG_ACTION_CLEAR).
    pub fn clear(&mut self) {
        self.records.clear();
        self.bytes = 0;
    }
}

impl crate::Kernel {
    /// printk: log a message at `level` with the current time.
    pub fn printk(&mut self, level: u8, text: &str) {
        for line in text.lines() {
            self.log.push(self.now, level, line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn oldest_records_go_first_when_full() {
        let mut l = LogBuf { capacity: 10, ..Default::default() };
        l.push(1, KERN_INFO, "hello\n");
        l.push(2, KERN_ERR, "world");
        assert_eq!(l.records.len(), 2);
        l.push(3, KERN_INFO, "again");
        assert_eq!(l.records.iter().map(|r| r.text.as_str()).collect::<Vec<_>>(), vec!["world", "again"]);
        assert_eq!(l.records.back().unwrap().seq, 2);
    }
}
