//! sed (GNU sed 4): -n, -e, -E/-r; commands s///[g p N i I], p, d, q, =, with line, `$`,
//! /regex/ and range addresses and `!`.

use super::grep::{bre_to_regex, ere_to_regex};
use super::lines::{LineFilter, PerLine};
use super::{Ctx, FilterProg, Input, Reader};
use crate::commands::Cmd;
use regex::bytes::{Regex, RegexBuilder};

const SUPPORTED: &str = "supported: s/RE/REPL/[gpNi], p, d, q, =, addresses N, $, /RE/, A,B and !, options -n -e -E -r";

#[derive(Clone)]
enum Addr {
    Line(u64),
    Last,
    Re(Regex),
}

enum Op {
    Subst { re: Regex, repl: Vec<u8>, global: bool, nth: usize, print: bool },
    Print,
    Delete,
    Quit,
    LineNo,
}

struct SedCmd {
    a1: Option<Addr>,
    a2: Option<Addr>,
    negate: bool,
    op: Op,
    /// In a range now.
    active: bool,
}

struct Sed {
    cmds: Vec<SedCmd>,
    quiet: bool,
    line_no: u64,
    /// The line held back so that `$` can be known.
    held: Option<Vec<u8>>,
    quit: bool,
}

fn compile(re: &str, ere: bool, icase: bool) -> Result<Regex, String> {
    let p = if ere { ere_to_regex(re) } else { bre_to_regex(re) };
    RegexBuilder::new(&p).case_insensitive(icase).unicode(false).build().map_err(|e| format!("sed: -e expression: invalid regex '{re}': {}", e.to_string().lines().last().unwrap_or("")))
}

/// Text up to the next unescaped `delim`; the position after it.
fn until_delim(s: &[char], mut i: usize, delim: char) -> Option<(String, usize)> {
    let mut out = String::new();
    while i < s.len() {
        if s[i] == '\\' && i + 1 < s.len() {
            if s[i + 1] == delim {
                out.push(delim);
            } else if s[i + 1] == 'n' {
                out.push('\n');
            } else {
                out.push('\\');
                out.push(s[i + 1]);
            }
            i += 2;
            continue;
        }
        if s[i] == delim {
            return Some((out, i + 1));
        }
        out.push(s[i]);
        i += 1;
    }
    None
}

fn parse_script(script: &str, ere: bool) -> Result<Vec<SedCmd>, String> {
    let s: Vec<char> = script.chars().collect();
    let mut i = 0;
    let mut cmds = Vec::new();
    let bad = |what: String| format!("sed: -e expression #1, char {}: {what} ({SUPPORTED})", 0);
    let _ = bad;
    loop {
        while i < s.len() && (s[i].is_whitespace() || s[i] == ';') {
            i += 1;
        }
        if i >= s.len() {
            break;
        }
        let err = |i: usize, what: &str| format!("sed: -e expression #1, char {}: {what} ({SUPPORTED})", i + 1);
        let addr = |i: &mut usize| -> Result<Option<Addr>, String> {
            if *i < s.len() && s[*i].is_ascii_digit() {
                let st = *i;
                while *i < s.len() && s[*i].is_ascii_digit() {
                    *i += 1;
                }
                let n: String = s[st..*i].iter().collect();
                return Ok(Some(Addr::Line(n.parse().unwrap_or(0))));
            }
            if *i < s.len() && s[*i] == '$' {
                *i += 1;
                return Ok(Some(Addr::Last));
            }
            if *i < s.len() && (s[*i] == '/' || s[*i] == '\\') {
                let delim = if s[*i] == '\\' {
                    *i += 1;
                    s.get(*i).copied().unwrap_or('/')
                } else {
                    '/'
                };
                let (re, j) = until_delim(&s, *i + 1, delim).ok_or_else(|| err(*i, "unterminated address regex"))?;
                *i = j;
                let icase = *i < s.len() && s[*i] == 'I';
                if icase {
                    *i += 1;
                }
                return Ok(Some(Addr::Re(compile(&re, ere, icase)?)));
            }
            Ok(None)
        };
        let a1 = addr(&mut i)?;
        let mut a2 = None;
        if a1.is_some() && i < s.len() && s[i] == ',' {
            i += 1;
            a2 = addr(&mut i)?;
            if a2.is_none() {
                return Err(err(i, "unexpected `,'"));
            }
        }
        while i < s.len() && s[i] == ' ' {
            i += 1;
        }
        let mut negate = false;
        if i < s.len() && s[i] == '!' {
            negate = true;
            i += 1;
        }
        let Some(&c) = s.get(i) else { return Err(err(i, "missing command")) };
        i += 1;
        let op = match c {
            'p' => Op::Print,
            'd' => Op::Delete,
            'q' => Op::Quit,
            '=' => Op::LineNo,
            's' => {
                let delim = *s.get(i).ok_or_else(|| err(i, "unterminated `s' command"))?;
                let (re, j) = until_delim(&s, i + 1, delim).ok_or_else(|| err(i, "unterminated `s' command"))?;
                let (repl, j) = until_delim(&s, j, delim).ok_or_else(|| err(j, "unterminated `s' command"))?;
                i = j;
                let (mut global, mut nth, mut print, mut icase) = (false, 1, false, false);
                while i < s.len() && !matches!(s[i], ';' | '\n' | '}' | ' ') {
                    match s[i] {
                        'g' => global = true,
                        'p' => print = true,
                        'i' | 'I' => icase = true,
                        d if d.is_ascii_digit() => nth = d.to_digit(10).unwrap_or(1) as usize,
                        other => return Err(err(i, &format!("unknown option to `s': '{other}'"))),
                    }
                    i += 1;
                }
                Op::Subst { re: compile(&re, ere, icase)?, repl: repl.into_bytes(), global, nth, print }
            }
            other => return Err(err(i - 1, &format!("unsupported command '{other}'"))),
        };
        cmds.push(SedCmd { a1, a2, negate, op, active: false });
    }
    Ok(cmds)
}

pub fn build(args: &[String], ctx: &Ctx<'_>, stdin: Input) -> Result<Cmd, String> {
    let mut quiet = false;
    let mut ere = false;
    let mut scripts = Vec::new();
    let mut ops = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        match a.as_str() {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" => ere = true,
            "-e" => {
                i += 1;
                scripts.push(args.get(i).cloned().ok_or("sed: option requires an argument -- 'e'")?);
            }
            "-ne" | "-nE" | "-En" | "-nr" | "-rn" => {
                quiet = true;
                if a.contains('e') {
                    i += 1;
                    scripts.push(args.get(i).cloned().ok_or("sed: option requires an argument -- 'e'")?);
                } else {
                    ere = true;
                }
            }
            s if s.starts_with("-i") => return Err("sed: -i (editing files in place) is not supported (write the output with > to a new file)".into()),
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("sed: unsupported option '{s}' ({SUPPORTED})")),
            _ => ops.push(a.clone()),
        }
        i += 1;
    }
    if scripts.is_empty() {
        if ops.is_empty() {
            return Err("sed: no script given (usage: sed [-n] SCRIPT [FILE]...)".into());
        }
        scripts.push(ops.remove(0));
    }
    let cmds = parse_script(&scripts.join("\n"), ere)?;
    let sed = Sed { cmds, quiet, line_no: 0, held: None, quit: false };
    Ok(Box::new(FilterProg::new("sed", Reader::new(&ops, ctx, stdin), Box::new(LineFilter::new(sed)))))
}

fn matches(a: &Addr, line: &[u8], n: u64, last: bool) -> bool {
    match a {
        Addr::Line(x) => n == *x,
        Addr::Last => last,
        Addr::Re(r) => r.is_match(line),
    }
}

fn substitute(re: &Regex, repl: &[u8], line: &[u8], global: bool, nth: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut last = 0;
    let mut count = 0;
    let mut did = false;
    for caps in re.captures_iter(line) {
        let Some(m) = caps.get(0) else { continue };
        count += 1;
        if count < nth {
            continue;
        }
        out.extend_from_slice(&line[last..m.start()]);
        let mut i = 0;
        while i < repl.len() {
            match repl[i] {
                b'&' => out.extend_from_slice(m.as_bytes()),
                b'\\' if i + 1 < repl.len() => {
                    i += 1;
                    match repl[i] {
                        d @ b'0'..=b'9' => {
                            if let Some(g) = caps.get(usize::from(d - b'0')) {
                                out.extend_from_slice(g.as_bytes());
                            }
                        }
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        c => out.push(c),
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        last = m.end();
        did = true;
        if !global {
            break;
        }
    }
    if !did {
        return None;
    }
    out.extend_from_slice(&line[last..]);
    Some(out)
}

impl Sed {
    fn run(&mut self, line: Vec<u8>, last: bool, out: &mut Vec<u8>) {
        self.line_no += 1;
        let n = self.line_no;
        let mut pat = line;
        let mut deleted = false;
        for c in &mut self.cmds {
            let sel = match (&c.a1, &c.a2) {
                (None, _) => true,
                (Some(a), None) => matches(a, &pat, n, last),
                (Some(a), Some(b)) => {
                    if c.active {
                        let end = match b {
                            Addr::Line(x) => n >= *x,
                            _ => matches(b, &pat, n, last),
                        };
                        if end {
                            c.active = false;
                        }
                        true
                    } else if matches(a, &pat, n, last) {
                        // The end address is checked from the next line (a line number
                        // not above this one ends the range at once).
                        c.active = match b {
                            Addr::Line(x) => *x > n,
                            Addr::Last => !last,
                            Addr::Re(_) => true,
                        };
                        true
                    } else {
                        false
                    }
                }
            };
            if sel == c.negate {
                continue;
            }
            match &c.op {
                Op::Print => {
                    out.extend_from_slice(&pat);
                    out.push(b'\n');
                }
                Op::Delete => {
                    deleted = true;
                    break;
                }
                Op::Quit => {
                    self.quit = true;
                    break;
                }
                Op::LineNo => out.extend_from_slice(format!("{n}\n").as_bytes()),
                Op::Subst { re, repl, global, nth, print } => {
                    if let Some(new) = substitute(re, repl, &pat, *global, *nth) {
                        pat = new;
                        if *print {
                            out.extend_from_slice(&pat);
                            out.push(b'\n');
                        }
                    }
                }
            }
        }
        if !deleted && !self.quiet {
            out.extend_from_slice(&pat);
            out.push(b'\n');
        }
    }
}

impl PerLine for Sed {
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        if let Some(prev) = self.held.replace(line.to_vec()) {
            self.run(prev, false, out);
        }
        !self.quit
    }
    fn finish(&mut self, out: &mut Vec<u8>) -> i32 {
        if let Some(prev) = self.held.take() {
            if !self.quit {
                self.run(prev, true, out);
            }
        }
        0
    }
}
