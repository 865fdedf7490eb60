//! Streaming trace readers. A trace is read in batches through a bounded buffer, so a trace
//! larger than memory replays in constant memory.
//!
//! Formats:
//! * `csv`: one request per line. An optional header line names the columns: the object id
//!   (`id`, `obj_id`, `object_id`, `key`, `page`; required), its size in bytes (`size`,
//!   `obj_size`, `object_size`), a timestamp (`time`, `clock_time`, `timestamp`, `ts`) and
//!   an operation (`op`, `operation`); other columns are skipped. The time column must be
//!   numeric but does not change a replay (requests are replayed in file order, one after
//!   the other). The op column must be a read (`get`, `gets`, `read`, `r`): other operations
//!   are refused. Without a header the columns are `id` or `id,size`.
//! * `u64`: one unsigned 64-bit object id per line (blank lines and `#` comments skipped).
//! * `oracle-general`: libCacheSim's oracleGeneral binary format, packed little-endian
//!   24-byte records: clock_time u32, obj_id u64, obj_size u32, next_access_vtime i64.
//!
//! Requests without a size weigh one 4 KiB page.

use std::fs::File;
use std::io::{BufRead, BufReader};

pub const PAGE_BYTES: u32 = 4096;
const READ_BUF: usize = 1 << 20;
/// oracleGeneral's record size.
pub const ORACLE_GENERAL_RECORD: usize = 24;

/// One oracleGeneral record's request: obj_id at bytes 4..12, obj_size at 12..16.
#[inline]
fn oracle_general_request(rec: &[u8]) -> Request {
    let id = u64::from_le_bytes([rec[4], rec[5], rec[6], rec[7], rec[8], rec[9], rec[10], rec[11]]);
    let size = u32::from_le_bytes([rec[12], rec[13], rec[14], rec[15]]);
    Request { id, size }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    U64,
    OracleGeneral,
}

impl Format {
    pub const NAMES: &'static str = "csv, u64, oracle-general";

    pub fn parse(s: &str) -> Option<Format> {
        Some(match s.to_ascii_lowercase().as_str() {
            "csv" => Format::Csv,
            "u64" | "txt" | "text" => Format::U64,
            "oracle-general" | "oraclegeneral" | "oracle_general" => Format::OracleGeneral,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::U64 => "u64",
            Format::OracleGeneral => "oracle-general",
        }
    }

    /// The format a file name implies (`.csv`, `.txt`/`.u64`, `.oracleGeneral`, `.og`).
    pub fn from_path(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        if name.ends_with(".csv") {
            Some(Format::Csv)
        } else if name.ends_with(".txt") || name.ends_with(".u64") {
            Some(Format::U64)
        } else if name.contains("oraclegeneral") || name.ends_with(".og") || name.ends_with(".og.bin") {
            Some(Format::OracleGeneral)
        } else {
            None
        }
    }
}

/// One request: an object id and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    pub size: u32,
}

/// A bad trace: one line naming file:line (or record) and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TraceError {}

fn one_line(s: &str) -> String {
    let s: String = s.chars().take(60).collect();
    s.replace('\r', "\\r").replace('\n', "\\n")
}

#[derive(Clone, Copy, Debug, Default)]
struct CsvLayout {
    id: usize,
    size: Option<usize>,
    time: Option<usize>,
    op: Option<usize>,
    ncols: usize,
}

/// Reads a trace in batches.
pub struct TraceReader {
    path: String,
    format: Format,
    input: BufReader<File>,
    /// Lines (text formats) or records (binary) consumed so far.
    pos: u64,
    csv: Option<CsvLayout>,
    has_sizes: bool,
    line: Vec<u8>,
    /// A headerless CSV's first line, read while looking for a header, is still to replay.
    pending_first: bool,
    /// The first bytes of a binary record whose rest is in the next read.
    partial: Vec<u8>,
    done: bool,
}

fn open_error(path: &str, e: &std::io::Error) -> TraceError {
    let why = match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
        _ => e.to_string(),
    };
    TraceError { message: format!("cannot read trace '{path}': {why}") }
}

const CSV_ACCEPTS: &str = "a header naming the columns (id or obj_id; optional size, time, op) or headerless 'id' or 'id,size' lines of unsigned integers";

impl TraceReader {
    pub fn open(path: &str, format: Format) -> Result<TraceReader, TraceError> {
        let f = File::open(path).map_err(|e| open_error(path, &e))?;
        let meta = f.metadata().map_err(|e| open_error(path, &e))?;
        if meta.is_dir() {
            return Err(TraceError { message: format!("cannot read trace '{path}': Is a directory") });
        }
        if format == Format::OracleGeneral && meta.is_file() && meta.len() % ORACLE_GENERAL_RECORD as u64 != 0 {
            let n = meta.len() / ORACLE_GENERAL_RECORD as u64;
            return Err(TraceError {
                message: format!(
                    "{path}: record {}: truncated: the file is {} bytes, not a multiple of 24 (oracleGeneral records are 24 bytes: clock_time u32, obj_id u64, obj_size u32, next_access_vtime i64, little-endian)",
                    n + 1,
                    meta.len()
                ),
            });
        }
        let mut r = TraceReader {
            path: path.to_string(),
            format,
            input: BufReader::with_capacity(READ_BUF, f),
            pos: 0,
            csv: None,
            has_sizes: format == Format::OracleGeneral,
            line: Vec::with_capacity(256),
            pending_first: false,
            partial: Vec::new(),
            done: false,
        };
        if format == Format::Csv {
            r.read_csv_header()?;
        }
        Ok(r)
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Whether requests carry their own sizes (a CSV size column, oracleGeneral).
    pub fn has_sizes(&self) -> bool {
        self.has_sizes
    }

    /// A binary trace that ended `got` bytes into a record (the file shrank after it was opened).
    fn truncated(&self, got: usize) -> TraceError {
        TraceError {
            message: format!(
                "{}: record {}: truncated: {got} of 24 bytes (oracleGeneral records are 24 bytes: clock_time u32, obj_id u64, obj_size u32, next_access_vtime i64, little-endian)",
                self.path,
                self.pos + 1
            ),
        }
    }

    fn err(&self, m: String) -> TraceError {
        TraceError { message: format!("{}:{}: {}", self.path, self.pos, m) }
    }

    /// Next line into self.line without its end; false at the end of the file.
    fn next_line(&mut self) -> Result<bool, TraceError> {
        self.line.clear();
        let n = self.input.read_until(b'\n', &mut self.line).map_err(|e| TraceError { message: format!("{}: read error: {e}", self.path) })?;
        if n == 0 {
            return Ok(false);
        }
        self.pos += 1;
        while matches!(self.line.last(), Some(b'\n' | b'\r')) {
            self.line.pop();
        }
        Ok(true)
    }

    /// The CSV header (if the first non-empty line has a non-numeric field) sets the layout;
    /// a headerless first line is kept for the first batch.
    fn read_csv_header(&mut self) -> Result<(), TraceError> {
        loop {
            if !self.next_line()? {
                self.done = true;
                self.csv = Some(CsvLayout { id: 0, size: None, time: None, op: None, ncols: 1 });
                return Ok(());
            }
            if !self.line.iter().all(u8::is_ascii_whitespace) {
                break;
            }
        }
        let text = String::from_utf8_lossy(&self.line).to_string();
        let fields: Vec<&str> = text.split(',').map(|f| f.trim().trim_matches('"')).collect();
        if fields.iter().all(|f| f.parse::<u64>().is_ok()) {
            if fields.len() > 2 {
                return Err(self.err(format!("{} columns and no header line: give a header naming the columns ({CSV_ACCEPTS})", fields.len())));
            }
            self.has_sizes = fields.len() == 2;
            self.csv = Some(CsvLayout { id: 0, size: (fields.len() == 2).then_some(1), time: None, op: None, ncols: fields.len() });
            // Replay this line: rewind the count so that it is read again from self.line.
            self.pos -= 1;
            self.pending_first = true;
            return Ok(());
        }
        let mut l = CsvLayout { id: usize::MAX, ncols: fields.len(), ..Default::default() };
        for (i, f) in fields.iter().enumerate() {
            match f.to_ascii_lowercase().as_str() {
                "id" | "obj_id" | "object_id" | "key" | "page" => l.id = i,
                "size" | "obj_size" | "object_size" => l.size = Some(i),
                "time" | "clock_time" | "timestamp" | "ts" => l.time = Some(i),
                "op" | "operation" => l.op = Some(i),
                _ => {}
            }
        }
        if l.id == usize::MAX {
            return Err(self.err(format!("the header '{}' names no id column ({CSV_ACCEPTS})", one_line(&text))));
        }
        self.has_sizes = l.size.is_some();
        self.csv = Some(l);
        Ok(())
    }
}

// The headerless first CSV line is parsed again by the first batch.
impl TraceReader {
    #[inline]
    fn parse_u64(s: &[u8]) -> Option<u64> {
        if s.is_empty() || s.len() > 20 {
            return None;
        }
        let mut v: u64 = 0;
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(d as u64)?;
        }
        Some(v)
    }

    fn trim(s: &[u8]) -> &[u8] {
        let mut a = 0;
        let mut b = s.len();
        while a < b && (s[a].is_ascii_whitespace() || s[a] == b'"') {
            a += 1;
        }
        while b > a && (s[b - 1].is_ascii_whitespace() || s[b - 1] == b'"') {
            b -= 1;
        }
        &s[a..b]
    }

    fn csv_request(&self) -> Result<Option<Request>, TraceError> {
        let l = self.csv.unwrap_or_default();
        let line = &self.line;
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let mut id = None;
        let mut size = PAGE_BYTES;
        let mut n = 0;
        for (i, field) in line.split(|&b| b == b',').enumerate() {
            n = i + 1;
            let f = Self::trim(field);
            if i == l.id {
                id = Some(Self::parse_u64(f).ok_or_else(|| {
                    self.err(format!("'{}' is not an object id (accepted: an unsigned 64-bit integer in column {})", one_line(&String::from_utf8_lossy(f)), l.id + 1))
                })?);
            } else if Some(i) == l.size {
                let v = Self::parse_u64(f).filter(|&v| v <= u32::MAX as u64).ok_or_else(|| {
                    self.err(format!("'{}' is not an object size (accepted: bytes, an integer from 0 to 4294967295)", one_line(&String::from_utf8_lossy(f))))
                })?;
                size = v as u32;
            } else if Some(i) == l.time {
                let t = String::from_utf8_lossy(f);
                if !t.parse::<f64>().is_ok_and(|x| x.is_finite()) {
                    return Err(self.err(format!("'{}' is not a time (accepted: a number)", one_line(&t))));
                }
            } else if Some(i) == l.op {
                let op = String::from_utf8_lossy(f).to_ascii_lowercase();
                if !matches!(op.as_str(), "get" | "gets" | "read" | "r") {
                    return Err(self.err(format!("operation '{}' is not replayed (accepted: reads: get, gets, read, r)", one_line(&op))));
                }
            }
        }
        let needed = [Some(l.id), l.size, l.time, l.op].iter().flatten().max().copied().unwrap_or(0) + 1;
        if n < needed || id.is_none() {
            return Err(self.err(format!("{n} columns, expected {} ({CSV_ACCEPTS})", l.ncols.max(needed))));
        }
        Ok(id.map(|id| Request { id, size }))
    }

    fn u64_request(&self) -> Result<Option<Request>, TraceError> {
        let f = Self::trim(&self.line);
        if f.is_empty() || f[0] == b'#' {
            return Ok(None);
        }
        match Self::parse_u64(f) {
            Some(id) => Ok(Some(Request { id, size: PAGE_BYTES })),
            None => Err(self.err(format!("'{}' is not an object id (accepted: one unsigned 64-bit integer per line)", one_line(&String::from_utf8_lossy(f))))),
        }
    }

    /// Fill `out` (cleared first) with up to `max` requests. Returns false when the trace
    /// has ended and `out` is empty.
    pub fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<bool, TraceError> {
        out.clear();
        if self.pending_first {
            self.pending_first = false;
            self.pos += 1;
            if let Some(r) = self.csv_request()? {
                out.push(r);
            }
        }
        while out.len() < max && !self.done {
            match self.format {
                Format::OracleGeneral => {
                    // Whole records at once from the reader's buffer (as many as fit the
                    // batch), parsed in place.
                    let buf = self.input.fill_buf().map_err(|e| TraceError { message: format!("{}: read error: {e}", self.path) })?;
                    if buf.is_empty() {
                        if !self.partial.is_empty() {
                            return Err(self.truncated(self.partial.len()));
                        }
                        self.done = true;
                        break;
                    }
                    if !self.partial.is_empty() || buf.len() < ORACLE_GENERAL_RECORD {
                        // A record split across two reads: assemble it.
                        let take = (ORACLE_GENERAL_RECORD - self.partial.len()).min(buf.len());
                        self.partial.extend_from_slice(&buf[..take]);
                        self.input.consume(take);
                        if self.partial.len() == ORACLE_GENERAL_RECORD {
                            self.pos += 1;
                            out.push(oracle_general_request(&self.partial));
                            self.partial.clear();
                        }
                        continue;
                    }
                    let n = (buf.len() / ORACLE_GENERAL_RECORD).min(max - out.len());
                    out.extend(buf[..n * ORACLE_GENERAL_RECORD].chunks_exact(ORACLE_GENERAL_RECORD).map(oracle_general_request));
                    self.pos += n as u64;
                    self.input.consume(n * ORACLE_GENERAL_RECORD);
                }
                Format::U64 | Format::Csv => {
                    if !self.next_line()? {
                        self.done = true;
                        break;
                    }
                    let r = if self.format == Format::Csv { self.csv_request()? } else { self.u64_request()? };
                    if let Some(r) = r {
                        out.push(r);
                    }
                }
            }
        }
        Ok(!out.is_empty())
    }
}
