//! The world the `seal run` tests run in: a fake home (HOME = a temporary
//! directory) with user-level extensions, a parent directory with its own
//! instruction files, and a project inside it, sealed by `seal init`; and
//! helpers to run `seal` in it. Shared by tests/run.rs and tests/run_*.rs.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::{self, seal_bin};

/// A parent directory holding a fake home and a project.
pub struct World {
    _root: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub project: PathBuf,
}

pub fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

impl World {
    pub fn new() -> World {
        let t = tempfile::Builder::new()
            .prefix("sealfs-run-")
            .tempdir()
            .unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let home = root.join("home");
        let project = root.join("parent/project");
        std::fs::create_dir_all(&project).unwrap();
        // Project-local extensions, pinned below.
        write(
            &project.join(".claude/skills/review/SKILL.md"),
            "approved review skill",
        );
        write(
            &project.join(".agents/skills/lint/SKILL.md"),
            "approved lint skill",
        );
        write(&project.join("CLAUDE.md"), "project instructions");
        write(&project.join("src/main.rs"), "fn main() {}");
        // Project-external extensions: every one must be masked.
        write(&home.join(".claude/skills/x/SKILL.md"), "USER SKILL");
        write(&home.join(".claude/CLAUDE.md"), "USER MEMORY");
        write(
            &home.join(".claude/.credentials.json"),
            "credentials stay readable",
        );
        write(&home.join(".codex/AGENTS.md"), "CODEX USER AGENTS");
        write(&home.join(".agents/skills/y/SKILL.md"), "AGENT SKILLS USER");
        write(&home.join(".gemini/GEMINI.md"), "GEMINI USER");
        write(&root.join("parent/CLAUDE.md"), "PARENT CLAUDE");
        write(&root.join("parent/AGENTS.md"), "PARENT AGENTS");
        write(&root.join("CLAUDE.md"), "GRANDPARENT CLAUDE");
        let w = World {
            _root: t,
            root,
            home,
            project,
        };
        let (code, _, err) = w.seal(&["init"], "y\n", &[]);
        assert_eq!(code, 0, "init: {err}");
        w
    }

    /// Changes the pinned review skill on disk (its bundle becomes a Mismatch).
    pub fn tamper(&self) {
        write(
            &self.project.join(".claude/skills/review/SKILL.md"),
            "TAMPERED",
        );
    }

    pub fn seal(&self, args: &[&str], stdin: &str, env: &[(&str, &Path)]) -> (i32, String, String) {
        let out = self.command(seal_bin(), args, stdin, env);
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    pub fn command(
        &self,
        program: &str,
        args: &[&str],
        stdin: &str,
        env: &[(&str, &Path)],
    ) -> Output {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID");
        for (k, v) in env {
            cmd.env(k, v);
        }
        support::output_with_stdin(&mut cmd, stdin)
    }

    /// `seal run -- sh -c SCRIPT`: (exit code, stdout, stderr).
    pub fn run_sh(&self, script: &str, env: &[(&str, &Path)]) -> (i32, String, String) {
        self.seal(&["run", "--", "sh", "-c", script], "", env)
    }

    pub fn loader(&self) -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agent_loader.py")
            .to_string_lossy()
            .into_owned()
    }
}

pub fn no_sealfs_mounts_left(root: &Path) {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = root.to_string_lossy();
    let left: Vec<&str> = info.lines().filter(|l| l.contains(root.as_ref())).collect();
    assert!(left.is_empty(), "mounts left behind: {left:#?}");
}

pub fn wait_timeout(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for `child` (at most `limit`; `what` names the hang), then reads
/// all it wrote to its piped stdout.
pub fn status_and_stdout(
    child: &mut std::process::Child,
    limit: Duration,
    what: &str,
) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    let status = wait_timeout(child, limit);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    (status.unwrap_or_else(|| panic!("{what}")), out)
}

/// Makes a tree readable by everyone (temporary directories are 0700).
pub fn open_up(root: &Path) {
    for entry in walk(root) {
        let mode = if entry.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
    }
}

pub fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        if out[i].is_dir() && !out[i].is_symlink() {
            for e in std::fs::read_dir(&out[i]).unwrap() {
                out.push(e.unwrap().path());
            }
        }
        i += 1;
    }
    out
}
