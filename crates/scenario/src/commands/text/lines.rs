//! head, tail, wc, sort, uniq, cut, tr, tee and cat of standard input (GNU coreutils).

use super::{Ctx, Filter, FilterProg, Input, Reader};
use crate::commands::Cmd;

fn num(tool: &str, opt: &str, v: Option<&String>) -> Result<i64, String> {
    let v = v.ok_or_else(|| format!("{tool}: option requires an argument -- '{}'", opt.trim_start_matches('-')))?;
    let t = v.trim_start_matches(['+', '-']);
    let mult = match t.chars().last() {
        Some('k' | 'K') => 1024,
        Some('M') => 1 << 20,
        Some('G') => 1 << 30,
        Some('b') => 512,
        _ => 1,
    };
    let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let n: i64 = digits.parse().map_err(|_| format!("{tool}: invalid number of lines: '{v}'"))?;
    Ok(if v.starts_with('-') { -n * mult } else { n * mult })
}

/// Split argv into options (with their values) and operands; `with_value` lists the
/// options that take one. Short options may be grouped (`-rn`) and joined to their value
/// (`-n3`, `-d,`).
pub(super) fn getopt(tool: &str, args: &[String], flags: &str, with_value: &str, long: &[(&str, char)]) -> Result<(Vec<(char, Option<String>)>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut ops = Vec::new();
    let mut i = 0;
    let supported = || {
        let mut all: Vec<String> = flags.chars().chain(with_value.chars()).map(|c| format!("-{c}")).collect();
        all.extend(long.iter().map(|(l, _)| format!("--{l}")));
        all.join(" ")
    };
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            ops.extend(args[i + 1..].iter().cloned());
            break;
        }
        if let Some(l) = a.strip_prefix("--") {
            let (name, val) = match l.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (l, None),
            };
            match long.iter().find(|(n, _)| *n == name) {
                Some(&(_, c)) => {
                    let val = if with_value.contains(c) && val.is_none() {
                        i += 1;
                        args.get(i).cloned()
                    } else {
                        val
                    };
                    opts.push((c, val));
                }
                None => return Err(format!("{tool}: unsupported option '--{name}' (supported: {})", supported())),
            }
        } else if a.len() > 1 && a.starts_with('-') {
            let cs: Vec<char> = a[1..].chars().collect();
            let mut j = 0;
            while j < cs.len() {
                let c = cs[j];
                if with_value.contains(c) {
                    let rest: String = cs[j + 1..].iter().collect();
                    let v = if rest.is_empty() {
                        i += 1;
                        match args.get(i) {
                            Some(v) => v.clone(),
                            None => return Err(format!("{tool}: option requires an argument -- '{c}'")),
                        }
                    } else {
                        rest
                    };
                    opts.push((c, Some(v)));
                    break;
                } else if flags.contains(c) {
                    opts.push((c, None));
                } else if c.is_ascii_digit() && flags.contains('#') {
                    // `head -5`: the number is the rest.
                    let rest: String = cs[j..].iter().collect();
                    opts.push(('#', Some(rest)));
                    break;
                } else {
                    return Err(format!("{tool}: unsupported option '-{c}' (supported: {})", supported()));
                }
                j += 1;
            }
        } else {
            ops.push(a.clone());
        }
        i += 1;
    }
    Ok((opts, ops))
}

pub fn build(name: &str, args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    let tool: &'static str = match name {
        "head" => "head",
        "tail" => "tail",
        "wc" => "wc",
        "sort" => "sort",
        "uniq" => "uniq",
        "cut" => "cut",
        "tr" => "tr",
        "tee" => "tee",
        _ => "cat",
    };
    let f: Box<dyn Filter>;
    let mut operands: Vec<String>;
    match tool {
        "head" | "tail" => {
            let (opts, ops) = getopt(tool, args, "#qvf", "nc", &[("lines", 'n'), ("bytes", 'c'), ("follow", 'f'), ("quiet", 'q')])?;
            let mut lines = 10i64;
            let mut bytes = None;
            let mut from_start = false;
            for (c, v) in &opts {
                match c {
                    'n' | '#' => {
                        lines = num(tool, "-n", v.as_ref())?;
                        from_start = v.as_deref().is_some_and(|s| s.starts_with('+'));
                    }
                    'c' => {
                        bytes = Some(num(tool, "-c", v.as_ref())?);
                        from_start = v.as_deref().is_some_and(|s| s.starts_with('+'));
                    }
                    'f' => return Err("tail: -f (follow) is not supported: the script would never go on (use 'timeout N tail -f' on a real system; here read the file again later)".into()),
                    _ => {}
                }
            }
            let headers = ops.len() > 1 && !opts.iter().any(|(c, _)| *c == 'q');
            f = if tool == "head" { Box::new(Head { lines, bytes, seen: 0, buf: Vec::new(), headers, first: true }) } else { Box::new(Tail { lines, bytes, from_start, data: Vec::new(), headers, first: true }) };
            operands = ops;
        }
        "wc" => {
            let (opts, ops) = getopt(tool, args, "lwcmL", "", &[("lines", 'l'), ("words", 'w'), ("bytes", 'c'), ("chars", 'm')])?;
            let mut which: Vec<char> = opts.iter().map(|(c, _)| *c).collect();
            if which.is_empty() {
                which = vec!['l', 'w', 'c'];
            }
            let sizes: Vec<Option<u64>> = ops.iter().map(|o| {
                let abs = memtwin_kernel::fs::normalize(ctx.cwd, o);
                let k = ctx.k?;
                if super::is_proc_file(k, &abs) {
                    return Some(0);
                }
                k.sys_stat(&abs).ok().map(|s| s.size)
            }).collect();
            f = Box::new(Wc::new(&which, ops.len(), &sizes));
            operands = ops;
        }
        "sort" => {
            let (opts, ops) = getopt(tool, args, "nrufhbsVg", "kto", &[("numeric-sort", 'n'), ("reverse", 'r'), ("unique", 'u'), ("key", 'k'), ("field-separator", 't'), ("human-numeric-sort", 'h'), ("ignore-case", 'f')])?;
            let mut s = Sort::default();
            for (c, v) in opts {
                match c {
                    'n' | 'g' => s.numeric = true,
                    'h' => s.human = true,
                    'r' => s.reverse = true,
                    'u' => s.unique = true,
                    'f' => s.fold = true,
                    'b' => {}
                    's' => s.stable = true,
                    'V' => s.numeric = true,
                    't' => {
                        let v = v.unwrap_or_default();
                        if v.chars().count() != 1 {
                            return Err(format!("sort: multi-character tab '{v}'"));
                        }
                        s.sep = v.chars().next();
                    }
                    'k' => s.keys.push(parse_key(&v.unwrap_or_default())?),
                    'o' => return Err("sort: -o is not supported (redirect with > instead)".into()),
                    _ => {}
                }
            }
            f = Box::new(s);
            operands = ops;
        }
        "uniq" => {
            let (opts, ops) = getopt(tool, args, "cdui", "", &[("count", 'c'), ("repeated", 'd'), ("unique", 'u'), ("ignore-case", 'i')])?;
            let mut u = Uniq::default();
            for (c, _) in opts {
                match c {
                    'c' => u.count = true,
                    'd' => u.dup = true,
                    'u' => u.uniq = true,
                    _ => u.fold = true,
                }
            }
            if ops.len() > 1 {
                return Err("uniq: writing to an OUTPUT operand is not supported (redirect with > instead)".into());
            }
            f = Box::new(super::lines::LineFilter::new(u));
            operands = ops;
        }
        "cut" => {
            let (opts, ops) = getopt(tool, args, "s", "dfcb", &[("delimiter", 'd'), ("fields", 'f'), ("characters", 'c'), ("bytes", 'b'), ("only-delimited", 's')])?;
            let mut c = Cut { delim: '\t', fields: None, chars: None, only_delim: false };
            for (o, v) in opts {
                match o {
                    'd' => {
                        let v = v.unwrap_or_default();
                        if v.chars().count() != 1 {
                            return Err("cut: the delimiter must be a single character".into());
                        }
                        c.delim = v.chars().next().unwrap_or('\t');
                    }
                    'f' => c.fields = Some(parse_list(&v.unwrap_or_default())?),
                    'c' | 'b' => c.chars = Some(parse_list(&v.unwrap_or_default())?),
                    _ => c.only_delim = true,
                }
            }
            if c.fields.is_none() && c.chars.is_none() {
                return Err("cut: you must specify a list of bytes, characters, or fields (supported: -f LIST [-d C] [-s], -c LIST, -b LIST)".into());
            }
            f = Box::new(LineFilter::new(c));
            operands = ops;
        }
        "tr" => {
            let (opts, ops) = getopt(tool, args, "dsc", "", &[("delete", 'd'), ("squeeze-repeats", 's'), ("complement", 'c')])?;
            let has = |c: char| opts.iter().any(|(o, _)| *o == c);
            let (delete, squeeze, complement) = (has('d'), has('s'), has('c'));
            if ops.is_empty() {
                return Err("tr: missing operand".into());
            }
            let set1 = expand_set(&ops[0])?;
            let set2 = match ops.get(1) {
                Some(s) => Some(expand_set(s)?),
                None => None,
            };
            if !delete && !squeeze && set2.is_none() {
                return Err(format!("tr: missing operand after '{}'", ops[0]));
            }
            if ops.len() > 2 || (delete && !squeeze && set2.is_some()) {
                return Err(format!("tr: extra operand '{}'", ops.last().cloned().unwrap_or_default()));
            }
            f = Box::new(Tr { set1, set2, delete, squeeze, complement, last: None });
            // tr reads standard input only.
            operands = Vec::new();
        }
        "tee" => {
            let (opts, ops) = getopt(tool, args, "ai", "", &[("append", 'a')])?;
            let append = opts.iter().any(|(c, _)| *c == 'a');
            let mut files = Vec::new();
            for o in &ops {
                let abs = memtwin_kernel::fs::normalize(ctx.cwd, o);
                files.push((abs.clone(), ctx.captures.get(&abs).copied()));
            }
            return Ok(Box::new(super::misc::Tee::new(Reader::new(&[], ctx, stdin), files, append)));
        }
        _ => {
            let (_, ops) = getopt("cat", args, "u", "", &[])?;
            f = Box::new(Cat);
            operands = ops;
        }
    }
    if tool == "tr" {
        operands.clear();
    }
    Ok(Box::new(FilterProg::new(tool, Reader::new(&operands, ctx, stdin), f)))
}

// ---- Line splitting ---------------------------------------------------------------------

/// A tool that works line by line.
pub trait PerLine {
    /// One line without its newline; `false` stops reading.
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool;
    fn finish(&mut self, _out: &mut Vec<u8>) -> i32 {
        0
    }
    fn per_char(&self) -> bool {
        true
    }
}

pub struct LineFilter<P: PerLine> {
    p: P,
    partial: Vec<u8>,
}

impl<P: PerLine> LineFilter<P> {
    pub fn new(p: P) -> LineFilter<P> {
        LineFilter { p, partial: Vec::new() }
    }
}

impl<P: PerLine> Filter for LineFilter<P> {
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        let mut start = 0;
        for (i, &b) in d.iter().enumerate() {
            if b == b'\n' {
                let go = if self.partial.is_empty() {
                    self.p.line(&d[start..i], out)
                } else {
                    self.partial.extend_from_slice(&d[start..i]);
                    let l = std::mem::take(&mut self.partial);
                    self.p.line(&l, out)
                };
                start = i + 1;
                if !go {
                    return false;
                }
            }
        }
        self.partial.extend_from_slice(&d[start..]);
        true
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if !self.partial.is_empty() {
            // A last line without a newline is a line (the tools add the newline).
            let l = std::mem::take(&mut self.partial);
            self.p.line(&l, out);
        }
        self.p.finish(out)
    }
    fn per_char(&self) -> bool {
        self.p.per_char()
    }
}

// ---- cat ----------------------------------------------------------------------------------

struct Cat;

impl Filter for Cat {
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        out.extend_from_slice(d);
        true
    }
    fn finish(&mut self, _out: &mut Vec<u8>) -> i32 {
        0
    }
}

// ---- head / tail ----------------------------------------------------------------------------

pub(super) struct Head {
    lines: i64,
    bytes: Option<i64>,
    seen: i64,
    /// `-n -N` / `-c -N`: everything but the last N, held back.
    buf: Vec<u8>,
    pub(super) headers: bool,
    pub(super) first: bool,
}

impl Head {
    pub(super) fn reset(&mut self) {
        self.seen = 0;
        self.buf.clear();
    }
}

impl Filter for Head {
    fn begin_operand(&mut self, name: Option<&str>, out: &mut Vec<u8>) {
        if self.headers {
            if let Some(n) = name {
                if !self.first {
                    out.push(b'\n');
                }
                self.first = false;
                out.extend_from_slice(format!("==> {n} <==\n").as_bytes());
            }
        }
        self.reset();
    }
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        match self.bytes {
            Some(n) if n >= 0 => {
                let take = ((n - self.seen).max(0) as usize).min(d.len());
                out.extend_from_slice(&d[..take]);
                self.seen += take as i64;
                self.seen < n
            }
            Some(_) => {
                self.buf.extend_from_slice(d);
                true
            }
            None if self.lines >= 0 => {
                for (i, &b) in d.iter().enumerate() {
                    if self.seen >= self.lines {
                        return false;
                    }
                    out.push(b);
                    if b == b'\n' {
                        self.seen += 1;
                        if self.seen >= self.lines {
                            let _ = i;
                            return false;
                        }
                    }
                }
                self.seen < self.lines
            }
            None => {
                self.buf.extend_from_slice(d);
                true
            }
        }
    }
    fn end_operand(&mut self, _name: Option<&str>, out: &mut Vec<u8>) {
        self.flush_negative(out);
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        self.flush_negative(out);
        0
    }
}

impl Head {
    fn flush_negative(&mut self, out: &mut Vec<u8>) {
        let buf = std::mem::take(&mut self.buf);
        match self.bytes {
            Some(n) if n < 0 => {
                let keep = buf.len().saturating_sub((-n) as usize);
                out.extend_from_slice(&buf[..keep]);
            }
            None if self.lines < 0 => {
                let lines = split_lines(&buf);
                let keep = lines.len().saturating_sub((-self.lines) as usize);
                for l in &lines[..keep] {
                    out.extend_from_slice(l);
                }
            }
            _ => {}
        }
    }
}

/// Lines with their newlines (the last may lack one).
fn split_lines(d: &[u8]) -> Vec<&[u8]> {
    let mut v = Vec::new();
    let mut s = 0;
    for (i, &b) in d.iter().enumerate() {
        if b == b'\n' {
            v.push(&d[s..=i]);
            s = i + 1;
        }
    }
    if s < d.len() {
        v.push(&d[s..]);
    }
    v
}

pub(super) struct Tail {
    lines: i64,
    bytes: Option<i64>,
    from_start: bool,
    data: Vec<u8>,
    pub(super) headers: bool,
    pub(super) first: bool,
}

impl Tail {
    fn emit(&mut self, out: &mut Vec<u8>) {
        let d = std::mem::take(&mut self.data);
        match self.bytes {
            Some(n) => {
                let n = n.unsigned_abs() as usize;
                let start = if self.from_start { n.saturating_sub(1).min(d.len()) } else { d.len().saturating_sub(n) };
                out.extend_from_slice(&d[start..]);
            }
            None => {
                let lines = split_lines(&d);
                let n = self.lines.unsigned_abs() as usize;
                let start = if self.from_start { n.saturating_sub(1).min(lines.len()) } else { lines.len().saturating_sub(n) };
                for l in &lines[start..] {
                    out.extend_from_slice(l);
                }
            }
        }
    }
}

impl Filter for Tail {
    fn data(&mut self, d: &[u8], _out: &mut Vec<u8>) -> bool {
        self.data.extend_from_slice(d);
        // Keep memory bounded for a long input: only the tail matters.
        if !self.from_start && self.data.len() > 64 << 20 {
            let cut = self.data.len() - (32 << 20);
            self.data.drain(..cut);
        }
        true
    }
    fn end_operand(&mut self, name: Option<&str>, out: &mut Vec<u8>) {
        if self.headers {
            if let Some(n) = name {
                if !self.first {
                    out.push(b'\n');
                }
                self.first = false;
                out.extend_from_slice(format!("==> {n} <==\n").as_bytes());
            }
        }
        self.emit(out);
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if !self.data.is_empty() {
            self.emit(out);
        }
        0
    }
}

// ---- wc -------------------------------------------------------------------------------------

struct Wc {
    which: Vec<char>,
    width: usize,
    cur: [u64; 4],
    total: [u64; 4],
    in_word: bool,
    files: usize,
    reported: usize,
    per_char: bool,
}

impl Wc {
    fn new(which: &[char], nfiles: usize, sizes: &[Option<u64>]) -> Wc {
        // wc.c: order lines, words, chars, bytes regardless of the options' order.
        let mut w: Vec<char> = ['l', 'w', 'm', 'c'].into_iter().filter(|c| which.contains(c)).collect();
        if which.contains(&'L') {
            w.push('L');
        }
        // compute_number_width: the digits of the regular files' total size, at least 7
        // when an input is not a regular file; 1 for a single count of a single input.
        let width = if w.len() == 1 && nfiles <= 1 {
            1
        } else if nfiles == 0 {
            7
        } else {
            let total: u64 = sizes.iter().map(|s| s.unwrap_or(0)).sum();
            let mut width = 1;
            let mut t = total;
            while t >= 10 {
                width += 1;
                t /= 10;
            }
            width
        };
        let per_char = w.contains(&'w') || w.contains(&'m');
        Wc { which: w, width, cur: [0; 4], total: [0; 4], in_word: false, files: nfiles, reported: 0, per_char }
    }

    fn line(&self, c: &[u64; 4], name: Option<&str>, out: &mut Vec<u8>) {
        let mut parts = Vec::new();
        for w in &self.which {
            let v = match w {
                'l' => c[0],
                'w' => c[1],
                'm' => c[2],
                'c' => c[3],
                _ => 0,
            };
            parts.push(format!("{v:>width$}", width = self.width));
        }
        let mut s = parts.join(" ");
        if let Some(n) = name {
            s.push(' ');
            s.push_str(n);
        }
        s.push('\n');
        out.extend_from_slice(s.as_bytes());
    }
}

impl Filter for Wc {
    fn data(&mut self, d: &[u8], _out: &mut Vec<u8>) -> bool {
        self.cur[3] += d.len() as u64;
        self.cur[0] += d.iter().filter(|&&b| b == b'\n').count() as u64;
        if self.per_char {
            for &b in d {
                // UTF-8 characters: every byte that does not continue a sequence.
                if b & 0xC0 != 0x80 {
                    self.cur[2] += 1;
                }
                let space = matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
                if space {
                    self.in_word = false;
                } else if !self.in_word && b != 0 {
                    self.in_word = true;
                    self.cur[1] += 1;
                } else if b == 0 {
                    // NUL is not a word character in wc's C locale test (isprint); it
                    // neither starts nor ends a word.
                }
            }
        }
        true
    }
    fn end_operand(&mut self, name: Option<&str>, out: &mut Vec<u8>) {
        let c = std::mem::take(&mut self.cur);
        for i in 0..4 {
            self.total[i] += c[i];
        }
        self.in_word = false;
        self.reported += 1;
        self.line(&c, name, out);
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if self.files > 1 {
            let t = self.total;
            self.line(&t, Some("total"), out);
        }
        0
    }
    fn per_char(&self) -> bool {
        self.per_char
    }
}

// ---- sort -----------------------------------------------------------------------------------

#[derive(Clone, Debug, Default)]
struct Key {
    start_field: usize,
    start_char: usize,
    end_field: Option<usize>,
    numeric: bool,
    reverse: bool,
    human: bool,
}

fn parse_key(s: &str) -> Result<Key, String> {
    let bad = || format!("sort: invalid number at field start: invalid count at start of '{s}'");
    let (a, b) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let mut k = Key::default();
    let split_flags = |p: &str, k: &mut Key| -> String {
        let digits: String = p.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        for c in p[digits.len()..].chars() {
            match c {
                'n' | 'g' => k.numeric = true,
                'r' => k.reverse = true,
                'h' => k.human = true,
                _ => {}
            }
        }
        digits
    };
    let ad = split_flags(a, &mut k);
    let (f, c) = match ad.split_once('.') {
        Some((f, c)) => (f, c.parse().map_err(|_| bad())?),
        None => (ad.as_str(), 0),
    };
    k.start_field = f.parse().map_err(|_| bad())?;
    k.start_char = c;
    if k.start_field == 0 {
        return Err(format!("sort: field number is zero: invalid field specification '{s}'"));
    }
    if let Some(b) = b {
        let bd = split_flags(b, &mut k);
        let f = bd.split('.').next().unwrap_or("");
        k.end_field = Some(f.parse().map_err(|_| bad())?);
    }
    Ok(k)
}

#[derive(Default)]
struct Sort {
    numeric: bool,
    human: bool,
    reverse: bool,
    unique: bool,
    fold: bool,
    stable: bool,
    sep: Option<char>,
    keys: Vec<Key>,
    data: Vec<u8>,
}

/// Fields of a line: with a separator, split on it; otherwise each field is its leading
/// blanks and the non-blanks after them (sort's default).
fn fields(line: &str, sep: Option<char>) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    match sep {
        Some(c) => {
            let mut s = 0;
            for (i, ch) in line.char_indices() {
                if ch == c {
                    v.push((s, i));
                    s = i + ch.len_utf8();
                }
            }
            v.push((s, line.len()));
        }
        None => {
            let b = line.as_bytes();
            let mut i = 0;
            while i < b.len() {
                let s = i;
                while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                    i += 1;
                }
                while i < b.len() && b[i] != b' ' && b[i] != b'\t' {
                    i += 1;
                }
                v.push((s, i));
            }
        }
    }
    v
}

/// strtold-like leading number (blanks skipped), 0 if none.
pub(super) fn leading_number(s: &str) -> f64 {
    let t = s.trim_start();
    let mut end = 0;
    let b = t.as_bytes();
    if end < b.len() && (b[end] == b'-' || b[end] == b'+') {
        end += 1;
    }
    while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
        end += 1;
    }
    t[..end].parse().unwrap_or(0.0)
}

fn human_value(s: &str) -> f64 {
    let t = s.trim_start();
    let n = leading_number(t);
    let numlen = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+')).unwrap_or(t.len());
    let mult = match t[numlen..].chars().next() {
        Some('K' | 'k') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        Some('P') => 1e15,
        Some('E') => 1e18,
        _ => 1.0,
    };
    n * mult
}

impl Sort {
    fn key_text<'a>(&self, line: &'a str, k: &Key) -> &'a str {
        let f = fields(line, self.sep);
        let Some(&(s, _)) = f.get(k.start_field - 1) else { return "" };
        let mut s = s;
        if k.start_char > 0 {
            // Characters count from the field's start (its leading blanks included).
            s = line[s..].char_indices().nth(k.start_char - 1).map_or(line.len(), |(i, _)| s + i);
        }
        let e = match k.end_field {
            Some(ef) => f.get(ef - 1).map_or(line.len(), |&(_, e)| e),
            None => line.len(),
        };
        line.get(s..e.max(s)).unwrap_or("")
    }

    fn cmp_text(&self, a: &str, b: &str, numeric: bool, human: bool) -> std::cmp::Ordering {
        if human {
            return human_value(a).partial_cmp(&human_value(b)).unwrap_or(std::cmp::Ordering::Equal);
        }
        if numeric {
            return leading_number(a).partial_cmp(&leading_number(b)).unwrap_or(std::cmp::Ordering::Equal);
        }
        if self.fold {
            return a.to_ascii_uppercase().cmp(&b.to_ascii_uppercase());
        }
        a.as_bytes().cmp(b.as_bytes())
    }

    fn compare(&self, a: &str, b: &str) -> std::cmp::Ordering {
        use std::cmp::Ordering::Equal;
        if self.keys.is_empty() {
            let o = self.cmp_text(a, b, self.numeric, self.human);
            return if self.reverse { o.reverse() } else { o };
        }
        for k in &self.keys {
            let plain = !k.numeric && !k.human && !k.reverse;
            let (num, hum, rev) = if plain { (self.numeric, self.human, self.reverse) } else { (k.numeric, k.human, k.reverse) };
            let o = self.cmp_text(self.key_text(a, k), self.key_text(b, k), num, hum);
            let o = if rev { o.reverse() } else { o };
            if o != Equal {
                return o;
            }
        }
        Equal
    }
}

impl Filter for Sort {
    fn data(&mut self, d: &[u8], _out: &mut Vec<u8>) -> bool {
        self.data.extend_from_slice(d);
        true
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        let text = String::from_utf8_lossy(&self.data).into_owned();
        let mut lines: Vec<&str> = text.split_terminator('\n').collect();
        let key_cmp = |a: &&str, b: &&str| self.compare(a, b);
        if self.stable || self.unique {
            lines.sort_by(key_cmp);
        } else {
            // The last-resort comparison: whole lines, byte by byte (reversed with -r).
            lines.sort_by(|a, b| {
                key_cmp(a, b).then_with(|| {
                    let o = a.as_bytes().cmp(b.as_bytes());
                    if self.reverse { o.reverse() } else { o }
                })
            });
        }
        let mut prev: Option<&str> = None;
        for l in lines {
            if self.unique {
                if let Some(p) = prev {
                    if self.compare(p, l) == std::cmp::Ordering::Equal {
                        continue;
                    }
                }
            }
            out.extend_from_slice(l.as_bytes());
            out.push(b'\n');
            prev = Some(l);
        }
        0
    }
    fn per_char(&self) -> bool {
        true
    }
}

// ---- uniq -----------------------------------------------------------------------------------

#[derive(Default)]
struct Uniq {
    count: bool,
    dup: bool,
    uniq: bool,
    fold: bool,
    prev: Option<Vec<u8>>,
    n: u64,
}

impl Uniq {
    fn emit(&mut self, out: &mut Vec<u8>) {
        let Some(p) = self.prev.take() else { return };
        let show = (!self.dup || self.n > 1) && (!self.uniq || self.n == 1);
        if show {
            if self.count {
                out.extend_from_slice(format!("{:>7} ", self.n).as_bytes());
            }
            out.extend_from_slice(&p);
            out.push(b'\n');
        }
    }
}

impl PerLine for Uniq {
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        let same = self.prev.as_deref().is_some_and(|p| if self.fold { p.eq_ignore_ascii_case(line) } else { p == line });
        if same {
            self.n += 1;
        } else {
            self.emit(out);
            self.prev = Some(line.to_vec());
            self.n = 1;
        }
        true
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        self.emit(out);
        0
    }
}

// ---- cut ------------------------------------------------------------------------------------

/// A cut list: 1-based inclusive ranges (`N`, `N-M`, `-M`, `N-`).
fn parse_list(s: &str) -> Result<Vec<(usize, usize)>, String> {
    let mut v = Vec::new();
    for part in s.split(',') {
        let bad = || format!("cut: invalid field value '{part}'");
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                if a.is_empty() { 1 } else { a.parse().map_err(|_| bad())? },
                if b.is_empty() { usize::MAX } else { b.parse().map_err(|_| bad())? },
            ),
            None => {
                let n: usize = part.parse().map_err(|_| bad())?;
                (n, n)
            }
        };
        if a == 0 {
            return Err("cut: fields and positions are numbered from 1".into());
        }
        v.push((a, b));
    }
    Ok(v)
}

fn in_list(l: &[(usize, usize)], i: usize) -> bool {
    l.iter().any(|&(a, b)| i >= a && i <= b)
}

struct Cut {
    delim: char,
    fields: Option<Vec<(usize, usize)>>,
    chars: Option<Vec<(usize, usize)>>,
    only_delim: bool,
}

impl PerLine for Cut {
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        let line = String::from_utf8_lossy(line);
        if let Some(cl) = &self.chars {
            for (i, c) in line.chars().enumerate() {
                if in_list(cl, i + 1) {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
            out.push(b'\n');
            return true;
        }
        let Some(fl) = &self.fields else { return true };
        if !line.contains(self.delim) {
            if !self.only_delim {
                out.extend_from_slice(line.as_bytes());
                out.push(b'\n');
            }
            return true;
        }
        let mut first = true;
        for (i, f) in line.split(self.delim).enumerate() {
            if in_list(fl, i + 1) {
                if !first {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(self.delim.encode_utf8(&mut b).as_bytes());
                }
                first = false;
                out.extend_from_slice(f.as_bytes());
            }
        }
        out.push(b'\n');
        true
    }
}

// ---- tr -------------------------------------------------------------------------------------

/// A tr set with ranges, classes and escapes expanded.
fn expand_set(s: &str) -> Result<Vec<u8>, String> {
    let mut chars: Vec<u8> = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    let classes: &[(&str, fn(u8) -> bool)] = &[
        ("[:upper:]", |c| c.is_ascii_uppercase()),
        ("[:lower:]", |c| c.is_ascii_lowercase()),
        ("[:digit:]", |c| c.is_ascii_digit()),
        ("[:alpha:]", |c| c.is_ascii_alphabetic()),
        ("[:alnum:]", |c| c.is_ascii_alphanumeric()),
        ("[:space:]", |c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)),
        ("[:blank:]", |c| c == b' ' || c == b'\t'),
        ("[:punct:]", |c| c.is_ascii_punctuation()),
        ("[:cntrl:]", |c| c.is_ascii_control()),
        ("[:print:]", |c| (0x20..0x7f).contains(&c)),
        ("[:xdigit:]", |c| c.is_ascii_hexdigit()),
    ];
    let esc = |i: &mut usize| -> u8 {
        if b[*i] == b'\\' && *i + 1 < b.len() {
            *i += 1;
            match b[*i] {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'\\' => b'\\',
                b'0' => 0,
                c => c,
            }
        } else {
            b[*i]
        }
    };
    'outer: while i < b.len() {
        for (name, f) in classes {
            if s[i..].starts_with(name) {
                chars.extend((0u8..=255).filter(|&c| f(c)));
                i += name.len();
                continue 'outer;
            }
        }
        let c = esc(&mut i);
        if i + 2 < b.len() && b[i + 1] == b'-' {
            let mut j = i + 2;
            let d = esc(&mut j);
            if d < c {
                return Err(format!("tr: range-endpoints of '{}-{}' are in reverse collating sequence order", c as char, d as char));
            }
            chars.extend(c..=d);
            i = j + 1;
        } else {
            chars.push(c);
            i += 1;
        }
    }
    Ok(chars)
}

struct Tr {
    set1: Vec<u8>,
    set2: Option<Vec<u8>>,
    delete: bool,
    squeeze: bool,
    complement: bool,
    last: Option<u8>,
}

impl Filter for Tr {
    fn data(&mut self, d: &[u8], out: &mut Vec<u8>) -> bool {
        let in1 = |c: u8| self.set1.contains(&c) != self.complement;
        for &c in d {
            if self.delete && in1(c) {
                continue;
            }
            let mapped = match (&self.set2, self.delete) {
                (Some(s2), false) if in1(c) && !s2.is_empty() => {
                    if self.complement {
                        *s2.last().unwrap_or(&c)
                    } else {
                        let pos = self.set1.iter().rposition(|&x| x == c).unwrap_or(0);
                        *s2.get(pos).unwrap_or(s2.last().unwrap_or(&c))
                    }
                }
                _ => c,
            };
            if self.squeeze {
                let sq_set: &Vec<u8> = match (&self.set2, self.delete) {
                    (Some(s2), _) if !self.delete => s2,
                    (Some(s2), true) => s2,
                    _ => &self.set1,
                };
                let in_sq = if self.set2.is_some() { sq_set.contains(&mapped) } else { in1(mapped) };
                if in_sq && self.last == Some(mapped) {
                    continue;
                }
            }
            out.push(mapped);
            self.last = Some(mapped);
        }
        true
    }
    fn finish(&mut self, _out: &mut Vec<u8>) -> i32 {
        0
    }
    fn per_char(&self) -> bool {
        true
    }
}
