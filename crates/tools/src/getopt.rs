//! The command-line parsers the real tools use, reproduced closely enough that the same
//! argument vectors are accepted, rejected and reported with the same words:
//!
//! * [`GetoptLong`]: glibc 2.36 `getopt_long` as free, vmstat and top call it (short clusters
//!   `-bn1`, attached or detached arguments, optional arguments `w::`, long options with
//!   `=value` or a separate argument, unique-prefix abbreviation of long names, and GNU's
//!   permutation: operands may come before, between or after options).
//! * [`OptParse`]: Python's `optparse`, which iotop uses (different abbreviation and error
//!   wording).
//!
//! Error strings are the message glibc/optparse print, without the trailing newline.

/// Whether a long option takes an argument (`struct option.has_arg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HasArg {
    No,
    Required,
    Optional,
}

/// One entry of a `struct option` table: `val` is what getopt returns for it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LongOpt {
    pub name: &'static str,
    pub has_arg: HasArg,
    pub val: i32,
}

pub(crate) const fn lo(name: &'static str, has_arg: HasArg, val: i32) -> LongOpt {
    LongOpt { name, has_arg, val }
}

/// An option as getopt_long hands it to the program: its value and `optarg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opt {
    pub val: i32,
    pub arg: Option<String>,
}

impl Opt {
    /// The short-option letter, if `val` is one.
    pub fn ch(&self) -> char {
        u32::try_from(self.val)
            .ok()
            .and_then(char::from_u32)
            .unwrap_or('\u{0}')
    }
}

/// glibc `getopt_long` with GNU argument permutation. Feed it `argv[1..]`.
pub(crate) struct GetoptLong<'a> {
    prog: &'a str,
    args: Vec<String>,
    shortopts: &'a str,
    longopts: &'a [LongOpt],
    /// Index of the next argument to look at (getopt's `optind`).
    optind: usize,
    /// Position inside a short-option cluster (`-abc`) still being consumed.
    nextchar: Option<usize>,
    operands: Vec<String>,
    done: bool,
}

impl<'a> GetoptLong<'a> {
    pub fn new(
        prog: &'a str,
        args: &[String],
        shortopts: &'a str,
        longopts: &'a [LongOpt],
    ) -> Self {
        GetoptLong {
            prog,
            args: args.to_vec(),
            shortopts,
            longopts,
            optind: 0,
            nextchar: None,
            operands: Vec::new(),
            done: false,
        }
    }

    fn err(&self, msg: String) -> String {
        format!("{}: {}", self.prog, msg)
    }

    /// How short option `c` is declared in the option string, if at all.
    fn short_spec(&self, c: char) -> Option<HasArg> {
        if c == ':' {
            return None;
        }
        let s = self.shortopts;
        let idx = s.find(c)?;
        let rest = &s[idx + c.len_utf8()..];
        Some(if rest.starts_with("::") {
            HasArg::Optional
        } else if rest.starts_with(':') {
            HasArg::Required
        } else {
            HasArg::No
        })
    }

    /// top's "GETOPTFIX": right after an option without an attached argument, take the next
    /// argument if it does not start with '-' (and is not already the tail of a cluster).
    pub fn take_following_operand(&mut self) -> Option<String> {
        if self.nextchar.is_some() || self.done {
            return None;
        }
        let a = self.args.get(self.optind)?;
        if a.starts_with('-') {
            return None;
        }
        let a = a.clone();
        self.optind += 1;
        Some(a)
    }

    /// The next argument whatever it looks like (top's `cp = argv[optind++]` after `-d=`).
    pub fn take_next_arg(&mut self) -> Option<String> {
        if self.nextchar.is_some() || self.done {
            return None;
        }
        let a = self.args.get(self.optind)?.clone();
        self.optind += 1;
        Some(a)
    }

    /// Operands collected so far (all of them once `next` has returned `None`), in order.
    pub fn operands(&self) -> &[String] {
        &self.operands
    }

    fn next_short(&mut self, pos: usize) -> Result<Opt, String> {
        let arg = self.args[self.optind].clone();
        let c = arg[pos..].chars().next().unwrap_or('?');
        let after = pos + c.len_utf8();
        let at_end = after >= arg.len();
        let finish_cluster = |me: &mut Self| {
            me.nextchar = None;
            me.optind += 1;
        };
        match self.short_spec(c) {
            None => {
                if at_end {
                    finish_cluster(self);
                } else {
                    self.nextchar = Some(after);
                }
                Err(self.err(format!("invalid option -- '{c}'")))
            }
            Some(HasArg::No) => {
                if at_end {
                    finish_cluster(self);
                } else {
                    self.nextchar = Some(after);
                }
                Ok(Opt {
                    val: c as i32,
                    arg: None,
                })
            }
            Some(HasArg::Optional) => {
                let v = if at_end {
                    None
                } else {
                    Some(arg[after..].to_string())
                };
                finish_cluster(self);
                Ok(Opt {
                    val: c as i32,
                    arg: v,
                })
            }
            Some(HasArg::Required) => {
                if !at_end {
                    let v = arg[after..].to_string();
                    finish_cluster(self);
                    return Ok(Opt {
                        val: c as i32,
                        arg: Some(v),
                    });
                }
                finish_cluster(self);
                match self.args.get(self.optind) {
                    Some(v) => {
                        let v = v.clone();
                        self.optind += 1;
                        Ok(Opt {
                            val: c as i32,
                            arg: Some(v),
                        })
                    }
                    None => Err(self.err(format!("option requires an argument -- '{c}'"))),
                }
            }
        }
    }

    fn next_long(&mut self) -> Result<Opt, String> {
        let arg = self.args[self.optind].clone();
        self.optind += 1;
        let body = &arg[2..];
        let (name, value) = match body.find('=') {
            Some(i) => (&body[..i], Some(body[i + 1..].to_string())),
            None => (body, None),
        };
        let exact = self.longopts.iter().find(|o| o.name == name);
        let found = match exact {
            Some(o) => *o,
            None => {
                let cands: Vec<&LongOpt> = self
                    .longopts
                    .iter()
                    .filter(|o| !name.is_empty() && o.name.starts_with(name))
                    .collect();
                match cands.len() {
                    0 => return Err(self.err(format!("unrecognized option '--{body}'"))),
                    _ => {
                        let first = cands[0];
                        let ambiguous = cands
                            .iter()
                            .any(|o| o.has_arg != first.has_arg || o.val != first.val);
                        if ambiguous {
                            let mut m = format!("option '--{name}' is ambiguous; possibilities:");
                            for o in &cands {
                                m.push_str(&format!(" '--{}'", o.name));
                            }
                            return Err(self.err(m));
                        }
                        *first
                    }
                }
            }
        };
        match found.has_arg {
            HasArg::No => {
                if value.is_some() {
                    return Err(self.err(format!(
                        "option '--{}' doesn't allow an argument",
                        found.name
                    )));
                }
                Ok(Opt {
                    val: found.val,
                    arg: None,
                })
            }
            HasArg::Optional => Ok(Opt {
                val: found.val,
                arg: value,
            }),
            HasArg::Required => {
                if let Some(v) = value {
                    return Ok(Opt {
                        val: found.val,
                        arg: Some(v),
                    });
                }
                match self.args.get(self.optind) {
                    Some(v) => {
                        let v = v.clone();
                        self.optind += 1;
                        Ok(Opt {
                            val: found.val,
                            arg: Some(v),
                        })
                    }
                    None => {
                        Err(self.err(format!("option '--{}' requires an argument", found.name)))
                    }
                }
            }
        }
    }
}

impl Iterator for GetoptLong<'_> {
    type Item = Result<Opt, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(pos) = self.nextchar {
            return Some(self.next_short(pos));
        }
        loop {
            if self.done || self.optind >= self.args.len() {
                self.done = true;
                return None;
            }
            let a = &self.args[self.optind];
            if a == "--" {
                self.optind += 1;
                let rest: Vec<String> = self.args[self.optind..].to_vec();
                self.operands.extend(rest);
                self.optind = self.args.len();
                self.done = true;
                return None;
            }
            if a.starts_with("--") {
                return Some(self.next_long());
            }
            if a.starts_with('-') && a.len() > 1 {
                return Some(self.next_short(1));
            }
            // GNU permutation: an operand is set aside and scanning goes on.
            self.operands.push(a.clone());
            self.optind += 1;
        }
    }
}

/// One option of a Python `optparse.OptionParser`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PyOpt {
    pub short: Option<char>,
    pub long: &'static str,
    /// Whether the option takes a value (`type=` given), as opposed to a flag.
    pub takes_value: bool,
    /// The key the program sees.
    pub dest: &'static str,
}

/// Python's `optparse` argument scanner (interspersed operands allowed, long-option
/// abbreviation, `-n1`/`-n 1`/`--iter=1`/`--iter 1`). Errors are the text after
/// "PROG: error: ".
pub(crate) struct OptParse<'a> {
    pub opts: &'a [PyOpt],
}

impl OptParse<'_> {
    /// Returns (dest, value, option as named) triples in order (the name is what optparse
    /// puts in its messages: `-n`, or the full `--iter` even when abbreviated), plus the
    /// leftover positional arguments.
    #[allow(clippy::type_complexity)]
    pub fn parse(
        &self,
        args: &[String],
    ) -> Result<(Vec<(&'static str, Option<String>, String)>, Vec<String>), String> {
        let mut out = Vec::new();
        let mut rest = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if a == "--" {
                rest.extend(args[i..].iter().cloned());
                break;
            }
            if let Some(body) = a.strip_prefix("--") {
                let (name, value) = match body.find('=') {
                    Some(k) => (&body[..k], Some(body[k + 1..].to_string())),
                    None => (body, None),
                };
                // optparse._match_abbrev: exact match wins, else a unique prefix.
                let opt = match self.opts.iter().find(|o| o.long == name) {
                    Some(o) => *o,
                    None => {
                        let cands: Vec<&PyOpt> = self
                            .opts
                            .iter()
                            .filter(|o| o.long.starts_with(name))
                            .collect();
                        match cands.len() {
                            0 => return Err(format!("no such option: --{name}")),
                            1 => *cands[0],
                            _ => {
                                let mut names: Vec<String> =
                                    cands.iter().map(|o| format!("--{}", o.long)).collect();
                                names.sort();
                                return Err(format!(
                                    "ambiguous option: --{name} ({}?)",
                                    names.join(", ")
                                ));
                            }
                        }
                    }
                };
                if opt.takes_value {
                    let v = match value {
                        Some(v) => v,
                        None => match args.get(i) {
                            Some(v) => {
                                i += 1;
                                v.clone()
                            }
                            None => {
                                return Err(format!("--{} option requires 1 argument", opt.long))
                            }
                        },
                    };
                    out.push((opt.dest, Some(v), format!("--{}", opt.long)));
                } else {
                    if value.is_some() {
                        return Err(format!("--{} option does not take a value", opt.long));
                    }
                    out.push((opt.dest, None, format!("--{}", opt.long)));
                }
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                let chars: Vec<char> = a.chars().skip(1).collect();
                let mut k = 0;
                while k < chars.len() {
                    let c = chars[k];
                    k += 1;
                    let Some(opt) = self.opts.iter().find(|o| o.short == Some(c)) else {
                        return Err(format!("no such option: -{c}"));
                    };
                    if opt.takes_value {
                        let v = if k < chars.len() {
                            let v: String = chars[k..].iter().collect();
                            k = chars.len();
                            v
                        } else {
                            match args.get(i) {
                                Some(v) => {
                                    i += 1;
                                    v.clone()
                                }
                                None => return Err(format!("-{c} option requires 1 argument")),
                            }
                        };
                        out.push((opt.dest, Some(v), format!("-{c}")));
                    } else {
                        out.push((opt.dest, None, format!("-{c}")));
                    }
                }
                continue;
            }
            rest.push(a.clone());
        }
        Ok((out, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    const LONGS: &[LongOpt] = &[
        lo("seconds", HasArg::Required, 's' as i32),
        lo("si", HasArg::No, 300),
        lo("wide", HasArg::No, 'w' as i32),
        lo("width", HasArg::Optional, 'W' as i32),
    ];

    fn all(args: &[&str]) -> (Vec<Result<Opt, String>>, Vec<String>) {
        let a = v(args);
        let mut g = GetoptLong::new("t", &a, "bn:w::s:", LONGS);
        let got: Vec<_> = g.by_ref().collect();
        (got, g.operands().to_vec())
    }

    #[test]
    fn clusters_and_arguments() {
        let (o, rest) = all(&["-bn1", "x", "-n", "2", "-w5", "-w", "--", "-b"]);
        let o: Vec<Opt> = o.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(
            o[0],
            Opt {
                val: 'b' as i32,
                arg: None
            }
        );
        assert_eq!(
            o[1],
            Opt {
                val: 'n' as i32,
                arg: Some("1".into())
            }
        );
        assert_eq!(
            o[2],
            Opt {
                val: 'n' as i32,
                arg: Some("2".into())
            }
        );
        assert_eq!(
            o[3],
            Opt {
                val: 'w' as i32,
                arg: Some("5".into())
            }
        );
        assert_eq!(
            o[4],
            Opt {
                val: 'w' as i32,
                arg: None
            }
        );
        assert_eq!(rest, v(&["x", "-b"]));
    }

    #[test]
    fn glibc_messages() {
        assert_eq!(all(&["-x"]).0[0], Err("t: invalid option -- 'x'".into()));
        assert_eq!(
            all(&["-n"]).0[0],
            Err("t: option requires an argument -- 'n'".into())
        );
        assert_eq!(
            all(&["--foo=1"]).0[0],
            Err("t: unrecognized option '--foo=1'".into())
        );
        assert_eq!(
            all(&["--s"]).0[0],
            Err("t: option '--s' is ambiguous; possibilities: '--seconds' '--si'".into())
        );
        assert_eq!(
            all(&["--wide=3"]).0[0],
            Err("t: option '--wide' doesn't allow an argument".into())
        );
        assert_eq!(
            all(&["--seconds"]).0[0],
            Err("t: option '--seconds' requires an argument".into())
        );
        assert_eq!(
            all(&["--sec", "3"]).0[0],
            Ok(Opt {
                val: 's' as i32,
                arg: Some("3".into())
            })
        );
    }

    #[test]
    fn optparse_rules() {
        const O: &[PyOpt] = &[
            PyOpt {
                short: Some('b'),
                long: "batch",
                takes_value: false,
                dest: "batch",
            },
            PyOpt {
                short: Some('n'),
                long: "iter",
                takes_value: true,
                dest: "iterations",
            },
            PyOpt {
                short: Some('P'),
                long: "processes",
                takes_value: false,
                dest: "processes",
            },
            PyOpt {
                short: Some('p'),
                long: "pid",
                takes_value: true,
                dest: "pids",
            },
        ];
        let p = OptParse { opts: O };
        let (o, r) = p.parse(&v(&["-bn1", "x", "--it=3", "--ba"])).unwrap();
        let o: Vec<_> = o.into_iter().map(|(d, v, _)| (d, v)).collect();
        assert_eq!(
            o,
            vec![
                ("batch", None),
                ("iterations", Some("1".into())),
                ("iterations", Some("3".into())),
                ("batch", None)
            ]
        );
        assert_eq!(r, v(&["x"]));
        assert_eq!(p.parse(&v(&["-x"])).unwrap_err(), "no such option: -x");
        assert_eq!(
            p.parse(&v(&["-n"])).unwrap_err(),
            "-n option requires 1 argument"
        );
        assert_eq!(
            p.parse(&v(&["--p"])).unwrap_err(),
            "ambiguous option: --p (--pid, --processes?)"
        );
    }
}
