//! `seal run` end to end: a real private namespace, real masks, the sealed
//! view at the project's own path, an agent-like loader. Runs as root with a
//! fake home (HOME = a temporary directory) and a project inside a temporary
//! parent directory.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use run_world::{World, no_sealfs_mounts_left, open_up, status_and_stdout, wait_timeout, write};
use support::{fuse_available, seal_bin};

#[test]
fn verified_bundles_are_served_and_external_extensions_are_masked() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let script = r#"
        cat .claude/skills/review/SKILL.md; echo
        cat "$PWD/.agents/skills/lint/SKILL.md"; echo
        cat CLAUDE.md; echo
        echo "home-skills:$(ls -A ~/.claude/skills | tr '\n' ' ')"
        echo "home-memory:$(cat ~/.claude/CLAUDE.md)"
        echo "codex:$(cat ~/.codex/AGENTS.md)"
        echo "agents:$(ls -A ~/.agents/skills | tr '\n' ' ')"
        echo "gemini:$(cat ~/.gemini/GEMINI.md)"
        echo "parent:$(cat ../CLAUDE.md)$(cat ../AGENTS.md)$(cat ../../CLAUDE.md)"
        echo "creds:$(cat ~/.claude/.credentials.json)"
        echo "pwd:$PWD"
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "approved review skill");
    assert_eq!(lines[1], "approved lint skill");
    assert_eq!(lines[2], "project instructions");
    assert_eq!(lines[3], "home-skills:");
    assert_eq!(lines[4], "home-memory:");
    assert_eq!(lines[5], "codex:");
    assert_eq!(lines[6], "agents:");
    assert_eq!(lines[7], "gemini:");
    assert_eq!(lines[8], "parent:");
    assert_eq!(
        lines[9], "creds:credentials stay readable",
        "only extension locations are masked"
    );
    assert_eq!(lines[10], format!("pwd:{}", w.project.display()));
    assert!(err.contains("Result: Verified (block mode)"), "{err}");
    // Nothing changed on the host.
    assert_eq!(
        std::fs::read_to_string(w.home.join(".claude/CLAUDE.md")).unwrap(),
        "USER MEMORY"
    );
    no_sealfs_mounts_left(&w.root);
}

#[test]
fn relocating_variables_are_masked_too() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let alt = w.root.join("alt");
    write(
        &alt.join("claude/skills/z/SKILL.md"),
        "RELOCATED CLAUDE SKILL",
    );
    write(&alt.join("claude/CLAUDE.md"), "RELOCATED CLAUDE MEMORY");
    write(&alt.join("codex/AGENTS.md"), "RELOCATED CODEX");
    write(
        &alt.join("gemini-home/.gemini/GEMINI.md"),
        "RELOCATED GEMINI",
    );
    write(
        &alt.join("copilot/copilot-instructions.md"),
        "RELOCATED COPILOT",
    );
    write(&alt.join("opencode/AGENTS.md"), "RELOCATED OPENCODE");
    let env: Vec<(&str, PathBuf)> = vec![
        ("CLAUDE_CONFIG_DIR", alt.join("claude")),
        ("CODEX_HOME", alt.join("codex")),
        ("GEMINI_CLI_HOME", alt.join("gemini-home")),
        ("COPILOT_HOME", alt.join("copilot")),
        ("OPENCODE_CONFIG_DIR", alt.join("opencode")),
    ];
    let env_refs: Vec<(&str, &Path)> = env.iter().map(|(k, v)| (*k, v.as_path())).collect();
    let script = r#"
        echo "[$(ls -A "$CLAUDE_CONFIG_DIR/skills")$(cat "$CLAUDE_CONFIG_DIR/CLAUDE.md")]"
        echo "[$(cat "$CODEX_HOME/AGENTS.md")]"
        echo "[$(cat "$GEMINI_CLI_HOME/.gemini/GEMINI.md")]"
        echo "[$(cat "$COPILOT_HOME/copilot-instructions.md")]"
        echo "[$(cat "$OPENCODE_CONFIG_DIR/AGENTS.md")]"
    "#;
    let (code, out, err) = w.run_sh(script, &env_refs);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "[]\n[]\n[]\n[]\n[]\n", "{err}");
}

#[test]
fn tampered_bundles_are_unreadable_by_relative_and_absolute_path() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    w.tamper();
    write(&w.project.join(".claude/skills/new/SKILL.md"), "UNPINNED");
    let abs = w.project.join(".claude/skills/review/SKILL.md");
    let script = format!(
        "cat .claude/skills/review/SKILL.md; echo rel=$?; cat '{}'; echo abs=$?; ls -A .claude/skills; cat .claude/skills/new/SKILL.md; echo new=$?",
        abs.display()
    );
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "rel=1\nabs=1\nnew=1\n", "{err}");
    assert!(err.contains("Mismatch   ./.claude/skills/review"), "{err}");
    assert!(
        err.contains("Result: Blocked (block mode)"),
        "blocked bundles do not stop the run: {err}"
    );
}

#[test]
fn a_read_only_run_can_let_the_kernel_open_files() {
    // `seal run --read-only --kernel-opens`: the kernel opens files itself
    // (no round trip per open); bundles are still decided at every open's
    // lookup, and nothing can be written.
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let run_ko = |script: &str| {
        w.seal(
            &[
                "run",
                "--read-only",
                "--kernel-opens",
                "--",
                "sh",
                "-c",
                script,
            ],
            "",
            &[],
        )
    };
    let (code, out, err) = run_ko(
        "cat .claude/skills/review/SKILL.md; echo; cat src/main.rs; echo; \
         for i in 1 2 3; do cat CLAUDE.md >/dev/null || echo fail; done; \
         echo x >> src/main.rs 2>/dev/null || echo refused",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, "approved review skill\nfn main() {}\nrefused\n",
        "{err}"
    );
    assert!(
        err.contains("the sealed view (read-only; the kernel opens files itself)"),
        "{err}"
    );
    assert!(!err.contains("every open still asks"), "{err}");
    // A tampered bundle is not there, whatever the kernel kept.
    w.tamper();
    let (code, out, err) = run_ko("cat .claude/skills/review/SKILL.md; echo rel=$?");
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "rel=1\n", "{err}");
    // Without --read-only the flag is refused before anything runs.
    let (code, _, err) = w.seal(&["run", "--kernel-opens", "--", "true"], "", &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--read-only"), "{err}");
}

#[test]
fn exit_status_passes_through() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    assert_eq!(w.run_sh("exit 7", &[]).0, 7);
    assert_eq!(w.run_sh("exit 0", &[]).0, 0);
    assert_eq!(w.run_sh("kill -TERM $$", &[]).0, 128 + 15);
    let (code, _, err) = w.seal(&["run", "--", "/nonexistent/agent"], "", &[]);
    assert_eq!(code, 127, "{err}");
    assert!(err.contains("cannot execute"), "{err}");
}

/// `seal run` hashes at most `seal::run::AHEAD_BYTES` (32 MiB) before its
/// command starts: the summary covers what was verified within it, says
/// how many bundles it leaves out, and each of those is verified at its
/// first open like any bundle of the view (served when it holds, hidden
/// when tampered).
#[test]
fn the_summary_stops_at_its_budget_and_the_rest_is_verified_at_first_open() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    // Two bundles of 33 MiB each, sorted before the others: each alone
    // spends the budget, so the bundles after them are never started.
    let big = vec![b'x'; 33 << 20];
    for name in ["a-big", "b-big"] {
        let dir = w.project.join(".claude/skills").join(name);
        write(&dir.join("SKILL.md"), name);
        std::fs::write(dir.join("data.bin"), &big).unwrap();
    }
    write(
        &w.project.join(".claude/skills/c-late/SKILL.md"),
        "late skill",
    );
    let (code, _, err) = w.seal(
        &[
            "pin",
            ".claude/skills/a-big",
            ".claude/skills/b-big",
            ".claude/skills/c-late",
        ],
        "y\n",
        &[],
    );
    assert_eq!(code, 0, "pin: {err}");
    write(
        &w.project.join(".claude/skills/c-late/SKILL.md"),
        "TAMPERED",
    );
    let (code, out, err) = w.run_sh(
        "echo \"review:$(cat .claude/skills/review/SKILL.md)\"; \
         echo \"late:$(cat .claude/skills/c-late/SKILL.md 2>&1)\"; \
         echo \"big:$(head -c 3 .claude/skills/b-big/data.bin)\"",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("more bundles are verified when the command first opens them"),
        "{err}"
    );
    assert!(
        !err.contains("Mismatch"),
        "the tampered bundle was never started, so the summary cannot know it: {err}"
    );
    assert!(out.contains("review:approved review skill"), "{out}");
    assert!(
        out.contains("late:cat:") && !out.contains("TAMPERED"),
        "a bundle left to its first open is verified there: {out}"
    );
    assert!(out.contains("big:xxx"), "{out}");
    // The dry run verifies every bundle.
    let (_, _, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert!(
        err.contains("Mismatch") && !err.contains("more bundles"),
        "{err}"
    );
}

#[test]
fn an_agent_like_loader_sees_exactly_the_verified_set() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(
        &w.project.join(".claude/skills/evil/SKILL.md"),
        "UNPINNED SKILL",
    );
    write(&w.project.join("src/AGENTS.md"), "UNPINNED NESTED AGENTS");
    let loader = w.loader();
    let parse = |out: &[u8]| -> BTreeMap<String, String> {
        serde_json::from_slice(out).expect("loader output")
    };
    // Without seal run: everything, including user, parent and unpinned files.
    let plain = w.command("python3", &[&loader], "", &[]);
    let everything = parse(&plain.stdout);
    for want in [
        "USER SKILL",
        "USER MEMORY",
        "AGENT SKILLS USER",
        "PARENT CLAUDE",
        "GRANDPARENT CLAUDE",
        "UNPINNED SKILL",
    ] {
        assert!(
            everything.values().any(|v| v == want),
            "{want} not loaded without seal: {everything:#?}"
        );
    }
    // Under seal run: exactly the verified project-local set.
    let (code, out, err) = w.seal(&["run", "--", "python3", &loader], "", &[]);
    assert_eq!(code, 0, "{err}");
    let sealed = parse(out.as_bytes());
    let p = |rel: &str| w.project.join(rel).to_string_lossy().into_owned();
    let expected: BTreeMap<String, String> = [
        (p(".claude/skills/review/SKILL.md"), "approved review skill"),
        (p(".agents/skills/lint/SKILL.md"), "approved lint skill"),
        (p("CLAUDE.md"), "project instructions"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_string()))
    .collect();
    assert_eq!(sealed, expected, "{err}");
}

#[test]
fn a_mask_that_cannot_be_applied_blocks_and_nothing_runs() {
    if !fuse_available() {
        return;
    }
    // A project inside a user-level skills directory: masking that directory
    // would hide the project itself.
    let t = tempfile::Builder::new()
        .prefix("sealfs-run-")
        .tempdir()
        .unwrap();
    let root = std::fs::canonicalize(t.path()).unwrap();
    let home = root.join("home");
    let project = home.join(".claude/skills/project");
    write(&project.join("README.md"), "hello");
    let marker = root.join("ran");
    let run = |args: &[&str]| {
        let out = Command::new(seal_bin())
            .args(args)
            .current_dir(&project)
            .env("HOME", &home)
            .stdin(Stdio::piped())
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = {
        let mut c = Command::new(seal_bin());
        c.args(["init"])
            .current_dir(&project)
            .env("HOME", &home)
            .stdin(Stdio::piped());
        let mut child = c.stderr(Stdio::piped()).spawn().unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"y\n").unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "{err}");
    let script = format!("touch '{}'", marker.display());
    let (code, err) = run(&["run", "--", "sh", "-c", &script]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("cannot mask") && err.contains("Blocked"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    let (code, err) = run(&["run", "--dry-run"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("BLOCKED"), "{err}");
}

#[test]
fn missing_or_invalid_lockfile_runs_nothing() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let marker = w.root.join("ran");
    let script = format!("touch '{}'", marker.display());
    std::fs::write(w.project.join("seal.json"), "{\"version\": 1}").unwrap();
    let (code, out, err) = w.run_sh(&script, &[]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("invalid") && err.contains("nothing was run"),
        "{err}"
    );
    std::fs::remove_file(w.project.join("seal.json")).unwrap();
    let (code, _, err) = w.run_sh(&script, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("seal.json not found"), "{err}");
    assert!(!marker.exists());
}

#[test]
fn signals_are_forwarded_and_nothing_is_left_behind() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let tag = format!("sealfs-test-{}", std::process::id());
    // SIGTERM to seal reaches the command, whose trap exits 3.
    let mut child = Command::new(seal_bin())
        .args([
            "run",
            "--",
            "sh",
            "-c",
            &format!("trap 'exit 3' TERM; sleep 30 & wait; : {tag}-a"),
        ])
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = wait_timeout(&mut child, Duration::from_secs(10))
        .expect("seal run did not end after SIGTERM");
    assert_eq!(status.code(), Some(3), "the command's TERM trap ran");
    // SIGKILL of seal: the command dies with it (PID namespace), no mount stays.
    let mut child = Command::new(seal_bin())
        .args(["run", "--", "sh", "-c", &format!("sleep 30; : {tag}-b")])
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = Command::new("pgrep").args(["-f", &tag]).output().unwrap();
        if left.stdout.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processes left behind: {}",
            String::from_utf8_lossy(&left.stdout)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    no_sealfs_mounts_left(&w.root);
}

#[test]
fn runs_as_another_user() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    open_up(&w.root);
    let (code, out, err) = w.seal(
        &[
            "run",
            "--user",
            "nobody",
            "--",
            "sh",
            "-c",
            "id -u; cat CLAUDE.md; echo; echo $HOME",
        ],
        "",
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "65534");
    assert_eq!(lines[1], "project instructions");
    assert_ne!(
        lines[2],
        w.home.to_string_lossy(),
        "HOME is the target user's"
    );
    let (code, _, err) = w.seal(
        &["run", "--user", "no-such-user-xyz", "--", "true"],
        "",
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no such user"), "{err}");
}

#[test]
fn unprivileged_runs_in_a_user_namespace_or_fails_clearly() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    open_up(&w.root);
    let fuse_open_to_all = std::fs::metadata("/dev/fuse")
        .map(|m| m.permissions().mode() & 0o006 == 0o006)
        .unwrap_or(false);
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", seal_bin(), "run", "--", "sh", "-c"])
        .arg("id -u; cat .claude/skills/review/SKILL.md; echo; echo \"[$(cat ~/.claude/CLAUDE.md)]\"")
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .output()
        .unwrap();
    let code = out.status.code();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if fuse_open_to_all {
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, "65534\napproved review skill\n[]\n", "{stderr}");
    } else {
        assert!(
            !ci,
            "CI makes /dev/fuse usable by every user (.ci/run) so that this path is tested"
        );
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("/dev/fuse"),
            "the error names the obstacle: {stderr}"
        );
        assert!(stdout.is_empty());
    }
}

#[test]
fn dry_run_lists_what_the_command_would_see() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    write(
        &w.project.join(".claude/commands/deploy.md"),
        "UNPINNED COMMAND",
    );
    // The exit code is `seal verify`'s: the pinned bundles verify; the new
    // command is a surface artifact no discovery pattern covers (hidden).
    let (code, out, err) = w.seal(&["run", "--dry-run"], "", &[]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("visible  bundle   ./.claude/skills/review"),
        "{err}"
    );
    assert!(
        err.contains("hidden   artifact ./.claude/commands/deploy.md"),
        "{err}"
    );
    let masked = format!("masked   {}", w.home.join(".claude/skills").display());
    assert!(err.contains(&masked), "{err}");
    w.tamper();
    // Blocked bundles are hidden but the command would start: the real
    // run's exit code (the command's), 0 for the dry run.
    let (code, out, err) = w.seal(&["run", "--dry-run", "--json"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["status"], "Blocked");
    let entries = doc["entries"].as_array().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e["path"] == "./.claude/skills/review"
                && e["visible"] == false
                && e["state"] == "Mismatch")
    );
    assert!(
        entries
            .iter()
            .any(|e| e["path"] == "./.claude/commands/deploy.md" && e["visible"] == false)
    );
    let masks = doc["masks"].as_array().unwrap();
    let parent = w
        .root
        .join("parent/CLAUDE.md")
        .to_string_lossy()
        .into_owned();
    assert!(
        masks.iter().any(|m| m["location"] == parent.as_str()
            && m["state"] == "mask"
            && m["kind"] == "file")
    );
}

#[test]
fn why_explains_paths() {
    let w = World::new();
    write(&w.project.join("AGENTS.md"), "new");
    let (code, _, err) = w.seal(&["why", ".claude/skills/review/SKILL.md"], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("inside the sealed root ./.claude/skills/review") && err.contains("Verified"),
        "{err}"
    );
    let (_, _, err) = w.seal(&["why", "AGENTS.md"], "", &[]);
    assert!(
        err.contains("instruction file name \"AGENTS.md\"") && err.contains("hidden"),
        "{err}"
    );
    let (_, _, err) = w.seal(&["why", "src/main.rs"], "", &[]);
    assert!(err.contains("ordinary"), "{err}");
    let user_skill = w.home.join(".claude/skills/x/SKILL.md");
    let (_, _, err) = w.seal(&["why", user_skill.to_str().unwrap()], "", &[]);
    assert!(
        err.contains("project-external") && err.contains("empty read-only directory"),
        "{err}"
    );
    let parent = w.root.join("parent/CLAUDE.md");
    let (_, _, err) = w.seal(&["why", parent.to_str().unwrap()], "", &[]);
    assert!(
        err.contains("parent directory") && err.contains("empty read-only file"),
        "{err}"
    );
}

#[test]
fn git_finds_a_repository_above_the_project_as_on_the_host() {
    if !fuse_available() {
        return;
    }
    // A package of a monorepo: the repository's root is the project's parent.
    let w = World::new();
    let parent = w.project.parent().unwrap();
    let git = |dir: &Path, args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(parent, &["init", "-q"]);
    let host = git(&w.project, &["rev-parse", "--show-toplevel"]);
    let (code, out, err) = w.run_sh("git rev-parse --show-toplevel", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out, host,
        "git inside the run finds the same repository root"
    );
    assert_eq!(out.trim(), parent.to_str().unwrap());
}

/// The view's log going to a pipe nobody reads any more (`seal run ... 2>&1
/// | head`) loses lines and nothing else: a write to the closed pipe used to
/// panic the thread serving the request it logged, and every request queued
/// for that thread then waited for good (the command and `seal` hung, deaf
/// to every signal but `SIGKILL`).
#[test]
fn a_closed_log_pipe_does_not_stop_the_view() {
    if !fuse_available() {
        return;
    }
    use std::io::Read;
    let w = World::new();
    let mut child = Command::new(seal_bin())
        .args([
            "run",
            "--",
            "sh",
            "-c",
            "sleep 0.3; ls -R . >/dev/null; cat src/main.rs; for i in 1 2 3; do ls -R . >/dev/null; done",
        ])
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .env("SEAL_LOG", "sealfs::requests=debug")
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first bytes of the log, then close it, as `head` would.
    let mut first = [0u8; 64];
    let mut stderr = child.stderr.take().unwrap();
    stderr.read_exact(&mut first).unwrap();
    drop(stderr);
    let (status, out) = status_and_stdout(
        &mut child,
        Duration::from_secs(60),
        "seal run hung once its log pipe was closed",
    );
    assert!(status.success(), "{status:?}");
    assert_eq!(out, "fn main() {}");

    // Closed before seal writes a line (`seal run ... 2>&1 | head -c0`):
    // its summary is lost, the command runs all the same.
    let mut child = Command::new(seal_bin())
        .args(["run", "--", "cat", "src/main.rs"])
        .current_dir(&w.project)
        .env("HOME", &w.home)
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID")
        .stdout(Stdio::piped())
        .stderr(support::closed_pipe())
        .spawn()
        .unwrap();
    let (status, out) = status_and_stdout(
        &mut child,
        Duration::from_secs(60),
        "seal run hung with its stderr closed",
    );
    assert!(status.success(), "{status:?}");
    assert_eq!(out, "fn main() {}");
    no_sealfs_mounts_left(&w.root);
}

/// A run's view is warmed (`mount/warm.rs`): the names of the project's
/// ordinary directories are listed into the kernel in the background, so a
/// command that `lstat`s files by name (a first `git status` checks every
/// file it tracks) asks the view nothing for them. 500 names in one
/// directory come in one listing's attributes too.
#[test]
fn a_run_lists_ordinary_directories_into_the_kernel_before_the_command_asks() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    for i in 0..500 {
        write(&w.project.join(format!("pkg/many/file-{i:03}.txt")), "x");
    }
    write(&w.project.join("pkg/a/b/deep.txt"), "deep");
    let script = "sleep 2; stat -c %s pkg/a/b/deep.txt pkg/many/file-000.txt pkg/many/file-499.txt";
    let log = Path::new("sealfs::requests=debug,sealfs::mount::warm=debug");
    let (code, out, err) = w.seal(&["run", "--", "sh", "-c", script], "", &[("SEAL_LOG", log)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "4\n1\n1\n");
    assert!(err.contains("warming: "), "no warming was logged: {err}");
    let lookups: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(" LOOKUP ") && (l.contains("deep.txt") || l.contains("\"file-")))
        .collect();
    assert!(lookups.is_empty(), "looked up after all: {lookups:#?}");
}
