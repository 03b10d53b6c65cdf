//! `seal mount --writable` through real FUSE mounts: every change to an
//! ordinary path lands on the disk (with the caller's owner and mode, as
//! root and as another user), and every change to a protected path
//! (`seal.json`, sealed roots existing or not, agent artifacts existing or
//! not) is refused with `EROFS`, leaves the disk untouched and writes a
//! `deny-write` audit line naming the path, the pid and the command.
//!
//! The kernel reports the *thread* that made a request, so the pid of an
//! audit line written for a request of this test is the test thread's id,
//! and its command name is the thread's name.

mod support;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, CWD, FallocateFlags, Mode, OFlags, RenameFlags, Timestamps};
use support::*;

const SKILL: &[u8] = b"---\nname: x\ndescription: the approved skill\n---\nApproved.\n";
const CLAUDE: &[u8] = b"Be careful.\n";
const PROMPT: &[u8] = b"the approved prompt\n";

/// A uid and gid no account uses, and a supplementary group, for the
/// caller that is not root.
const USER: u32 = 4242;
const GROUP: u32 = 4242;
const EXTRA_GROUP: u32 = 4343;

/// A project whose `seal.json` seals `.claude/skills/*`, `CLAUDE.md` and
/// `prompts/*` (a pattern no agent table knows), pinned; then, unpinned on
/// the disk: a command, `.mcp.json`, a nested `AGENTS.md`, a skill and a
/// nested `CLAUDE.md` (all agent artifacts, hidden under `block`).
fn fixture(policy: &str) -> Project {
    let p = Project::new();
    p.write(".claude/skills/x/SKILL.md", SKILL)
        .write(".claude/skills/x/helper.py", "print('approved')\n")
        .write("CLAUDE.md", CLAUDE)
        .write("prompts/a/p.md", PROMPT)
        .write("src/main.rs", "fn main() {}\n")
        .write("README.md", "readme\n")
        .write("docs/notes.md", "notes\n");
    p.write(
        "seal.json",
        format!(
            r#"{{"version":1,"discovery":[".claude/skills/*","CLAUDE.md","prompts/*"],"policy":"{policy}","bundles":{{}}}}"#
        ),
    );
    p.pin(&[]);
    p.write(".claude/commands/old.md", "an unpinned command\n")
        .write(".mcp.json", "{\"mcpServers\":{}}\n")
        .write("docs/AGENTS.md", "unpinned nested instructions\n")
        .write(".claude/skills/hidden/SKILL.md", "an unpinned skill\n")
        .write("guide/sub/CLAUDE.md", "unpinned, two levels down\n");
    // Temporary directories are 0700; the caller that is not root must be
    // able to walk in.
    fs::set_permissions(p.path(), fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A writable view of a project with an audit log outside it.
struct Rw {
    p: Project,
    m: Mounted,
    audit: PathBuf,
    _scratch: tempfile::TempDir,
}

impl Rw {
    fn new(p: Project, extra: &[&str]) -> Rw {
        let scratch = scratch();
        let audit = scratch.path().join("audit.jsonl");
        let mut args = vec!["--writable", "--audit-log", audit.to_str().unwrap()];
        args.extend_from_slice(extra);
        let m = Mounted::new(&p, &args);
        Rw {
            p,
            m,
            audit,
            _scratch: scratch,
        }
    }

    /// A path in the view.
    fn v(&self, rel: &str) -> PathBuf {
        self.m.path(rel)
    }

    /// The same path on the disk.
    fn d(&self, rel: &str) -> PathBuf {
        self.p.path().join(rel)
    }

    fn deny_writes(&self) -> Vec<serde_json::Value> {
        audit_records(&self.audit)
            .into_iter()
            .filter(|r| r["event"] == "deny-write")
            .collect()
    }
}

/// A writable view of `fixture(policy)`; None where FUSE tests cannot run
/// (skipped outside CI, see `support::fuse_available`).
fn writable_view(policy: &str) -> Option<Rw> {
    fuse_available().then(|| Rw::new(fixture(policy), &[]))
}

/// The errno of a failed call, 0 for success.
fn code<T, E: Into<io::Error>>(r: Result<T, E>) -> i32 {
    match r {
        Ok(_) => 0,
        Err(e) => e.into().raw_os_error().unwrap_or(-1),
    }
}

fn name_of(errno: i32) -> String {
    match errno {
        0 => "ok".into(),
        e => format!("{} ({e})", io::Error::from_raw_os_error(e)),
    }
}

/// This thread's id and name, which the kernel reports for its requests.
fn this_thread() -> (u32, String) {
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
    let comm = fs::read_to_string("/proc/thread-self/comm").unwrap();
    (tid, comm.trim_end().to_string())
}

/// The umask of this process (read, not changed: tests share it).
fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line.split_whitespace().nth(1).unwrap(), 8).unwrap()
}

fn meta(p: &Path) -> fs::Metadata {
    fs::symlink_metadata(p).unwrap_or_else(|e| panic!("lstat {}: {e}", p.display()))
}

/// (uid, gid, permission bits) of a path on the disk.
fn owner_mode(p: &Path) -> (u32, u32, u32) {
    let m = meta(p);
    (m.uid(), m.gid(), m.mode() & 0o7777)
}

fn xattr(p: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    match rustix::fs::lgetxattr(p, name, &mut buf[..]) {
        Ok(n) => Some(buf[..n].to_vec()),
        Err(_) => None,
    }
}

// ---------------------------------------------------------------------------
// The disk, as a value to compare before and after a refused change.

#[derive(Debug, Clone, PartialEq, Eq)]
struct DiskNode {
    kind: char,
    mode: u32,
    uid: u32,
    gid: u32,
    nlink: u64,
    mtime: (i64, i64),
    /// Length and checksum of a file's bytes, or a symlink's target.
    detail: String,
    xattrs: Vec<(OsString, Vec<u8>)>,
}

/// Every path under `root` (without following symlinks) with its kind,
/// mode, owner, link count, mtime, bytes and extended attributes; `.git`
/// is left out (tests change it on purpose).
fn disk_state(root: &Path) -> BTreeMap<String, DiskNode> {
    let mut out = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in fs::read_dir(root.join(&rel)).unwrap() {
            let entry = entry.unwrap();
            if entry.file_name() == ".git" {
                continue;
            }
            let rel = rel.join(entry.file_name());
            let full = root.join(&rel);
            let m = meta(&full);
            let (kind, detail) = if m.is_dir() {
                stack.push(rel.clone());
                ('d', String::new())
            } else if m.file_type().is_symlink() {
                ('l', fs::read_link(&full).unwrap().display().to_string())
            } else if m.is_file() {
                let bytes = fs::read(&full).unwrap();
                ('f', format!("{} {:016x}", bytes.len(), checksum(&bytes)))
            } else {
                ('?', String::new())
            };
            let mut names = vec![0u8; 4096];
            let n = rustix::fs::llistxattr(&full, &mut names[..]).unwrap_or(0);
            let xattrs = names[..n]
                .split(|b| *b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    let name = OsString::from(String::from_utf8_lossy(s).into_owned());
                    let value = xattr(&full, name.to_str().unwrap()).unwrap_or_default();
                    (name, value)
                })
                .collect();
            out.insert(
                rel.display().to_string(),
                DiskNode {
                    kind,
                    mode: m.mode(),
                    uid: m.uid(),
                    gid: m.gid(),
                    nlink: m.nlink(),
                    mtime: (m.mtime(), m.mtime_nsec()),
                    detail,
                    xattrs,
                },
            );
        }
    }
    out
}

/// The differences between two disk states, one line each.
fn disk_diff(before: &BTreeMap<String, DiskNode>, after: &BTreeMap<String, DiskNode>) -> String {
    let mut diff = String::new();
    for (p, n) in before {
        match after.get(p) {
            None => diff.push_str(&format!("  removed: {p}\n")),
            Some(m) if m != n => diff.push_str(&format!("  changed: {p}\n    {n:?}\n    {m:?}\n")),
            _ => {}
        }
    }
    for p in after.keys().filter(|p| !before.contains_key(*p)) {
        diff.push_str(&format!("  added: {p}\n"));
    }
    diff
}

/// Runs `op` in the view, which must fail with `EROFS`, leave the disk
/// exactly as it was and add `deny-write` audit lines for this thread,
/// among them one about `audited` (a project-relative path).
fn refused<T>(v: &Rw, what: &str, audited: &str, op: impl FnOnce() -> io::Result<T>) {
    let before = disk_state(v.p.path());
    let seen = v.deny_writes().len();
    let errno = code(op());
    assert_eq!(
        errno,
        libc::EROFS,
        "{what}: want EROFS, got {}",
        name_of(errno)
    );
    let diff = disk_diff(&before, &disk_state(v.p.path()));
    assert!(diff.is_empty(), "{what} changed the disk:\n{diff}");
    let (tid, comm) = this_thread();
    let new = v.deny_writes().split_off(seen);
    let want = format!("./{audited}");
    assert!(
        new.iter()
            .any(|r| r["path"] == want.as_str() && r["pid"] == tid && r["comm"] == comm.as_str()),
        "{what}: no deny-write line for {want} (pid {tid}, comm {comm}) in {new:#?}"
    );
    for r in &new {
        assert!(r["op"].is_string() && r["outcome"].is_string(), "{r}");
        // The project's path is named once, in its own field.
        let mut rest = r.clone();
        rest.as_object_mut().unwrap().remove("project");
        let line = rest.to_string();
        assert!(
            !line.contains(&v.p.path().display().to_string()),
            "a host path in {line}"
        );
    }
}

// ---------------------------------------------------------------------------
// Ordinary paths, as root.

#[test]
fn files_are_created_written_and_truncated_on_disk() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let mask = umask();

    // create: the requested mode minus the caller's umask, owned by root.
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(v.v("src/new.txt"))
        .unwrap();
    assert_eq!(owner_mode(&v.d("src/new.txt")), (0, 0, 0o666 & !mask));
    let again = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(v.v("src/new.txt"));
    assert_eq!(errno_of(&again), Some(libc::EEXIST));

    // write, and positioned writes; read back through the same handle.
    f.write_all(b"hello world\n").unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"HELLO", 0).unwrap();
    f.seek(SeekFrom::Start(0)).unwrap();
    let mut back = String::new();
    f.read_to_string(&mut back).unwrap();
    assert_eq!(back, "HELLO world\n");
    f.sync_all().unwrap();
    f.sync_data().unwrap();
    drop(f);
    assert_eq!(fs::read(v.d("src/new.txt")).unwrap(), b"HELLO world\n");

    // O_APPEND appends wherever the handle is.
    let mut a = OpenOptions::new()
        .append(true)
        .open(v.v("src/new.txt"))
        .unwrap();
    a.write_all(b"more\n").unwrap();
    drop(a);
    assert_eq!(
        fs::read(v.d("src/new.txt")).unwrap(),
        b"HELLO world\nmore\n"
    );

    // O_TRUNC on an existing file, through the shell's `>`.
    let status = Command::new("sh")
        .arg("-c")
        .arg("printf 'short' > src/new.txt")
        .current_dir(&v.m.mountpoint)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(fs::read(v.d("src/new.txt")).unwrap(), b"short");

    // truncate(2) by path, ftruncate(2) by handle: shrink and grow.
    nix::unistd::truncate(&v.v("src/new.txt"), 2).unwrap();
    assert_eq!(fs::read(v.d("src/new.txt")).unwrap(), b"sh");
    let f = OpenOptions::new()
        .write(true)
        .open(v.v("src/new.txt"))
        .unwrap();
    f.set_len(4).unwrap();
    assert_eq!(fs::read(v.d("src/new.txt")).unwrap(), b"sh\0\0");

    // fallocate: allocate (grows), keep size, punch a hole.
    rustix::fs::fallocate(&f, FallocateFlags::empty(), 0, 8192).unwrap();
    assert_eq!(meta(&v.d("src/new.txt")).len(), 8192);
    rustix::fs::fallocate(&f, FallocateFlags::KEEP_SIZE, 0, 1 << 20).unwrap();
    assert_eq!(meta(&v.d("src/new.txt")).len(), 8192);
    assert!(meta(&v.d("src/new.txt")).blocks() * 512 >= 1 << 20);
    std::os::unix::fs::FileExt::write_all_at(&f, &[7u8; 8192], 0).unwrap();
    rustix::fs::fallocate(
        &f,
        FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
        4096,
        4096,
    )
    .unwrap();
    drop(f);
    let bytes = fs::read(v.d("src/new.txt")).unwrap();
    assert_eq!(bytes.len(), 8192);
    assert!(bytes[..4096].iter().all(|b| *b == 7));
    assert!(
        bytes[4096..].iter().all(|b| *b == 0),
        "the hole reads zeros"
    );

    // A file created read-only is still written through the handle that
    // created it (POSIX: the creating open grants its own access mode).
    let mut ro = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(v.v("src/readonly.txt"))
        .unwrap();
    ro.write_all(b"once\n").unwrap();
    drop(ro);
    assert_eq!(fs::read(v.d("src/readonly.txt")).unwrap(), b"once\n");
    assert_eq!(owner_mode(&v.d("src/readonly.txt")).2, 0o444);

    // fsync of a directory.
    File::open(v.v("src")).unwrap().sync_all().unwrap();
}

#[test]
fn renames_links_and_directories_land_on_disk() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let mask = umask();
    fs::write(v.v("src/a"), "A").unwrap();
    fs::write(v.v("src/b"), "B").unwrap();

    // mkdir with a mode; rmdir refuses a directory that is not empty.
    fs::DirBuilder::new()
        .mode(0o750)
        .create(v.v("work"))
        .unwrap();
    assert_eq!(owner_mode(&v.d("work")), (0, 0, 0o750 & !mask));
    fs::write(v.v("work/inside"), "i").unwrap();
    assert_eq!(
        errno_of(&fs::remove_dir(v.v("work"))),
        Some(libc::ENOTEMPTY)
    );

    // A plain rename, over an existing file, and of a directory.
    fs::rename(v.v("src/a"), v.v("src/a2")).unwrap();
    assert_eq!(fs::read(v.d("src/a2")).unwrap(), b"A");
    assert!(!v.d("src/a").exists());
    fs::write(v.v("src/c"), "C").unwrap();
    fs::rename(v.v("src/c"), v.v("src/a2")).unwrap();
    assert_eq!(fs::read(v.d("src/a2")).unwrap(), b"C");
    assert_eq!(fs::read(v.v("src/a2")).unwrap(), b"C");
    fs::rename(v.v("work"), v.v("work2")).unwrap();
    assert_eq!(fs::read(v.d("work2/inside")).unwrap(), b"i");
    assert_eq!(fs::read(v.v("work2/inside")).unwrap(), b"i");

    // RENAME_NOREPLACE: refused over a file, done onto a free name.
    let noreplace = |a: &str, b: &str| {
        rustix::fs::renameat_with(CWD, v.v(a), CWD, v.v(b), RenameFlags::NOREPLACE)
    };
    assert_eq!(code(noreplace("src/a2", "src/b")), libc::EEXIST);
    assert_eq!(fs::read(v.d("src/b")).unwrap(), b"B");
    assert_eq!(code(noreplace("src/a2", "src/a3")), 0);
    assert_eq!(fs::read(v.d("src/a3")).unwrap(), b"C");

    // RENAME_EXCHANGE swaps two files, and a file with a directory.
    rustix::fs::renameat_with(CWD, v.v("src/a3"), CWD, v.v("src/b"), RenameFlags::EXCHANGE)
        .unwrap();
    assert_eq!(fs::read(v.d("src/a3")).unwrap(), b"B");
    assert_eq!(fs::read(v.d("src/b")).unwrap(), b"C");
    assert_eq!(fs::read(v.v("src/a3")).unwrap(), b"B");
    assert_eq!(fs::read(v.v("src/b")).unwrap(), b"C");
    rustix::fs::renameat_with(CWD, v.v("src/b"), CWD, v.v("work2"), RenameFlags::EXCHANGE).unwrap();
    assert!(meta(&v.d("src/b")).is_dir() && meta(&v.d("work2")).is_file());
    assert_eq!(fs::read(v.v("src/b/inside")).unwrap(), b"i");
    assert_eq!(fs::read(v.v("work2")).unwrap(), b"C");

    // unlink; rmdir of an emptied directory.
    fs::remove_file(v.v("work2")).unwrap();
    fs::remove_file(v.v("src/b/inside")).unwrap();
    fs::remove_dir(v.v("src/b")).unwrap();
    assert!(!v.d("work2").exists() && !v.d("src/b").exists());
    assert_eq!(
        errno_of(&fs::symlink_metadata(v.v("src/b"))),
        Some(libc::ENOENT)
    );

    // symlink: a relative target, read back on both sides, and followed.
    std::os::unix::fs::symlink("a3", v.v("src/link")).unwrap();
    assert_eq!(fs::read_link(v.d("src/link")).unwrap(), Path::new("a3"));
    assert_eq!(fs::read_link(v.v("src/link")).unwrap(), Path::new("a3"));
    assert_eq!(fs::read(v.v("src/link")).unwrap(), b"B");

    // A hard link: one file on disk with two names, and one inode in the
    // view too (both names are ordinary), numbered as on the disk.
    fs::hard_link(v.v("src/a3"), v.v("src/hard")).unwrap();
    assert_eq!(meta(&v.d("src/a3")).ino(), meta(&v.d("src/hard")).ino());
    assert_eq!(meta(&v.d("src/hard")).nlink(), 2);
    assert_eq!(meta(&v.v("src/hard")).nlink(), 2);
    assert_eq!(meta(&v.v("src/a3")).ino(), meta(&v.v("src/hard")).ino());
    assert_eq!(meta(&v.v("src/hard")).ino(), meta(&v.d("src/hard")).ino());
    fs::write(v.v("src/hard"), "through the link").unwrap();
    assert_eq!(fs::read(v.v("src/a3")).unwrap(), b"through the link");
    assert_eq!(fs::read(v.d("src/a3")).unwrap(), b"through the link");

    // mknod of a FIFO.
    nix::unistd::mkfifo(
        &v.v("src/fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o640),
    )
    .unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &meta(&v.d("src/fifo")).file_type()
    ));
}

#[test]
fn attributes_times_and_xattrs_land_on_disk() {
    let Some(v) = writable_view("block") else {
        return;
    };
    fs::write(v.v("src/f"), "f").unwrap();
    fs::create_dir(v.v("dir")).unwrap();

    // chmod, of a file and a directory, and the set-group-ID bit.
    fs::set_permissions(v.v("src/f"), fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(owner_mode(&v.d("src/f")).2, 0o600);
    fs::set_permissions(v.v("dir"), fs::Permissions::from_mode(0o2770)).unwrap();
    assert_eq!(owner_mode(&v.d("dir")).2, 0o2770);

    // chown (root may give a file away), and of a symlink itself.
    std::os::unix::fs::chown(v.v("src/f"), Some(1234), Some(5678)).unwrap();
    assert_eq!(owner_mode(&v.d("src/f")), (1234, 5678, 0o600));
    std::os::unix::fs::symlink("f", v.v("src/l")).unwrap();
    std::os::unix::fs::lchown(v.v("src/l"), Some(77), Some(88)).unwrap();
    assert_eq!(
        (meta(&v.d("src/l")).uid(), meta(&v.d("src/l")).gid()),
        (77, 88)
    );
    assert_eq!(owner_mode(&v.d("src/f")).0, 1234, "lchown did not follow");

    // utimensat: given times (with nanoseconds), now, and omitted.
    let times = Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 123_456_789,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: 1_100_000_000,
            tv_nsec: 987_654_321,
        },
    };
    rustix::fs::utimensat(CWD, v.v("src/f"), &times, AtFlags::empty()).unwrap();
    let m = meta(&v.d("src/f"));
    assert_eq!((m.atime(), m.atime_nsec()), (1_000_000_000, 123_456_789));
    assert_eq!((m.mtime(), m.mtime_nsec()), (1_100_000_000, 987_654_321));
    let now_mtime_omit_atime = Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        },
    };
    rustix::fs::utimensat(CWD, v.v("src/f"), &now_mtime_omit_atime, AtFlags::empty()).unwrap();
    let m = meta(&v.d("src/f"));
    assert_eq!((m.atime(), m.atime_nsec()), (1_000_000_000, 123_456_789));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now - m.mtime()).abs() < 60, "mtime set to now");
    // The times of a symlink itself (lutimes).
    rustix::fs::utimensat(CWD, v.v("src/l"), &times, AtFlags::SYMLINK_NOFOLLOW).unwrap();
    assert_eq!(meta(&v.d("src/l")).mtime(), 1_100_000_000);

    // Extended attributes: set, create-only, replace-only, list, remove.
    let f = v.v("src/f");
    rustix::fs::setxattr(&f, "user.k", b"v1", rustix::fs::XattrFlags::empty()).unwrap();
    assert_eq!(xattr(&v.d("src/f"), "user.k").unwrap(), b"v1");
    assert_eq!(
        code(rustix::fs::setxattr(
            &f,
            "user.k",
            b"v2",
            rustix::fs::XattrFlags::CREATE
        )),
        libc::EEXIST
    );
    assert_eq!(
        code(rustix::fs::setxattr(
            &f,
            "user.none",
            b"v2",
            rustix::fs::XattrFlags::REPLACE
        )),
        libc::ENODATA
    );
    rustix::fs::setxattr(&f, "user.k", b"v2", rustix::fs::XattrFlags::REPLACE).unwrap();
    assert_eq!(xattr(&f, "user.k").unwrap(), b"v2");
    assert_eq!(xattr(&v.d("src/f"), "user.k").unwrap(), b"v2");
    let mut names = vec![0u8; 1024];
    let n = rustix::fs::listxattr(&f, &mut names[..]).unwrap();
    assert!(
        names[..n].split(|b| *b == 0).any(|s| s == b"user.k"),
        "{:?}",
        String::from_utf8_lossy(&names[..n])
    );
    rustix::fs::removexattr(&f, "user.k").unwrap();
    assert_eq!(xattr(&v.d("src/f"), "user.k"), None);
    assert_eq!(code(rustix::fs::removexattr(&f, "user.k")), libc::ENODATA);
    // On a directory, too.
    rustix::fs::setxattr(v.v("dir"), "user.d", b"x", rustix::fs::XattrFlags::empty()).unwrap();
    assert_eq!(xattr(&v.d("dir"), "user.d").unwrap(), b"x");
}

/// Runs a python3 one-liner that tries to take a lock of `kind` on `path`
/// without waiting and prints `locked` or `busy`.
fn try_lock_elsewhere(kind: &str, path: &Path) -> String {
    let script = r#"
import fcntl, os, struct, sys
kind, path = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR)
try:
    if kind == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    elif kind == "posix":
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0))
    print("locked")
except OSError:
    print("busy")
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script, kind])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Takes a lock of `kind` on `f` in this process.
fn lock_here(kind: &str, f: &File) {
    use nix::fcntl::{FcntlArg, fcntl};
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as i16;
    lock.l_whence = libc::SEEK_SET as i16;
    match kind {
        "flock" => {
            rustix::fs::flock(f, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap()
        }
        "posix" => {
            fcntl(f, FcntlArg::F_SETLK(&lock)).unwrap();
        }
        _ => {
            fcntl(f, FcntlArg::F_OFD_SETLK(&lock)).unwrap();
        }
    }
}

#[test]
fn locks_are_shared_by_processes_using_the_view() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let other = Mounted::new(&v.p, &["--writable"]);
    for kind in ["flock", "posix", "ofd"] {
        let rel = format!("src/{kind}.lock");
        fs::write(v.v(&rel), "").unwrap();
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(v.v(&rel))
            .unwrap();
        lock_here(kind, &f);
        assert_eq!(try_lock_elsewhere(kind, &v.v(&rel)), "busy", "{kind}");
        // The kernel keeps the view's locks for the view: a process that
        // opens the file on the disk, or through another view, does not
        // see them.
        assert_eq!(try_lock_elsewhere(kind, &v.d(&rel)), "locked", "{kind}");
        assert_eq!(
            try_lock_elsewhere(kind, &other.path(&rel)),
            "locked",
            "{kind}"
        );
        drop(f);
        assert_eq!(try_lock_elsewhere(kind, &v.v(&rel)), "locked", "{kind}");
    }
}

#[test]
fn shared_writable_mmap_reaches_the_disk() {
    if !fuse_available() {
        return;
    }
    use nix::sys::mman::{MapFlags, MsFlags, ProtFlags, mmap, msync, munmap};
    let v = Rw::new(fixture("block"), &[]);
    fs::write(v.v("src/map"), vec![0u8; 8192]).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(v.v("src/map"))
        .unwrap();
    let len = std::num::NonZeroUsize::new(8192).unwrap();
    // SAFETY: a fresh shared mapping of a file this test owns, written and
    // unmapped below while nothing else refers to it.
    let map = unsafe {
        mmap(
            None,
            len,
            ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            MapFlags::MAP_SHARED,
            f.as_fd(),
            0,
        )
    }
    .unwrap();
    // SAFETY: the mapping is 8192 bytes long and writable.
    let bytes = unsafe { std::slice::from_raw_parts_mut(map.as_ptr() as *mut u8, 8192) };
    bytes[..5].copy_from_slice(b"hello");
    bytes[4096..4101].copy_from_slice(b"world");
    // Another reader through the view sees the mapping's bytes at once.
    let mut seen = vec![0u8; 5];
    File::open(v.v("src/map"))
        .unwrap()
        .read_exact(&mut seen)
        .unwrap();
    assert_eq!(seen, b"hello");
    // SAFETY: `map` is the mapping made above, `len` bytes long.
    unsafe { msync(map, 8192, MsFlags::MS_SYNC) }.unwrap();
    // SAFETY: as above; it is not used afterwards.
    unsafe { munmap(map, 8192) }.unwrap();
    drop(f);
    let disk = fs::read(v.d("src/map")).unwrap();
    assert_eq!(&disk[..5], b"hello");
    assert_eq!(&disk[4096..4101], b"world");
}

#[test]
fn o_tmpfile_is_refused_with_eopnotsupp() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let before = disk_state(v.p.path());
    let r = rustix::fs::openat(
        CWD,
        v.v("src"),
        OFlags::TMPFILE | OFlags::RDWR,
        Mode::from_raw_mode(0o600),
    );
    // The FUSE protocol has no O_TMPFILE request the view could serve: the
    // kernel answers EOPNOTSUPP, which programs take as "fall back to a
    // named temporary file".
    assert_eq!(code(r), libc::EOPNOTSUPP);
    assert!(disk_diff(&before, &disk_state(v.p.path())).is_empty());
}

// ---------------------------------------------------------------------------
// Ordinary paths, as a caller that is not root.

/// What the caller that is not root does in the view, in order: each step
/// prints `name=errno` (0 for success); the test checks both the answers
/// and the disk. Run by [`as_caller_helper`] under `setpriv`.
fn caller_steps(view: &Path) -> Vec<(&'static str, i32)> {
    let v = |rel: &str| view.join(rel);
    let create = |rel: &str, mode: u32| {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(v(rel))
            .and_then(|mut f| f.write_all(b"mine\n"))
    };
    let chown =
        |rel: &str, uid: Option<u32>, gid: Option<u32>| std::os::unix::fs::chown(v(rel), uid, gid);
    let times = Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 0,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 0,
        },
    };
    vec![
        ("create mine/new", code(create("mine/new", 0o666))),
        (
            "mkdir mine/dir",
            code(fs::DirBuilder::new().mode(0o777).create(v("mine/dir"))),
        ),
        ("create shared/new", code(create("shared/new", 0o666))),
        ("mkdir shared/dir", code(fs::create_dir(v("shared/dir")))),
        (
            "chmod mine/new",
            code(fs::set_permissions(
                v("mine/new"),
                fs::Permissions::from_mode(0o640),
            )),
        ),
        (
            "chgrp mine/new to the extra group",
            code(chown("mine/new", None, Some(EXTRA_GROUP))),
        ),
        (
            "chown mine/new to root",
            code(chown("mine/new", Some(0), None)),
        ),
        (
            "chgrp mine/new to a foreign group",
            code(chown("mine/new", None, Some(0))),
        ),
        (
            "truncate mine/new",
            code(nix::unistd::truncate(&v("mine/new"), 100)),
        ),
        (
            "utimensat mine/new",
            code(rustix::fs::utimensat(
                CWD,
                v("mine/new"),
                &times,
                AtFlags::empty(),
            )),
        ),
        (
            "setxattr mine/new",
            code(rustix::fs::setxattr(
                v("mine/new"),
                "user.who",
                b"caller",
                rustix::fs::XattrFlags::empty(),
            )),
        ),
        (
            "rename mine/new",
            code(fs::rename(v("mine/new"), v("mine/renamed"))),
        ),
        (
            "link mine/renamed",
            code(fs::hard_link(v("mine/renamed"), v("mine/hard"))),
        ),
        (
            "symlink mine/sym",
            code(std::os::unix::fs::symlink("renamed", v("mine/sym"))),
        ),
        ("unlink mine/hard", code(fs::remove_file(v("mine/hard")))),
        // A set-ID file of root's that anyone may write: the caller may not
        // change its mode, but writing to it clears the set-ID bits (as on
        // a local filesystem).
        (
            "chmod setid",
            code(fs::set_permissions(
                v("setid"),
                fs::Permissions::from_mode(0o777),
            )),
        ),
        (
            "write setid",
            code(
                OpenOptions::new()
                    .append(true)
                    .open(v("setid"))
                    .and_then(|mut f| f.write_all(b"more\n")),
            ),
        ),
        // Refused by the disk's permissions, checked as the caller.
        ("create rootonly/new", code(create("rootonly/new", 0o644))),
        (
            "write README.md",
            code(OpenOptions::new().write(true).open(v("README.md"))),
        ),
        (
            "chmod README.md",
            code(fs::set_permissions(
                v("README.md"),
                fs::Permissions::from_mode(0o666),
            )),
        ),
        ("unlink README.md", code(fs::remove_file(v("README.md")))),
        (
            "utimensat README.md",
            code(rustix::fs::utimensat(
                CWD,
                v("README.md"),
                &times,
                AtFlags::empty(),
            )),
        ),
        // Protected, where the caller could otherwise write.
        (
            "create mine/CLAUDE.md",
            code(create("mine/CLAUDE.md", 0o644)),
        ),
        (
            "O_TMPFILE in mine",
            code(rustix::fs::openat(
                CWD,
                v("mine"),
                OFlags::TMPFILE | OFlags::RDWR,
                Mode::from_raw_mode(0o600),
            )),
        ),
    ]
}

/// The half of [`a_caller_that_is_not_root_acts_with_its_own_credentials`]
/// that runs as that caller (the test binary runs itself under `setpriv`).
#[test]
#[ignore = "run by a_caller_that_is_not_root_acts_with_its_own_credentials, as another user"]
fn as_caller_helper() {
    let Some(view) = std::env::var_os("SEAL_WRITE_TEST_VIEW") else {
        return;
    };
    // SAFETY: umask(2) cannot fail; this process runs nothing else.
    unsafe { libc::umask(0o022) };
    let (tid, comm) = this_thread();
    println!("RESULT tid={tid}");
    println!("RESULT comm={comm}");
    for (name, errno) in caller_steps(Path::new(&view)) {
        println!("RESULT {name}={errno}");
    }
}

#[test]
fn a_caller_that_is_not_root_acts_with_its_own_credentials() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    // Directories of the caller's own, a set-group-ID directory of its
    // extra group, and one it may not write.
    p.mkdir("mine").mkdir("shared").mkdir("rootonly");
    std::os::unix::fs::chown(p.path().join("mine"), Some(USER), Some(GROUP)).unwrap();
    std::os::unix::fs::chown(p.path().join("shared"), Some(0), Some(EXTRA_GROUP)).unwrap();
    fs::set_permissions(p.path().join("shared"), fs::Permissions::from_mode(0o2775)).unwrap();
    fs::set_permissions(p.path().join("rootonly"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(p.path().join("setid"), "root's\n").unwrap();
    fs::set_permissions(p.path().join("setid"), fs::Permissions::from_mode(0o6777)).unwrap();
    let v = Rw::new(p, &["--allow-other"]);
    let readme = disk_state(v.p.path())["README.md"].clone();

    let out = Command::new("setpriv")
        .arg(format!("--reuid={USER}"))
        .arg(format!("--regid={GROUP}"))
        .arg(format!("--groups={EXTRA_GROUP}"))
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", "as_caller_helper", "--ignored", "--nocapture"])
        .env("SEAL_WRITE_TEST_VIEW", &v.m.mountpoint)
        .current_dir("/")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: BTreeMap<String, String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .filter_map(|l| l.rsplit_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let want = [
        ("create mine/new", 0),
        ("mkdir mine/dir", 0),
        ("create shared/new", 0),
        ("mkdir shared/dir", 0),
        ("chmod mine/new", 0),
        ("chgrp mine/new to the extra group", 0),
        ("chown mine/new to root", libc::EPERM),
        ("chgrp mine/new to a foreign group", libc::EPERM),
        ("utimensat mine/new", 0),
        ("truncate mine/new", 0),
        ("setxattr mine/new", 0),
        ("rename mine/new", 0),
        ("link mine/renamed", 0),
        ("symlink mine/sym", 0),
        ("unlink mine/hard", 0),
        ("chmod setid", libc::EPERM),
        ("write setid", 0),
        ("create rootonly/new", libc::EACCES),
        ("write README.md", libc::EACCES),
        ("chmod README.md", libc::EPERM),
        ("unlink README.md", libc::EACCES),
        ("utimensat README.md", libc::EPERM),
        ("create mine/CLAUDE.md", libc::EROFS),
        ("O_TMPFILE in mine", libc::EOPNOTSUPP),
    ];
    let mut wrong = Vec::new();
    for (step, errno) in want {
        let got = results.get(step).map(String::as_str).unwrap_or("missing");
        if got != errno.to_string() {
            wrong.push(format!("{step}: want {}, got {got}", name_of(errno)));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}\n{stdout}");

    // Created files belong to the caller, with the mode it asked for minus
    // its umask; in the set-group-ID directory they take its group, and a
    // new directory there keeps the bit.
    assert_eq!(owner_mode(&v.d("mine/dir")), (USER, GROUP, 0o755));
    assert_eq!(owner_mode(&v.d("shared/new")), (USER, EXTRA_GROUP, 0o644));
    assert_eq!(owner_mode(&v.d("shared/dir")), (USER, EXTRA_GROUP, 0o2755));
    // The later steps on mine/new, now mine/renamed.
    let renamed = v.d("mine/renamed");
    assert_eq!(owner_mode(&renamed), (USER, EXTRA_GROUP, 0o640));
    assert_eq!(meta(&renamed).len(), 100);
    assert_eq!(meta(&renamed).mtime(), 1_000_000_000);
    assert_eq!(xattr(&renamed, "user.who").unwrap(), b"caller");
    assert_eq!(&fs::read(&renamed).unwrap()[..5], b"mine\n");
    assert!(!v.d("mine/new").exists() && !v.d("mine/hard").exists());
    let sym = meta(&v.d("mine/sym"));
    assert_eq!((sym.uid(), sym.gid()), (USER, GROUP));
    assert_eq!(
        fs::read_link(v.d("mine/sym")).unwrap(),
        Path::new("renamed")
    );
    assert_eq!(owner_mode(&v.d("setid")), (0, 0, 0o777));
    assert_eq!(fs::read(v.d("setid")).unwrap(), b"root's\nmore\n");
    // Refusals left everything as it was.
    assert!(!v.d("rootonly/new").exists());
    assert_eq!(disk_state(v.p.path())["README.md"], readme);
    assert!(!v.d("mine/CLAUDE.md").exists());
    let denied = v.deny_writes();
    let line = denied
        .iter()
        .find(|r| r["path"] == "./mine/CLAUDE.md")
        .unwrap_or_else(|| panic!("no deny-write line for mine/CLAUDE.md: {denied:#?}"));
    assert_eq!(line["pid"].to_string(), results["tid"], "{line}");
    assert_eq!(line["comm"], results["comm"].as_str(), "{line}");
}

// ---------------------------------------------------------------------------
// Protected paths: EROFS, the disk untouched, a deny-write line.

fn open_with(path: PathBuf, flags: i32) -> impl FnOnce() -> io::Result<()> {
    move || {
        rustix::fs::openat(
            CWD,
            &path,
            OFlags::from_bits_retain(flags as u32) | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map(drop)
        .map_err(io::Error::from)
    }
}

fn rename_with(from: PathBuf, to: PathBuf, flags: RenameFlags) -> impl FnOnce() -> io::Result<()> {
    move || rustix::fs::renameat_with(CWD, &from, CWD, &to, flags).map_err(io::Error::from)
}

fn set_times(path: PathBuf) -> impl FnOnce() -> io::Result<()> {
    move || {
        let t = rustix::fs::Timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        let times = Timestamps {
            last_access: t,
            last_modification: t,
        };
        rustix::fs::utimensat(CWD, &path, &times, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(io::Error::from)
    }
}

fn set_xattr(path: PathBuf) -> impl FnOnce() -> io::Result<()> {
    move || {
        rustix::fs::lsetxattr(&path, "user.x", b"1", rustix::fs::XattrFlags::empty())
            .map_err(io::Error::from)
    }
}

/// Every kind of change to the existing, visible file `rel`, each refused;
/// `ordinary` is an ordinary file to rename over it and swap with it.
fn every_file_change_refused(v: &Rw, rel: &str, ordinary: &str) {
    let p = v.v(rel);
    let o = v.v(ordinary);
    let at = |what: &str| format!("{what} {rel}");
    use libc::{O_APPEND, O_CREAT, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY};
    refused(v, &at("open O_WRONLY"), rel, open_with(p.clone(), O_WRONLY));
    refused(v, &at("open O_RDWR"), rel, open_with(p.clone(), O_RDWR));
    refused(
        v,
        &at("open O_APPEND"),
        rel,
        open_with(p.clone(), O_WRONLY | O_APPEND),
    );
    refused(
        v,
        &at("open O_RDONLY|O_TRUNC"),
        rel,
        open_with(p.clone(), O_RDONLY | O_TRUNC),
    );
    refused(
        v,
        &at("open O_CREAT|O_TRUNC"),
        rel,
        open_with(p.clone(), O_WRONLY | O_CREAT | O_TRUNC),
    );
    refused(v, &at("truncate"), rel, || {
        nix::unistd::truncate(&p, 0).map_err(io::Error::from)
    });
    refused(v, &at("chmod"), rel, || {
        fs::set_permissions(&p, fs::Permissions::from_mode(0o777))
    });
    refused(v, &at("chown"), rel, || {
        std::os::unix::fs::lchown(&p, Some(1234), Some(1234))
    });
    refused(v, &at("utimensat"), rel, set_times(p.clone()));
    refused(v, &at("setxattr"), rel, set_xattr(p.clone()));
    refused(v, &at("removexattr"), rel, || {
        rustix::fs::lremovexattr(&p, "user.x").map_err(io::Error::from)
    });
    refused(v, &at("unlink"), rel, || fs::remove_file(&p));
    refused(v, &at("rename out of"), rel, || {
        fs::rename(&p, v.v("src/moved-out"))
    });
    refused(v, &at("rename over"), rel, || fs::rename(&o, &p));
    refused(
        v,
        &at("RENAME_EXCHANGE with"),
        rel,
        rename_with(o.clone(), p.clone(), RenameFlags::EXCHANGE),
    );
    refused(v, &at("hard link out of"), rel, || {
        fs::hard_link(&p, v.v("src/linked-out"))
    });
    // Making a new name where a visible one exists is refused by the kernel
    // before the view is asked: EEXIST, which tells nothing new.
    let exists = |what: &str, op: &dyn Fn() -> io::Result<()>| {
        let before = disk_state(v.p.path());
        assert_eq!(code(op()), libc::EEXIST, "{}", at(what));
        assert!(disk_diff(&before, &disk_state(v.p.path())).is_empty());
    };
    exists("RENAME_NOREPLACE onto", &|| {
        rename_with(o.clone(), p.clone(), RenameFlags::NOREPLACE)()
    });
    exists("hard link over", &|| fs::hard_link(&o, &p));
    exists("symlink over", &|| {
        std::os::unix::fs::symlink("anything", &p)
    });
    // The file itself still reads as it did.
    assert_eq!(fs::read(&p).unwrap(), fs::read(v.d(rel)).unwrap());
}

/// Every kind of change in and of the existing, visible directory `rel`.
fn every_dir_change_refused(v: &Rw, rel: &str, member: &str) {
    let d = v.v(rel);
    let inside = |name: &str| format!("{rel}/{name}");
    refused(v, &format!("create in {rel}"), &inside("new.md"), || {
        File::create(d.join("new.md"))
    });
    refused(v, &format!("mkdir in {rel}"), &inside("sub"), || {
        fs::create_dir(d.join("sub"))
    });
    refused(v, &format!("symlink in {rel}"), &inside("l"), || {
        std::os::unix::fs::symlink("SKILL.md", d.join("l"))
    });
    refused(v, &format!("mkfifo in {rel}"), &inside("p"), || {
        nix::unistd::mkfifo(
            &d.join("p"),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .map_err(io::Error::from)
    });
    refused(
        v,
        &format!("hard link into {rel}"),
        &inside("alias"),
        || fs::hard_link(v.v("src/main.rs"), d.join("alias")),
    );
    refused(v, &format!("rename into {rel}"), &inside("main.rs"), || {
        fs::rename(v.v("src/main.rs"), d.join("main.rs"))
    });
    refused(v, &format!("rename inside {rel}"), &inside(member), || {
        fs::rename(d.join(member), d.join("renamed"))
    });
    refused(v, &format!("unlink in {rel}"), &inside(member), || {
        fs::remove_file(d.join(member))
    });
    refused(v, &format!("rmdir {rel}"), rel, || fs::remove_dir(&d));
    refused(v, &format!("rename {rel} away"), rel, || {
        fs::rename(&d, v.v("src/moved-dir"))
    });
    refused(v, &format!("chmod {rel}"), rel, || {
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777))
    });
    refused(v, &format!("utimensat {rel}"), rel, set_times(d.clone()));
    refused(v, &format!("setxattr {rel}"), rel, set_xattr(d.clone()));
}

/// Every way of making something at `rel`, which does not exist (or is
/// hidden): each refused with EROFS, never EEXIST.
fn every_making_refused(v: &Rw, rel: &str) {
    let p = v.v(rel);
    refused(v, &format!("create {rel}"), rel, || File::create(&p));
    refused(v, &format!("O_CREAT|O_EXCL {rel}"), rel, || {
        OpenOptions::new().write(true).create_new(true).open(&p)
    });
    refused(v, &format!("mkdir {rel}"), rel, || fs::create_dir(&p));
    refused(v, &format!("symlink {rel}"), rel, || {
        std::os::unix::fs::symlink("../src/main.rs", &p)
    });
    refused(v, &format!("mkfifo {rel}"), rel, || {
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o644))
            .map_err(io::Error::from)
    });
    refused(v, &format!("hard link to {rel}"), rel, || {
        fs::hard_link(v.v("src/main.rs"), &p)
    });
    refused(v, &format!("rename a file to {rel}"), rel, || {
        fs::rename(v.v("src/main.rs"), &p)
    });
    fs::create_dir_all(v.v("src/staged")).unwrap();
    fs::write(v.v("src/staged/SKILL.md"), "staged outside, moved in\n").unwrap();
    refused(v, &format!("rename a directory to {rel}"), rel, || {
        fs::rename(v.v("src/staged"), &p)
    });
    refused(
        v,
        &format!("RENAME_NOREPLACE to {rel}"),
        rel,
        rename_with(v.v("src/main.rs"), p.clone(), RenameFlags::NOREPLACE),
    );
    assert_eq!(
        errno_of(&fs::symlink_metadata(&p)),
        Some(libc::ENOENT),
        "{rel} is absent from the view"
    );
}

/// Each `(from, to, audited)`: a rename (or, with `link`, a hard link) of
/// `from` to `to`, refused for the protected side `audited`.
fn refused_moves(v: &Rw, link: bool, moves: &[(&str, &str, &str)]) {
    for (from, to, audited) in moves {
        let what = format!("{} {from} to {to}", if link { "link" } else { "rename" });
        refused(v, &what, audited, || match link {
            true => fs::hard_link(v.v(from), v.v(to)),
            false => fs::rename(v.v(from), v.v(to)),
        });
    }
}

#[test]
fn seal_json_is_immutable() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let bytes = fs::read(v.d("seal.json")).unwrap();
    every_file_change_refused(&v, "seal.json", "README.md");
    assert_eq!(fs::read(v.d("seal.json")).unwrap(), bytes);
    // A process other than this test is named in the audit line.
    let seen = v.deny_writes().len();
    let status = Command::new("sh")
        .args(["-c", "echo '{}' > seal.json"])
        .current_dir(&v.m.mountpoint)
        .status()
        .unwrap();
    assert!(!status.success());
    let new = v.deny_writes().split_off(seen);
    assert!(
        new.iter()
            .any(|r| r["path"] == "./seal.json" && r["comm"] == "sh"),
        "{new:#?}"
    );
    assert_eq!(fs::read(v.d("seal.json")).unwrap(), bytes);
}

#[test]
fn sealed_roots_and_their_files_are_immutable() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // A directory bundle of an agent surface, a single-file root, and a
    // root of a pattern no agent table knows.
    every_file_change_refused(&v, ".claude/skills/x/SKILL.md", "README.md");
    every_dir_change_refused(&v, ".claude/skills/x", "helper.py");
    every_file_change_refused(&v, "CLAUDE.md", "README.md");
    every_file_change_refused(&v, "prompts/a/p.md", "README.md");
    every_dir_change_refused(&v, "prompts/a", "p.md");
    // Still verified and served.
    assert_eq!(fs::read(v.v(".claude/skills/x/SKILL.md")).unwrap(), SKILL);
    assert_eq!(fs::read(v.v("CLAUDE.md")).unwrap(), CLAUDE);
    assert_eq!(fs::read(v.v("prompts/a/p.md")).unwrap(), PROMPT);
    // seal verify agrees: the three pinned roots are intact (the unpinned
    // skill of the fixture is what it reports).
    let (_, _, err) = v.p.seal(&["verify"], "");
    assert!(
        err.contains("3 verified, 1 unverified, 0 removed, 0 mismatch"),
        "{err}"
    );
}

#[test]
fn roots_and_artifacts_that_do_not_exist_yet_cannot_be_made() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // Roots a discovery pattern would produce: of an agent surface, and of
    // `prompts/*`, which only the lockfile names.
    every_making_refused(&v, ".claude/skills/new");
    every_making_refused(&v, "prompts/new");
    // A new command, hook settings, instruction files in any directory.
    every_making_refused(&v, ".claude/commands/y.md");
    every_making_refused(&v, ".claude/settings.json");
    every_making_refused(&v, "src/AGENTS.md");
    every_making_refused(&v, "GEMINI.md");
    fs::create_dir_all(v.v("src/deep/er")).unwrap();
    every_making_refused(&v, "src/deep/er/CLAUDE.md");
    every_making_refused(&v, "src/deep/er/AGENTS.override.md");
    // Agent directories that do not exist: the directories themselves may
    // be made (nothing loads from an empty one), nothing in them.
    fs::create_dir(v.v(".codex")).unwrap();
    assert!(meta(&v.d(".codex")).is_dir());
    every_making_refused(&v, ".codex/config.toml");
    fs::create_dir_all(v.v(".gemini")).unwrap();
    every_making_refused(&v, ".gemini/settings.json");
    // Any new entry directly in an agent directory.
    every_making_refused(&v, ".claude/notes.md");
    every_making_refused(&v, ".codex/prompts");
    // A new skill cannot be built up either.
    refused(
        &v,
        "mkdir -p .claude/skills/a/b",
        ".claude/skills/a",
        || fs::create_dir_all(v.v(".claude/skills/a/b")),
    );
}

#[test]
fn hidden_artifacts_stay_hidden_and_creating_over_them_is_erofs() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // Each exists on the disk, unpinned, hidden under block: making
    // anything there says EROFS, never EEXIST, and the path stays absent.
    for rel in [
        ".mcp.json",
        ".claude/commands/old.md",
        "docs/AGENTS.md",
        ".claude/skills/hidden",
        "guide/sub/CLAUDE.md",
    ] {
        every_making_refused(&v, rel);
    }
    assert_eq!(
        fs::read(v.d(".mcp.json")).unwrap(),
        b"{\"mcpServers\":{}}\n"
    );
    // The one way a hidden entry shows: a directory that lists as empty
    // cannot be removed (the disk says it is not empty).
    assert_eq!(fs::read_dir(v.v(".claude/commands")).unwrap().count(), 0);
    assert_eq!(
        errno_of(&fs::remove_dir(v.v(".claude/commands"))),
        Some(libc::ENOTEMPTY)
    );
}

#[test]
fn shown_artifacts_under_warn_are_immutable() {
    let Some(v) = writable_view("warn") else {
        return;
    };
    for rel in [".mcp.json", ".claude/commands/old.md", "docs/AGENTS.md"] {
        assert!(v.v(rel).exists(), "{rel} is shown under warn");
        every_file_change_refused(&v, rel, "README.md");
    }
    every_file_change_refused(&v, ".claude/skills/hidden/SKILL.md", "README.md");
    every_dir_change_refused(&v, ".claude/skills/hidden", "SKILL.md");
}

#[test]
fn containers_may_be_made_and_emptied_but_not_replaced_or_moved() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // `.codex` does not exist: a file, a symlink or a moved directory at
    // its place would decide what agents find there.
    refused(&v, "create .codex", ".codex", || {
        File::create(v.v(".codex"))
    });
    refused(&v, "symlink .codex", ".codex", || {
        std::os::unix::fs::symlink("src", v.v(".codex"))
    });
    refused(&v, "symlink .agents", ".agents", || {
        std::os::unix::fs::symlink("/tmp", v.v(".agents"))
    });
    fs::create_dir(v.v("src/cfg")).unwrap();
    fs::write(v.v("src/cfg/config.toml"), "model = \"evil\"\n").unwrap();
    // A directory renamed to one, and existing ones moved (or swapped).
    refused_moves(
        &v,
        false,
        &[
            ("src/cfg", ".codex", ".codex"),
            (".claude", "dot-claude", ".claude"),
            (".claude/skills", ".claude/skills2", ".claude/skills"),
            ("prompts", "prompts2", "prompts"),
        ],
    );
    refused(
        &v,
        "RENAME_EXCHANGE .claude with src/cfg",
        ".claude",
        rename_with(v.v("src/cfg"), v.v(".claude"), RenameFlags::EXCHANGE),
    );
    // Made, changed and removed as a directory: allowed.
    fs::create_dir(v.v(".codex")).unwrap();
    fs::set_permissions(v.v(".codex"), fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(owner_mode(&v.d(".codex")).2, 0o700);
    fs::remove_dir(v.v(".codex")).unwrap();
    assert!(!v.d(".codex").exists());
}

#[test]
fn a_symlink_or_file_where_claude_would_be_is_refused() {
    if !fuse_available() {
        return;
    }
    // A project with no agent directory yet.
    let p = Project::new();
    p.write(
        "seal.json",
        r#"{"version":1,"discovery":[],"policy":"block","bundles":{}}"#,
    )
    .write("notes/skills/x/SKILL.md", "made elsewhere\n");
    let v = Rw::new(p, &[]);
    refused(&v, "symlink .claude", ".claude", || {
        std::os::unix::fs::symlink("notes", v.v(".claude"))
    });
    refused(&v, "rename a directory to .claude", ".claude", || {
        fs::rename(v.v("notes"), v.v(".claude"))
    });
    refused(&v, "create a file .claude", ".claude", || {
        File::create(v.v(".claude"))
    });
    refused(&v, "symlink CLAUDE.md", "CLAUDE.md", || {
        std::os::unix::fs::symlink("notes/skills/x/SKILL.md", v.v("CLAUDE.md"))
    });
    fs::create_dir(v.v(".claude")).unwrap();
    assert!(meta(&v.d(".claude")).is_dir());
}

#[test]
fn renames_and_links_across_the_boundary_are_refused() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // Out of protected paths (the moved or linked name would carry sealed
    // bytes somewhere writable, or leave the root without them), and into
    // them (an ordinary file or directory moved or linked in).
    refused_moves(
        &v,
        false,
        &[
            (".claude/skills/x", "src/x", ".claude/skills/x"),
            ("prompts/a/p.md", "src/p.md", "prompts/a/p.md"),
            (
                "src/main.rs",
                ".claude/skills/x/evil.md",
                ".claude/skills/x/evil.md",
            ),
            ("docs/notes.md", "docs/CLAUDE.md", "docs/CLAUDE.md"),
        ],
    );
    refused_moves(
        &v,
        true,
        &[
            (
                ".claude/skills/x/SKILL.md",
                "src/SKILL.md",
                ".claude/skills/x/SKILL.md",
            ),
            ("src/main.rs", "prompts/a/evil.md", "prompts/a/evil.md"),
        ],
    );
    refused(
        &v,
        "swap an ordinary file with a bundle file",
        ".claude/skills/x/SKILL.md",
        rename_with(
            v.v("README.md"),
            v.v(".claude/skills/x/SKILL.md"),
            RenameFlags::EXCHANGE,
        ),
    );
    // A symlink at an ordinary place may point into a root; a change made
    // through it is a change at the root's own path.
    std::os::unix::fs::symlink("../.claude/skills", v.v("src/skills")).unwrap();
    refused(
        &v,
        "create through a symlink",
        ".claude/skills/x/new.md",
        || File::create(v.v("src/skills/x/new.md")),
    );
    refused(
        &v,
        "mkdir through a symlink",
        ".claude/skills/via-link",
        || fs::create_dir(v.v("src/skills/via-link")),
    );
}

#[test]
fn moving_a_directory_above_instruction_files_is_refused() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // guide/sub/CLAUDE.md and docs/AGENTS.md are hidden, and still count:
    // agents load instruction files by the directory they stand in.
    refused_moves(
        &v,
        false,
        &[
            ("guide", "guide2", "guide"),
            ("guide/sub", "src/sub", "guide/sub"),
            ("docs", "docs2", "docs"),
        ],
    );
    fs::create_dir(v.v("other")).unwrap();
    refused(
        &v,
        "RENAME_EXCHANGE of guide",
        "guide",
        rename_with(v.v("other"), v.v("guide"), RenameFlags::EXCHANGE),
    );
    // A directory holding none moves.
    fs::create_dir_all(v.v("src/deep")).unwrap();
    fs::write(v.v("src/deep/notes.md"), "n").unwrap();
    fs::rename(v.v("src"), v.v("source")).unwrap();
    assert_eq!(fs::read(v.d("source/deep/notes.md")).unwrap(), b"n");
}

// ---------------------------------------------------------------------------
// Open files whose name went away, and the project root.

#[test]
fn xattrs_and_attributes_of_the_project_root_land_on_it() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let root = v.m.mountpoint.clone();
    rustix::fs::setxattr(&root, "user.root", b"r", rustix::fs::XattrFlags::empty()).unwrap();
    assert_eq!(xattr(v.p.path(), "user.root").unwrap(), b"r");
    assert_eq!(xattr(&root, "user.root").unwrap(), b"r");
    let mut names = vec![0u8; 1024];
    let n = rustix::fs::listxattr(&root, &mut names[..]).unwrap();
    assert!(names[..n].split(|b| *b == 0).any(|s| s == b"user.root"));
    rustix::fs::removexattr(&root, "user.root").unwrap();
    assert_eq!(xattr(v.p.path(), "user.root"), None);
    fs::set_permissions(&root, fs::Permissions::from_mode(0o750)).unwrap();
    assert_eq!(owner_mode(v.p.path()).2, 0o750);
    rustix::fs::utimensat(CWD, &root, &fixed_times(), AtFlags::empty()).unwrap();
    assert_eq!(meta(v.p.path()).mtime(), 1_100_000_000);
}

fn fixed_times() -> Timestamps {
    Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 1_000_000_000,
            tv_nsec: 0,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: 1_100_000_000,
            tv_nsec: 0,
        },
    }
}

/// fchmod(2), futimens(2), fchown(2) and fsetxattr(2) reach the view
/// without a file handle, by inode; once the inode's name belongs to
/// another file (replaced or removed and made anew through the view), the
/// change must reach the open file itself or fail, never the file now at
/// that name.
#[test]
fn an_open_file_whose_name_went_away_is_changed_itself_or_not_at_all() {
    let Some(v) = writable_view("block") else {
        return;
    };
    type FileChange<'a> = (&'a str, &'a dyn Fn(&File) -> io::Result<()>);
    let changes: [FileChange; 4] = [
        ("fchmod", &|f| {
            f.set_permissions(fs::Permissions::from_mode(0o600))
        }),
        ("fchown", &|f| {
            std::os::unix::fs::fchown(f, Some(1234), Some(1234))
        }),
        ("futimens", &|f| {
            rustix::fs::futimens(f, &fixed_times()).map_err(io::Error::from)
        }),
        ("fsetxattr", &|f| {
            rustix::fs::fsetxattr(f, "user.gone", b"1", rustix::fs::XattrFlags::empty())
                .map_err(io::Error::from)
        }),
    ];
    for (i, (what, change)) in changes.iter().enumerate() {
        for replaced in [true, false] {
            let rel = format!("src/f{i}-{replaced}");
            fs::write(v.v(&rel), "the first file").unwrap();
            // Opened for writing (the daemon holds that file open) and for
            // reading (a handle the daemon may serve from a kept backing).
            for write in [true, false] {
                let name = format!("{rel}-{write}");
                fs::copy(v.v(&rel), v.v(&name)).unwrap();
                let open = OpenOptions::new()
                    .read(true)
                    .write(write)
                    .open(v.v(&name))
                    .unwrap();
                let first = File::open(v.d(&name)).unwrap();
                if replaced {
                    fs::write(v.v("src/tmp"), "the second file").unwrap();
                    fs::rename(v.v("src/tmp"), v.v(&name)).unwrap();
                } else {
                    fs::remove_file(v.v(&name)).unwrap();
                    fs::write(v.v(&name), "the second file").unwrap();
                }
                let second = disk_state(v.p.path())[&name].clone();
                let r = change(&open);
                assert_eq!(
                    disk_state(v.p.path())[&name],
                    second,
                    "{what} of an open file changed the file now named {name} \
                     (write: {write}, replaced: {replaced}); it answered {r:?}"
                );
                // Done to the open file (always when the daemon holds it
                // open for this handle: opened for writing), or refused as
                // stale.
                assert!(
                    r.is_ok() || !write,
                    "{what} of {name} (opened for writing): {r:?}"
                );
                match r {
                    Ok(()) => {
                        let m = first.metadata().unwrap();
                        let done = match *what {
                            "fchmod" => m.mode() & 0o777 == 0o600,
                            "fchown" => m.uid() == 1234,
                            "futimens" => m.mtime() == 1_100_000_000,
                            _ => {
                                let mut b = [0u8; 8];
                                rustix::fs::fgetxattr(&first, "user.gone", &mut b[..]).is_ok()
                            }
                        };
                        assert!(done, "{what} answered Ok but the open file is unchanged");
                    }
                    Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ESTALE), "{what}: {e}"),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Changes made on the disk, outside the view.

/// Polls `check` until it holds or `within` has passed; returns how long
/// it took, or None.
fn within(limit: Duration, check: impl Fn() -> bool) -> Option<Duration> {
    let start = Instant::now();
    loop {
        if check() {
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn changes_made_on_the_disk_show_up_in_the_view_within_a_second() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // The kernel may keep entries and attributes of ordinary paths for one
    // second (the view's TTL); allow scheduling slack on a busy machine.
    let second = Duration::from_millis(1500);
    // Known to the kernel first, so that its caches are what is tested.
    fs::write(v.v("src/edited.txt"), "version 1\n").unwrap();
    fs::write(v.v("src/replaced.txt"), "version 1\n").unwrap();
    fs::write(v.v("src/removed.txt"), "x").unwrap();
    fs::create_dir(v.v("src/moved")).unwrap();
    for rel in [
        "src/edited.txt",
        "src/replaced.txt",
        "src/removed.txt",
        "src/moved",
    ] {
        meta(&v.v(rel));
    }

    // An edit in place (an editor that rewrites the file).
    fs::write(v.d("src/edited.txt"), "version 2, longer\n").unwrap();
    // An atomic replacement (git checkout, most editors).
    fs::write(v.d("src/.replaced.tmp"), "version 2 by rename\n").unwrap();
    fs::rename(v.d("src/.replaced.tmp"), v.d("src/replaced.txt")).unwrap();
    // New, removed and renamed entries.
    fs::write(v.d("src/new.txt"), "new on disk\n").unwrap();
    fs::remove_file(v.d("src/removed.txt")).unwrap();
    fs::rename(v.d("src/moved"), v.d("src/moved2")).unwrap();

    let read = |rel: &str| fs::read(v.v(rel)).ok();
    let listed = |rel: &str| {
        fs::read_dir(v.v("src"))
            .unwrap()
            .any(|e| e.unwrap().file_name() == rel)
    };
    // File contents at once (an open reads the disk's file).
    assert_eq!(
        read("src/edited.txt").as_deref(),
        Some(b"version 2, longer\n".as_slice())
    );
    assert_eq!(
        read("src/replaced.txt").as_deref(),
        Some(b"version 2 by rename\n".as_slice())
    );
    let checks: [(&str, &dyn Fn() -> bool); 5] = [
        ("edited size", &|| meta(&v.v("src/edited.txt")).len() == 18),
        ("new file", &|| {
            read("src/new.txt").as_deref() == Some(b"new on disk\n".as_slice()) && listed("new.txt")
        }),
        ("removed file", &|| {
            errno_of(&fs::symlink_metadata(v.v("src/removed.txt"))) == Some(libc::ENOENT)
                && !listed("removed.txt")
        }),
        ("renamed directory, old name", &|| {
            errno_of(&fs::symlink_metadata(v.v("src/moved"))) == Some(libc::ENOENT)
        }),
        ("renamed directory, new name", &|| {
            v.v("src/moved2").is_dir()
        }),
    ];
    for (what, check) in checks {
        assert!(
            within(second, check).is_some(),
            "{what}: not visible in the view after {second:?}"
        );
    }
    // A change made through the view after the disk changed lands on the
    // new file, not on the one the kernel knew before.
    fs::write(v.v("src/replaced.txt"), "version 3 through the view\n").unwrap();
    assert_eq!(
        fs::read(v.d("src/replaced.txt")).unwrap(),
        b"version 3 through the view\n"
    );
}

/// What the kernel knows of a directory through the view: its listing and
/// each entry's (size, mode, mtime), as a walk sees them.
/// A listed name that cannot be looked up (in the view, the listing and
/// the entry are forgotten by two notices: a check between them sees both)
/// is (u64::MAX, 0, 0), which no file on the disk matches.
fn known(dir: &Path) -> BTreeMap<String, (u64, u32, i64)> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let seen = fs::symlink_metadata(e.path())
                .map_or((u64::MAX, 0, 0), |m| (m.len(), m.mode(), m.mtime()));
            (e.file_name().to_string_lossy().into_owned(), seen)
        })
        .collect()
}

#[test]
fn kernel_caches_of_ordinary_paths_are_kept_and_forgotten_at_once_on_a_disk_change() {
    // The kernel keeps ordinary entries, attributes and listings of watched
    // directories for ten minutes; the directory feed's listener must make
    // it forget each at the change, not at the end of those minutes.
    let Some(v) = writable_view("block") else {
        return;
    };
    for rel in [
        "w/a.txt",
        "w/b.txt",
        "w/gone.txt",
        "w/sub/c.txt",
        "w/re/d.txt",
    ] {
        fs::create_dir_all(v.d(rel).parent().unwrap()).unwrap();
        fs::write(v.d(rel), "x").unwrap();
    }
    let disk = |rel: &str| known(&v.d(rel));
    let view = |rel: &str| known(&v.v(rel));
    // Walked twice past the one-second TTL of unwatched paths: the second
    // walk is served from what the kernel keeps.
    for _ in 0..2 {
        for dir in ["w", "w/sub", "w/re"] {
            assert_eq!(view(dir), disk(dir));
        }
        std::thread::sleep(Duration::from_millis(1100));
    }
    let changes: [(&str, &dyn Fn()); 8] = [
        ("content grows", &|| {
            fs::write(v.d("w/a.txt"), "longer now").unwrap()
        }),
        ("mode changes", &|| {
            fs::set_permissions(v.d("w/b.txt"), fs::Permissions::from_mode(0o600)).unwrap()
        }),
        ("time stamps change", &|| {
            File::options()
                .write(true)
                .open(v.d("w/b.txt"))
                .unwrap()
                .set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000))
                .unwrap()
        }),
        ("a file is created", &|| {
            fs::write(v.d("w/new.txt"), "new").unwrap()
        }),
        ("a file is removed", &|| {
            fs::remove_file(v.d("w/gone.txt")).unwrap()
        }),
        ("a file in a subdirectory changes", &|| {
            fs::write(v.d("w/sub/c.txt"), "changed below").unwrap()
        }),
        ("a directory is renamed", &|| {
            fs::rename(v.d("w/sub"), v.d("w/sub2")).unwrap()
        }),
        ("a directory is removed and made again", &|| {
            fs::remove_dir_all(v.d("w/re")).unwrap();
            fs::create_dir(v.d("w/re")).unwrap();
            fs::write(v.d("w/re/e.txt"), "in the new directory").unwrap();
        }),
    ];
    for (what, change) in changes {
        change();
        // Every directory agrees with the disk: the same entries and
        // attributes where it exists, no entry where it does not.
        let fresh = within_100ms(|| {
            ["w", "w/sub", "w/sub2", "w/re"].iter().all(|dir| {
                if v.d(dir).is_dir() {
                    view(dir) == disk(dir)
                } else {
                    errno_of(&fs::symlink_metadata(v.v(dir))) == Some(libc::ENOENT)
                }
            })
        });
        assert!(
            fresh,
            "{what}: the view still shows what the kernel kept\n view {:?}\n disk {:?}",
            view("w"),
            disk("w")
        );
    }
    // A name looked up and not found is remembered by the kernel in a
    // watched directory (git probes every object name before writing it):
    // made on the disk, it must be found by name at once, with no listing
    // of its directory to refresh the kernel's entries.
    fs::create_dir(v.d("n")).unwrap();
    fs::write(v.d("n/here.txt"), "x").unwrap();
    for _ in 0..2 {
        assert_eq!(
            errno_of(&fs::symlink_metadata(v.v("n/late.txt"))),
            Some(libc::ENOENT)
        );
        std::thread::sleep(Duration::from_millis(1100));
    }
    fs::write(v.d("n/late.txt"), "made on the disk").unwrap();
    assert!(
        within_100ms(|| fs::symlink_metadata(v.v("n/late.txt")).is_ok_and(|m| m.len() == 16)),
        "a name made on the disk is still not found where a lookup found none"
    );
    // Changes through the view, each followed at once by a listing (which
    // the kernel keeps) and changes of the same names on the disk: the
    // events of the view's own changes are passed over (the kernel knows
    // them), the disk's never.
    let steps: [(&str, &dyn Fn()); 4] = [
        ("made in the view, removed on the disk", &|| {
            fs::write(v.v("w/x.txt"), "view").unwrap();
            view("w");
            fs::remove_file(v.d("w/x.txt")).unwrap();
        }),
        ("removed in the view, made again on the disk", &|| {
            fs::remove_file(v.v("w/a.txt")).unwrap();
            view("w");
            fs::write(v.d("w/a.txt"), "made on the disk").unwrap();
        }),
        ("renamed in the view, renamed back on the disk", &|| {
            fs::rename(v.v("w/b.txt"), v.v("w/b2.txt")).unwrap();
            view("w");
            fs::rename(v.d("w/b2.txt"), v.d("w/b.txt")).unwrap();
        }),
        (
            "a directory made in the view, replaced on the disk",
            &|| {
                fs::create_dir(v.v("w/vd")).unwrap();
                view("w");
                fs::remove_dir(v.d("w/vd")).unwrap();
                fs::write(v.d("w/vd"), "a file now").unwrap();
            },
        ),
    ];
    // Each name as a lookup sees it (not only as a listing does).
    let named = |root: &dyn Fn(&str) -> PathBuf| -> Vec<Option<(u64, u32)>> {
        ["w/x.txt", "w/a.txt", "w/b.txt", "w/b2.txt", "w/vd"]
            .iter()
            .map(|rel| {
                fs::symlink_metadata(root(rel))
                    .ok()
                    .map(|m| (m.len(), m.mode()))
            })
            .collect()
    };
    for (what, step) in steps {
        step();
        assert!(
            within_100ms(
                || view("w") == disk("w") && named(&|r: &str| v.v(r)) == named(&|r: &str| v.d(r))
            ),
            "{what}: the view still shows what the kernel kept\n view {:?}\n disk {:?}",
            view("w"),
            disk("w")
        );
    }
    // A nested instruction file appears on the disk in a directory whose
    // listing the kernel keeps: unpinned, it must stay hidden there.
    fs::write(v.d("w/AGENTS.md"), "written on the disk\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(!view("w").contains_key("AGENTS.md"), "{:?}", view("w"));
    assert_eq!(
        errno_of(&fs::symlink_metadata(v.v("w/AGENTS.md"))),
        Some(libc::ENOENT)
    );
    // Pinned, it shows at once: nothing in that directory changed, so only
    // a listing the kernel never kept can show it.
    let (code, _, err) = v.p.seal(&["pin", "w/AGENTS.md"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        within_100ms(|| view("w").contains_key("AGENTS.md")),
        "pinned, still not listed: {:?}",
        view("w")
    );
}

#[test]
fn fstat_of_an_open_file_whose_name_went_away_describes_that_file() {
    let Some(v) = writable_view("block") else {
        return;
    };
    fs::write(v.v("src/unlinked"), "eleven byte").unwrap();
    fs::write(v.v("src/replaced"), "eleven byte").unwrap();
    let unlinked = File::open(v.v("src/unlinked")).unwrap();
    let replaced = File::open(v.v("src/replaced")).unwrap();
    fs::remove_file(v.v("src/unlinked")).unwrap();
    fs::write(v.v("src/new"), "new").unwrap();
    fs::rename(v.v("src/new"), v.v("src/replaced")).unwrap();
    // Past the attribute TTL, so that the kernel asks the view.
    std::thread::sleep(Duration::from_millis(1200));
    assert_eq!(unlinked.metadata().map(|m| m.len()).ok(), Some(11));
    assert_eq!(replaced.metadata().map(|m| m.len()).ok(), Some(11));
}

// ---------------------------------------------------------------------------
// What the writable view does not protect (docs/SECURITY.md says so; each
// statement there is checked here).

/// git on the disk, outside any view, without system or global config.
fn disk_git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
}

#[test]
fn git_side_doors_are_immutable_and_no_repository_is_made() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    // The project's repository, a nested one (a vendored checkout) and a
    // submodule's git directory, all made on the disk.
    assert!(disk_git(p.path(), &["init", "-q"]).status.success());
    p.write(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
        .write(".git/modules/sub/config", "[core]\n")
        .write(".git/modules/sub/hooks/post-checkout", "#!/bin/sh\n")
        .write(".git/worktrees/w/HEAD", "ref: refs/heads/w\n")
        .write(".gitmodules", "")
        .write("vendor/lib/x.c", "int x;\n")
        .write("fixtures/bare/refs/heads/.keep", "")
        .write("fixtures/bare/objects/.keep", "");
    assert!(
        disk_git(&p.path().join("vendor/lib"), &["init", "-q"])
            .status
            .success()
    );
    let v = Rw::new(p, &[]);

    // Every kind of change to each side door is refused and audited.
    every_file_change_refused(&v, ".git/config", "src/main.rs");
    every_file_change_refused(&v, ".git/modules/sub/config", "src/main.rs");
    every_file_change_refused(&v, "vendor/lib/.git/config", "src/main.rs");
    every_file_change_refused(&v, ".gitmodules", "src/main.rs");
    every_dir_change_refused(&v, ".git/hooks", "pre-commit");
    every_dir_change_refused(&v, ".git/modules/sub/hooks", "post-checkout");
    every_dir_change_refused(&v, ".git/info", "exclude");
    // The issue's side doors: a commondir pointing at a git directory the
    // agent built, and a repository of its own in a subdirectory (git
    // init; a gitfile; a bare repository's HEAD).
    every_making_refused(&v, ".git/commondir");
    every_making_refused(&v, ".git/worktrees/w/commondir");
    every_making_refused(&v, "src/.git");
    every_making_refused(&v, "fixtures/bare/HEAD");
    refused(&v, "rename .git away", ".git", || {
        fs::rename(v.v(".git"), v.v("src/dot-git"))
    });
    refused(&v, "rewrite a gitfile", "vendor/lib/.git", || {
        fs::rename(v.v("vendor/lib/.git"), v.v("vendor/lib/old-git"))
    });
    let out = Command::new("git")
        .args(["init", "-q"])
        .current_dir(v.v("src"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(!out.status.success(), "git init in src must fail");
    assert!(!v.d("src/.git").exists());
    for r in v.deny_writes() {
        if r["path"].as_str().is_some_and(|p| p.contains(".git")) {
            assert_eq!(r["policy_source"], "built-in", "{r}");
        }
    }
    // Everything else of git works through the view: objects, refs, the
    // index, logs.
    fs::write(v.v("src/main.rs"), "fn main() { }\n").unwrap();
    let commit = disk_git(&v.v(""), &["add", "src"]);
    assert!(commit.status.success(), "{commit:?}");
    let commit = disk_git(
        &v.v(""),
        &["commit", "-q", "--no-verify", "-m", "in the view"],
    );
    assert!(commit.status.success(), "{commit:?}");
    let log = disk_git(v.p.path(), &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "in the view\n");
}

/// Gemini CLI and Qwen Code read the first `.env` they meet walking up
/// from where they start into their environment (a `GEMINI_SYSTEM_MD` there
/// replaces the system prompt, a `BASH_ENV` runs before every shell command
/// of the session), Aider its commands: no change through the view makes
/// or changes one, at any depth. Removing one, and a directory of that name
/// (a Python virtual environment), stay the agent's.
#[test]
fn agents_env_files_are_never_made_or_changed() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    p.write(".env", "GEMINI_API_KEY=k\n")
        .write("packages/web/.env", "PORT=3000\n")
        .write("packages/api/.env", "PORT=4000\n")
        .write("notes.md", "a prompt of the agent's own\n");
    let v = Rw::new(p, &[]);
    use libc::{O_APPEND, O_CREAT, O_RDWR, O_TRUNC, O_WRONLY};
    for rel in [".env", "packages/web/.env"] {
        let e = v.v(rel);
        let at = |what: &str| format!("{what} {rel}");
        refused(
            &v,
            &at("open O_WRONLY"),
            rel,
            open_with(e.clone(), O_WRONLY),
        );
        refused(&v, &at("open O_RDWR"), rel, open_with(e.clone(), O_RDWR));
        refused(
            &v,
            &at("open O_APPEND"),
            rel,
            open_with(e.clone(), O_WRONLY | O_APPEND),
        );
        refused(
            &v,
            &at("open O_CREAT|O_TRUNC"),
            rel,
            open_with(e.clone(), O_WRONLY | O_CREAT | O_TRUNC),
        );
        refused(&v, &at("truncate"), rel, || {
            nix::unistd::truncate(&e, 0).map_err(io::Error::from)
        });
        refused(&v, &at("chmod"), rel, || {
            fs::set_permissions(&e, fs::Permissions::from_mode(0o600))
        });
        refused(&v, &at("utimensat"), rel, set_times(e.clone()));
        refused(&v, &at("setxattr"), rel, set_xattr(e.clone()));
        refused(&v, &at("rename over"), rel, || {
            fs::rename(v.v("notes.md"), &e)
        });
        refused(
            &v,
            &at("RENAME_EXCHANGE with"),
            rel,
            rename_with(v.v("notes.md"), e.clone(), RenameFlags::EXCHANGE),
        );
        // A second name of the same file would be a way to change it.
        refused(&v, &at("hard link out of"), rel, || {
            fs::hard_link(&e, v.v("env-alias"))
        });
        assert_eq!(fs::read(&e).unwrap(), fs::read(v.d(rel)).unwrap(), "{rel}");
    }
    // Removed, it may not come back, as a file or a link, whatever its
    // case (a case-folding directory would find it).
    fs::remove_file(v.v("packages/api/.env")).unwrap();
    assert!(!v.d("packages/api/.env").exists());
    for rel in ["packages/api/.env", "src/.env", "packages/api/.ENV"] {
        let e = v.v(rel);
        refused(&v, &format!("create {rel}"), rel, || File::create(&e));
        refused(&v, &format!("symlink {rel}"), rel, || {
            std::os::unix::fs::symlink("../../notes.md", &e)
        });
        refused(&v, &format!("hard link to {rel}"), rel, || {
            fs::hard_link(v.v("notes.md"), &e)
        });
        refused(&v, &format!("rename a file to {rel}"), rel, || {
            fs::rename(v.v("notes.md"), &e)
        });
    }
    for r in v.deny_writes() {
        assert_eq!(r["policy_source"], "built-in", "{r}");
    }
    // What applications keep beside it, and a virtual environment named
    // `.env`, are ordinary.
    fs::write(v.v(".env.local"), "DEBUG=1\n").unwrap();
    assert_eq!(fs::read(v.d(".env.local")).unwrap(), b"DEBUG=1\n");
    fs::create_dir(v.v("src/.env")).unwrap();
    fs::create_dir(v.v("src/.env/bin")).unwrap();
    fs::write(v.v("src/.env/bin/activate"), "# venv\n").unwrap();
    fs::write(v.v("src/.env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    assert!(v.d("src/.env/bin/activate").is_file());
    fs::remove_dir_all(v.v("src/.env")).unwrap();
    assert!(!v.d("src/.env").exists());
}

#[test]
fn what_the_writable_view_does_not_protect() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    // An MCP config (pinned) that starts a script outside every bundle.
    p.write(
        ".mcp.json",
        r#"{"mcpServers":{"local":{"command":"python3","args":["tools/server.py"]}}}"#,
    )
    .write("tools/server.py", "print('server')\n");
    p.pin(&[".mcp.json"]);
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(p.path())
        .status()
        .unwrap();
    assert!(git.success());
    let v = Rw::new(p, &[]);

    // The script is ordinary: written through the view. The config is not.
    fs::write(v.v("tools/server.py"), "print('changed')\n").unwrap();
    assert_eq!(
        fs::read(v.d("tools/server.py")).unwrap(),
        b"print('changed')\n"
    );
    refused(&v, "write .mcp.json", ".mcp.json", || {
        OpenOptions::new().append(true).open(v.v(".mcp.json"))
    });

    // (git's configuration and hooks are not ordinary: see
    // git_side_doors_are_immutable_and_no_repository_is_made.)
    drop(v);

    // Hard links made on the disk, outside the view: the alias is an
    // ordinary path, so writing through it changes the sealed file's bytes;
    // the bundle then fails verification and the view hides it: the change
    // is detected, the changed bytes are never served as verified.
    let p = fixture("block");
    fs::hard_link(
        p.path().join(".claude/skills/x/SKILL.md"),
        p.path().join("src/alias.md"),
    )
    .unwrap();
    let v = Rw::new(p, &[]);
    assert_eq!(fs::read(v.v(".claude/skills/x/SKILL.md")).unwrap(), SKILL);
    // Two inodes in the view: the sealed name is decided on its own.
    assert_ne!(
        meta(&v.v(".claude/skills/x/SKILL.md")).ino(),
        meta(&v.v("src/alias.md")).ino()
    );
    fs::write(v.v("src/alias.md"), "rewritten through a hard link\n").unwrap();
    assert_eq!(
        fs::read(v.d(".claude/skills/x/SKILL.md")).unwrap(),
        b"rewritten through a hard link\n"
    );
    assert_eq!(
        errno_of(&fs::read(v.v(".claude/skills/x/SKILL.md"))),
        Some(libc::ENOENT),
        "the changed bundle is hidden"
    );

    // Inode numbers: the disk's. The names of a hard-linked ordinary file
    // are one inode, which outlives any one of its names.
    fs::write(v.v("src/one"), "1").unwrap();
    fs::hard_link(v.v("src/one"), v.v("src/two")).unwrap();
    let (one, two) = (meta(&v.v("src/one")), meta(&v.v("src/two")));
    assert_eq!(one.ino(), two.ino());
    assert_eq!((one.nlink(), two.nlink()), (2, 2));
    assert_eq!(one.ino(), meta(&v.d("src/one")).ino());
    assert_ne!(one.dev(), meta(&v.d("src/one")).dev());
    fs::remove_file(v.v("src/one")).unwrap();
    fs::rename(v.v("src/two"), v.v("src/three")).unwrap();
    fs::write(v.v("src/three"), "written after its first name went").unwrap();
    assert_eq!(
        fs::read(v.d("src/three")).unwrap(),
        b"written after its first name went"
    );
    let three = meta(&v.v("src/three"));
    assert_eq!((three.ino(), three.nlink()), (one.ino(), 1));
    // A listing's d_ino is the view's number where the kernel learns the
    // entry from it (the first part of a listing) or knew it, the disk's
    // for the other entries of a large directory: the same numbers for
    // files with one name.
    fs::create_dir(v.d("many")).unwrap();
    for i in 0..1000 {
        fs::write(v.d(&format!("many/f{i}")), "").unwrap();
    }
    let listed: Vec<(u64, String)> = fs::read_dir(v.v("many"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let d_ino = std::os::unix::fs::DirEntryExt::ino(&e);
            (d_ino, format!("many/{}", e.file_name().to_string_lossy()))
        })
        .collect();
    for (d_ino, rel) in listed {
        assert_eq!(d_ino, meta(&v.d(&rel)).ino(), "{rel}");
        assert_eq!(d_ino, meta(&v.v(&rel)).ino(), "{rel}");
    }
    drop(v);

    // So git's index, which records inode numbers (not devices), stays
    // current in a new view and on the host after it: neither `git status`
    // rewrites it.
    let p = Project::new();
    p.write(
        "seal.json",
        r#"{"version":1,"discovery":[],"policy":"block","bundles":{}}"#,
    );
    for i in 0..50 {
        p.write(&format!("src/f{i}.txt"), format!("{i}\n"));
    }
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // Files older than the index, so that none is "racily clean" (which
    // would make git re-check it anyway).
    std::thread::sleep(Duration::from_millis(1100));
    git(p.path(), &["init", "-q"]);
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-q", "-m", "x"]);
    git(p.path(), &["status", "--porcelain"]);
    let index = |p: &Project| meta(&p.path().join(".git/index")).ino();
    let before = index(&p);
    git(p.path(), &["status", "--porcelain"]);
    assert_eq!(
        index(&p),
        before,
        "on the host alone, status keeps the index"
    );
    let v = Rw::new(p, &[]);
    assert_eq!(git(&v.m.mountpoint, &["status", "--porcelain"]), "");
    assert_eq!(index(&v.p), before, "the index was rewritten in the view");
    assert_eq!(git(v.p.path(), &["status", "--porcelain"]), "");
    assert_eq!(index(&v.p), before, "the index was rewritten on the host");
}

// ---------------------------------------------------------------------------
// seal run (through its command line only).

/// `seal run ARGS` in the project, with a home of its own: (code, stdout,
/// stderr).
fn seal_run(p: &Project, args: &[&str]) -> (i32, String, String) {
    let home = scratch();
    let out = Command::new(seal_bin())
        .arg("run")
        .args(args)
        .current_dir(p.path())
        .env("HOME", home.path())
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn seal_run_serves_a_writable_view_to_the_target_user() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    p.mkdir("mine");
    let nobody = 65534;
    std::os::unix::fs::chown(p.path().join("mine"), Some(nobody), Some(nobody)).unwrap();
    let claude = fs::read(p.path().join("CLAUDE.md")).unwrap();
    let readme = fs::read(p.path().join("README.md")).unwrap();
    let script = "id -u; umask 022; echo hi > mine/f && mkdir mine/d && ln -s f mine/l \
                  && echo made; echo x >> CLAUDE.md 2>/dev/null && echo WROTE-CLAUDE; \
                  echo x > README.md 2>/dev/null && echo WROTE-README; \
                  mkdir .claude/skills/mine 2>/dev/null && echo MADE-SKILL; \
                  echo x > mine/CLAUDE.md 2>/dev/null && echo WROTE-NESTED; true";
    let (code, out, err) = seal_run(&p, &["--user", "nobody", "--", "sh", "-c", script]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("writable"), "seal run says which view: {err}");
    assert_eq!(out, "65534\nmade\n", "{err}");
    for rel in ["mine/f", "mine/d", "mine/l"] {
        let m = meta(&p.path().join(rel));
        assert_eq!((m.uid(), m.gid()), (nobody, nobody), "{rel}");
    }
    assert_eq!(owner_mode(&p.path().join("mine/f")).2, 0o644);
    assert_eq!(fs::read(p.path().join("mine/f")).unwrap(), b"hi\n");
    assert_eq!(fs::read(p.path().join("CLAUDE.md")).unwrap(), claude);
    assert_eq!(fs::read(p.path().join("README.md")).unwrap(), readme);
    assert!(!p.path().join(".claude/skills/mine").exists());
    // Where the user could write, protection still holds.
    assert!(!p.path().join("mine/CLAUDE.md").exists());
}

/// Files of `dir/mine` for the set-ID test: owned by nobody (group root,
/// which nobody is not in, or nobody's own), with their modes.
fn set_id_files(dir: &Path) {
    let nobody = 65534;
    fs::create_dir_all(dir.join("mine")).unwrap();
    std::os::unix::fs::chown(dir.join("mine"), Some(nobody), Some(nobody)).unwrap();
    for (name, gid, mode) in [
        ("s6777", 0, 0o6777),
        ("s4777", 0, 0o4777),
        ("g2767", 0, 0o2767),
        ("g2777", 0, 0o2777),
        ("plain", 0, 0o777),
        ("late", nobody, 0o666),
    ] {
        let f = dir.join("mine").join(name);
        fs::write(&f, "a\n").unwrap();
        // chown first: it drops set-ID bits.
        std::os::unix::fs::chown(&f, Some(nobody), Some(gid)).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(mode)).unwrap();
    }
}

#[test]
fn a_write_by_another_user_drops_set_id_bits_as_natively() {
    // The view lets the filesystem drop set-ID bits on write (the kernel
    // would otherwise ask for security.capability before every write): the
    // disk must drop them as for the writer, including through a descriptor
    // opened before the bits were set, and `stat` right after must show it.
    if !fuse_available() {
        return;
    }
    let script = "for f in s6777 s4777 g2767 g2777 plain; do echo b >> mine/$f; \
                  stat -c \"$f %a\" mine/$f; done; \
                  exec 3>>mine/late; chmod 6777 mine/late; echo b >&3; exec 3>&-; \
                  stat -c \"late %a\" mine/late";
    let native = scratch();
    fs::set_permissions(native.path(), fs::Permissions::from_mode(0o755)).unwrap();
    set_id_files(native.path());
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(native.path())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let native_out = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The bits go for this writer (no CAP_FSETID, not in group root).
    assert!(native_out.contains("s6777 777\n"), "{native_out}");
    assert!(native_out.contains("g2767 767\n"), "{native_out}");
    assert!(native_out.contains("late 777\n"), "{native_out}");

    let p = fixture("block");
    set_id_files(p.path());
    let (code, out, err) = seal_run(&p, &["--user", "nobody", "--", "sh", "-c", script]);
    assert_eq!(code, 0, "{err}");
    // The view makes no set-ID program: its chmod 6777 of `late` is refused.
    let expected = native_out.replace("late 777\n", "late 666\n");
    assert_eq!(out, expected, "modes seen in the view after each write");
    assert_eq!(owner_mode(&p.path().join("mine/late")).2, 0o666);
    for name in ["s6777", "s4777", "g2767", "g2777", "plain"] {
        let rel = format!("mine/{name}");
        assert_eq!(
            owner_mode(&p.path().join(&rel)),
            owner_mode(&native.path().join(&rel)),
            "{rel} on the disk"
        );
    }
}

#[test]
fn seal_run_read_only_changes_nothing() {
    if !fuse_available() {
        return;
    }
    let p = fixture("block");
    let before = disk_state(p.path());
    let script = "echo x > src/new.txt 2>/dev/null && echo WROTE; \
                  echo y >> README.md 2>/dev/null && echo APPENDED; \
                  mkdir work 2>/dev/null && echo MADE; cat README.md";
    let (code, out, err) = seal_run(&p, &["--read-only", "--", "sh", "-c", script]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("read-only"), "seal run says which view: {err}");
    assert_eq!(out, "readme\n");
    let diff = disk_diff(&before, &disk_state(p.path()));
    assert!(diff.is_empty(), "{diff}");
}

/// The view keeps a passthrough backing of every file it opened (until the
/// kernel forgets the inode); a backing that held the file open for
/// writing would make it busy for exec(2) on the disk (ETXTBSY) long after
/// every writer closed it: a binary built through the view, or a script
/// merely read through it, could not be run outside.
#[test]
fn files_written_or_read_through_the_view_stay_executable_on_the_disk() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // Written through the view (created, then opened again for writing).
    fs::copy("/bin/true", v.v("src/built")).unwrap();
    fs::set_permissions(v.v("src/built"), fs::Permissions::from_mode(0o755)).unwrap();
    OpenOptions::new()
        .append(true)
        .open(v.v("src/built"))
        .unwrap();
    // Read through the view.
    fs::write(v.d("src/script.sh"), "#!/bin/sh\necho ran\n").unwrap();
    fs::set_permissions(v.d("src/script.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        fs::read(v.v("src/script.sh")).unwrap(),
        b"#!/bin/sh\necho ran\n"
    );
    // The kernel sends the release of a handle after the caller's close
    // returns, and without passthrough the daemon writes the file through a
    // writable descriptor it drops only then: the disk's copy may be busy
    // for that moment (CI saw it once). Two seconds still catch a backing
    // kept writable until the kernel forgets the inode, minutes later.
    for rel in ["src/built", "src/script.sh"] {
        for at in [v.d(rel), v.v(rel)] {
            let deadline = Instant::now() + Duration::from_secs(2);
            let out = loop {
                let out = Command::new(&at).output();
                let busy = matches!(&out, Err(e) if e.raw_os_error() == Some(libc::ETXTBSY));
                if !(busy && Instant::now() < deadline) {
                    break out;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            assert!(
                out.as_ref().is_ok_and(|o| o.status.success()),
                "{} could not be run: {out:?}",
                at.display()
            );
        }
    }
}

/// The access modes (`O_ACCMODE` of `/proc/PID/fdinfo/N`) of the
/// descriptors process `pid` holds on `file`.
fn access_modes_held(pid: u32, file: &Path) -> Vec<i32> {
    let file = fs::canonicalize(file).unwrap();
    let mut modes = Vec::new();
    for fd in fs::read_dir(format!("/proc/{pid}/fd")).unwrap().flatten() {
        if fs::read_link(fd.path()).ok().as_deref() != Some(file.as_path()) {
            continue;
        }
        let info = fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .map(|f| i32::from_str_radix(f.trim(), 8).unwrap())
            .unwrap();
        modes.push(flags & libc::O_ACCMODE);
    }
    modes
}

/// A file passed through is written by the kernel, so the daemon keeps no
/// writable descriptor of it: the release that drops the daemon's handle
/// comes after the caller's close returns, and such a descriptor would keep
/// the file busy for exec(2) on the disk (ETXTBSY) a moment longer.
/// Truncating and allocating through the open file still work.
#[test]
fn the_daemon_keeps_no_writable_descriptor_of_a_file_passed_through() {
    let Some(v) = writable_view("block") else {
        return;
    };
    if std::env::var_os("SEAL_TEST_NO_PASSTHROUGH").is_some() {
        eprintln!("no passthrough in this mode: the daemon writes the file itself");
        return;
    }
    let mut created = File::create(v.v("src/built")).unwrap();
    created.write_all(b"made").unwrap();
    let mut opened = OpenOptions::new()
        .append(true)
        .open(v.v("src/built"))
        .unwrap();
    opened.write_all(b" and appended").unwrap();
    let held = access_modes_held(v.m.pid(), &v.d("src/built"));
    assert!(
        !held.is_empty(),
        "the daemon holds no descriptor of the file"
    );
    assert!(
        held.iter().all(|&mode| mode == libc::O_RDONLY),
        "the daemon holds the file writable: access modes {held:?}"
    );
    created.set_len(4).unwrap();
    rustix::fs::fallocate(&opened, FallocateFlags::empty(), 0, 8).unwrap();
    drop((created, opened));
    assert_eq!(fs::read(v.d("src/built")).unwrap(), b"made\0\0\0\0");
}

#[test]
fn protection_holds_while_seal_json_is_invalid_or_missing() {
    let Some(v) = writable_view("block") else {
        return;
    };
    let good = fs::read(v.d("seal.json")).unwrap();
    fs::write(v.d("seal.json"), "{ not json").unwrap();
    // The places come from the last valid lockfile.
    every_making_refused(&v, "prompts/new");
    every_making_refused(&v, ".claude/skills/new");
    refused(&v, "write seal.json", "seal.json", || {
        OpenOptions::new().append(true).open(v.v("seal.json"))
    });
    fs::remove_file(v.d("seal.json")).unwrap();
    refused(&v, "create seal.json", "seal.json", || {
        File::create(v.v("seal.json"))
    });
    every_making_refused(&v, "prompts/new");
    fs::write(v.d("seal.json"), &good).unwrap();
    // Ordinary paths stay writable throughout.
    fs::write(v.v("src/still.txt"), "ok").unwrap();
    assert_eq!(fs::read(v.d("src/still.txt")).unwrap(), b"ok");
}

#[test]
fn a_file_open_for_reading_in_the_view_stays_executable_on_the_disk() {
    let Some(v) = writable_view("block") else {
        return;
    };
    fs::copy("/bin/true", v.d("src/tool")).unwrap();
    fs::set_permissions(v.d("src/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    let reader = File::open(v.v("src/tool")).unwrap();
    let out = Command::new(v.d("src/tool")).output();
    drop(reader);
    assert!(out.is_ok_and(|o| o.status.success()));
}

// ---------------------------------------------------------------------------
// Paths longer than the kernel takes in one call, and files with two names.

#[test]
fn paths_longer_than_path_max_from_the_project_root_work() {
    let Some(v) = writable_view("block") else {
        return;
    };
    // 22 levels of 200-byte names: 3,620 bytes from a directory four levels
    // down, over 4,096 from the project's root (where the view resolves).
    let name = "d".repeat(200);
    let levels: Vec<&str> = std::iter::repeat_n(name.as_str(), 22).collect();
    // Made on the disk a directory at a time (the whole path is too long
    // for one call there too).
    let mut disk =
        rustix::fs::open(v.d("src"), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for level in &levels {
        rustix::fs::mkdirat(&disk, *level, Mode::from_raw_mode(0o755)).unwrap();
        disk = rustix::fs::openat(
            &disk,
            *level,
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
    }
    let on_disk = |name: &str| {
        rustix::fs::openat(
            &disk,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW,
            Mode::empty(),
        )
        .map(File::from)
    };
    let mut f = File::from(
        rustix::fs::openat(
            &disk,
            "f",
            OFlags::WRONLY | OFlags::CREATE,
            Mode::from_raw_mode(0o644),
        )
        .unwrap(),
    );
    f.write_all(b"deep\n").unwrap();
    drop(f);

    let top = v.v(&format!("src/{}", levels[..4].join("/")));
    let dir = rustix::fs::open(&top, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    let below = format!("{}/f", levels[4..].join("/"));
    assert!(below.len() < 4096);
    let st = rustix::fs::statat(&dir, below.as_str(), AtFlags::SYMLINK_NOFOLLOW).unwrap();
    assert_eq!(st.st_size, 5);
    rustix::fs::chmodat(
        &dir,
        below.as_str(),
        Mode::from_raw_mode(0o600),
        AtFlags::empty(),
    )
    .unwrap();
    let f = on_disk("f").unwrap();
    assert_eq!(f.metadata().unwrap().mode() & 0o7777, 0o600);
    let w = rustix::fs::openat(
        &dir,
        below.as_str(),
        OFlags::WRONLY | OFlags::APPEND,
        Mode::empty(),
    )
    .unwrap();
    rustix::io::write(&w, b"more\n").unwrap();
    let mut read = String::new();
    on_disk("f").unwrap().read_to_string(&mut read).unwrap();
    assert_eq!(read, "deep\nmore\n");
    let made = format!("{}/new", levels[4..].join("/"));
    rustix::fs::mkdirat(&dir, made.as_str(), Mode::from_raw_mode(0o755)).unwrap();
    assert!(on_disk("new").unwrap().metadata().unwrap().is_dir());
}

#[test]
fn a_file_with_two_names_shows_one_state_through_both() {
    let Some(v) = writable_view("block") else {
        return;
    };
    fs::write(v.v("src/one"), "x").unwrap();
    assert_eq!(meta(&v.v("src/one")).nlink(), 1);
    fs::hard_link(v.v("src/one"), v.v("src/two")).unwrap();
    // Each name learns the link at once, and a change through one shows
    // through the other (the kernel keeps no attributes of such a file).
    assert_eq!(meta(&v.v("src/one")).nlink(), 2);
    assert_eq!(meta(&v.v("src/two")).nlink(), 2);
    fs::set_permissions(v.v("src/two"), fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(meta(&v.v("src/one")).mode() & 0o7777, 0o600);
    fs::remove_file(v.v("src/two")).unwrap();
    assert_eq!(meta(&v.v("src/one")).nlink(), 1);
}
