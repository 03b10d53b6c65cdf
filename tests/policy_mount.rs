//! The machine policy in real views: `seal mount` (FUSE) and `seal run`
//! (namespace) under a policy file the debug binary is pointed at
//! (`SEAL_TEST_POLICY_PATH`), with audit events read back from a file and
//! from a syslog socket bound in a temporary directory
//! (`SEAL_TEST_SYSLOG_SOCKET`). These need root and /dev/fuse.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{Project, audit_records, errno_of, fuse_available, scratch};

/// A policy file in a root-owned directory of its own.
fn policy_file(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("policy.json");
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    p
}

/// A mounted view, and what `seal mount` wrote on stderr until it was
/// ready; unmounted on drop, which waits for the daemon to exit (it writes
/// its last audit records after the unmount, so a test that reads the log
/// before then can meet a line half written).
struct View {
    dir: tempfile::TempDir,
    stderr: String,
    daemon: u32,
}

impl View {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .stderr(Stdio::null())
            .status();
        // Gone, or a zombie its reaper has not collected yet: either way it
        // has written all it will.
        let running = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next())
                    != Some("Z")
            })
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while running(self.daemon) {
            if std::time::Instant::now() > deadline {
                if !std::thread::panicking() {
                    panic!("the daemon {} did not exit after umount", self.daemon);
                }
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// `seal mount --daemon MOUNTPOINT ARGS` in `project` with `env`: the view
/// once mounted (the detached daemon keeps stderr until it is ready, so
/// what it logs while starting is read here), or the exit code and stderr
/// of a refusal.
fn mount(project: &Project, args: &[&str], env: &[(&str, &Path)]) -> Result<View, (i32, String)> {
    let dir = tempfile::Builder::new()
        .prefix("sealfs-policy-view-")
        .tempdir()
        .unwrap();
    let mut cmd = Command::new(support::seal_bin());
    cmd.arg("mount")
        .arg(dir.path())
        .arg("--daemon")
        .args(args)
        .current_dir(project.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0) => {
            assert!(
                support::fuse_mounted_at(dir.path()),
                "reported ready, not mounted"
            );
            let daemon = stderr
                .split("detached as pid ")
                .nth(1)
                .and_then(|s| s.split(';').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("no daemon pid in {stderr:?}"));
            Ok(View {
                dir,
                stderr,
                daemon,
            })
        }
        code => Err((code.unwrap_or(-1), stderr)),
    }
}

/// A project with a skill and an instruction file, pinned with policy
/// `warn`, then the skill changed (a Mismatch).
fn tampered_warn_project() -> Project {
    let p = Project::new();
    p.write(".claude/skills/review/SKILL.md", "approved")
        .write("CLAUDE.md", "instructions")
        .write("src/main.rs", "fn main() {}");
    p.init(&["--warn"]);
    p.write(".claude/skills/review/SKILL.md", "tampered");
    p
}

const POLICY: &str = "SEAL_TEST_POLICY_PATH";

/// What most tests start from: a tampered warn project, a directory for the
/// policy file and one for audit logs (None when FUSE tests cannot run).
struct Fixture {
    p: Project,
    etc: tempfile::TempDir,
    logs: tempfile::TempDir,
}

fn fixture() -> Option<Fixture> {
    fuse_available().then(|| Fixture {
        p: tampered_warn_project(),
        etc: scratch(),
        logs: scratch(),
    })
}

#[test]
fn a_warn_project_under_a_block_machine_policy_hides_its_mismatched_bundle() {
    let Some(Fixture { p, etc, logs }) = fixture() else {
        return;
    };
    let log = logs.path().join("audit.jsonl");
    let log_arg = log.to_str().unwrap();
    // Without a machine policy (no file): warn lets it through.
    let absent = etc.path().join("absent.json");
    let view = mount(&p, &["--audit-log", log_arg], &[(POLICY, &absent)]).unwrap();
    assert_eq!(
        std::fs::read(view.path(".claude/skills/review/SKILL.md")).unwrap(),
        b"tampered"
    );
    drop(view);
    let warned = audit_records(&log);
    assert!(
        warned
            .iter()
            .any(|r| r["event"] == "warn" && r["policy_source"] == "project"),
        "{warned:?}"
    );
    std::fs::remove_file(&log).unwrap();
    // Under minimumPolicy block: absent.
    let file = policy_file(etc.path(), r#"{"version": 1, "minimumPolicy": "block"}"#);
    let view = mount(&p, &["--audit-log", log_arg], &[(POLICY, &file)]).unwrap();
    let skill = view.path(".claude/skills/review");
    assert_eq!(errno_of(&std::fs::metadata(&skill)), Some(libc::ENOENT));
    assert_eq!(
        errno_of(&std::fs::read(skill.join("SKILL.md"))),
        Some(libc::ENOENT)
    );
    let listed: Vec<_> = std::fs::read_dir(view.path(".claude/skills"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(listed.is_empty(), "{listed:?}");
    assert_eq!(
        std::fs::read(view.path("CLAUDE.md")).unwrap(),
        b"instructions"
    );
    drop(view);
    let hidden: Vec<_> = audit_records(&log)
        .into_iter()
        .filter(|r| r["key"] == "./.claude/skills/review")
        .collect();
    assert!(!hidden.is_empty());
    for r in &hidden {
        assert_eq!(r["schema"], "seal.audit/2", "{r}");
        assert_eq!(r["event"], "hide", "{r}");
        assert_eq!(r["outcome"], "Mismatch", "{r}");
        assert_eq!(r["policy"], "block", "{r}");
        assert_eq!(r["policy_source"], "machine", "{r}");
        assert_eq!(r["modified"], serde_json::json!(["SKILL.md"]), "{r}");
        assert_eq!(r["user"], "root", "{r}");
    }
}

#[test]
fn syslog_receives_every_decision() {
    let Some(Fixture { p, etc, .. }) = fixture() else {
        return;
    };
    let file = policy_file(
        etc.path(),
        r#"{"version": 1, "minimumPolicy": "block", "audit": {"syslog": {"facility": "auth"}}}"#,
    );
    let sockets = scratch();
    let socket_path = sockets.path().join("log");
    // No socket there: a mandatory sink that cannot be reached stops the mount.
    let refused = mount(
        &p,
        &[],
        &[(POLICY, &file), ("SEAL_TEST_SYSLOG_SOCKET", &socket_path)],
    );
    let (code, err) = refused.err().expect("mounted without its syslog");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("requires an audit sink that is missing") && err.contains("\"audit.syslog\""),
        "{err}"
    );
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let view = mount(
        &p,
        &[],
        &[(POLICY, &file), ("SEAL_TEST_SYSLOG_SOCKET", &socket_path)],
    )
    .unwrap();
    assert!(!view.path(".claude/skills/review").exists());
    let mut buf = vec![0u8; 65536];
    // First the view's start: auth (4) * 8 + info (6) = 38.
    let n = socket.recv(&mut buf).unwrap();
    let line = String::from_utf8(buf[..n].to_vec()).unwrap();
    assert!(
        line.starts_with("<38>seal[") && line.contains("\"event\":\"mount-start\""),
        "{line}"
    );
    let n = socket.recv(&mut buf).unwrap();
    let line = String::from_utf8(buf[..n].to_vec()).unwrap();
    // auth (4) * 8 + notice (5) = 37, then "seal[PID]: " and the JSON record.
    assert!(line.starts_with("<37>seal["), "{line}");
    let json = &line[line.find("]: ").unwrap() + 3..];
    let r: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(r["event"], "hide", "{r}");
    assert_eq!(r["path"], "./.claude/skills/review", "{r}");
    assert_eq!(r["policy_source"], "machine", "{r}");
    assert!(!json.contains("tampered"), "never file contents");
}

#[test]
fn the_mandatory_audit_file_is_written_whatever_the_command_line_says() {
    let Some(Fixture { p, etc, logs }) = fixture() else {
        return;
    };
    let mandatory = logs.path().join("mandatory.jsonl");
    let file = policy_file(
        etc.path(),
        &format!(
            r#"{{"version": 1, "audit": {{"file": "{}"}}}}"#,
            mandatory.display()
        ),
    );
    // No --audit-log: the policy's file still gets every decision.
    let view = mount(&p, &[], &[(POLICY, &file)]).unwrap();
    assert_eq!(
        std::fs::read(view.path(".claude/skills/review/SKILL.md")).unwrap(),
        b"tampered"
    );
    drop(view);
    assert!(
        audit_records(&mandatory)
            .iter()
            .any(|r| r["event"] == "warn")
    );
    // --audit-log adds a file; it does not replace the mandatory one.
    let extra = logs.path().join("extra.jsonl");
    std::fs::remove_file(&mandatory).unwrap();
    let view = mount(
        &p,
        &["--audit-log", extra.to_str().unwrap()],
        &[(POLICY, &file)],
    )
    .unwrap();
    let _ = std::fs::read(view.path(".claude/skills/review/SKILL.md"));
    drop(view);
    assert!(!audit_records(&mandatory).is_empty());
    assert_eq!(audit_records(&mandatory).len(), audit_records(&extra).len());
    assert_eq!(
        std::fs::metadata(&mandatory).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // A mandatory file that cannot be opened: nothing is mounted.
    let nowhere = policy_file(
        etc.path(),
        r#"{"version": 1, "audit": {"file": "/nonexistent-dir/audit.jsonl"}}"#,
    );
    let (code, err) = mount(&p, &[], &[(POLICY, &nowhere)]).err().unwrap();
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent-dir/audit.jsonl"), "{err}");
}

#[test]
fn protected_paths_are_read_only_in_the_writable_view() {
    let Some(Fixture { p, etc, logs }) = fixture() else {
        return;
    };
    p.write(".git/hooks/pre-push", "#!/bin/sh\n")
        .write(".git/config", "[core]\n");
    let log = logs.path().join("audit.jsonl");
    let file = policy_file(
        etc.path(),
        r#"{"version": 1, "protectedPaths": [".git/hooks/**", ".git/config", ".vscode/tasks.json"]}"#,
    );
    let view = mount(
        &p,
        &["--writable", "--audit-log", log.to_str().unwrap()],
        &[(POLICY, &file)],
    )
    .unwrap();
    let erofs = Some(libc::EROFS);
    assert_eq!(
        errno_of(&std::fs::write(view.path(".git/hooks/pre-commit"), "evil")),
        erofs
    );
    assert_eq!(
        errno_of(&std::fs::write(view.path(".git/hooks/pre-push"), "evil")),
        erofs
    );
    assert_eq!(
        errno_of(&std::fs::remove_file(view.path(".git/hooks/pre-push"))),
        erofs
    );
    assert_eq!(
        errno_of(&std::fs::write(
            view.path(".git/config"),
            "[core]\nhooksPath=/tmp\n"
        )),
        erofs
    );
    assert_eq!(
        errno_of(&std::fs::rename(view.path(".git"), view.path("git-moved"))),
        erofs,
        "moving the directory would move its hooks"
    );
    std::fs::create_dir(view.path(".vscode")).unwrap();
    assert_eq!(
        errno_of(&std::fs::write(view.path(".vscode/tasks.json"), "{}")),
        erofs
    );
    // Beside them the view is writable.
    std::fs::write(view.path(".vscode/settings.json"), "{}").unwrap();
    std::fs::write(view.path("src/new.rs"), "// new").unwrap();
    drop(view);
    assert!(!p.path().join(".git/hooks/pre-commit").exists());
    assert_eq!(p.read(".git/hooks/pre-push"), b"#!/bin/sh\n");
    assert_eq!(p.read("src/new.rs"), b"// new");
    let denied: Vec<_> = audit_records(&log)
        .into_iter()
        .filter(|r| r["event"] == "deny-write")
        .collect();
    assert!(
        denied
            .iter()
            .any(|r| r["path"] == "./.git/hooks/pre-commit" && r["policy_source"] == "machine"),
        "{denied:?}"
    );
    assert!(denied.iter().all(|r| r["policy"].is_null()));
}

#[test]
fn forced_read_only_and_rehash_hold_whatever_the_flags_say() {
    let Some(Fixture { p, etc, .. }) = fixture() else {
        return;
    };
    let file = policy_file(
        etc.path(),
        r#"{"version": 1, "readOnly": true, "rehashEveryOpen": true}"#,
    );
    let view = mount(
        &p,
        &["--writable"],
        &[(POLICY, &file), ("SEAL_LOG", Path::new("info"))],
    )
    .unwrap();
    let text = &view.stderr;
    assert!(text.contains("serves every view read-only"), "{text}");
    assert!(text.contains("(read-only)"), "{text}");
    assert!(
        text.contains("rehash every open, asked by the machine policy"),
        "{text}"
    );
    assert_eq!(
        errno_of(&std::fs::write(view.path("src/new.rs"), "x")),
        Some(libc::EROFS)
    );
    assert!(!p.path().join("src/new.rs").exists());
}

#[test]
fn a_required_seal_mounts_a_project_without_one_as_the_empty_lockfile() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    p.write(".claude/skills/review/SKILL.md", "unsealed")
        .write("CLAUDE.md", "instructions")
        .write("src/main.rs", "fn main() {}");
    let etc = scratch();
    let off = policy_file(etc.path(), r#"{"version": 1}"#);
    let (code, err) = mount(&p, &[], &[(POLICY, &off)]).err().unwrap();
    assert_eq!(code, 2, "no seal.json, no requirement: refused as before");
    assert!(err.contains("seal.json not found"), "{err}");
    let on = policy_file(etc.path(), r#"{"version": 1, "requireSeal": true}"#);
    let view = mount(&p, &[], &[(POLICY, &on)]).unwrap();
    assert!(!view.path("CLAUDE.md").exists());
    assert!(!view.path(".claude/skills/review").exists());
    assert!(view.path(".claude/skills").is_dir(), "containers stay");
    assert_eq!(
        std::fs::read(view.path("src/main.rs")).unwrap(),
        b"fn main() {}"
    );
}

/// `seal run -- sh -c SCRIPT` in `project` under the policy `file`, with a
/// fake home: (exit code, stderr).
fn run_sh(project: &Project, file: &Path, script: &str) -> (i32, String) {
    let home = scratch();
    let out = Command::new(support::seal_bin())
        .args(["run", "--", "sh", "-c", script])
        .current_dir(project.path())
        .env(POLICY, file)
        .env("HOME", home.path())
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn under_seal_run_protected_paths_and_forced_read_only_hold() {
    let Some(Fixture { p, etc, .. }) = fixture() else {
        return;
    };
    p.write(".git/hooks/.keep", "");
    let protect = policy_file(
        etc.path(),
        r#"{"version": 1, "protectedPaths": [".git/hooks/**"]}"#,
    );
    let (code, err) = run_sh(
        &p,
        &protect,
        "echo ok > src/written.rs && ! echo evil > .git/hooks/pre-commit",
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    assert!(!p.path().join(".git/hooks/pre-commit").exists());
    assert_eq!(p.read("src/written.rs"), b"ok\n");
    let read_only = policy_file(etc.path(), r#"{"version": 1, "readOnly": true}"#);
    let (code, err) = run_sh(&p, &read_only, "echo x > src/other.rs");
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("(read-only)"), "{err}");
    assert!(!p.path().join("src/other.rs").exists());
}

#[test]
fn under_seal_run_the_policy_file_is_read_only_and_its_masks_and_requirement_hold() {
    let Some(Fixture { p, etc, .. }) = fixture() else {
        return;
    };
    let file = policy_file(
        etc.path(),
        r#"{"version": 1, "extraMasks": ["~/.myagent"], "requireSeal": true}"#,
    );
    let before = std::fs::read(&file).unwrap();
    let home = scratch();
    std::fs::create_dir_all(home.path().join(".myagent")).unwrap();
    std::fs::write(home.path().join(".myagent/skill.md"), "org agent skill").unwrap();
    let script = format!(
        "if echo x >> {f}; then echo WROTE-POLICY; fi; \
         if touch {d}/new; then echo WROTE-DIR; fi; \
         echo \"mask:$(ls -A ~/.myagent | wc -l)\"",
        f = file.display(),
        d = etc.path().display()
    );
    let out = Command::new(support::seal_bin())
        .args(["run", "--", "sh", "-c", &script])
        .current_dir(p.path())
        .env(POLICY, &file)
        .env("HOME", home.path())
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "mask:0\n", "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    assert!(!etc.path().join("new").exists());
    assert!(home.path().join(".myagent/skill.md").exists());

    // A project without seal.json runs under the empty lockfile: its
    // instruction file is an unverified artifact, hidden.
    let bare = Project::new();
    bare.write("CLAUDE.md", "unsealed instructions")
        .write("src/main.rs", "fn main() {}\n");
    let out = Command::new(support::seal_bin())
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "cat src/main.rs; cat CLAUDE.md || echo HIDDEN",
        ])
        .current_dir(bare.path())
        .env(POLICY, &file)
        .env("HOME", home.path())
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout, "fn main() {}\nHIDDEN\n");
    // Without the requirement, the same project has no seal.json: exit 2.
    let plain = policy_file(etc.path(), r#"{"version": 1}"#);
    let out = Command::new(support::seal_bin())
        .args(["run", "--", "true"])
        .current_dir(bare.path())
        .env(POLICY, &plain)
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
