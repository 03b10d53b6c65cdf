//! Shared helpers for the tests that mount a real FUSE filesystem or run
//! `seal run`: a project builder, the `seal` binary, and a mount guard that
//! unmounts on drop.
//!
//! These tests need root and `/dev/fuse`. Outside CI they are skipped with a
//! message when either is missing; with `CI=true` they fail instead, so that
//! a CI run can never pass without exercising them.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The `seal` the tests run: the one with the tests' hooks (no machine
/// policy but the one SEAL_TEST_POLICY_PATH names). A plain `cargo build`
/// links a `seal` without them at the same path; that is refused here rather
/// than let a test read the host's /etc/seal (`cargo build --all-targets`
/// puts the test one back).
pub fn seal_bin() -> &'static str {
    static CHECKED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    let bin = env!("CARGO_BIN_EXE_seal");
    CHECKED.get_or_init(|| {
        let out = Command::new(bin).arg("--version").output().unwrap();
        let version = String::from_utf8_lossy(&out.stdout);
        assert!(
            version.contains("with test hooks"),
            "{bin} is a binary without the tests' hooks ({}): a plain `cargo build` replaced it; \
             run `cargo build --all-targets` (scripts/test.sh does)",
            version.trim()
        );
    });
    bin
}

/// True when FUSE tests can run here. Under `CI=true`, panics instead of
/// returning false.
pub fn fuse_available() -> bool {
    let root = nix::unistd::geteuid().is_root();
    let fuse = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .is_ok();
    if root && fuse {
        return true;
    }
    let why =
        format!("FUSE tests need root and /dev/fuse (root: {root}, /dev/fuse usable: {fuse})");
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{why}; CI must run them");
    }
    eprintln!("SKIPPED: {why}");
    false
}

/// True when the kernel serves FUSE over io_uring here (the `fuse`
/// module's `enable_uring`) and the mode matrix has not turned the rings
/// off (`SEAL_TEST_NO_RINGS`). Under `CI=true`, a kernel without the rings
/// on panics instead: CI runs the suite with them (.ci/run turns them on).
pub fn rings_available() -> bool {
    if std::env::var_os("SEAL_TEST_NO_RINGS").is_some() {
        return false;
    }
    let on = std::fs::read_to_string("/sys/module/fuse/parameters/enable_uring")
        .is_ok_and(|v| v.trim() == "Y");
    if !on && std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!(
            "FUSE over io_uring is off (/sys/module/fuse/parameters/enable_uring); CI must run with it"
        );
    }
    if !on {
        eprintln!("SKIPPED: FUSE over io_uring is off (/sys/module/fuse/parameters/enable_uring)");
    }
    on
}

/// Runs `git args` in `dir` as a test's committer (no signing, branch
/// `main`), asserting it succeeds; its stdout.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `cmd` with `stdin` fed to it and stdout/stderr captured.
pub fn output_with_stdin(cmd: &mut Command, stdin: &str) -> std::process::Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // A command that stops before reading its input (a refused policy
    // file) may be gone before this is written: its output says the rest.
    let written = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// A temporary project directory with helpers to write files.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        Project {
            dir: tempfile::Builder::new()
                .prefix("sealfs-project-")
                .tempdir()
                .unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Project {
        let p = self.dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    /// Runs `seal ARGS` in the project with `stdin`, returning (code, stdout, stderr).
    pub fn seal(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        let out = output_with_stdin(
            Command::new(seal_bin()).args(args).current_dir(self.path()),
            stdin,
        );
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `seal init` answered with yes; panics unless it succeeds.
    pub fn init(&self, extra: &[&str]) {
        let mut args = vec!["init"];
        args.extend_from_slice(extra);
        let (code, _, err) = self.seal(&args, "y\n");
        assert_eq!(code, 0, "seal init failed: {err}");
    }

    /// `seal pin` answered with yes; panics unless it succeeds.
    pub fn pin(&self, paths: &[&str]) {
        let mut args = vec!["pin"];
        args.extend_from_slice(paths);
        let (code, _, err) = self.seal(&args, "y\n");
        assert_eq!(code, 0, "seal pin failed: {err}");
    }
}

/// Whether the mode matrix (`SEAL_TEST_MOUNT_MODE`, see scripts/test.sh)
/// adds `flag` to every mount of this run.
pub fn mount_mode_has(flag: &str) -> bool {
    std::env::var("SEAL_TEST_MOUNT_MODE").is_ok_and(|m| m.split_whitespace().any(|a| a == flag))
}

/// Whether `seal mount` with `extra` serves the writable view.
fn writable(extra: &[&str]) -> bool {
    extra.iter().any(|a| *a == "--writable" || *a == "-w")
        || extra
            .windows(2)
            .any(|w| w[0] == "-o" && w[1].split(',').any(|o| o == "rw"))
}

/// Whether the kernel opens files itself in a mount made with `extra`
/// (`--kernel-opens`, asked by the test or by the mode matrix; read-only
/// views only).
fn kernel_opens(extra: &[&str]) -> bool {
    !writable(extra) && (extra.contains(&"--kernel-opens") || mount_mode_has("--kernel-opens"))
}

/// A running `seal mount`; unmounts and reaps the daemon on drop.
pub struct Mounted {
    pub child: Option<Child>,
    pub mountpoint: PathBuf,
    _mount_dir: Option<tempfile::TempDir>,
    pub stderr_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// Whether the kernel opens files itself (`--kernel-opens`). There a
    /// change on the disk reaches what the kernel keeps through the change
    /// feed's listener, not at the next open: for up to 100 ms after a
    /// change, a new open may still serve the approved bytes the kernel
    /// kept (docs/SECURITY.md).
    pub kernel_opens: bool,
}

impl Mounted {
    /// Mounts `project` on a fresh temporary directory with extra arguments.
    pub fn new(project: &Project, extra: &[&str]) -> Mounted {
        let dir = tempfile::Builder::new()
            .prefix("sealfs-view-")
            .tempdir()
            .unwrap();
        let mountpoint = dir.path().to_path_buf();
        let mut m = Mounted::at(project, &mountpoint, extra);
        m._mount_dir = Some(dir);
        m
    }

    /// Mounts `project` at `mountpoint`.
    pub fn at(project: &Project, mountpoint: &Path, extra: &[&str]) -> Mounted {
        Mounted::at_logging(project, mountpoint, extra, None)
    }

    /// Mounts `project` on a fresh temporary directory, the daemon's logs
    /// filtered by `seal_log` (as `SEAL_LOG` spells it) into [`Mounted::stderr`].
    pub fn logging(project: &Project, extra: &[&str], seal_log: &str) -> Mounted {
        let dir = tempfile::Builder::new()
            .prefix("sealfs-view-")
            .tempdir()
            .unwrap();
        let mut m = Mounted::at_logging(project, dir.path(), extra, Some(seal_log));
        m._mount_dir = Some(dir);
        m
    }

    fn at_logging(
        project: &Project,
        mountpoint: &Path,
        extra: &[&str],
        seal_log: Option<&str>,
    ) -> Mounted {
        let mut command = Command::new(seal_bin());
        if let Some(filter) = seal_log {
            command.env("SEAL_LOG", filter);
        }
        // The mode matrix (scripts/test.sh): every mount of a run in one
        // mode, on top of what the test asks for.
        let mode = std::env::var("SEAL_TEST_MOUNT_MODE").unwrap_or_default();
        // `--kernel-opens` serves read-only views only: a writable mount of
        // that run stays in the default mode.
        let mode_args: Vec<&str> = mode
            .split_whitespace()
            .filter(|a| !extra.contains(a))
            .filter(|a| !(writable(extra) && *a == "--kernel-opens"))
            .collect();
        let mut child = command
            .arg("mount")
            .arg(mountpoint)
            .args(extra)
            .args(&mode_args)
            .current_dir(project.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("serving the sealed view") {
                    let _ = tx.send(());
                }
                sink.lock().unwrap().push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if rx.recv_timeout(Duration::from_millis(50)).is_ok() {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "seal mount exited with {status}: {:?}",
                    lines.lock().unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "seal mount did not become ready: {:?}",
                lines.lock().unwrap()
            );
        }
        Mounted {
            child: Some(child),
            mountpoint: mountpoint.to_path_buf(),
            _mount_dir: None,
            stderr_lines: lines,
            kernel_opens: kernel_opens(extra),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.mountpoint.join(rel)
    }

    /// Whether `holds` after a change on the disk: at once (the view
    /// decides every open), or where the kernel opens files itself (see
    /// [`Mounted::kernel_opens`]) within 100 ms.
    pub fn after_change(&self, mut holds: impl FnMut() -> bool) -> bool {
        match self.kernel_opens {
            false => holds(),
            true => within_100ms(holds),
        }
    }

    /// Unmounts and waits for the daemon; returns its exit code.
    pub fn unmount(&mut self) -> Option<i32> {
        let _ = Command::new("umount")
            .arg(&self.mountpoint)
            .stderr(Stdio::null())
            .status();
        let mut child = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = Command::new("umount")
                    .arg("-l")
                    .arg(&self.mountpoint)
                    .status();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.unmount();
        }
        // A daemon killed by a test leaves a stale mount: clear it.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mountpoint)
            .stderr(Stdio::null())
            .status();
    }
}

// ---------------------------------------------------------------------------
// Helpers for the `seal mount` tests (tests/mount*.rs).

impl Project {
    /// Reads a file of the project from the disk.
    pub fn read(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path().join(rel)).unwrap()
    }

    /// Removes a file (or an empty directory) of the project.
    pub fn remove(&self, rel: &str) -> &Project {
        let p = self.path().join(rel);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p).unwrap(),
            _ => std::fs::remove_file(&p).unwrap(),
        }
        self
    }

    /// Creates a symlink `rel` pointing at `target`.
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) -> &Project {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }

    /// Creates a FIFO `rel`.
    pub fn mkfifo(&self, rel: &str) -> &Project {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        nix::unistd::mkfifo(&p, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
        self
    }

    /// Creates a directory `rel` (and its parents).
    pub fn mkdir(&self, rel: &str) -> &Project {
        std::fs::create_dir_all(self.path().join(rel)).unwrap();
        self
    }

    /// The canonical path of the project.
    pub fn canonical(&self) -> PathBuf {
        std::fs::canonicalize(self.path()).unwrap()
    }
}

impl Mounted {
    /// The daemon's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("daemon still owned").id()
    }

    /// Sends `signal` to the daemon.
    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.pid() as i32), signal).unwrap();
    }

    /// Waits up to `timeout` for the daemon to exit on its own; returns its
    /// exit code (None when killed by a signal). Panics on timeout.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let mut child = self.child.take().expect("daemon still owned");
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("seal mount did not exit within {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The daemon's stderr so far, one string.
    pub fn stderr(&self) -> String {
        self.stderr_lines.lock().unwrap().join("\n")
    }
}

/// True when a FUSE filesystem is mounted exactly at `path` in this mount
/// namespace (per /proc/self/mountinfo).
pub fn fuse_mounted_at(path: &Path) -> bool {
    let want = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let want = want.to_string_lossy().replace(' ', "\\040");
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    info.lines().any(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            return false;
        };
        fields.get(4) == Some(&want.as_str())
            && fields.get(sep + 1).is_some_and(|t| t.starts_with("fuse"))
    })
}

/// A fresh temporary directory that is not inside any project (audit logs,
/// scratch files).
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sealfs-scratch-")
        .tempdir()
        .unwrap()
}

/// The records of a JSON-lines audit log: its complete lines (a daemon
/// still serving may be writing the last one as it is read).
pub fn audit_records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad audit line {l:?}: {e}")))
        .collect()
}

/// The errno of a failed result (None on success).
pub fn errno_of<T>(r: &std::io::Result<T>) -> Option<i32> {
    r.as_ref().err().map(|e| e.raw_os_error().unwrap_or(-1))
}

/// Runs `cmd` with a timeout; returns (exit code, stdout, stderr). Panics if
/// it does not end in time (it is killed first).
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> (i32, Vec<u8>, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).unwrap();
        String::from_utf8_lossy(&v).into_owned()
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (
        status.code().unwrap_or(-1),
        out_t.join().unwrap(),
        err_t.join().unwrap(),
    )
}

/// What a tree walk records about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// `d`, `f`, `l`, `p` (FIFO) or `?`.
    pub kind: char,
    pub mode: u32,
    pub size: u64,
    pub mtime: (i64, i64),
    /// File bytes' length and a cheap checksum when contents were read, or the
    /// error of the read; the target of a symlink.
    pub detail: String,
}

/// Walks `root` without following symlinks. With `contents`, every regular
/// file is read (through the view this is an open, so a gated one).
pub fn tree(root: &Path, contents: bool) -> std::collections::BTreeMap<String, Node> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![String::new()];
    while let Some(rel) = stack.pop() {
        let dir = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel)
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => panic!("read_dir {}: {e}", dir.display()),
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let full = root.join(&path);
            let md = match std::fs::symlink_metadata(&full) {
                Ok(m) => m,
                Err(e) => panic!("{path} is listed but lstat fails: {e}"),
            };
            let ft = md.file_type();
            let kind = if ft.is_dir() {
                'd'
            } else if ft.is_file() {
                'f'
            } else if ft.is_symlink() {
                'l'
            } else if std::os::unix::fs::FileTypeExt::is_fifo(&ft) {
                'p'
            } else {
                '?'
            };
            let detail = match kind {
                'l' => std::fs::read_link(&full)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                'f' if contents => match std::fs::read(&full) {
                    Ok(bytes) => format!("{} bytes, sum {:016x}", bytes.len(), checksum(&bytes)),
                    Err(e) => format!("read error: {e}"),
                },
                _ => String::new(),
            };
            if kind == 'd' {
                stack.push(path.clone());
            }
            out.insert(
                path,
                Node {
                    kind,
                    mode: md.mode(),
                    size: md.size(),
                    mtime: (md.mtime(), md.mtime_nsec()),
                    detail,
                },
            );
        }
    }
    out
}

/// FNV-1a, enough to tell two byte strings apart in a diff.
pub fn checksum(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// True when `path` is `hidden` or below it.
pub fn under(path: &str, hidden: &str) -> bool {
    path == hidden || path.starts_with(&format!("{hidden}/"))
}

/// Asserts that the view at `mountpoint` lists exactly the disk tree of
/// `project` minus `hidden` (and everything below them), with the same
/// kinds, modes, sizes, times and (when `contents`) bytes, within 100 ms
/// (a change on the disk reaches listings the kernel read a moment before
/// through the change feed's listener); and that a lookup of every hidden
/// path through the view fails with ENOENT.
pub fn assert_view(project: &Path, mountpoint: &Path, hidden: &[&str], contents: bool) {
    let disk = tree(project, contents);
    let expected: std::collections::BTreeMap<_, _> = disk
        .into_iter()
        .filter(|(p, _)| !hidden.iter().any(|h| under(p, h)))
        .collect();
    // Then once more, to report what differs.
    within_100ms(|| tree(mountpoint, contents) == expected);
    assert_view_now(project, mountpoint, hidden, contents);
}

/// [`assert_view`] at once.
fn assert_view_now(project: &Path, mountpoint: &Path, hidden: &[&str], contents: bool) {
    let disk = tree(project, contents);
    for h in hidden {
        assert!(
            disk.contains_key(*h),
            "test bug: hidden path {h} is not on the disk"
        );
    }
    let expected: std::collections::BTreeMap<_, _> = disk
        .into_iter()
        .filter(|(p, _)| !hidden.iter().any(|h| under(p, h)))
        .collect();
    let seen = tree(mountpoint, contents);
    if seen != expected {
        let mut diff = String::new();
        for (p, n) in &expected {
            match seen.get(p) {
                None => diff.push_str(&format!("  missing in view: {p} {n:?}\n")),
                Some(m) if m != n => {
                    diff.push_str(&format!("  differs: {p}\n    disk {n:?}\n    view {m:?}\n"))
                }
                _ => {}
            }
        }
        for (p, n) in &seen {
            if !expected.contains_key(p) {
                diff.push_str(&format!("  extra in view: {p} {n:?}\n"));
            }
        }
        panic!("the view differs from the disk minus {hidden:?}:\n{diff}");
    }
    for h in hidden {
        let r = std::fs::symlink_metadata(mountpoint.join(h));
        assert_eq!(
            errno_of(&r),
            Some(libc::ENOENT),
            "lookup of hidden {h} through the view: {r:?}"
        );
    }
}

/// The names a readdir of `dir` lists, sorted.
pub fn listed_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether `holds` becomes true within 100 ms (polled every 2 ms): what the
/// view promises for a lookup after a change on the disk (the change feed's
/// listener tells the kernel to forget what it remembered).
pub fn within_100ms(mut holds: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_millis(100);
    loop {
        if holds() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A stderr (or stdout) for a child whose reader is already gone, as with
/// `2>&1 | head -c0`: every write to it fails with `EPIPE`, deterministically
/// (closing the reader after the spawn would race the child's first write).
pub fn closed_pipe() -> Stdio {
    let (reader, writer) = nix::unistd::pipe().expect("pipe");
    drop(reader);
    Stdio::from(writer)
}
