//! The commands a reviewer reads: `seal why` (with `--json`), `seal
//! status` and `seal diff`, through the real binary on temporary projects
//! (with git history for `seal diff`). Hostile names and contents must
//! reach the terminal escaped, and every JSON document must parse.

use std::path::PathBuf;
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
