//! The machine policy through the real binary, without a mount: every way
//! the file can be refused, strictest-wins in `seal verify` against every
//! project policy, a required Seal, `seal why` and `seal policy`.
//!
//! The binary under test is a debug build, which reads the policy file that
//! `SEAL_TEST_POLICY_PATH` names (a release build has no such override).
//! Policy files must be owned by root, so these tests need root; outside CI
//! they are skipped without it.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::Project;

const POLICY_VAR: &str = "SEAL_TEST_POLICY_PATH";

/// True when running as root; under `CI=true`, panics instead of skipping.
fn root() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!(
            "the machine policy tests need root (policy files are root-owned); CI must run them"
        );
    }
    eprintln!("SKIPPED: the machine policy tests need root");
    false
}

/// A directory holding a policy file, as /etc/seal would.
struct PolicyDir {
    dir: tempfile::TempDir,
}

impl PolicyDir {
    fn new() -> PolicyDir {
        PolicyDir {
            dir: tempfile::Builder::new()
                .prefix("sealfs-policy-")
                .tempdir()
                .unwrap(),
        }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("policy.json")
    }

    /// Writes the policy file (mode 0644, owned by root).
    fn write(&self, text: &str) -> PathBuf {
        let p = self.path();
        let _ = std::fs::remove_file(&p);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        p
    }
}

/// `seal ARGS` in `project` under the policy file at `policy`.
fn seal(project: &Path, policy: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(support::seal_bin())
        .args(args)
        .current_dir(project)
        .env(POLICY_VAR, policy)
        .env_remove("GITHUB_WORKSPACE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A project with a skill and an instruction file, pinned under `policy`,
/// then the skill changed (a Mismatch).
fn tampered(policy: &str) -> Project {
    let p = Project::new();
    p.write(".claude/skills/review/SKILL.md", "approved")
        .write("CLAUDE.md", "instructions")
        .write("src/main.rs", "fn main() {}");
    if policy == "warn" {
        p.init(&["--warn"]);
    } else {
        p.init(&[]);
    }
    p.write(".claude/skills/review/SKILL.md", "tampered");
    p
}

/// Makes a policy file in a directory; returns its path.
type Make = Box<dyn Fn(&PolicyDir) -> PathBuf>;

#[test]
fn every_way_the_file_can_be_wrong_is_refused_with_exit_2() {
    if !root() {
        return;
    }
    let p = tampered("warn");
    const GOOD: &str = r#"{"version": 1, "minimumPolicy": "block"}"#;
    let cases: Vec<(&str, &str, Make)> = vec![
        (
            "owner",
            "owned-by-root",
            Box::new(|d: &PolicyDir| {
                let f = d.write(GOOD);
                std::os::unix::fs::chown(&f, Some(1000), Some(1000)).unwrap();
                f
            }),
        ),
        (
            "group write",
            "writable-by-root-only",
            Box::new(|d: &PolicyDir| {
                let f = d.write(GOOD);
                std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
                f
            }),
        ),
        (
            "other write",
            "writable-by-root-only",
            Box::new(|d: &PolicyDir| {
                let f = d.write(GOOD);
                std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o646)).unwrap();
                f
            }),
        ),
        (
            "symlink",
            "no-symlink",
            Box::new(|d: &PolicyDir| {
                let target = d.dir.path().join("real.json");
                std::fs::write(&target, GOOD).unwrap();
                std::os::unix::fs::symlink(&target, d.path()).unwrap();
                d.path()
            }),
        ),
        (
            "directory",
            "regular-file",
            Box::new(|d: &PolicyDir| {
                std::fs::create_dir(d.path()).unwrap();
                d.path()
            }),
        ),
        (
            "writable directory",
            "safe-directories",
            Box::new(|d: &PolicyDir| {
                let f = d.write(GOOD);
                std::fs::set_permissions(d.dir.path(), std::fs::Permissions::from_mode(0o777))
                    .unwrap();
                f
            }),
        ),
        (
            "duplicate key",
            "strict-json",
            Box::new(|d: &PolicyDir| {
                d.write(r#"{"version": 1, "minimumPolicy": "warn", "minimumPolicy": "block"}"#)
            }),
        ),
        (
            "byte-order mark",
            "strict-json",
            Box::new(|d: &PolicyDir| d.write("\u{feff}{\"version\": 1}")),
        ),
        (
            "trailing content",
            "strict-json",
            Box::new(|d: &PolicyDir| d.write(r#"{"version": 1} {"version": 1}"#)),
        ),
        (
            "not JSON",
            "strict-json",
            Box::new(|d: &PolicyDir| d.write("minimumPolicy = block")),
        ),
        (
            "unknown key",
            "schema",
            Box::new(|d: &PolicyDir| d.write(r#"{"version": 1, "minimumPolicyy": "block"}"#)),
        ),
        (
            "bad value",
            "schema",
            Box::new(|d: &PolicyDir| d.write(r#"{"version": 1, "minimumPolicy": "strict"}"#)),
        ),
    ];
    for (case, rule, make) in cases {
        let d = PolicyDir::new();
        let file = make(&d);
        let lock = std::fs::read(p.path().join("seal.json")).unwrap();
        for args in [
            &["verify"][..],
            &["why", "CLAUDE.md"],
            &["policy"],
            &["mount", "/nonexistent-mountpoint"],
            &["run", "--dry-run"],
            &["init"],
            &["pin"],
            &["pin", "CLAUDE.md"],
        ] {
            let (code, _, err) = seal(p.path(), &file, args);
            assert_eq!(
                std::fs::read(p.path().join("seal.json")).unwrap(),
                lock,
                "{case} {args:?} changed seal.json"
            );
            assert_eq!(code, 2, "{case} {args:?}: {err}");
            assert!(
                err.contains(&format!("machine policy {}", file.display()))
                    && err.contains(&format!("refused (rule {rule})")),
                "{case} {args:?}: {err}"
            );
        }
        let (code, out, _) = seal(p.path(), &file, &["verify", "--json"]);
        assert_eq!(code, 2);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["error"].as_str().unwrap().contains(rule), "{case}: {v}");
        if case == "unknown key" {
            assert!(v["error"].as_str().unwrap().contains("\"minimumPolicyy\""));
        }
    }
}

#[test]
fn a_missing_mandatory_sink_is_said_first_and_only_naming_where_it_is_set() {
    if !root() {
        return;
    }
    let p = tampered("warn");
    let d = PolicyDir::new();
    let file = d.write(r#"{"version": 1, "audit": {"syslog": {}}}"#);
    // No syslog listens at this socket (a host without /dev/log).
    let socket = d.dir.path().join("no-log");
    for args in [
        &["run", "--", "true"][..],
        &["mount", "/nonexistent-mountpoint"],
    ] {
        let out = Command::new(support::seal_bin())
            .args(args)
            .current_dir(p.path())
            .env(POLICY_VAR, &file)
            .env("SEAL_TEST_SYSLOG_SOCKET", &socket)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let command = args[0];
        let expected = format!(
            "seal: {command}: the machine policy {policy} requires an audit sink that is \
             missing: the syslog socket {socket} cannot be opened (No such file or directory \
             (os error 2)). It is set by \"audit.syslog\" in {policy}; start the journal or a \
             syslog daemon that listens there, or have that policy changed\n",
            policy = file.display(),
            socket = socket.display(),
        );
        // The first and only thing said: no verification summary, no
        // "serving" line before it.
        if command == "run" {
            assert_eq!(err, expected, "{args:?}");
        } else {
            // The mount checks its mountpoint first.
            assert!(err.contains("does not exist"), "{err}");
        }
    }
    // With a mountpoint that is fine, the mount says the same, and only that.
    let mp = tempfile::tempdir().unwrap();
    let out = Command::new(support::seal_bin())
        .arg("mount")
        .arg(mp.path())
        .current_dir(p.path())
        .env(POLICY_VAR, &file)
        .env("SEAL_TEST_SYSLOG_SOCKET", &socket)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("seal: mount: the machine policy ")
            && err.contains("\"audit.syslog\"")
            && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn an_absent_file_is_no_machine_policy() {
    if !root() {
        return;
    }
    let p = tampered("warn");
    let d = PolicyDir::new();
    let (code, out, err) = seal(p.path(), &d.path(), &["verify", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "Warning");
    assert!(
        v.get("policySource").is_none(),
        "no extra keys without a policy: {v}"
    );
    let (code, out, _) = seal(p.path(), &d.path(), &["policy", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["policyFile"]["present"], false);
    for (key, setting) in v["settings"].as_object().unwrap() {
        let want = if key.starts_with("project") || key == "effectivePolicy" {
            "project"
        } else {
            "built-in"
        };
        assert_eq!(setting["source"], want, "{key}: {setting}");
    }
    // Without a policy requiring Seal, a missing seal.json is SPEC's exit 2.
    std::fs::remove_file(p.path().join("seal.json")).unwrap();
    let (code, _, err) = seal(p.path(), &d.path(), &["verify"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn strictest_wins_in_verify_against_every_project_policy() {
    if !root() {
        return;
    }
    let d = PolicyDir::new();
    for minimum in [None, Some("warn"), Some("block")] {
        let file = match minimum {
            Some(m) => d.write(&format!(r#"{{"version": 1, "minimumPolicy": "{m}"}}"#)),
            None => d.write(r#"{"version": 1}"#),
        };
        for project in ["warn", "block"] {
            let p = tampered(project);
            let blocks = project == "block" || minimum == Some("block");
            let by_machine = project == "warn" && minimum == Some("block");
            let case = format!("machine {minimum:?}, project {project}");
            let (code, out, err) = seal(p.path(), &file, &["verify", "--json"]);
            assert_eq!(code, if blocks { 1 } else { 0 }, "{case}: {err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(
                v["status"],
                if blocks { "Blocked" } else { "Warning" },
                "{case}"
            );
            assert_eq!(v["mismatch"][0], "./.claude/skills/review", "{case}");
            assert_eq!(v["policy"], if blocks { "block" } else { "warn" }, "{case}");
            assert_eq!(
                v["policySource"],
                if by_machine { "machine" } else { "project" },
                "{case}"
            );
            assert_eq!(v["machinePolicy"], file.to_str().unwrap(), "{case}");
            // SPEC's keys are all there.
            for key in ["verified", "unverified", "removed", "mismatch"] {
                assert!(v[key].is_array(), "{case}: {key}");
            }
            let (code, _, err) = seal(p.path(), &file, &["verify"]);
            assert_eq!(code, if blocks { 1 } else { 0 }, "{case}");
            assert!(
                err.contains(&format!(
                    "Result: {}",
                    if blocks { "Blocked" } else { "Warning" }
                )),
                "{case}: {err}"
            );
            assert_eq!(
                err.contains("the machine policy") && err.contains("decided"),
                by_machine,
                "{case}: {err}"
            );
            let (_, out, _) = seal(p.path(), &file, &["verify", "--format", "github"]);
            assert_eq!(
                out.contains("::notice title=seal machine policy::"),
                by_machine,
                "{case}: {out}"
            );
            assert_eq!(
                out.starts_with("::error "),
                blocks,
                "a blocking mismatch is an error annotation: {case}: {out}"
            );
            let (_, out, _) = seal(p.path(), &file, &["verify", "--format", "sarif"]);
            let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
            let props = &sarif["runs"][0]["properties"];
            assert_eq!(props["status"], if blocks { "Blocked" } else { "Warning" });
            assert_eq!(
                props["policySource"],
                if by_machine { "machine" } else { "project" }
            );
            let (_, _, err) = seal(p.path(), &file, &["why", ".claude/skills/review"]);
            assert!(
                err.contains(if blocks {
                    "decision: hidden"
                } else {
                    "decision: visible"
                }),
                "{case}: {err}"
            );
            assert_eq!(
                err.contains("overrides the project's warn"),
                by_machine,
                "{case}"
            );
            // A dry run exits as the real run would before the command:
            // hidden bundles do not stop it (exit 0).
            let (code, out, err) = seal(p.path(), &file, &["run", "--dry-run", "--json"]);
            assert_eq!(code, 0, "{case}: {err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["policy"], if blocks { "block" } else { "warn" }, "{case}");
            let skill = v["entries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["path"] == "./.claude/skills/review")
                .unwrap();
            assert_eq!(skill["visible"], !blocks, "{case}: {skill}");
        }
    }
}

#[test]
fn a_required_seal_blocks_a_project_without_one() {
    if !root() {
        return;
    }
    let d = PolicyDir::new();
    let file =
        d.write(r#"{"version": 1, "requireSeal": true, "extraSurfaces": [".acme/prompts/*"]}"#);
    let p = Project::new();
    p.write(".claude/commands/deploy.md", "deploy")
        .write("docs/AGENTS.md", "nested")
        .write(".acme/prompts/p.md", "an organisation's own layout")
        .write(".claude/skills/empty/.keep", "")
        .write("src/main.rs", "fn main() {}");
    std::fs::remove_file(p.path().join(".claude/skills/empty/.keep")).unwrap();
    let (code, out, err) = seal(p.path(), &file, &["verify", "--json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "Blocked");
    assert_eq!(
        v["unverified"],
        serde_json::json!([
            "./.acme/prompts/p.md",
            "./.claude/commands/deploy.md",
            "./docs/AGENTS.md"
        ])
    );
    assert_eq!(v["lockfile"], "missing");
    assert_eq!(v["policySource"], "machine");
    let (code, _, err) = seal(p.path(), &file, &["verify"]);
    assert_eq!(code, 1);
    assert!(err.contains("requires Seal"), "{err}");
    let (_, _, err) = seal(p.path(), &file, &["why", ".claude/commands/deploy.md"]);
    assert!(
        err.contains("requires Seal") && err.contains("decision: hidden"),
        "{err}"
    );
    let (_, _, err) = seal(p.path(), &file, &["why", ".acme/prompts/p.md"]);
    assert!(
        err.contains("surface row \".acme/prompts/*\" (machine policy)"),
        "{err}"
    );
    // Nothing to hide still fails: the project is not sealed (never the
    // exit 0 a missing seal.json could not get without the policy).
    let empty = Project::new();
    empty.write("src/main.rs", "fn main() {}");
    let (code, out, _) = seal(empty.path(), &file, &["verify", "--json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "Blocked");
    assert_eq!(v["unverified"], serde_json::json!([]));
    // A project with a seal.json is verified as usual.
    p.init(&[]);
    let (code, out, err) = seal(p.path(), &file, &["verify", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("lockfile").is_none());
}

#[test]
fn seal_policy_shows_every_setting_and_its_source() {
    if !root() {
        return;
    }
    let d = PolicyDir::new();
    let file = d.write(
        r#"{
  "version": 1,
  "minimumPolicy": "block",
  "requireSeal": true,
  "audit": {"file": "/var/log/seal/audit.jsonl", "syslog": {"format": "rfc5424"}},
  "extraSurfaces": [".acme/prompts/*"],
  "extraMasks": ["~/.acme-agent"],
  "protectedPaths": [".git/hooks/**", ".github/workflows/**"],
  "readOnly": true,
  "rehashEveryOpen": true,
  "strictVerify": true,
  "allowWrite": ["~/work"],
  "allowWriteProtected": ["~/.ssh"]
}"#,
    );
    let p = tampered("warn");
    let (code, out, err) = seal(p.path(), &file, &["policy", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["policyFile"]["path"], file.to_str().unwrap());
    assert_eq!(v["policyFile"]["present"], true);
    assert_eq!(v["project"]["lockfile"], "present");
    let s = &v["settings"];
    let expect = [
        ("minimumPolicy", serde_json::json!("block"), "machine"),
        ("projectPolicy", serde_json::json!("warn"), "project"),
        ("effectivePolicy", serde_json::json!("block"), "machine"),
        ("requireSeal", serde_json::json!(true), "machine"),
        (
            "auditFile",
            serde_json::json!("/var/log/seal/audit.jsonl"),
            "machine",
        ),
        (
            "extraSurfaces",
            serde_json::json!([".acme/prompts/*"]),
            "machine",
        ),
        (
            "extraMasks",
            serde_json::json!(["~/.acme-agent"]),
            "machine",
        ),
        (
            "protectedPaths",
            serde_json::json!([".git/hooks/**", ".github/workflows/**"]),
            "machine",
        ),
        ("readOnly", serde_json::json!(true), "machine"),
        ("rehashEveryOpen", serde_json::json!(true), "machine"),
        ("strictVerify", serde_json::json!(true), "machine"),
        ("allowWrite", serde_json::json!(["~/work"]), "machine"),
        (
            "allowWriteProtected",
            serde_json::json!(["~/.ssh"]),
            "machine",
        ),
    ];
    for (key, value, source) in expect {
        assert_eq!(s[key]["value"], value, "{key}");
        assert_eq!(s[key]["source"], source, "{key}");
    }
    assert_eq!(s["auditSyslog"]["value"]["format"], "rfc5424");
    assert_eq!(s["auditSyslog"]["value"]["facility"], "authpriv");
    assert_eq!(s.as_object().unwrap().len(), 14);
    let (code, out, err) = seal(p.path(), &file, &["policy"]);
    assert_eq!(code, 0);
    assert!(out.is_empty(), "people's output goes to stderr");
    assert!(
        err.contains(&format!("machine policy: {}", file.display())),
        "{err}"
    );
    assert!(
        err.contains("policy in force    [machine]    block"),
        "{err}"
    );
    assert!(
        err.contains("project asks       [project]    warn"),
        "{err}"
    );
}

/// `seal ARGS` in `project` under the policy file at `policy`, answering
/// `stdin`.
fn seal_answering(project: &Path, policy: &Path, args: &[&str], stdin: &str) -> (i32, String) {
    let out = support::output_with_stdin(
        Command::new(support::seal_bin())
            .args(args)
            .current_dir(project)
            .env(POLICY_VAR, policy)
            .env_remove("GITHUB_WORKSPACE"),
        stdin,
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn init_seals_the_extra_surfaces_and_strict_verify_is_a_policy_setting() {
    if !root() {
        return;
    }
    let p = Project::new();
    p.write(".acme/prompts/a.md", "a")
        .write("tools/agent/run.sh", "#!/bin/sh\n")
        .write("CLAUDE.md", "c")
        .write("src/main.rs", "fn main() {}");
    // A policy file that does not parse stops init before anything is
    // written, as it stops verify.
    let bad = PolicyDir::new();
    let bad = bad.write(r#"{"version": 1, "extraSurfaces": [".acme/*"]"#);
    let (code, err) = seal_answering(p.path(), &bad, &["init"], "y\n");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refused (rule strict-json)"), "{err}");
    assert!(!p.path().join("seal.json").exists());
    // The machine policy's extra surfaces are proposed with the built-in
    // ones, so the view hides nothing init saw.
    let d = PolicyDir::new();
    let file = d.write(r#"{"version": 1, "extraSurfaces": [".acme/prompts/*", "tools/agent"]}"#);
    let (code, err) = seal_answering(p.path(), &file, &["init"], "y\n");
    assert_eq!(code, 0, "{err}");
    let lock: serde_json::Value =
        serde_json::from_slice(&std::fs::read(p.path().join("seal.json")).unwrap()).unwrap();
    assert_eq!(
        lock["discovery"],
        serde_json::json!([".acme/prompts/*", "CLAUDE.md", "tools/agent"])
    );
    let (code, _, err) = seal(p.path(), &file, &["verify", "-v"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("no discovery pattern covers"), "{err}");
    // An artifact no pattern covers: plain verify follows seal.json alone;
    // the policy's strictVerify counts it, as --strict does.
    p.write("pkg/.mcp.json", "{}");
    let (code, _, err) = seal(p.path(), &file, &["verify"]);
    assert_eq!(code, 0, "{err}");
    let strict = d.write(
        r#"{"version": 1, "extraSurfaces": [".acme/prompts/*", "tools/agent"], "strictVerify": true}"#,
    );
    let (code, out, err) = seal(p.path(), &strict, &["verify", "--json"]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["unverified"], serde_json::json!(["./pkg/.mcp.json"]));
    assert_eq!(v["strict"], "true");
    let (_, _, err) = seal(p.path(), &strict, &["policy"]);
    assert!(err.contains("strict verify"), "{err}");
}

/// `seal verify -v`, `seal why` and the dry run ask the gate's own question
/// about an agent artifact no pattern covers, so they decide it under the
/// policy in force (the strictest of the project's and the machine's), as
/// the view does: a project on `warn` under a machine minimum of `block`
/// has the artifact hidden, and every command says so.
/// `seal why` says what the writable view would refuse at a path, asking
/// the gate as the view does: the built-in rules (seal.json, a sealed root,
/// git's side doors, a `.env`), the machine policy's protected paths, and
/// what the machine policy lifts.
#[test]
fn why_says_what_the_writable_view_refuses_there() {
    if !root() {
        return;
    }
    let d = PolicyDir::new();
    let file = d.write(
        r#"{"version": 1, "protectedPaths": [".github/workflows/**"],
            "allowWriteProtected": [".git/hooks"]}"#,
    );
    let p = tampered("block");
    p.write(".env", "KEY=v\n")
        .write(".github/workflows/ci.yml", "on: push\n")
        .write(".git/config", "[core]\n")
        .write(".git/hooks/pre-commit", "exit 0\n");
    let writes = |path: &str| {
        let (code, out, err) = seal(p.path(), &file, &["why", "--json", path]);
        assert_eq!(code, 0, "{path}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["writes"].as_str().map(str::to_string)
    };
    for (path, says) in [
        (".env", "a .env file"),
        ("pkg/.env", "a .env file"),
        (".git/config", "a git configuration"),
        ("seal.json", "seal.json changes only"),
        (
            ".claude/skills/review/SKILL.md",
            "an agent extension location",
        ),
        (
            ".github/workflows/ci.yml",
            "a protected path of the machine policy: immutable from inside; glob \".github/workflows/**\"",
        ),
        (".github", "may not be replaced or moved"),
    ] {
        let got = writes(path).unwrap_or_else(|| panic!("{path}: no writes"));
        assert!(got.contains(says), "{path}: {got}");
    }
    for open in ["src/main.rs", ".env.local", ".git/hooks/pre-commit"] {
        assert_eq!(writes(open), None, "{open}");
    }
    let (_, _, err) = seal(p.path(), &file, &["why", ".env"]);
    assert!(
        err.contains("writes:   refused in the writable view (a .env file"),
        "{err}"
    );
}

#[test]
fn verify_v_why_and_the_dry_run_decide_an_artifact_under_the_machine_minimum() {
    if !root() {
        return;
    }
    let d = PolicyDir::new();
    let file = d.write(r#"{"version": 1, "minimumPolicy": "block"}"#);
    let p = Project::new();
    p.write(".claude/skills/review/SKILL.md", "approved")
        .write("src/main.rs", "fn main() {}");
    p.init(&["--warn"]);
    p.write("docs/AGENTS.md", "nested instructions");
    let (code, _, err) = seal(p.path(), &file, &["verify", "-v"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("  hidden   ./docs/AGENTS.md  (") && err.contains("; block mode)"),
        "verify -v calls visible what the view hides: {err}"
    );
    let (_, _, err) = seal(p.path(), &file, &["why", "docs/AGENTS.md"]);
    assert!(err.contains("decision: hidden (block mode"), "{err}");
    let (code, out, err) = seal(p.path(), &file, &["run", "--dry-run", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let artifact = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "./docs/AGENTS.md")
        .unwrap();
    assert_eq!(artifact["visible"], false, "{artifact}");
    // Without the machine policy, the project's warn shows it.
    let none = d.write(r#"{"version": 1}"#);
    let (_, _, err) = seal(p.path(), &none, &["verify", "-v"]);
    assert!(err.contains("  visible  ./docs/AGENTS.md  ("), "{err}");
}
