//! Result files (`--json`, `--csv`, the bench's `--json`): written whole or not at all where
//! that is possible, and never at the expense of what the path names.
//!
//! * a regular file, or a path that does not exist: a temporary file in the same directory,
//!   synced, then renamed over it (`tempfile`'s `NamedTempFile::persist`); a replaced file
//!   keeps its mode and owner;
//! * a symlink is followed (chains too, dangling ones included) and its final target gets the
//!   treatment above; the link itself is never replaced;
//! * a character or block device, a FIFO, a socket, and anything reached through a process's
//!   file-descriptor table (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) are written in place:
//!   opened for writing (appending), never renamed over, never truncated;
//! * a directory is refused (`EISDIR`).

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Symlink hops followed before giving up (the kernel's MAXSYMLINKS).
const MAX_HOPS: u32 = 40;

/// How a path is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Temporary file + rename over this path (the final target of any symlinks).
    Atomic(PathBuf),
    /// Opened for writing where it is: a device, FIFO, socket or an open file descriptor.
    InPlace(PathBuf),
}

fn os_err(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}
const EISDIR: i32 = 21;
const ELOOP: i32 = 40;

/// Is `dir` (canonical) a process's file-descriptor directory (/proc/PID/fd,
/// /proc/PID/task/TID/fd)? Its entries are magic links to open files, not paths.
fn is_fd_dir(dir: &Path) -> bool {
    let s = dir.to_string_lossy();
    s.starts_with("/proc/") && s.ends_with("/fd")
}

fn parent_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Decide how `path` is written, following symlinks. Errors: a directory (EISDIR), too many
/// links (ELOOP), or what `lstat` reports for a path component.
pub fn resolve(path: &Path) -> io::Result<Target> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        // /dev/stdout, /dev/fd/N, /proc/self/fd/N: whatever the descriptor is open on (a
        // pipe, a terminal, a file the shell truncated for us) is written as it stands.
        if let Ok(dir) = fs::canonicalize(parent_of(&p)) {
            if is_fd_dir(&dir) {
                return Ok(Target::InPlace(p));
            }
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)?;
                p = if link.is_absolute() { link } else { parent_of(&p).join(link) };
            }
            Ok(m) if m.is_dir() => return Err(os_err(EISDIR)),
            Ok(m) if m.is_file() => return Ok(Target::Atomic(p)),
            Ok(_) => return Ok(Target::InPlace(p)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Atomic(p)),
            Err(e) => return Err(e),
        }
    }
    Err(os_err(ELOOP))
}

/// Check, before a long run, that `path` can be written: it resolves, and for an atomic
/// write a temporary file can be made (and is removed again) in its directory. Devices and
/// FIFOs are not opened (opening a FIFO would wait for a reader).
pub fn check(path: &str) -> io::Result<()> {
    match resolve(Path::new(path))? {
        Target::InPlace(_) => Ok(()),
        Target::Atomic(p) => {
            tempfile::Builder::new().prefix(".memtwin-probe.").tempfile_in(parent_of(&p))?;
            Ok(())
        }
    }
}

/// Write `data` to `path` as described in the module documentation.
pub fn write(path: &str, data: &[u8]) -> io::Result<()> {
    match resolve(Path::new(path))? {
        Target::InPlace(p) => {
            let mut f = OpenOptions::new().append(true).open(&p)?;
            f.write_all(data)?;
            f.flush()
        }
        Target::Atomic(p) => write_atomic(&p, data),
    }
}

fn write_atomic(target: &Path, data: &[u8]) -> io::Result<()> {
    let dir = parent_of(target);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let old = fs::metadata(target).ok();
    // A new file gets 0666 less the umask, like any file a program creates.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(&dir)?;
    if let Some(m) = &old {
        let f: &File = tmp.as_file();
        f.set_permissions(Permissions::from_mode(m.mode() & 0o7777))?;
        // Best effort: only root can give a file away.
        let _ = std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid()));
        if m.mode() & 0o6000 != 0 {
            // chown clears set-id bits; put them back.
            f.set_permissions(Permissions::from_mode(m.mode() & 0o7777))?;
        }
    }
    tmp.write_all(data)?;
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    // Make the rename itself durable; best effort (not every filesystem allows it).
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The reason of an I/O error as `strerror` words, without Rust's " (os error N)" suffix.
pub fn reason(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, FileTypeExt};

    fn tmpdir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn regular_file_is_replaced_whole_keeping_its_mode() {
        let d = tmpdir();
        let p = d.path().join("out.json");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
        let ino = fs::metadata(&p).unwrap().ino();
        write(p.to_str().unwrap(), b"new\n").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        let m = fs::metadata(&p).unwrap();
        assert_eq!(m.mode() & 0o777, 0o640);
        assert_ne!(m.ino(), ino, "replaced by rename, not rewritten in place");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_file_is_created() {
        let d = tmpdir();
        let p = d.path().join("new.json");
        write(p.to_str().unwrap(), b"x").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"x");
    }

    #[test]
    fn symlink_to_regular_file_replaces_the_target_not_the_link() {
        let d = tmpdir();
        let t = d.path().join("real.json");
        let l = d.path().join("link.json");
        fs::write(&t, "old").unwrap();
        symlink("real.json", &l).unwrap();
        write(l.to_str().unwrap(), b"new").unwrap();
        assert!(fs::symlink_metadata(&l).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_link(&l).unwrap(), PathBuf::from("real.json"));
        assert_eq!(fs::read(&t).unwrap(), b"new");
    }

    #[test]
    fn dangling_symlink_creates_its_target() {
        let d = tmpdir();
        let l = d.path().join("link.json");
        symlink(d.path().join("sub-target.json"), &l).unwrap();
        write(l.to_str().unwrap(), b"x").unwrap();
        assert!(fs::symlink_metadata(&l).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(d.path().join("sub-target.json")).unwrap(), b"x");
    }

    #[test]
    fn symlink_loop_is_refused() {
        let d = tmpdir();
        let a = d.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", d.path().join("b")).unwrap();
        let e = write(a.to_str().unwrap(), b"x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(ELOOP));
    }

    #[test]
    fn directory_is_refused() {
        let d = tmpdir();
        let e = write(d.path().to_str().unwrap(), b"x").unwrap_err();
        assert_eq!(reason(&e), "Is a directory");
        let e = check(d.path().to_str().unwrap()).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(EISDIR));
    }

    #[test]
    fn character_device_is_written_in_place() {
        // A null device of our own, never the host's /dev/null. Needs root (mknod).
        let d = tmpdir();
        let p = d.path().join("null");
        let made = std::process::Command::new("mknod").arg(&p).args(["c", "1", "3"]).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mknod needs root");
            return;
        }
        write(p.to_str().unwrap(), b"discarded").unwrap();
        let m = fs::symlink_metadata(&p).unwrap();
        assert!(m.file_type().is_char_device(), "still a character device");
        assert_eq!(m.rdev(), fs::metadata("/dev/null").unwrap().rdev());
    }

    #[test]
    fn fifo_is_written_in_place() {
        let d = tmpdir();
        let p = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&p).status().unwrap().success());
        let reader = {
            let p = p.clone();
            std::thread::spawn(move || fs::read(p).unwrap())
        };
        write(p.to_str().unwrap(), b"through the pipe").unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
    }

    #[test]
    fn proc_fd_paths_are_written_in_place() {
        // The descriptor of an open regular file: written through it, not renamed over.
        let d = tmpdir();
        let p = d.path().join("held");
        let f = File::create(&p).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
        let via = format!("/proc/self/fd/{fd}");
        assert_eq!(resolve(Path::new(&via)).unwrap(), Target::InPlace(PathBuf::from(&via)));
        write(&via, b"abc").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"abc");
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
