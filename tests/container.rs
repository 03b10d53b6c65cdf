//! `seal run` the way an unprivileged container runs it: as a non-root user
//! with no capabilities in the initial user namespace, inside a bubblewrap
//! sandbox that unshares every namespace and passes in only `/dev/fuse`
//! (what `docker run --device /dev/fuse` or rootless Podman give a
//! non-root container user). The sealed view must work there, and where
//! something is missing the error must name it: no `/dev/fuse`, a
//! `/dev/fuse` this user may not open, no user namespaces.
//!
//! Needs root (to become the unprivileged user), `/dev/fuse` and bwrap; CI
//! installs bubblewrap (.ci/run), and with `CI=true` a missing piece fails
//! the test instead of skipping it.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use support::*;

/// The unprivileged user: nobody.
const UID: &str = "65534";

fn bwrap_available() -> bool {
    let ok = Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "CI installs bubblewrap (.ci/run); bwrap must be there"
        );
        eprintln!("SKIPPED: bwrap (bubblewrap) is not installed");
    }
    ok
}

/// A world-readable scratch tree the sandboxed user can use: the project
/// (a verified bundle `ok`, a tampered bundle `bad`), an empty home, and a
/// copy of the `seal` binary.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = scratch();
        let s = Sandbox { dir };
        let p = s.project();
        for (rel, text) in [
            (".claude/skills/ok/SKILL.md", "approved skill\n"),
            (".claude/skills/bad/SKILL.md", "approved\n"),
            ("README.md", "readme\n"),
        ] {
            let path = p.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let out = output_with_stdin(Command::new(seal_bin()).arg("init").current_dir(&p), "y\n");
        assert!(out.status.success(), "{out:?}");
        fs::write(p.join(".claude/skills/bad/SKILL.md"), "tampered\n").unwrap();
        fs::create_dir(s.home()).unwrap();
        fs::create_dir(s.dir.path().join("bin")).unwrap();
        fs::copy(seal_bin(), s.seal()).unwrap();
        // Everything readable (and the home writable) by the sandbox's user.
        let status = Command::new("chmod")
            .args(["-R", "a+rX"])
            .arg(s.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        fs::set_permissions(s.home(), fs::Permissions::from_mode(0o777)).unwrap();
        s
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn seal(&self) -> PathBuf {
        self.dir.path().join("bin/seal")
    }

    /// Runs `inner` as uid 65534 with no capabilities, in a bwrap sandbox
    /// that unshares every namespace; `dev` are extra bwrap arguments for the
    /// devices (and anything else). Returns (exit code, stdout, stderr).
    fn run(&self, dev: &[&str], inner: &[&str]) -> (i32, String, String) {
        let dir = self.dir.path().to_str().unwrap();
        let mut cmd = Command::new("setpriv");
        cmd.args([
            "--reuid",
            UID,
            "--regid",
            UID,
            "--clear-groups",
            "--inh-caps=-all",
            "--",
            "bwrap",
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
        ])
        .args(dev)
        .args(["--bind", dir, dir, "--chdir"])
        .arg(self.project())
        .arg("--")
        .args(inner)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", self.home());
        let (code, out, err) = run_with_timeout(&mut cmd, Duration::from_secs(60));
        (code, String::from_utf8_lossy(&out).into_owned(), err)
    }

    /// `seal run` of a command that shows what it sees.
    fn seal_run(&self, dev: &[&str]) -> (i32, String, String) {
        let seal = self.seal();
        self.run(
            dev,
            &[
                seal.to_str().unwrap(),
                "run",
                "--",
                "sh",
                "-c",
                "echo started; cat .claude/skills/ok/SKILL.md; \
                 if [ -e .claude/skills/bad ]; then echo bad-visible; else echo bad-hidden; fi",
            ],
        )
    }
}

fn ready() -> bool {
    fuse_available() && bwrap_available()
}

const FUSE: [&str; 3] = ["--dev-bind", "/dev/fuse", "/dev/fuse"];

#[test]
fn the_sandbox_is_unprivileged_and_passes_in_only_dev_fuse() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    let (code, out, err) = s.run(
        &FUSE,
        &[
            "sh",
            "-c",
            "id -u; grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status; ls /dev; \
             readlink /proc/self/ns/user",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    // bwrap maps the same uid into its user namespace.
    assert_eq!(lines[0], UID, "{out}");
    for cap in &lines[1..4] {
        assert!(cap.ends_with("0000000000000000"), "capabilities: {out}");
    }
    assert!(lines.contains(&"fuse"), "{out}");
    // A user namespace of its own, not the initial one.
    let own = fs::read_link("/proc/self/ns/user").unwrap();
    assert_ne!(lines.last().copied(), own.to_str(), "{out}");
}

#[test]
fn seal_run_serves_the_sealed_view_in_an_unprivileged_sandbox() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    let (code, out, err) = s.seal_run(&FUSE);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(
        out, "started\napproved skill\nbad-hidden\n",
        "stderr: {err}"
    );
    assert!(err.contains("Mismatch   ./.claude/skills/bad"), "{err}");
    // Nothing was left mounted on the host.
    assert!(!fuse_mounted_at(&s.project()));
}

#[test]
fn without_dev_fuse_the_error_names_it() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    let (code, out, err) = s.seal_run(&[]);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "", "the command must not start");
    // What is missing, and why, in words a user can act on (the wording
    // around it belongs to seal run's namespace code).
    assert!(
        err.contains("/dev/fuse") && err.contains("No such file or directory"),
        "{err}"
    );
}

#[test]
fn with_a_dev_fuse_the_user_may_not_open_the_error_names_it() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    // A FUSE device node that only root may open, as on a host whose
    // /dev/fuse is 0600 (what rootless Podman then passes in).
    let node = s.dir.path().join("fuse-0600");
    let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: mknod on a path this test owns; makedev(10, 229) is /dev/fuse.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(10, 229)) };
    assert_eq!(rc, 0, "mknod: {}", std::io::Error::last_os_error());
    let node = node.to_str().unwrap();
    let (code, out, err) = s.seal_run(&["--dev-bind", node, "/dev/fuse"]);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "");
    assert!(
        err.contains("/dev/fuse") && err.contains("Permission denied"),
        "{err}"
    );
}

#[test]
fn without_user_namespaces_the_error_names_them() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    // --disable-userns: no further user namespace may be created inside, as
    // under Docker's default seccomp profile or user.max_user_namespaces=0.
    let mut dev = vec!["--unshare-user", "--disable-userns"];
    dev.extend_from_slice(&FUSE);
    let (code, out, err) = s.seal_run(&dev);
    assert_eq!(code, 2, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "");
    assert!(err.contains("user namespace"), "{err}");
}

#[test]
fn as_root_of_its_own_user_namespace_like_rootless_podman_it_works_too() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    // Rootless Podman's default: root inside, mapped to an ordinary user
    // outside, with capabilities over the container's namespaces only.
    let mut dev = vec!["--uid", "0", "--gid", "0", "--cap-add", "ALL"];
    dev.extend_from_slice(&FUSE);
    let (code, out, err) = s.seal_run(&dev);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(
        out, "started\napproved skill\nbad-hidden\n",
        "stderr: {err}"
    );
}

#[test]
fn a_root_owned_policy_seen_from_a_namespace_without_root_is_named_as_such() {
    if !ready() {
        return;
    }
    let s = Sandbox::new();
    // A machine policy as the host has it: root's, 0644, in a directory
    // only root may change (the debug binary reads it from this path).
    let etc = s.dir.path().join("etc");
    fs::create_dir(&etc).unwrap();
    fs::set_permissions(&etc, fs::Permissions::from_mode(0o755)).unwrap();
    let policy = etc.join("policy.json");
    fs::write(&policy, r#"{"version": 1, "minimumPolicy": "block"}"#).unwrap();
    fs::set_permissions(&policy, fs::Permissions::from_mode(0o644)).unwrap();
    let env = format!("SEAL_TEST_POLICY_PATH={}", policy.display());
    let seal = s.seal();
    // Inside the sandbox (uid 65534, root unmapped), root's file shows as
    // the overflow uid: refused, and the message says why.
    let (code, _, err) = s.run(&[], &["env", &env, seal.to_str().unwrap(), "policy"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "refused (rule owned-by-root): it is owned by uid 65534, the overflow uid: this \
             process runs in a user namespace (a container or sandbox)"
        ) && err.contains("docs/CONTAINERS.md"),
        "{err}"
    );
    let on_the_host = || {
        Command::new(&seal)
            .arg("policy")
            .env("SEAL_TEST_POLICY_PATH", &policy)
            .current_dir(s.project())
            .output()
            .unwrap()
    };
    // On the host, the same file is root's and accepted.
    let out = on_the_host();
    assert!(out.status.success(), "{out:?}");
    // A file uid 65534 really owns, seen from the host, is just that.
    std::os::unix::fs::chown(&policy, Some(65534), Some(65534)).unwrap();
    let out = on_the_host();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it is owned by uid 65534; it must be owned by root"),
        "{err}"
    );
}

/// The repository's root.
fn repo() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_build_context_holds_what_containerfile_copies_and_no_target() {
    let ignore = fs::read_to_string(repo().join(".dockerignore")).unwrap();
    let lines: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    // Everything is left out, then the build stage's sources let back in.
    assert_eq!(lines.first(), Some(&"*"), "{ignore}");
    let allowed: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix('!'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    let containerfile = fs::read_to_string(repo().join("Containerfile")).unwrap();
    let mut copied = Vec::new();
    for line in containerfile.lines() {
        let Some(args) = line.strip_prefix("COPY ") else {
            continue;
        };
        if args.starts_with("--from") {
            continue;
        }
        let words: Vec<&str> = args.split_whitespace().collect();
        copied.extend(
            words[..words.len() - 1]
                .iter()
                .map(|w| w.trim_end_matches('/')),
        );
    }
    copied.sort();
    let mut sorted = allowed.clone();
    sorted.sort();
    assert_eq!(
        sorted, copied,
        "what .dockerignore lets in is what Containerfile copies"
    );
    assert!(!allowed.iter().any(|a| a.starts_with("target")));
    assert!(lines.contains(&"**/target"), "{ignore}");
}

#[test]
fn scripts_test_sh_names_a_missing_bubblewrap_and_fails_under_ci() {
    // A PATH with everything scripts/test.sh looks for except bwrap (and
    // without cargo: it must stop before running anything).
    let bin = scratch();
    for tool in [
        "bash",
        "dirname",
        "fusermount3",
        "setpriv",
        "pre-commit",
        "git",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let path = String::from_utf8(found.stdout).unwrap();
        if path.trim().is_empty() {
            // Outside CI a tool may be absent; it is then reported too.
            continue;
        }
        std::os::unix::fs::symlink(path.trim(), bin.path().join(tool)).unwrap();
    }
    let run = |ci: &str| {
        Command::new(repo().join("scripts/test.sh"))
            .env_clear()
            .env("PATH", bin.path())
            .env("CI", ci)
            .output()
            .unwrap()
    };
    let out = run("true");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("missing: bwrap (package bubblewrap)")
            && err.contains("CI must run every test"),
        "{err}"
    );
}
