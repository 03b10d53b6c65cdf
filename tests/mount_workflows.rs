//! Real work inside the writable view, checked on the disk afterwards: git
//! (init, add, commit, branch, checkout, rebase, stash, gc), an editor's
//! atomic save, `cargo build` with `target/` in the project, a Python
//! virtual environment, an SQLite database in WAL mode written by two
//! processes at once, two concurrent writers, and hard links as `tar`, `du`
//! and `cp -a` see them. First in `seal mount
//! --writable`, then (git, atomic saves and the concurrent writers) inside
//! `seal run -- sh -c ...`, and an agent-like script under `seal run` that
//! edits, commits and tries every protected write.
//!
//! `seal run` is used through its command line only: the tests assert what
//! can be observed (exit status, output, the disk, the audit log).

mod support;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use support::*;

const SKILL: &str = "---\nname: review\ndescription: reviews\n---\nReview carefully.\n";

/// A project with a pinned skill and `CLAUDE.md` (root and nested) and a
/// few ordinary files; `seal verify` passes on it.
fn project() -> Project {
    let p = Project::new();
    p.write(".claude/skills/review/SKILL.md", SKILL)
        .write("CLAUDE.md", "Project instructions.\n")
        .write("guide/CLAUDE.md", "Guide instructions.\n")
        .write("src/app.py", "def app():\n    return 1\n")
        .write("src/old.py", "obsolete = True\n")
        .write("README.md", "# project\n");
    p.init(&[]);
    fs::set_permissions(p.path(), fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Environment for git in tests: an identity, no system or global config.
fn git_env(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_AUTHOR_NAME", "Agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
        .env("GIT_COMMITTER_NAME", "Agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
}

/// Runs `sh -c script` in `dir`; panics with its output unless it succeeds.
fn sh(dir: &Path, script: &str) -> String {
    let out = git_env(Command::new("sh").args(["-c", script]).current_dir(dir))
        .output()
        .unwrap();
    check(&out, script)
}

fn check(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// git in `dir` on the disk (outside any view).
fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_env(Command::new("git").args(args).current_dir(dir))
        .output()
        .unwrap();
    check(&out, &format!("git {args:?}"))
}

// ---------------------------------------------------------------------------
// The workflows, each a shell script run in a directory (the view, or the
// project under `seal run`) and a check of the disk.

/// Run where `git init -q -b main` was run on the disk beforehand: no
/// repository is made inside a view (docs/SECURITY.md).
const GIT_SCRIPT: &str = "set -e
git add -A
git commit -q -m init
echo 'print(2)' >> src/app.py
git commit -q -a -m second
git branch feature
git checkout -q feature
echo feature > feature.txt
git add feature.txt
git commit -q -m feature
git checkout -q main
echo 'main change' >> README.md
git commit -q -a -m 'main change'
git checkout -q feature
git rebase -q main
echo wip >> src/app.py
git stash -q
test \"$(git stash list | wc -l)\" = 1
git stash pop -q
git diff --name-only
git gc -q
git log --format=%s";

/// Checks the repository `GIT_SCRIPT` left; `status` is what `git status
/// --porcelain` says of the working tree afterwards.
fn check_git(project: &Path, log: &str, status: &str) {
    // The popped stash, then the history.
    assert_eq!(log, "src/app.py\nfeature\nmain change\nsecond\ninit\n");
    let fsck = git(project, &["fsck", "--full", "--strict"]);
    assert!(!fsck.contains("error"), "{fsck}");
    assert_eq!(
        git(project, &["log", "--format=%s", "main"]),
        "main change\nsecond\ninit\n"
    );
    assert_eq!(git(project, &["branch", "--show-current"]), "feature\n");
    assert_eq!(git(project, &["stash", "list"]), "");
    assert_eq!(git(project, &["status", "--porcelain"]), status);
    assert_eq!(
        fs::read_to_string(project.join("feature.txt")).unwrap(),
        "feature\n"
    );
    // gc packed the objects.
    let packs = fs::read_dir(project.join(".git/objects/pack"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "pack")
        })
        .count();
    assert!(packs >= 1, "git gc left no pack");
}

/// An editor's save three ways: a temporary file synced and renamed over
/// (keeping the mode), `sed -i` (its own temporary file and rename), and
/// vim.
const SAVE_SCRIPT: &str = "set -e
chmod 640 src/app.py
tmp=src/.app.py.swp
printf 'def app():\\n    return 3\\n' > $tmp
chmod 640 $tmp
sync $tmp
mv -f $tmp src/app.py
sed -i 's/# project/# saved by sed/' README.md
vim -u NONE -N -n -es -c '%s/Project/Saved/' -c 'wq' CLAUDE.txt
ls -A src | tr '\\n' ' '";

fn prepare_save(project: &Path) {
    fs::write(
        project.join("CLAUDE.txt"),
        "Project notes (not an instruction file).\n",
    )
    .unwrap();
}

fn check_save(project: &Path, listing: &str) {
    assert_eq!(
        fs::read_to_string(project.join("src/app.py")).unwrap(),
        "def app():\n    return 3\n"
    );
    assert_eq!(
        fs::metadata(project.join("src/app.py")).unwrap().mode() & 0o777,
        0o640
    );
    assert!(
        fs::read_to_string(project.join("README.md"))
            .unwrap()
            .starts_with("# saved by sed\n")
    );
    assert_eq!(
        fs::read_to_string(project.join("CLAUDE.txt")).unwrap(),
        "Saved notes (not an instruction file).\n"
    );
    assert_eq!(listing.trim(), "app.py old.py", "no temporary file is left");
}

/// Two processes writing different files at once, 8 MiB each of their own
/// byte.
const WRITERS_SCRIPT: &str = "set -e
mkdir -p out
w() { head -c 8388608 /dev/zero | tr '\\0' \"$2\" > \"out/$1\"; }
w a A & w b B & wait
sync out/a out/b
wc -c < out/a";

fn check_writers(project: &Path) {
    for (name, byte) in [("a", b'A'), ("b", b'B')] {
        let bytes = fs::read(project.join("out").join(name)).unwrap();
        assert_eq!(bytes.len(), 8 << 20, "out/{name}");
        assert!(
            bytes.iter().all(|b| *b == byte),
            "out/{name} holds foreign bytes"
        );
    }
}

// ---------------------------------------------------------------------------
// Inside `seal mount --writable`.

struct Rw {
    p: Project,
    m: Mounted,
}

impl Rw {
    fn new() -> Rw {
        let p = project();
        let m = Mounted::new(&p, &["--writable"]);
        Rw { p, m }
    }

    fn view(&self) -> &Path {
        &self.m.mountpoint
    }

    fn disk(&self) -> &Path {
        self.p.path()
    }
}

#[test]
fn git_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    git(v.disk(), &["init", "-q", "-b", "main"]);
    let log = sh(v.view(), GIT_SCRIPT);
    check_git(v.disk(), &log, " M src/app.py\n");
    assert_eq!(
        fs::read_to_string(v.disk().join("src/app.py")).unwrap(),
        "def app():\n    return 1\nprint(2)\nwip\n"
    );
    // The view and the disk agree on the state.
    assert_eq!(
        sh(v.view(), "git status --porcelain"),
        git(v.disk(), &["status", "--porcelain"])
    );
}

#[test]
fn atomic_saves_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    prepare_save(v.disk());
    let listing = sh(v.view(), SAVE_SCRIPT);
    check_save(v.disk(), &listing);
}

#[test]
fn concurrent_writers_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    assert_eq!(sh(v.view(), WRITERS_SCRIPT).trim(), "8388608");
    check_writers(v.disk());
}

/// Hard links made through the view and on the disk are recognised by the
/// tools that look for them: `tar` stores the second name as a link, `du`
/// counts the file once, `cp -a` copies them as links.
#[test]
fn tools_recognise_hard_links_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    fs::create_dir(v.disk().join("data")).unwrap();
    fs::write(v.disk().join("data/big"), vec![7u8; 1 << 20]).unwrap();
    fs::hard_link(v.disk().join("data/big"), v.disk().join("data/on-disk")).unwrap();
    let listing = sh(
        v.view(),
        "ln data/big data/in-view && tar -cf - data | tar -tvf - && du -sk data && \
         cp -a data copy && stat -c '%i %h %n' copy/big copy/in-view copy/on-disk",
    );
    let links = listing
        .lines()
        .filter(|l| l.contains(" link to data/"))
        .count();
    assert_eq!(links, 2, "tar stores two names as links:\n{listing}");
    let du: u64 = listing
        .lines()
        .find(|l| l.ends_with("\tdata"))
        .and_then(|l| l.split('\t').next())
        .and_then(|k| k.parse().ok())
        .unwrap_or_else(|| panic!("no du line:\n{listing}"));
    assert!(du < 2048, "du counts the file once ({du} KiB):\n{listing}");
    let copied: Vec<&str> = listing.lines().rev().take(3).collect();
    let inos: std::collections::BTreeSet<&str> = copied
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(inos.len(), 1, "cp -a keeps them one file:\n{listing}");
    assert!(copied.iter().all(|l| l.split(' ').nth(1) == Some("3")));
    // On the disk too.
    let big = fs::metadata(v.disk().join("copy/big")).unwrap();
    assert_eq!(big.nlink(), 3);
    assert_eq!(
        big.ino(),
        fs::metadata(v.disk().join("copy/in-view")).unwrap().ino()
    );
}

#[test]
fn cargo_builds_with_target_inside_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    v.p.write(
        "hello/Cargo.toml",
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    )
    .write(
        "hello/src/main.rs",
        "fn main() {\n    println!(\"hello from the view\");\n}\n",
    );
    let dir = v.view().join("hello");
    let cargo = |args: &[&str]| {
        let out = Command::new(env!("CARGO"))
            .args(args)
            .current_dir(&dir)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env_remove("RUSTC_WRAPPER")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CARGO_BUILD_RUSTC_WRAPPER")
            .env("CARGO_TERM_COLOR", "never")
            .output()
            .unwrap();
        check(&out, &format!("cargo {args:?}"));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    cargo(&["build", "--offline"]);
    let binary = v.disk().join("hello/target/debug/hello");
    assert!(binary.is_file(), "no binary on the disk");
    let out = Command::new(&binary).output().unwrap();
    assert_eq!(check(&out, "the built binary"), "hello from the view\n");
    // Through the view, too, and a second build has nothing to do.
    let out = Command::new(dir.join("target/debug/hello"))
        .output()
        .unwrap();
    assert_eq!(check(&out, "the built binary"), "hello from the view\n");
    let again = cargo(&["build", "--offline"]);
    assert!(!again.contains("Compiling"), "{again}");
    // A change is picked up (mtimes through the view are the disk's).
    fs::write(
        dir.join("src/main.rs"),
        "fn main() {\n    println!(\"rebuilt\");\n}\n",
    )
    .unwrap();
    let rebuilt = cargo(&["build", "--offline"]);
    assert!(rebuilt.contains("Compiling hello"), "{rebuilt}");
    let out = Command::new(&binary).output().unwrap();
    assert_eq!(check(&out, "the rebuilt binary"), "rebuilt\n");
}

#[test]
fn a_python_virtual_environment_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    // Without pip (bootstrapping pip takes half a minute here); "used" is
    // activation, a module installed into its site-packages, and a script.
    let out = sh(
        v.view(),
        "set -e
/usr/bin/python3 -m venv --without-pip venv
site=$(venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')
echo 'ANSWER = 42' > \"$site/local_pkg.py\"
printf '#!%s\\nimport local_pkg; print(local_pkg.ANSWER)\\n' \"$PWD/venv/bin/python\" > venv/bin/answer
chmod +x venv/bin/answer
. venv/bin/activate
python -c 'import sys, local_pkg; print(sys.prefix != sys.base_prefix, local_pkg.ANSWER)'
answer",
    );
    assert_eq!(out, "True 42\n42\n");
    let cfg = fs::read_to_string(v.disk().join("venv/pyvenv.cfg")).unwrap();
    assert!(cfg.contains("home ="), "{cfg}");
    assert!(
        fs::symlink_metadata(v.disk().join("venv/bin/python"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(v.disk().join("venv/bin/answer").is_file());
}

#[test]
fn sqlite_in_wal_mode_written_by_two_processes_in_a_writable_mount() {
    if !fuse_available() {
        return;
    }
    let v = Rw::new();
    let writer = r#"
import sqlite3, sys
who, rows = sys.argv[1], int(sys.argv[2])
db = sqlite3.connect("data.db", timeout=30, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE IF NOT EXISTS t (who TEXT, n INTEGER, pad TEXT)")
for n in range(rows):
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO t VALUES (?, ?, ?)", (who, n, "x" * 200))
    db.execute("COMMIT")
db.close()
"#;
    fs::write(v.disk().join("writer.py"), writer).unwrap();
    // Both open the database before either writes much: the -wal and -shm
    // files are shared (POSIX locks, a shared writable mapping of -shm).
    sh(
        v.view(),
        "set -e
/usr/bin/python3 -c 'import sqlite3; d=sqlite3.connect(\"data.db\"); d.execute(\"PRAGMA journal_mode=WAL\"); d.execute(\"CREATE TABLE t (who TEXT, n INTEGER, pad TEXT)\"); d.close()'
/usr/bin/python3 writer.py a 400 & /usr/bin/python3 writer.py b 400 & wait",
    );
    let check_db = r#"
import sqlite3
db = sqlite3.connect("data.db")
print(db.execute("PRAGMA journal_mode").fetchone()[0])
print(db.execute("PRAGMA integrity_check").fetchone()[0])
print(db.execute("SELECT who, COUNT(*), COUNT(DISTINCT n) FROM t GROUP BY who ORDER BY who").fetchall())
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", check_db])
        .current_dir(v.disk())
        .output()
        .unwrap();
    assert_eq!(
        check(&out, "checking the database on the disk"),
        "wal\nok\n[('a', 400, 400), ('b', 400, 400)]\n"
    );
}

// ---------------------------------------------------------------------------
// Inside `seal run`.

/// `seal run ARGS` in `project` with a home of its own and a time limit.
fn seal_run(project: &Path, args: &[&str]) -> (i32, String, String) {
    let home = scratch();
    let mut cmd = Command::new(seal_bin());
    cmd.arg("run")
        .args(args)
        .current_dir(project)
        .env("HOME", home.path())
        .env_remove("SUDO_UID")
        .env_remove("SUDO_GID");
    git_env(&mut cmd);
    let (code, out, err) = run_with_timeout(&mut cmd, Duration::from_secs(120));
    (code, String::from_utf8_lossy(&out).into_owned(), err)
}

#[test]
fn git_atomic_saves_and_concurrent_writers_inside_seal_run() {
    if !fuse_available() {
        return;
    }
    let p = project();
    prepare_save(p.path());
    git(p.path(), &["init", "-q", "-b", "main"]);
    let lockfile = fs::read(p.path().join("seal.json")).unwrap();
    let script =
        format!("set -e\n{GIT_SCRIPT}\necho ---\n{SAVE_SCRIPT}\necho\necho ---\n{WRITERS_SCRIPT}");
    let (code, out, err) = seal_run(p.path(), &["--", "sh", "-c", &script]);
    assert_eq!(code, 0, "{out}\n{err}");
    let parts: Vec<&str> = out.split("---\n").collect();
    assert_eq!(parts.len(), 3, "{out}");
    // The saves and writers ran after the git script.
    check_git(
        p.path(),
        parts[0],
        " M CLAUDE.txt\n M README.md\n M src/app.py\n?? out/\n",
    );
    check_save(p.path(), parts[1]);
    assert_eq!(parts[2].trim(), "8388608");
    check_writers(p.path());
    assert_eq!(fs::read(p.path().join("seal.json")).unwrap(), lockfile);
    let (code, _, err) = p.seal(&["verify"], "");
    assert_eq!(code, 0, "{err}");
}

fn agent_writer() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent_writer.py")
}

#[test]
fn an_agent_edits_and_commits_but_cannot_write_extensions_inside_seal_run() {
    if !fuse_available() {
        return;
    }
    let p = project();
    git(p.path(), &["init", "-q", "-b", "main"]);
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-q", "-m", "before the agent"]);
    let lockfile = fs::read(p.path().join("seal.json")).unwrap();
    let scratch = scratch();
    let audit = scratch.path().join("audit.jsonl");
    let writer = agent_writer();
    let (code, out, err) = seal_run(
        p.path(),
        &[
            "--audit-log",
            audit.to_str().unwrap(),
            "--",
            "/usr/bin/python3",
            writer.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let report: serde_json::Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|e| panic!("the agent's report {out:?}: {e}\n{err}"));

    // Its edits landed, and its commit holds them.
    assert_eq!(report["edits"], "ok", "{report:#}");
    let head = git(p.path(), &["rev-parse", "HEAD"]);
    assert_eq!(report["commit"], head.trim(), "{report:#}");
    assert_eq!(
        git(p.path(), &["log", "--format=%s"]),
        "agent: edit\nbefore the agent\n"
    );
    assert_eq!(
        git(p.path(), &["show", "--name-status", "--format=", "HEAD"]),
        "M\tREADME.md\nA\tnotes/todo.md\nM\tsrc/app.py\nD\tsrc/old.py\n"
    );
    assert!(
        fs::read_to_string(p.path().join("src/app.py"))
            .unwrap()
            .contains("added_by_the_agent")
    );
    assert_eq!(
        fs::read_to_string(p.path().join("README.md")).unwrap(),
        "# project\n\nRewritten by the agent.\n"
    );

    // Every protected write failed with EROFS.
    let attempts = report["attempts"].as_object().unwrap();
    assert_eq!(attempts.len(), 21, "{report:#}");
    let wrong: Vec<String> = attempts
        .iter()
        .filter(|(_, v)| *v != "EROFS")
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    assert!(wrong.is_empty(), "not refused with EROFS: {wrong:#?}");

    // Nothing of it reached the disk; seal verify passes; seal.json is
    // byte for byte what it was.
    assert_eq!(fs::read(p.path().join("seal.json")).unwrap(), lockfile);
    for absent in [
        ".claude/skills/evil",
        ".claude/skills/staged",
        ".claude/skills/linked",
        ".claude/commands/evil.md",
        ".claude/settings.json",
        "src/AGENTS.md",
        "notes/CLAUDE.md",
        ".mcp.json",
        ".codex/config.toml",
        ".gemini",
        "src/claude-copy.md",
        "src/review",
        "guide2",
        "seal.json.tmp",
    ] {
        assert!(
            fs::symlink_metadata(p.path().join(absent)).is_err(),
            "{absent} reached the disk"
        );
    }
    assert_eq!(
        fs::read_to_string(p.path().join(".claude/skills/review/SKILL.md")).unwrap(),
        SKILL
    );
    let (code, _, err) = p.seal(&["verify"], "");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Result: Verified"), "{err}");

    // Each refusal is in the audit log, with the agent's pid and name.
    let denied: Vec<serde_json::Value> = audit_records(&audit)
        .into_iter()
        .filter(|r| r["event"] == "deny-write")
        .collect();
    for path in [
        "./seal.json",
        "./CLAUDE.md",
        "./.claude/skills/review/SKILL.md",
        "./.claude/skills/evil",
        "./.claude/commands/evil.md",
        "./src/AGENTS.md",
        "./notes/CLAUDE.md",
        "./.mcp.json",
        "./.codex/config.toml",
        "./.gemini",
        "./.claude/skills/review",
        "./guide",
    ] {
        let line = denied.iter().find(|r| r["path"] == path);
        let line = line.unwrap_or_else(|| panic!("no deny-write line for {path}: {denied:#?}"));
        assert!(line["pid"].as_u64().is_some_and(|p| p > 0), "{line}");
        assert_eq!(line["comm"], "python3", "{line}");
    }
}
