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

pub fn seal_bin() -> &'static str {
    env!("CARGO_BIN_EXE_seal")
}

/// True when FUSE tests can run here. Under `CI=true`, panics instead of
/// returning false.
pub fn fuse_available() -> bool {
    let root = nix::unistd::geteuid().is_root();
    let fuse = std::fs::OpenOptions::new().read(true).write(true).open("/dev/fuse").is_ok();
    if root && fuse {
        return true;
    }
    let why = format!("FUSE tests need root and /dev/fuse (root: {root}, /dev/fuse usable: {fuse})");
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{why}; CI must run them");
    }
    eprintln!("SKIPPED: {why}");
    false
}

/// A temporary project directory with helpers to write files.
pub struct Project {
    pub dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Project {
        Project {
            dir: tempfile::Builder::new().prefix("sealfs-project-").tempdir().unwrap(),
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
        let mut child = Command::new(seal_bin())
            .args(args)
            .current_dir(self.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
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

/// A running `seal mount`; unmounts and reaps the daemon on drop.
pub struct Mounted {
    pub child: Option<Child>,
    pub mountpoint: PathBuf,
    _mount_dir: Option<tempfile::TempDir>,
    pub stderr_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Mounted {
    /// Mounts `project` on a fresh temporary directory with extra arguments.
    pub fn new(project: &Project, extra: &[&str]) -> Mounted {
        let dir = tempfile::Builder::new().prefix("sealfs-view-").tempdir().unwrap();
        let mountpoint = dir.path().to_path_buf();
        let mut m = Mounted::at(project, &mountpoint, extra);
        m._mount_dir = Some(dir);
        m
    }

    /// Mounts `project` at `mountpoint`.
    pub fn at(project: &Project, mountpoint: &Path, extra: &[&str]) -> Mounted {
        let mut child = Command::new(seal_bin())
            .arg("mount")
            .arg(mountpoint)
            .args(extra)
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
                panic!("seal mount exited with {status}: {:?}", lines.lock().unwrap());
            }
            assert!(Instant::now() < deadline, "seal mount did not become ready: {:?}", lines.lock().unwrap());
        }
        Mounted {
            child: Some(child),
            mountpoint: mountpoint.to_path_buf(),
            _mount_dir: None,
            stderr_lines: lines,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.mountpoint.join(rel)
    }

    /// Unmounts and waits for the daemon; returns its exit code.
    pub fn unmount(&mut self) -> Option<i32> {
        let _ = Command::new("umount").arg(&self.mountpoint).stderr(Stdio::null()).status();
        let mut child = self.child.take()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = Command::new("umount").arg("-l").arg(&self.mountpoint).status();
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
        let _ = Command::new("umount").arg("-l").arg(&self.mountpoint).stderr(Stdio::null()).status();
    }
}
