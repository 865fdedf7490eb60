//! echo, printf, seq, yes, basename, dirname, xargs, tee, sleep, true, false.

use super::lines::getopt;
use super::{Chunk, Ctx, Input, Reader};
use crate::commands::Cmd;
use memtwin_kernel::fs::OpenFlags;
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId};

pub fn build(name: &str, args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    match name {
        "echo" => Ok(Box::new(Emit::new(echo_text(args)))),
        "printf" => {
            if args.is_empty() {
                return Err("printf: missing operand (printf FORMAT [ARGUMENT]...)".into());
            }
            let (text, err) = printf_format(args);
            let mut e = Emit::new(text);
            if let Some(m) = err {
                e.err = Some(m);
            }
            Ok(Box::new(e))
        }
        "seq" => Ok(Box::new(Gen::new(seq(args)?, false))),
        "yes" => {
            let line = if args.is_empty() { "y".to_string() } else { args.join(" ") };
            Ok(Box::new(Gen::new(vec![format!("{line}\n")], true)))
        }
        "basename" | "dirname" => {
            let (opts, ops) = getopt(name, args, "az", "s", &[("multiple", 'a'), ("suffix", 's')])?;
            if ops.is_empty() {
                return Err(format!("{name}: missing operand"));
            }
            let mut out = String::new();
            if name == "dirname" {
                for o in &ops {
                    out.push_str(&dirname(o));
                    out.push('\n');
                }
            } else {
                let suffix = opts.iter().find(|(c, _)| *c == 's').and_then(|(_, v)| v.clone());
                let multi = suffix.is_some() || opts.iter().any(|(c, _)| *c == 'a');
                let (names, suffix) = if multi { (ops.clone(), suffix) } else { (vec![ops[0].clone()], ops.get(1).cloned()) };
                if !multi && ops.len() > 2 {
                    return Err(format!("basename: extra operand '{}'", ops[2]));
                }
                for n in names {
                    out.push_str(&basename(&n, suffix.as_deref()));
                    out.push('\n');
                }
            }
            Ok(Box::new(Emit::new(out)))
        }
        "xargs" => Xargs::parse(args, ctx, stdin).map(|x| Box::new(x) as Cmd),
        "sleep" => {
            if args.len() == 1 && args[0] == "infinity" {
                return Ok(Box::new(Sleep { until: None, dur: Ns::MAX }));
            }
            let d = crate::commands::parse_sleep(args)?;
            Ok(Box::new(Sleep { until: None, dur: d }))
        }
        "true" => Ok(Box::new(Noop)),
        _ => Ok(Box::new(Exit1)),
    }
}

/// echo's text: `-n` (no newline), `-e` (backslash escapes), `-E`.
fn echo_text(args: &[String]) -> String {
    let mut newline = true;
    let mut escapes = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            for c in a[1..].chars() {
                match c {
                    'n' => newline = false,
                    'e' => escapes = true,
                    _ => escapes = false,
                }
            }
            i += 1;
        } else {
            break;
        }
    }
    let mut text = args[i..].join(" ");
    if escapes {
        let (t, stop) = unescape(&text, true);
        text = t;
        if stop {
            return text;
        }
    }
    if newline {
        text.push('\n');
    }
    text
}

/// Backslash escapes of echo -e / printf; `true` when `\c` stops the output.
fn unescape(s: &str, echo: bool) -> (String, bool) {
    let mut out = String::new();
    let c: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < c.len() {
        if c[i] != '\\' || i + 1 >= c.len() {
            out.push(c[i]);
            i += 1;
            continue;
        }
        i += 1;
        match c[i] {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            'e' => out.push('\x1b'),
            '\\' => out.push('\\'),
            'c' => return (out, true),
            '0'..='7' => {
                // echo: \0NNN; printf: \NNN.
                let mut j = i;
                if echo && c[i] == '0' {
                    j += 1;
                }
                let mut v = 0u32;
                let mut n = 0;
                while j < c.len() && n < 3 && c[j].is_digit(8) {
                    v = v * 8 + c[j].to_digit(8).unwrap_or(0);
                    j += 1;
                    n += 1;
                }
                out.push(char::from_u32(v).unwrap_or('?'));
                i = j;
                continue;
            }
            'x' => {
                let mut j = i + 1;
                let mut v = 0u32;
                while j < c.len() && j < i + 3 && c[j].is_ascii_hexdigit() {
                    v = v * 16 + c[j].to_digit(16).unwrap_or(0);
                    j += 1;
                }
                out.push(char::from_u32(v).unwrap_or('?'));
                i = j;
                continue;
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        i += 1;
    }
    (out, false)
}

/// printf(1): the format is reused until the arguments are used up. Returns the text and
/// an error message for an invalid number (bash prints it and goes on with 0).
pub fn printf_format(args: &[String]) -> (String, Option<String>) {
    let Some(fmt) = args.first() else { return (String::new(), None) };
    let mut rest = &args[1..];
    let mut out = String::new();
    let mut err = None;
    loop {
        let mut used = 0;
        let f: Vec<char> = fmt.chars().collect();
        let mut i = 0;
        while i < f.len() {
            let ch = f[i];
            if ch == '\\' {
                let mut j = i + 1;
                while j < f.len() && j < i + 4 && (f[j].is_ascii_alphanumeric() || f[j] == '\\') {
                    j += 1;
                    if !f[j - 1].is_digit(8) {
                        break;
                    }
                }
                let s: String = f[i..j.min(f.len())].iter().collect();
                let (t, stop) = unescape(&s, false);
                out.push_str(&t);
                if stop {
                    return (out, err);
                }
                i = j;
                continue;
            }
            if ch != '%' {
                out.push(ch);
                i += 1;
                continue;
            }
            if f.get(i + 1) == Some(&'%') {
                out.push('%');
                i += 2;
                continue;
            }
            let mut j = i + 1;
            while j < f.len() && "-+ #0123456789.*".contains(f[j]) {
                j += 1;
            }
            let Some(&conv) = f.get(j) else {
                out.push_str(&f[i..].iter().collect::<String>());
                break;
            };
            let spec: String = f[i + 1..j].iter().collect();
            let arg = rest.get(used).cloned();
            if arg.is_some() {
                used += 1;
            }
            let a = arg.unwrap_or_default();
            let text = match conv {
                's' => a.clone(),
                'b' => unescape(&a, true).0,
                'c' => a.chars().next().map(String::from).unwrap_or_default(),
                'd' | 'i' | 'u' | 'x' | 'X' | 'o' => {
                    let t = a.trim();
                    let v: i64 = if t.is_empty() {
                        0
                    } else if let Some(c) = t.strip_prefix('\'').or_else(|| t.strip_prefix('"')) {
                        c.chars().next().map_or(0, |c| c as i64)
                    } else {
                        match t.parse::<i64>().or_else(|_| i64::from_str_radix(t.trim_start_matches("0x"), 16).map_err(|_| ())) {
                            Ok(v) if !t.starts_with("0x") || t.len() > 2 => v,
                            _ => {
                                err = Some(format!("bash: printf: {a}: invalid number\n"));
                                leading_int(t)
                            }
                        }
                    };
                    match conv {
                        'x' => format!("{v:x}"),
                        'X' => format!("{v:X}"),
                        'o' => format!("{v:o}"),
                        _ => v.to_string(),
                    }
                }
                'f' | 'F' | 'e' | 'g' | 'G' => {
                    let v: f64 = a.trim().parse().unwrap_or_else(|_| {
                        if !a.trim().is_empty() {
                            err = Some(format!("bash: printf: {a}: invalid number\n"));
                        }
                        0.0
                    });
                    let prec = spec.split_once('.').map(|(_, p)| p.parse::<usize>().unwrap_or(0));
                    match conv {
                        'e' => format!("{:.*e}", prec.unwrap_or(6), v),
                        'g' | 'G' => {
                            let p = prec.unwrap_or(6).max(1);
                            let s = format!("{:.*}", p, v);
                            let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
                            s
                        }
                        _ => format!("{:.*}", prec.unwrap_or(6), v),
                    }
                }
                other => {
                    out.push_str(&format!("%{spec}{other}"));
                    i = j + 1;
                    continue;
                }
            };
            out.push_str(&pad(&text, &spec, conv));
            i = j + 1;
        }
        if used == 0 || used >= rest.len() {
            break;
        }
        rest = &rest[used..];
    }
    (out, err)
}

fn leading_int(t: &str) -> i64 {
    let e = t.find(|c: char| !c.is_ascii_digit() && c != '-').unwrap_or(t.len());
    t[..e].parse().unwrap_or(0)
}

/// Width, precision and flags of a conversion.
fn pad(text: &str, spec: &str, conv: char) -> String {
    let left = spec.contains('-');
    let zero = spec.starts_with('0') || spec.contains("-0") || spec.starts_with("+0");
    let plus = spec.contains('+');
    let (w, p) = match spec.trim_start_matches(['-', '+', ' ', '#', '0']).split_once('.') {
        Some((w, p)) => (w.parse::<usize>().unwrap_or(0), Some(p.parse::<usize>().unwrap_or(0))),
        None => (spec.trim_start_matches(['-', '+', ' ', '#', '0']).parse::<usize>().unwrap_or(0), None),
    };
    let mut t = text.to_string();
    if conv == 's' {
        if let Some(p) = p {
            t = t.chars().take(p).collect();
        }
    }
    if plus && matches!(conv, 'd' | 'i' | 'f' | 'e' | 'g') && !t.starts_with('-') {
        t.insert(0, '+');
    }
    let n = t.chars().count();
    if n >= w {
        return t;
    }
    let fill = w - n;
    if left {
        format!("{t}{}", " ".repeat(fill))
    } else if zero && conv != 's' {
        let (sign, digits) = if t.starts_with(['-', '+']) { t.split_at(1) } else { ("", t.as_str()) };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{t}", " ".repeat(fill))
    }
}

/// seq [-w] [-s SEP] [-f FMT] [FIRST [INCREMENT]] LAST
fn seq(args: &[String]) -> Result<Vec<String>, String> {
    let mut sep = "\n".to_string();
    let mut equal = false;
    let mut fmt: Option<String> = None;
    let mut nums = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-w" => equal = true,
            "-s" => {
                i += 1;
                sep = args.get(i).cloned().ok_or("seq: option requires an argument -- 's'")?;
            }
            "-f" => {
                i += 1;
                fmt = Some(args.get(i).cloned().ok_or("seq: option requires an argument -- 'f'")?);
            }
            s if s.starts_with("-s") && s.len() > 2 => sep = s[2..].to_string(),
            s if s.starts_with("-f") && s.len() > 2 => fmt = Some(s[2..].to_string()),
            s if s.starts_with('-') && s.len() > 1 && !s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.') => {
                return Err(format!("seq: unsupported option '{s}' (supported: -w, -s SEP, -f FORMAT)"));
            }
            s => nums.push(s.to_string()),
        }
        i += 1;
    }
    let parse = |s: &str| s.parse::<f64>().map_err(|_| format!("seq: invalid floating point argument: '{s}'"));
    let (first, inc, last) = match nums.len() {
        1 => (1.0, 1.0, parse(&nums[0])?),
        2 => (parse(&nums[0])?, 1.0, parse(&nums[1])?),
        3 => (parse(&nums[0])?, parse(&nums[1])?, parse(&nums[2])?),
        0 => return Err("seq: missing operand".into()),
        _ => return Err(format!("seq: extra operand '{}'", nums[3])),
    };
    if inc == 0.0 {
        return Err(format!("seq: invalid Zero increment value: '{}'", nums[1]));
    }
    let prec = nums.iter().map(|n| n.split_once('.').map_or(0, |(_, f)| f.len())).max().unwrap_or(0);
    let count = ((last - first) / inc).floor();
    if count > 10_000_000.0 {
        return Err("seq: more than 10000000 numbers are not supported".into());
    }
    let mut out = Vec::new();
    if count < 0.0 {
        return Ok(out);
    }
    let width = if equal {
        [first, last].iter().map(|v| format!("{:.*}", prec, v).len()).max().unwrap_or(0)
    } else {
        0
    };
    let n = count as u64 + 1;
    for k in 0..n {
        let v = first + inc * k as f64;
        let s = match &fmt {
            Some(f) => printf_format(&[f.clone(), format!("{v}")]).0,
            None if equal => format!("{:0width$.prec$}", v, width = width, prec = prec),
            None => format!("{:.*}", prec, v),
        };
        let end = if k + 1 == n { "\n" } else { sep.as_str() };
        out.push(format!("{s}{end}"));
    }
    Ok(out)
}

fn basename(p: &str, suffix: Option<&str>) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.is_empty() { String::new() } else { "/".into() };
    }
    let b = t.rsplit('/').next().unwrap_or(t);
    match suffix {
        Some(s) if b.len() > s.len() && b.ends_with(s) => b[..b.len() - s.len()].to_string(),
        _ => b.to_string(),
    }
}

fn dirname(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.starts_with('/') { "/".into() } else { ".".into() };
    }
    match t.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let d = t[..i].trim_end_matches('/');
            if d.is_empty() { "/".into() } else { d.to_string() }
        }
    }
}

/// A program that prints fixed text and exits (echo, printf, basename, pwd).
pub struct Emit {
    text: Option<String>,
    pub err: Option<String>,
}

impl Emit {
    pub fn new(text: String) -> Emit {
        Emit { text: Some(text), err: None }
    }
}

impl Program for Emit {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(t) = self.text.take() {
            if k.stdout_pipe_room(me) == 0 {
                self.text = Some(t);
                return k.pipe_wait_room(me);
            }
            k.print(me, &t);
        }
        if let Some(e) = self.err.take() {
            k.eprint(me, &e);
            return Step::Exit(1);
        }
        Step::Exit(0)
    }
}

/// A program that does nothing (true, `> file` with no command).
pub struct Noop;

impl Program for Noop {
    fn step(&mut self, _k: &mut Kernel, _me: TaskId) -> Step {
        Step::Exit(0)
    }
}

struct Exit1;

impl Program for Exit1 {
    fn step(&mut self, _k: &mut Kernel, _me: TaskId) -> Step {
        Step::Exit(1)
    }
}

/// sleep(1) as a task (in a pipeline, in the background, under timeout): `infinity` never
/// ends by itself.
struct Sleep {
    until: Option<Ns>,
    dur: Ns,
}

impl Program for Sleep {
    fn step(&mut self, k: &mut Kernel, _me: TaskId) -> Step {
        let until = *self.until.get_or_insert(k.now.saturating_add(self.dur));
        if k.now >= until {
            return Step::Exit(0);
        }
        if self.dur == Ns::MAX {
            return Step::Block { io: false };
        }
        Step::SleepUntil { t: until, io: false }
    }
}

/// Lines produced from nothing (seq, yes): written as the pipe takes them.
struct Gen {
    lines: Vec<String>,
    i: usize,
    forever: bool,
}

impl Gen {
    fn new(lines: Vec<String>, forever: bool) -> Gen {
        Gen { lines, i: 0, forever }
    }
}

impl Program for Gen {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.i >= self.lines.len() && !(self.forever && !self.lines.is_empty()) {
            return Step::Exit(0);
        }
        let room = k.stdout_pipe_room(me);
        if room == 0 {
            return k.pipe_wait_room(me);
        }
        // stdio's 4 KiB buffer (a pipe is not a terminal: full buffering).
        let mut chunk = String::new();
        let limit = room.min(4096);
        while chunk.len() < limit {
            if self.i >= self.lines.len() {
                if self.forever {
                    self.i = 0;
                } else {
                    break;
                }
            }
            chunk.push_str(&self.lines[self.i]);
            self.i += 1;
        }
        let n = chunk.len();
        k.print(me, &chunk);
        let ns = n as u64 * k.machine.cpu_model.stdio_char_ns;
        if self.forever && k.tasks[me as usize].stdout == memtwin_kernel::Sink::Terminal && k.transcript.len() > 1 << 20 {
            // `yes` to the terminal: the output limit of the run ends it.
        }
        Step::Cpu { user: ns.max(1_000), sys: 0 }
    }
}

/// tee [-a] FILE...: standard input to standard output and to each file.
pub struct Tee {
    reader: Reader,
    files: Vec<(String, Option<u32>)>,
    append: bool,
    fds: Vec<Option<usize>>,
    opened: bool,
    status: i32,
}

impl Tee {
    pub fn new(reader: Reader, files: Vec<(String, Option<u32>)>, append: bool) -> Tee {
        Tee { reader, files, append, fds: Vec::new(), opened: false, status: 0 }
    }
}

impl Program for Tee {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.opened {
            self.opened = true;
            for (path, buf) in &self.files {
                let flags = OpenFlags { write: true, create: true, trunc: !self.append, append: self.append, ..Default::default() };
                match k.sys_open(me, path, flags) {
                    Ok((fd, _)) => {
                        if let Some(b) = buf {
                            if !self.append {
                                k.buffers[*b as usize].clear();
                            }
                        }
                        self.fds.push(Some(fd));
                    }
                    Err(e) => {
                        k.eprint(me, &format!("tee: {path}: {}\n", e.strerror()));
                        self.status = 1;
                        self.fds.push(None);
                    }
                }
            }
        }
        if k.stdout_pipe_room(me) == 0 {
            return k.pipe_wait_room(me);
        }
        match self.reader.next(k, me) {
            Chunk::Data(d) => {
                let text = String::from_utf8_lossy(&d).into_owned();
                for (i, (_, buf)) in self.files.iter().enumerate() {
                    if let Some(Some(fd)) = self.fds.get(i) {
                        // The write goes through the page cache; a throttling sleep it
                        // would take is not taken here.
                        let _ = k.sys_write(me, *fd, d.len() as u64);
                        if let Some(b) = buf {
                            k.buffers[*b as usize].push_str(&text);
                        }
                    }
                }
                k.print_bytes(me, &d);
                Step::Cpu { user: 1_000, sys: 0 }
            }
            Chunk::EndOfOperand | Chunk::Eof => {
                if let Some(w) = self.reader.pending_wait.take() {
                    return w;
                }
                if !matches!(self.reader.next(k, me), Chunk::Eof) {
                    return Step::Yield;
                }
                for fd in self.fds.iter().flatten() {
                    let _ = k.sys_close(me, *fd);
                }
                Step::Exit(self.status)
            }
            Chunk::Wait(s) => s,
            Chunk::Error(m) => {
                k.eprint(me, &format!("tee: {m}\n"));
                Step::Exit(1)
            }
        }
    }
}

/// xargs [-n N] [-I STR] [COMMAND [ARG]...]: runs COMMAND (echo by default) with the words
/// of standard input as arguments. Only text commands and echo can be run by xargs here.
pub struct Xargs {
    reader: Reader,
    input: Vec<u8>,
    n: Option<usize>,
    replace: Option<String>,
    cmd: Vec<String>,
    cwd: String,
    captures: std::collections::HashMap<String, u32>,
    child: Option<(Cmd, usize)>,
    queue: Vec<Vec<String>>,
    qi: usize,
    read_done: bool,
    status: i32,
}

impl Xargs {
    fn parse(args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Xargs, String> {
        let mut n = None;
        let mut replace = None;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "-n" || a == "-I" || a == "-L" {
                let v = args.get(i + 1).cloned().ok_or(format!("xargs: option requires an argument -- '{}'", &a[1..]))?;
                if a == "-I" {
                    replace = Some(v);
                } else {
                    n = Some(v.parse::<usize>().map_err(|_| format!("xargs: invalid number \"{v}\" for -n option"))?.max(1));
                }
                i += 2;
            } else if let Some(v) = a.strip_prefix("-n").filter(|v| !v.is_empty()) {
                n = Some(v.parse::<usize>().map_err(|_| format!("xargs: invalid number \"{v}\" for -n option"))?.max(1));
                i += 1;
            } else if let Some(v) = a.strip_prefix("-I").filter(|v| !v.is_empty()) {
                replace = Some(v.to_string());
                i += 1;
            } else if a == "-r" || a == "--no-run-if-empty" || a == "-t" {
                i += 1;
            } else if a.starts_with('-') && a.len() > 1 {
                return Err(format!("xargs: unsupported option '{a}' (supported: -n N, -I STR, -r)"));
            } else {
                break;
            }
        }
        let cmd: Vec<String> = if i < args.len() { args[i..].to_vec() } else { vec!["echo".into()] };
        let probe = Ctx { cwd: ctx.cwd, captures: ctx.captures, k: ctx.k };
        if super::build(&cmd[0], &cmd[1..], &probe, Input::Tty).is_none() {
            return Err(format!("xargs: running '{}' is not supported (xargs runs the text tools and echo here)", cmd[0]));
        }
        Ok(Xargs {
            reader: Reader::new(&[], ctx, stdin),
            input: Vec::new(),
            n,
            replace,
            cmd,
            cwd: ctx.cwd.to_string(),
            captures: ctx.captures.clone(),
            child: None,
            queue: Vec::new(),
            qi: 0,
            read_done: false,
            status: 0,
        })
    }
}

impl Program for Xargs {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if !self.read_done {
            if let Some(w) = self.reader.pending_wait.take() {
                return w;
            }
            match self.reader.next(k, me) {
                Chunk::Data(d) => {
                    self.input.extend_from_slice(&d);
                    return Step::Cpu { user: 1_000, sys: 0 };
                }
                Chunk::Wait(s) => return s,
                Chunk::Error(m) => {
                    k.eprint(me, &format!("xargs: {m}\n"));
                    return Step::Exit(1);
                }
                Chunk::EndOfOperand | Chunk::Eof => {
                    self.read_done = true;
                    let text = String::from_utf8_lossy(&self.input).into_owned();
                    if let Some(r) = &self.replace {
                        for line in text.lines().filter(|l| !l.trim().is_empty()) {
                            self.queue.push(self.cmd.iter().map(|a| a.replace(r.as_str(), line.trim())).collect());
                        }
                    } else {
                        let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
                        let per = self.n.unwrap_or(usize::MAX).min(words.len().max(1));
                        if words.is_empty() {
                            self.queue.push(self.cmd.clone());
                        }
                        for c in words.chunks(per) {
                            let mut v = self.cmd.clone();
                            v.extend(c.iter().cloned());
                            self.queue.push(v);
                        }
                    }
                }
            }
        }
        // Each command runs in turn inside this task (its output is this task's).
        loop {
            if let Some((child, _)) = self.child.as_mut() {
                match child.step(k, me) {
                    Step::Exit(c) => {
                        if c != 0 {
                            self.status = 123;
                        }
                        self.child = None;
                    }
                    other => return other,
                }
            }
            let Some(argv) = self.queue.get(self.qi).cloned() else { return Step::Exit(self.status) };
            self.qi += 1;
            let ctx = Ctx { cwd: &self.cwd, captures: &self.captures, k: Some(&*k) };
            match super::build(&argv[0], &argv[1..], &ctx, Input::Tty) {
                Some(Ok(c)) => self.child = Some((c, self.qi)),
                Some(Err(m)) => {
                    k.eprint(me, &format!("{m}\n"));
                    self.status = 123;
                }
                None => return Step::Exit(127),
            }
        }
    }
}
