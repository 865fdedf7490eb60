//! `ftp get SIZE [LOCAL]`: a bulk TCP download over the machine's link, standing in for an
//! interactive ftp session's `get` (seed 002: 200 MB over gigabit Ethernet under two
//! net.ipv4.tcp_rmem settings). The peer (the FTP server) is not simulated beyond the
//! kernel's TCP model: it sends SIZE bytes as fast as the receive window and the path allow.
//! The client reads the data connection in st_blksize (4 KiB) pieces and writes them to
//! LOCAL (default /dev/null), then prints what netkit-ftp prints.
//!
//! Options: `-r BYTES` sets SO_RCVBUF on the data socket before connecting (capped at
//! net.core.rmem_max and doubled by the kernel; it turns receive-buffer autotuning off).

use super::parse_coreutils_size;
use memtwin_kernel::fs::{normalize, OpenFlags};
use memtwin_kernel::net::TcpReceiver;
use memtwin_kernel::{Kernel, Ns, Program, Step, TaskId, NS_PER_SEC};

/// netkit-ftp's data buffer: the local file's st_blksize (one page).
const FTP_BUF: u64 = 4096;
/// User time of one pass of the client's read()/write() loop (binary mode: no conversion).
const LOOP_USER_NS: Ns = 100;
/// Data handled per scheduling step: the loop runs until this much is done or it must wait.
const STEP_BYTES: u64 = 64 * 1024;

const USAGE: &str = "ftp [-r SO_RCVBUF] get SIZE [LOCAL-FILE] (e.g. ftp get 200M /dev/null)";

pub struct Ftp {
    remote: String,
    size: u64,
    local: String,
    so_rcvbuf: Option<u64>,
    sock: Option<TcpReceiver>,
    fd: Option<usize>,
    /// Bytes received and not yet written to the local file.
    pending: u64,
    received: u64,
    start: Ns,
    failed: bool,
}

impl Ftp {
    pub fn parse(args: &[String], cwd: &str) -> Result<Ftp, String> {
        let mut so_rcvbuf = None;
        let mut words = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "-r" => {
                    let v = args.get(i + 1).ok_or_else(|| format!("ftp: option -r needs a size in bytes ({USAGE})"))?;
                    let n = parse_coreutils_size(v).filter(|&n| n > 0).ok_or_else(|| format!("ftp: invalid buffer size '{v}' (e.g. 262144 or 256K)"))?;
                    so_rcvbuf = Some(n);
                    i += 2;
                    continue;
                }
                "-v" | "-n" | "-i" | "-p" => {}
                o if o.starts_with('-') && o.len() > 1 => {
                    return Err(format!(
                        "ftp: unsupported option '{o}' (supported: -r BYTES; -v, -n, -i and -p are accepted and change nothing here; usage: {USAGE})"
                    ))
                }
                w => words.push(w.to_string()),
            }
            i += 1;
        }
        match words.first().map(|s| s.as_str()) {
            Some("get") | Some("recv") => {}
            Some(w) => return Err(format!("ftp: unsupported command '{w}' (only get: {USAGE})")),
            None => return Err(format!("ftp: interactive sessions are not modelled; give a command: {USAGE}")),
        }
        let (Some(size_word), rest) = (words.get(1), &words[words.len().min(2)..]) else {
            return Err(format!("ftp: get needs the size of the remote file: {USAGE}"));
        };
        if rest.len() > 1 {
            return Err(format!("ftp: too many arguments: {USAGE}"));
        }
        let size = parse_coreutils_size(size_word)
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("ftp: invalid size '{size_word}' (bytes, or with a suffix: 200M, 1G)"))?;
        let local = rest.first().map_or_else(|| "/dev/null".to_string(), |l| normalize(cwd, l));
        Ok(Ftp {
            remote: size_word.clone(),
            size,
            local,
            so_rcvbuf,
            sock: None,
            fd: None,
            pending: 0,
            received: 0,
            start: 0,
            failed: false,
        })
    }

    fn finish(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if let Some(mut s) = self.sock.take() {
            k.tcp_close(&mut s);
        }
        if let Some(fd) = self.fd.take() {
            let _ = k.sys_close(me, fd);
        }
        if self.failed {
            return Step::Exit(1);
        }
        let secs = (k.now - self.start) as f64 / NS_PER_SEC as f64;
        let rate = self.received as f64 / if secs > 0.0 { secs } else { 1.0 };
        let (v, unit) = if rate >= 1024.0 * 1024.0 * 1024.0 {
            (rate / (1024.0 * 1024.0 * 1024.0), "GB/s")
        } else if rate >= 1024.0 * 1024.0 {
            (rate / (1024.0 * 1024.0), "MB/s")
        } else {
            (rate / 1024.0, "kB/s")
        };
        let text = format!(
            "226 Transfer complete.\n{} bytes received in {:.2} secs ({:.4} {})\n",
            self.received, secs, v, unit
        );
        k.print(me, &text);
        Step::Exit(0)
    }
}

impl Program for Ftp {
    fn step(&mut self, k: &mut Kernel, me: TaskId) -> Step {
        if self.sock.is_none() && self.fd.is_none() && !self.failed {
            let flags = OpenFlags { write: true, create: true, trunc: true, ..Default::default() };
            match k.sys_open(me, &self.local, flags) {
                Ok((fd, wait)) => {
                    self.fd = Some(fd);
                    let head = format!(
                        "local: {} remote: {}\n200 PORT command successful.\n150 Opening BINARY mode data connection for {} ({} bytes).\n",
                        self.local, self.remote, self.remote, self.size
                    );
                    k.print(me, &head);
                    self.sock = Some(k.tcp_open_receiver(self.size, self.so_rcvbuf));
                    self.start = k.now;
                    if let Some(t) = wait {
                        return Step::SleepUntil { t, io: true };
                    }
                }
                Err(e) => {
                    k.eprint(me, &format!("local: {}: {}\n", self.local, e.strerror()));
                    self.failed = true;
                    return self.finish(k, me);
                }
            }
        }
        let Some(fd) = self.fd else { return self.finish(k, me) };
        let mut done = 0;
        loop {
            if self.pending > 0 {
                match k.sys_write(me, fd, self.pending) {
                    Ok(r) => {
                        self.pending -= r.bytes.min(self.pending);
                        if let Some(w) = r.wait {
                            return w;
                        }
                    }
                    Err(e) => {
                        k.eprint(me, &format!("netout: write returned 0?\nlocal: {}: {}\n", self.local, e.strerror()));
                        self.failed = true;
                        return self.finish(k, me);
                    }
                }
                if self.pending > 0 {
                    continue;
                }
                k.charge_user(me, LOOP_USER_NS);
                if done >= STEP_BYTES {
                    return Step::Cpu { user: 0, sys: 0 };
                }
                continue;
            }
            let Some(s) = self.sock.as_mut() else { return self.finish(k, me) };
            let p = k.tcp_recvmsg(s, me, FTP_BUF);
            self.received += p.bytes;
            self.pending = p.bytes;
            done += p.bytes;
            if let Some(t) = p.wait_until {
                // Waiting on a socket is an interruptible sleep (S), not I/O wait.
                return Step::SleepUntil { t, io: false };
            }
            if p.bytes == 0 && p.eof {
                return self.finish(k, me);
            }
        }
    }

    fn killed(&mut self, k: &mut Kernel, _me: TaskId) {
        if let Some(mut s) = self.sock.take() {
            k.tcp_close(&mut s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let f = Ftp::parse(&a(&["get", "200M"]), "/root").unwrap();
        assert_eq!((f.size, f.local.as_str()), (200 << 20, "/dev/null"));
        let f = Ftp::parse(&a(&["-r", "256K", "get", "1G", "big"]), "/root").unwrap();
        assert_eq!((f.size, f.local.as_str(), f.so_rcvbuf), (1 << 30, "/root/big", Some(256 << 10)));
        for (bad, want) in [
            (vec![], "interactive"),
            (vec!["put", "1M"], "unsupported command 'put'"),
            (vec!["get"], "needs the size"),
            (vec!["get", "lots"], "invalid size"),
            (vec!["-x", "get", "1M"], "unsupported option '-x'"),
            (vec!["-r"], "needs a size"),
            (vec!["get", "1M", "a", "b"], "too many"),
        ] {
            let e = Ftp::parse(&a(&bad), "/").err().unwrap_or_default();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }
}
