//! sysctl(8), writes to /proc/sys, and swapon/swapoff.

use memtwin_kernel::{Kernel, Program, Step, TaskId};
use memtwin_machine::Sysctls;

enum Op {
    Set(String, String),
    Show(String),
}

pub struct Sysctl {
    ops: Vec<Op>,
    /// `-n`: values only; `-q`: quiet; `echo > /proc/sys` prints nothing.
    values_only: bool,
    quiet: bool,
    status: i32,
    done: bool,
}

impl Sysctl {
    pub fn parse(args: &[String]) -> Result<Sysctl, String> {
        let mut s = Sysctl { ops: Vec::new(), values_only: false, quiet: false, status: 0, done: false };
        let mut write = false;
        for a in args {
            match a.as_str() {
                "-w" | "--write" => write = true,
                "-n" | "--values" => s.values_only = true,
                "-q" | "--quiet" => s.quiet = true,
                o if o.starts_with('-') => return Err(format!("sysctl: unsupported option '{o}' (supported: -w, -n, -q)")),
                kv => {
                    if let Some((k, v)) = kv.split_once('=') {
                        let name = Sysctls::canonical(k);
                        // Validate now so a typo stops the scenario at its line.
                        Sysctls::default().set(&name, v).map_err(|e| format!("sysctl: {e}"))?;
                        s.ops.push(Op::Set(name, v.to_string()));
                    } else if write {
                        return Err(format!("sysctl: \"{kv}\" must be of the form name=value"));
                    } else {
                        let name = Sysctls::canonical(kv);
                        Sysctls::default().get(&name).map_err(|e| format!("sysctl: {e}"))?;
                        s.ops.push(Op::Show(name));
                    }
                }
            }
        }
        if s.ops.is_empty() {
            return Err("sysctl: no variables specified (sysctl [-w] NAME[=VALUE]...)".into());
        }
        Ok(s)
    }

    /// `echo VALUE > /proc/sys/NAME`.
    pub fn write(name: &str, value: &str) -> Sysctl {
        Sysctl { ops: vec![Op::Set(name.to_string(), value.to_string())], values_only: false, quiet: true, status: 0, done: false }
    }
}

/// Apply a setting to the running kernel, including the actions some files trigger.
fn apply(k: &mut Kernel, me: TaskId, name: &str, value: &str) -> Result<(), String> {
    k.sysctl.set(name, value).map_err(|e| e.to_string())?;
    match name {
        "vm.drop_caches" => {
            let what: u32 = value.trim().parse().unwrap_or(0);
            let freed = k.drop_caches(what);
            // Walking the inodes and freeing each page costs the writer CPU time.
            let per_page = k.machine.cpu_model.page_cache_ns + k.machine.cpu_model.page_alloc_ns;
            k.charge_sys(me, freed * per_page);
        }
        "vm.min_free_kbytes" | "vm.watermark_scale_factor" => k.setup_per_zone_wmarks(),
        _ => {}
    }
    Ok(())
}

impl Program for Sysctl {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.done {
            return Step::Exit(self.status);
        }
        self.done = true;
        for op in std::mem::take(&mut self.ops) {
            match op {
                Op::Set(name, value) => match apply(k, me, &name, &value) {
                    Ok(()) => {
                        if !self.quiet {
                            let shown = k.sysctl.get(&name).unwrap_or(value);
                            if self.values_only {
                                k.print(me, &format!("{shown}\n"));
                            } else {
                                k.print(me, &format!("{name} = {shown}\n"));
                            }
                        }
                    }
                    Err(e) => {
                        if self.quiet {
                            k.eprint(me, &format!("bash: echo: write error: Invalid argument ({e})\n"));
                        } else {
                            k.eprint(me, &format!("sysctl: setting key \"{name}\": Invalid argument ({e})\n"));
                        }
                        self.status = 1;
                    }
                },
                Op::Show(name) => {
                    let v = k.sysctl.get(&name).unwrap_or_default();
                    if self.values_only {
                        k.print(me, &format!("{v}\n"));
                    } else {
                        k.print(me, &format!("{name} = {v}\n"));
                    }
                }
            }
        }
        k.charge_sys(me, 20_000);
        Step::Cpu { user: 0, sys: 0 }
    }
}

/// swapon -a / swapoff -a.
pub struct Swap {
    on: bool,
}

impl Swap {
    pub fn parse(name: &str, args: &[String]) -> Result<Swap, String> {
        if args.len() != 1 || args[0] != "-a" {
            return Err(format!("{name}: only '{name} -a' is supported"));
        }
        Ok(Swap { on: name == "swapon" })
    }
}

impl Program for Swap {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        k.swap_all(self.on);
        k.charge_sys(me, 50_000);
        Step::Exit(0)
    }
}
