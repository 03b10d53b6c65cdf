//! The commands a reviewer reads: `seal why` (with `--json`), `seal
//! status` and `seal diff`, through the real binary on temporary projects
//! (with git history for `seal diff`). Hostile names and contents must
//! reach the terminal escaped, and every JSON document must parse.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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

fn git_in(dir: &Path, args: &[&str]) -> String {
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

#[test]
fn diff_shows_modified_added_removed_binary_and_renamed_files_against_history() {
    let (r, approved) = history_repo();
    r.write(".claude/skills/rev/SKILL.md", "line1\nLINE2\nline3\n")
        .write(".claude/skills/rev/logo.png", b"\x89PNG\0\x02tampered!")
        .write(".claude/skills/rev/run.sh", "#!/bin/sh\necho hi\n")
        .remove(".claude/skills/rev/gone.md");
    std::fs::rename(
        r.path(".claude/skills/rev/old-name.md"),
        r.path(".claude/skills/rev/new-name.md"),
    )
    .unwrap();
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
