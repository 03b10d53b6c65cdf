//! `.pre-commit-hooks.yaml`: the file parses as pre-commit reads it, every
//! hook has the keys pre-commit requires, and each hook's entry, run as
//! pre-commit runs it (entry, then `args`, no file names), is `seal verify`
//! with its exit codes: 0 verified, 1 blocked, 2 without a valid seal.json.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use yaml_rust2::{Yaml, YamlLoader};

const SEAL: &str = env!("CARGO_BIN_EXE_seal");

fn hooks() -> Vec<Yaml> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml");
    let text = fs::read_to_string(path).unwrap();
    let docs = YamlLoader::load_from_str(&text).expect(".pre-commit-hooks.yaml parses");
    assert_eq!(docs.len(), 1);
    docs[0].as_vec().expect("a list of hooks").clone()
}

/// Runs a hook's entry as pre-commit would, with the test's `seal` binary
/// standing for the one on PATH.
fn run_hook(hook: &Yaml, dir: &Path) -> i32 {
    let entry = hook["entry"].as_str().unwrap();
    let mut words = entry.split_whitespace();
    assert_eq!(words.next(), Some("seal"), "{entry}");
    let mut cmd = Command::new(SEAL);
    cmd.args(words);
    if let Some(args) = hook["args"].as_vec() {
        cmd.args(args.iter().map(|a| a.as_str().unwrap()));
    }
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .code()
        .unwrap()
}

#[test]
fn every_hook_is_complete_and_runs_seal_verify_on_the_whole_project() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["seal-verify", "seal-verify-system"]);
    for hook in &hooks {
        for key in ["id", "name", "entry", "language"] {
            assert!(hook[key].as_str().is_some(), "{key} missing in {hook:?}");
        }
        assert!(
            ["rust", "system"].contains(&hook["language"].as_str().unwrap()),
            "{hook:?}"
        );
        assert_eq!(hook["entry"].as_str(), Some("seal verify"));
        // The verdict is about the project, not the staged files.
        assert_eq!(hook["pass_filenames"].as_bool(), Some(false));
        assert_eq!(hook["always_run"].as_bool(), Some(true));
        assert!(hook["files"].is_badvalue(), "no file filter: {hook:?}");
        let stages: Vec<&str> = hook["stages"]
            .as_vec()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(stages.contains(&"pre-commit"), "{stages:?}");
    }
    // The rust hook builds this package, which must provide `seal`.
    let manifest =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"seal\""));

    let project = tempfile::tempdir().unwrap();
    let skill = project.path().join(".claude/skills/x/SKILL.md");
    fs::create_dir_all(skill.parent().unwrap()).unwrap();
    fs::write(&skill, "approved\n").unwrap();
    for hook in &hooks {
        assert_eq!(run_hook(hook, project.path()), 2, "no seal.json yet");
    }
    let mut init = Command::new(SEAL)
        .arg("init")
        .current_dir(project.path())
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut init.stdin.take().unwrap(), b"y\n").unwrap();
    assert!(init.wait().unwrap().success());
    for hook in &hooks {
        assert_eq!(run_hook(hook, project.path()), 0, "verified");
    }
    fs::write(&skill, "tampered\n").unwrap();
    for hook in &hooks {
        assert_eq!(run_hook(hook, project.path()), 1, "blocked");
    }
}

/// True when the real `pre-commit` is installed (CI installs it, .ci/run).
fn pre_commit_available() -> bool {
    let ok = Command::new("pre-commit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").is_err(),
            "CI installs pre-commit (.ci/run); it must be there"
        );
        eprintln!("SKIPPED: pre-commit is not installed");
    }
    ok
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(["-c", "user.email=test@example.com", "-c", "user.name=test"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

/// Whether this checkout has `.pre-commit-hooks.yaml` committed at HEAD
/// (pre-commit clones the repository at a commit).
fn manifest_committed(repo: &Path) -> bool {
    Command::new("git")
        .args(["cat-file", "-e", "HEAD:.pre-commit-hooks.yaml"])
        .current_dir(repo)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A git project with a pinned skill (and `files`, committed with it), and
/// a directory holding the test's `seal` for PATH.
struct HookProject {
    work: tempfile::TempDir,
    project: std::path::PathBuf,
}

impl HookProject {
    fn new(files: &[(&str, &str)]) -> HookProject {
        let work = tempfile::tempdir().unwrap();
        let bin = work.path().join("bin");
        fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(SEAL, bin.join("seal")).unwrap();
        let project = work.path().join("project");
        let skill = project.join(".claude/skills/x/SKILL.md");
        fs::create_dir_all(skill.parent().unwrap()).unwrap();
        fs::write(&skill, "approved\n").unwrap();
        let mut init = Command::new(SEAL)
            .arg("init")
            .current_dir(&project)
            .stdin(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut init.stdin.take().unwrap(), b"y\n").unwrap();
        assert!(init.wait().unwrap().success());
        for (rel, text) in files {
            fs::write(project.join(rel), text).unwrap();
        }
        git(&project, &["init", "-q", "."]);
        git(&project, &["add", "-A"]);
        git(&project, &["commit", "-qm", "init"]);
        HookProject { work, project }
    }

    /// `pre-commit ARGS` in the project, with the test's seal first on PATH.
    fn pre_commit(&self, args: &[&str]) -> std::process::Output {
        let path = format!(
            "{}:{}",
            self.work.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new("pre-commit")
            .args(args)
            .current_dir(&self.project)
            .env("PATH", path)
            .env("PRE_COMMIT_HOME", self.work.path().join("cache"))
            .output()
            .unwrap()
    }
}

#[test]
fn pre_commit_itself_accepts_the_manifest_and_runs_the_hook() {
    if !pre_commit_available() {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("pre-commit")
        .arg("validate-manifest")
        .arg(repo.join(".pre-commit-hooks.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // try-repo clones this repository at HEAD: only when it is a git
    // checkout with the manifest committed.
    if !manifest_committed(repo) {
        eprintln!("SKIPPED (try-repo): .pre-commit-hooks.yaml is not committed here");
        return;
    }
    let h = HookProject::new(&[]);
    let skill = h.project.join(".claude/skills/x/SKILL.md");
    let try_repo = || {
        let out = h.pre_commit(&[
            "try-repo",
            repo.to_str().unwrap(),
            "seal-verify-system",
            "--all-files",
        ]);
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = try_repo();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("seal verify (installed seal)") && out.contains("Passed"),
        "{out}"
    );
    fs::write(&skill, "tampered\n").unwrap();
    let (code, out) = try_repo();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("Failed") && out.contains("Mismatch   ./.claude/skills/x"),
        "{out}"
    );
}

/// The README's `.pre-commit-config.yaml` snippet.
fn readme_snippet() -> String {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("# .pre-commit-config.yaml\n")
        .expect("the README's pre-commit snippet");
    let block = &readme[start..];
    block[..block.find("```").unwrap()].to_string()
}

#[test]
fn the_readme_snippet_pinned_to_a_commit_resolves_and_runs() {
    if !pre_commit_available() {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(repo)
        .output()
        .unwrap();
    if !head.status.success() || !manifest_committed(repo) {
        eprintln!("SKIPPED: not a git checkout with .pre-commit-hooks.yaml committed");
        return;
    }
    let sha = String::from_utf8(head.stdout).unwrap().trim().to_string();
    let snippet = readme_snippet();
    let docs = YamlLoader::load_from_str(&snippet).expect("the snippet parses");
    let entry = &docs[0]["repos"][0];
    // The documented pin is a commit placeholder, never a tag that does not
    // exist (there are none yet).
    assert_eq!(
        entry["rev"].as_str(),
        Some("<full-commit-sha>"),
        "{snippet}"
    );
    // Filled in as the README says: this repository (for where you keep
    // sealfs) and a full commit SHA; the installed-seal hook, so that the
    // test does not build seal a second time.
    let config = snippet
        .replace("https://github.com/your-org/sealfs", repo.to_str().unwrap())
        .replace("<full-commit-sha>", &sha)
        .replace("id: seal-verify ", "id: seal-verify-system ");
    let h = HookProject::new(&[(".pre-commit-config.yaml", &config)]);
    let out = h.pre_commit(&["run", "--all-files"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{config}\n{text}\n{out:?}");
    assert!(
        text.contains("seal verify (installed seal)") && text.contains("Passed"),
        "{text}"
    );
}
