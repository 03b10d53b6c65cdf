//! The CLI conventions of issue 12, through the real binary:
//!
//! * a bundle over 100 MiB is named with its size before `init` or `pin`
//!   asks (progress during a large file is tested in tests/progress.rs and
//!   src/cli/progress.rs);
//! * `seal pin` lists removed keys only with `--prune`, else counts them and
//!   names the flag;
//! * `seal run` says what Blocked means for the run, in the same words and
//!   with the same exit code in the dry run as in the real run;
//! * `seal verify -v` lists the agent artifacts no discovery pattern covers
//!   (the view hides them) with the `seal pin` command that seals each, and
//!   `seal pin` offers patterns for them in its one confirmation; `seal why`
//!   and `seal run --dry-run` agree with the listing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::{Project, fuse_available, output_with_stdin, seal_bin};

/// `seal ARGS` in `dir` with `stdin` and a scratch HOME (so that the masks
/// of `seal run` never depend on the machine): (code, stdout, stderr).
fn seal_in(dir: &Path, home: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = output_with_stdin(
        Command::new(seal_bin())
            .args(args)
            .current_dir(dir)
            .env("HOME", home)
            .env_remove("SUDO_UID")
            .env_remove("SUDO_GID"),
        stdin,
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A project (with a scratch home beside it) holding one Claude skill,
/// initialised with `seal init`.
struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Repo {
    fn new(policy: &str) -> Repo {
        let tmp = tempfile::Builder::new()
            .prefix("sealfs-conv-")
            .tempdir()
            .unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("project");
        let home = base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        let r = Repo {
            _tmp: tmp,
            root,
            home,
        };
        r.write(".claude/skills/review/SKILL.md", "review skill");
        r.write("src/main.rs", "fn main() {}");
        let mut args = vec!["init"];
        if policy == "warn" {
            args.push("--warn");
        }
        r.ok(&args, "y\n");
        r
    }

    fn write(&self, rel: &str, content: &str) -> &Repo {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    fn seal(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        seal_in(&self.root, &self.home, args, stdin)
    }

    /// Runs and expects exit 0; returns stderr.
    fn ok(&self, args: &[&str], stdin: &str) -> String {
        let (code, out, err) = self.seal(args, stdin);
        assert_eq!(code, 0, "seal {args:?}: {err}");
        assert_eq!(out, "", "seal {args:?}: stdout");
        err
    }

    fn lock(&self) -> String {
        std::fs::read_to_string(self.root.join("seal.json")).unwrap()
    }

    fn discovery(&self) -> Vec<String> {
        let doc: serde_json::Value = serde_json::from_str(&self.lock()).unwrap();
        doc["discovery"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect()
    }
}

const VERIFIED_ONE: &str =
    "1 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n";

// ---------------------------------------------------------------------------
// Large bundles
// ---------------------------------------------------------------------------

const MIB: u64 = 1024 * 1024;

fn sparse(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

/// What pin and init say before the question when nothing they approve
/// runs anything.
const NOTHING_RUNS: &str = "What this approval lets run: no MCP server, hook, plugin, command or \
                            script was found (the text of its files still instructs the agent)\n";

fn warning(command: &str, key: &str, size: &str) -> String {
    format!(
        "seal: {command}: warning: {key} is {size} (over 100 MiB): every verification of it, and \
         every open in the sealed view, reads all of it\n"
    )
}

#[test]
fn bundles_over_100_mib_are_named_with_their_size_before_the_question() {
    let p = Project::new();
    p.write(".claude/skills/big/SKILL.md", "big");
    sparse(
        &p.path().join(".claude/skills/big/data.bin"),
        100 * MIB + MIB / 2,
    );
    // Exactly 100 MiB is not over.
    sparse(&p.path().join(".claude/skills/edge/data.bin"), 100 * MIB);
    let (code, _, err) = p.seal(&["init"], "n\n");
    assert_eq!(code, 2, "{err}");
    let warned = warning("init", "./.claude/skills/big", "100.5 MiB");
    assert!(
        err.contains(&format!(
            "  + ./.claude/skills/edge  (1 files)\n    added     data.bin  (binary, 104857600 \
             bytes)\n\n{NOTHING_RUNS}\n{warned}Apply these changes? [y/N] "
        )),
        "{err}"
    );
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert!(!p.path().join("seal.json").exists());
    p.init(&[]);
    // Nothing to pin: no warning.
    let (code, _, err) = p.seal(&["pin"], "");
    assert_eq!((code, err.as_str()), (0, "\n2 unchanged\nNo changes\n"));
    // A change to the large bundle is warned about again; the unchanged
    // one is not.
    sparse(&p.path().join(".claude/skills/big/data.bin"), 120 * MIB);
    let (code, _, err) = p.seal(&["pin"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!(
            "  ~ modified  ./.claude/skills/big  (2 files)\n    modified  data.bin  (binary, now \
             125829120 bytes)\n\n1 unchanged\n\n{NOTHING_RUNS}\n{}Apply these pin changes? [y/N] \
             Pinned 1 bundle(s)\n",
            warning("pin", "./.claude/skills/big", "120.0 MiB")
        )
    );
    // A targeted pin warns too.
    sparse(&p.path().join("docs/big/data.bin"), 150 * MIB);
    let (code, _, err) = p.seal(&["pin", "docs/big"], "n\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&warning("pin", "./docs/big", "150.0 MiB")),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Removed keys
// ---------------------------------------------------------------------------

#[test]
fn removed_keys_are_listed_only_when_prune_drops_them() {
    let p = Project::new();
    for s in ["a", "b", "c"] {
        p.write(&format!(".claude/skills/{s}/SKILL.md"), s);
    }
    p.init(&[]);
    let before = std::fs::read(p.path().join("seal.json")).unwrap();
    std::fs::remove_dir_all(p.path().join(".claude/skills/a")).unwrap();
    std::fs::remove_dir_all(p.path().join(".claude/skills/b")).unwrap();
    let (code, _, err) = p.seal(&["pin"], "");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "\n1 unchanged\n2 removed (not on disk, kept in seal.json): run with --prune to drop them\n\
         No changes\n"
    );
    assert!(!err.contains("- removed"), "{err}");
    assert_eq!(std::fs::read(p.path().join("seal.json")).unwrap(), before);
    let (code, _, err) = p.seal(&["pin", "--prune"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "  - removed   ./.claude/skills/a\n  - removed   ./.claude/skills/b\n\n1 unchanged\nApply \
         these pin changes? [y/N] Pinned 2 bundle(s)\n"
    );
    // A targeted pin never mentions them.
    p.write(".claude/skills/c/SKILL.md", "c2");
    std::fs::remove_dir_all(p.path().join(".claude/skills/c")).unwrap();
    p.write(".claude/skills/d/SKILL.md", "d");
    let (code, _, err) = p.seal(&["pin", ".claude/skills/d"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("removed"), "{err}");
}

// ---------------------------------------------------------------------------
// seal run: what Blocked means
// ---------------------------------------------------------------------------

const BLOCKED_ONE: &str = "Blocked for this run: 1 bundle that is not verified is hidden from the \
                           command; it starts and runs with the rest of the project\n";

#[test]
fn the_dry_run_says_what_blocked_means_and_exits_as_the_run_would() {
    let r = Repo::new("block");
    let (code, out, err) = r.seal(&["run", "--dry-run"], "");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(!err.contains("Blocked"), "{err}");
    r.write(".claude/skills/review/SKILL.md", "TAMPERED");
    r.write(".claude/skills/new/SKILL.md", "unpinned");
    let (code, out, err) = r.seal(&["run", "--dry-run"], "");
    // The command would start: the exit code is not verify's 1.
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.ends_with(
            "Result: Blocked (block mode)\nBlocked for this run: 2 bundles that are not verified \
             are hidden from the command; it starts and runs with the rest of the project\n"
        ),
        "{err}"
    );
    std::fs::remove_dir_all(r.root.join(".claude/skills/new")).unwrap();
    let (_, _, err) = r.seal(&["run", "--dry-run"], "");
    assert!(
        err.ends_with(&format!("Result: Blocked (block mode)\n{BLOCKED_ONE}")),
        "{err}"
    );
    let (code, out, err) = r.seal(&["run", "--dry-run", "--json"], "");
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["status"], "Blocked");
    // `seal verify` keeps its own exit code.
    let (code, _, _) = r.seal(&["verify"], "");
    assert_eq!(code, 1);
}

#[test]
fn warn_mode_is_not_blocked() {
    let r = Repo::new("warn");
    r.write(".claude/skills/review/SKILL.md", "TAMPERED");
    let (code, _, err) = r.seal(&["run", "--dry-run"], "");
    assert_eq!(code, 0, "{err}");
    assert!(err.ends_with("Result: Warning (warn mode)\n"), "{err}");
}

#[test]
fn the_real_run_says_the_same_and_runs_the_command_with_the_rest() {
    if !fuse_available() {
        return;
    }
    let r = Repo::new("block");
    r.write(".claude/skills/review/SKILL.md", "TAMPERED");
    let (code, _, dry) = r.seal(&["run", "--dry-run"], "");
    assert_eq!(code, 0, "{dry}");
    assert!(dry.contains(BLOCKED_ONE), "{dry}");
    let (code, out, err) = r.seal(&["run", "--", "true"], "");
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains(&format!("Result: Blocked (block mode)\n{BLOCKED_ONE}")),
        "{err}"
    );
    // What the line says: the bundle is hidden, the rest is there.
    let (code, _, err) = r.seal(
        &[
            "run",
            "--",
            "sh",
            "-c",
            "test ! -e .claude/skills/review && test -f src/main.rs && exit 7",
        ],
        "",
    );
    assert_eq!(code, 7, "{err}");
}

// ---------------------------------------------------------------------------
// Hidden paths explain themselves: seal verify -v
// ---------------------------------------------------------------------------

fn artifact_line(word: &str, path: &str, rule: &str, mode: &str, cmd: &str) -> String {
    format!("  {word:<8} {path}  ({rule}; {mode})\n           to seal it: {cmd}\n")
}

const COMMANDS_ROW: &str = "surface row \".claude/commands/*\" (Claude Code)";

/// A repo whose lockfile covers its skill, with three artifacts no pattern
/// covers.
fn repo_with_uncovered(policy: &str) -> Repo {
    let r = Repo::new(policy);
    r.write(".claude/commands/deploy.md", "deploy")
        .write("docs/AGENTS.md", "nested instructions")
        .write("docs/my notes/CLAUDE.md", "quoted");
    r
}

#[test]
fn verify_v_lists_uncovered_artifacts_after_the_result_without_changing_it() {
    let r = repo_with_uncovered("block");
    // Plain verify is the reference's output, byte for byte.
    assert_eq!(r.ok(&["verify"], ""), VERIFIED_ONE);
    let err = r.ok(&["verify", "-v"], "");
    let expected = format!(
        "{VERIFIED_ONE}\nAgent artifacts no discovery pattern covers (3):\n{}{}{}'seal pin' offers \
         discovery patterns for them.\n",
        artifact_line(
            "hidden",
            "./.claude/commands/deploy.md",
            COMMANDS_ROW,
            "block mode",
            "seal pin .claude/commands/deploy.md"
        ),
        artifact_line(
            "hidden",
            "./docs/AGENTS.md",
            "instruction file name \"AGENTS.md\" (loaded at any depth)",
            "block mode",
            "seal pin docs/AGENTS.md"
        ),
        artifact_line(
            "hidden",
            "./docs/my notes/CLAUDE.md",
            "instruction file name \"CLAUDE.md\" (loaded at any depth)",
            "block mode",
            "seal pin 'docs/my notes/CLAUDE.md'"
        ),
    );
    assert_eq!(err, expected);
    // --json is untouched by -v.
    let (code, out, _) = r.seal(&["verify", "--json", "-v"], "");
    let (_, plain, _) = r.seal(&["verify", "--json"], "");
    assert_eq!((code, out), (0, plain));
    // The exit code stays the spec's: Blocked is still 1, with the list.
    r.write(".claude/skills/review/SKILL.md", "TAMPERED");
    let (code, _, err) = r.seal(&["verify", "-v"], "");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "Result: Blocked (block mode)\n\nAgent artifacts no discovery pattern covers (3):"
        ),
        "{err}"
    );
}

#[test]
fn why_and_the_dry_run_agree_with_the_listing() {
    for policy in ["block", "warn"] {
        let r = repo_with_uncovered(policy);
        r.write(".claude/settings.json", "{}");
        let err = r.ok(&["verify", "-v"], "");
        let listed: Vec<(String, String)> = err
            .lines()
            .filter(|l| l.starts_with("  hidden ") || l.starts_with("  visible "))
            .map(|l| {
                let mut w = l.split_whitespace();
                let word = w.next().unwrap().to_string();
                let path = l[11..].split("  (").next().unwrap().to_string();
                (word, path)
            })
            .collect();
        assert_eq!(listed.len(), 4, "{err}");
        let (_, out, _) = r.seal(&["run", "--dry-run", "--json"], "");
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        for (word, path) in &listed {
            let want = if policy == "block" {
                "hidden"
            } else {
                "visible"
            };
            assert_eq!(word, want, "{policy}: {path}");
            let (_, _, why) = r.seal(&["why", path.trim_start_matches("./")], "");
            assert!(why.contains(&format!("decision: {word} ")), "{why}");
            let entry = doc["entries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["path"] == path.as_str() && e["kind"] == "artifact")
                .unwrap_or_else(|| panic!("{path} not in the dry run: {out}"));
            assert_eq!(entry["visible"], word == "visible", "{entry}");
        }
        let artifacts = doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "artifact")
            .count();
        assert_eq!(artifacts, listed.len(), "{out}");
        if policy == "warn" {
            assert!(
                err.contains("; warn mode; every load is logged)\n"),
                "{err}"
            );
        }
    }
}

#[test]
fn each_suggested_command_seals_its_artifact() {
    let r = repo_with_uncovered("block");
    // From the parent directory with -C: the suggestions repeat it.
    let parent = r.root.parent().unwrap().to_path_buf();
    let (code, _, err) = seal_in(&parent, &r.home, &["-C", "project", "verify", "-v"], "");
    assert_eq!(code, 0, "{err}");
    let commands: Vec<String> = err
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("to seal it: "))
        .map(str::to_string)
        .collect();
    assert_eq!(commands.len(), 3, "{err}");
    assert!(
        commands[0].starts_with("seal -C project pin "),
        "{commands:?}"
    );
    let bin_dir = Path::new(seal_bin()).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for cmd in &commands {
        // Pasted into a shell as it is printed.
        let out = output_with_stdin(
            Command::new("sh")
                .args(["-c", cmd])
                .current_dir(&parent)
                .env("PATH", &path)
                .env("HOME", &r.home),
            "y\n",
        );
        assert!(out.status.success(), "{cmd}: {:?}", out);
    }
    let err = r.ok(&["verify", "-v"], "");
    assert_eq!(
        err,
        "4 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n"
    );
}

#[test]
fn names_that_cannot_be_keys_or_would_fool_a_terminal_are_shown_safely() {
    let r = Repo::new("block");
    r.write(".claude/commands/back\\slash.md", "x");
    // Nothing pin could offer: no hint that it would.
    let err = r.ok(&["verify", "-v"], "");
    assert!(
        err.contains("cannot be sealed") && !err.contains("offers"),
        "{err}"
    );
    r.write(".claude/commands/esc\u{1b}[31m.md", "y");
    let err = r.ok(&["verify", "-v"], "");
    assert!(
        err.ends_with("'seal pin' offers discovery patterns for them.\n"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(
        err.contains(
            "  hidden   ./.claude/commands/back\\\\slash.md  (surface row \".claude/commands/*\" (Claude \
             Code); block mode)\n           cannot be sealed: the bundle key contains a backslash"
        ),
        "{err}"
    );
    assert!(
        err.contains("to seal it: seal pin '.claude/commands/esc\\u{001b}[31m.md'\n"),
        "{err}"
    );
    // seal pin offers what it can and says what it cannot.
    let (code, _, err) = r.seal(&["pin"], "n\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(
            "seal: pin: warning: not proposing ./.claude/commands/back\\\\slash.md: the bundle key \
             contains a backslash"
        ),
        "{err}"
    );
    assert!(
        err.contains("Discovery patterns to add:\n  + .claude/commands/esc\\u{001b}[31m.md\n"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// seal pin offers discovery patterns for them
// ---------------------------------------------------------------------------

#[test]
fn bulk_pin_offers_patterns_for_uncovered_artifacts_in_one_confirmation() {
    let r = repo_with_uncovered("block");
    let summary = format!(
        "Discovery patterns to add:\n  + .claude/commands/*\n  + docs/AGENTS.md\n  + docs/my \
         notes/CLAUDE.md\n\n  + new       ./.claude/commands/deploy.md  (1 files)\n    added     \
         deploy.md  (+1 lines)\n  + new       ./docs/AGENTS.md  (1 files)\n    added     AGENTS.md  \
         (+1 lines)\n  + new       ./docs/my notes/CLAUDE.md  (1 files)\n    added     CLAUDE.md  \
         (+1 lines)\n\n1 unchanged\n\n{NOTHING_RUNS}\nApply these pin changes? [y/N] "
    );
    let before = r.lock();
    let (code, _, err) = r.seal(&["pin"], "n\n");
    assert_eq!(code, 2);
    assert_eq!(err, format!("{summary}seal: pin aborted\n"));
    assert_eq!(r.lock(), before, "declined: nothing written");
    let err = r.ok(&["pin"], "y\n");
    assert_eq!(err, format!("{summary}Pinned 3 bundle(s)\n"));
    assert_eq!(
        r.discovery(),
        [
            ".claude/commands/*",
            ".claude/skills/*",
            "docs/AGENTS.md",
            "docs/my notes/CLAUDE.md"
        ]
    );
    assert_eq!(
        r.ok(&["verify", "-v"], ""),
        "4 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n"
    );
    let (_, _, why) = r.seal(&["why", ".claude/commands/deploy.md"], "");
    assert!(why.contains("decision: visible"), "{why}");
    // Nothing left to offer.
    assert_eq!(r.ok(&["pin"], ""), "\n4 unchanged\nNo changes\n");
    // A targeted pin offers nothing.
    r.write(".claude/agents/helper.md", "agent");
    r.write(".claude/skills/other/SKILL.md", "other");
    let err = r.ok(&["pin", ".claude/skills/other"], "y\n");
    assert!(!err.contains("agents"), "{err}");
}

#[test]
fn a_pattern_that_would_nest_gives_way_to_the_exact_one() {
    let r = Repo::new("block");
    r.write(".claude/commands/sub/x.md", "x");
    // The narrowest exact pattern: .claude/commands/sub/x.md (depth 4).
    r.ok(&["pin", ".claude/commands/sub/x.md"], "y\n");
    r.write(".claude/commands/deploy.md", "deploy");
    // .claude/commands/* would nest with it: the exact pattern is offered.
    let err = r.ok(&["pin"], "y\n");
    assert!(
        err.starts_with(
            "Discovery patterns to add:\n  + .claude/commands/deploy.md\n\n  + new       \
             ./.claude/commands/deploy.md  (1 files)\n"
        ),
        "{err}"
    );
    r.ok(&["verify"], "");
}

#[test]
fn a_root_that_cannot_be_pinned_is_left_out_not_blocking() {
    let r = Repo::new("block");
    r.write(".claude/commands/a.md", "a");
    nix::unistd::mkfifo(
        &r.root.join(".claude/commands/pipe.md"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    let before = r.lock();
    let (code, _, err) = r.seal(&["pin"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.starts_with(
            "seal: pin: warning: not proposing ./.claude/commands/pipe.md: ./.claude/commands/pipe.md: \
             . is a FIFO"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "Discovery patterns to add:\n  + .claude/commands/a.md\n\n  + new       \
             ./.claude/commands/a.md  (1 files)\n"
        ),
        "{err}"
    );
    assert_ne!(r.lock(), before);
    assert_eq!(r.discovery(), [".claude/commands/a.md", ".claude/skills/*"]);
    // The FIFO stays hidden, and says so.
    let err = r.ok(&["verify", "-v"], "");
    assert!(
        err.contains("  hidden   ./.claude/commands/pipe.md  "),
        "{err}"
    );
}
