//! Real clients through a real FUSE mount give the same answers as on the
//! disk, minus the hidden paths: git, grep, find, tar, a Python import, cat
//! of big files.

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::*;

const SKILL: &str = "---\nname: x\n---\nA needle in the skill.\n";
const HELPER: &str = "def hi():\n    return 42\n";

/// Hidden in the view of [`git_project`]: an unpinned bundle and a modified
/// pinned instruction file.
const HIDDEN: &[&str] = &[".claude/skills/evil", "CLAUDE.md"];

fn git(dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = run_with_timeout(
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "init.defaultBranch=main",
                "-c",
                "core.fsmonitor=false",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir),
        Duration::from_secs(120),
    );
    assert_eq!(code, 0, "git {args:?} in {}: {err}", dir.display());
    String::from_utf8(out).unwrap()
}

/// A git repository with a verified bundle, a pinned CLAUDE.md, ordinary
/// files; then, after the commit, changes: an ordinary file modified, one
/// untracked, an unpinned bundle added and CLAUDE.md modified (so hidden).
fn git_project() -> Project {
    let p = Project::new();
    p.write(".claude/skills/x/SKILL.md", SKILL)
        .write(".claude/skills/x/helper.py", HELPER)
        .write("CLAUDE.md", "Be careful with the needle.\n")
        .write("src/lib.rs", "// a needle here\npub fn f() {}\n")
        .write("src/main.rs", "fn main() {}\n")
        .write("docs/guide.md", "no pointy things\n")
        .write("README.md", "needle\n");
    for i in 0..40 {
        p.write(&format!("data/d{}/f{i}.txt", i % 4), format!("row {i}\n"));
    }
    p.init(&[]);
    git(p.path(), &["init", "-q"]);
    git(p.path(), &["add", "-A"]);
    git(p.path(), &["commit", "-q", "-m", "init"]);
    p.write("src/lib.rs", "// a needle here, changed\npub fn f() {}\n")
        .write("notes.txt", "untracked needle\n")
        .write(".claude/skills/evil/SKILL.md", "an evil needle\n")
        .write(
            ".claude/skills/evil/evilhelper.py",
            "def hi():\n    return 666\n",
        )
        .write("CLAUDE.md", "Changed: ignore the needle.\n");
    p
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_string).collect();
    v.sort();
    v
}

/// Drops lines that name a hidden path (as `./p` or `p`).
fn without_hidden(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| {
            !HIDDEN.iter().any(|h| {
                l.split([' ', ':', '\t']).any(|w| {
                    under(w.trim_start_matches("./"), h)
                        || w.trim_start_matches("./") == format!("{h}/")
                })
            })
        })
        .cloned()
        .collect()
}

fn sh(dir: &Path, script: &str) -> String {
    let (code, out, err) = run_with_timeout(
        Command::new("sh").args(["-c", script]).current_dir(dir),
        Duration::from_secs(300),
    );
    assert_eq!(code, 0, "{script} in {}: {err}", dir.display());
    String::from_utf8(out).unwrap()
}

#[test]
fn git_status_matches_the_disk_minus_hidden_paths() {
    if !fuse_available() {
        return;
    }
    let p = git_project();
    let m = Mounted::new(&p, &[]);
    let disk = sorted_lines(&git(p.path(), &["status", "--porcelain"]));
    let view = sorted_lines(&git(&m.mountpoint, &["status", "--porcelain"]));
    assert_eq!(
        disk,
        [
            " M CLAUDE.md",
            " M src/lib.rs",
            "?? .claude/skills/evil/",
            "?? notes.txt"
        ]
    );
    // A hidden tracked file looks deleted in the view; nothing else differs.
    assert_eq!(view, [" D CLAUDE.md", " M src/lib.rs", "?? notes.txt"]);
    assert_eq!(without_hidden(&view), without_hidden(&disk));
    // Other read-only git commands agree too.
    assert_eq!(
        git(&m.mountpoint, &["log", "--format=%H %s"]),
        git(p.path(), &["log", "--format=%H %s"])
    );
    assert_eq!(
        git(&m.mountpoint, &["diff", "--", "src"]),
        git(p.path(), &["diff", "--", "src"])
    );
    assert_eq!(
        git(&m.mountpoint, &["ls-files", "-s"]),
        git(p.path(), &["ls-files", "-s"])
    );
}

#[test]
fn grep_r_matches_the_disk_minus_hidden_paths() {
    if !fuse_available() {
        return;
    }
    let p = git_project();
    let m = Mounted::new(&p, &[]);
    let script = "grep -r needle . || test $? = 1";
    let disk = sorted_lines(&sh(p.path(), script));
    let view = sorted_lines(&sh(&m.mountpoint, script));
    assert!(
        disk.iter()
            .any(|l| l.starts_with("./.claude/skills/evil/SKILL.md:")),
        "{disk:?}"
    );
    assert!(
        disk.iter().any(|l| l.starts_with("./CLAUDE.md:")),
        "{disk:?}"
    );
    assert!(
        view.contains(&"./.claude/skills/x/SKILL.md:A needle in the skill.".to_string()),
        "{view:?}"
    );
    assert_eq!(view, without_hidden(&disk));
    assert!(
        !view
            .iter()
            .any(|l| l.contains("evil") || l.contains("ignore"))
    );
}

#[test]
fn find_matches_the_disk_minus_hidden_paths() {
    if !fuse_available() {
        return;
    }
    let p = git_project();
    let m = Mounted::new(&p, &[]);
    let script = "find . -printf '%p %y %s %m %n %U %G %T@ %l\\n'";
    let disk = sorted_lines(&sh(p.path(), script));
    let view = sorted_lines(&sh(&m.mountpoint, script));
    // The root's own line: its link count and times are the disk's too.
    assert!(view.iter().any(|l| l.starts_with(". d ")), "{view:?}");
    assert_eq!(view, without_hidden(&disk));
    assert!(disk.len() > view.len() + 3);
}

#[test]
fn tar_matches_the_disk_minus_hidden_paths() {
    if !fuse_available() {
        return;
    }
    let p = git_project();
    let m = Mounted::new(&p, &[]);
    let scratch = scratch();
    let disk_tar = scratch.path().join("disk.tar");
    let view_tar = scratch.path().join("view.tar");
    sh(p.path(), &format!("tar cf {} .", disk_tar.display()));
    sh(&m.mountpoint, &format!("tar cf {} .", view_tar.display()));
    let list = |t: &Path| {
        sorted_lines(&sh(
            scratch.path(),
            &format!("tar tvf {} --full-time --numeric-owner", t.display()),
        ))
    };
    let (disk, view) = (list(&disk_tar), list(&view_tar));
    assert_eq!(view, without_hidden(&disk));
    // The bytes in the archive are the disk's.
    let out = scratch.path().join("out");
    fs::create_dir(&out).unwrap();
    sh(&out, &format!("tar xf {}", view_tar.display()));
    let extracted = tree(&out, true);
    let expected = tree(p.path(), true);
    let strip = |t: std::collections::BTreeMap<String, Node>| -> Vec<(String, char, u64, String)> {
        t.into_iter()
            .filter(|(p, _)| !HIDDEN.iter().any(|h| under(p, h)))
            .map(|(p, n)| (p, n.kind, if n.kind == 'f' { n.size } else { 0 }, n.detail))
            .collect()
    };
    assert_eq!(strip(extracted), strip(expected));
}

#[test]
fn python_imports_from_a_verified_bundle_only() {
    if !fuse_available() {
        return;
    }
    let p = git_project();
    let scratch = scratch();
    let audit = scratch.path().join("audit.jsonl");
    let m = Mounted::new(&p, &["--audit-log", audit.to_str().unwrap()]);
    let py = |module: &str, dir: &str| {
        run_with_timeout(
            Command::new("python3")
                .args(["-B", "-c"])
                .arg(format!(
                    "import sys; sys.path.insert(0, {:?}); import {module}; print({module}.hi())",
                    m.path(dir).to_str().unwrap()
                ))
                .current_dir(scratch.path()),
            Duration::from_secs(60),
        )
    };
    let (code, out, err) = py("helper", ".claude/skills/x");
    assert_eq!((code, out.as_slice()), (0, &b"42\n"[..]), "{err}");
    let (code, out, err) = py("evilhelper", ".claude/skills/evil");
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("ModuleNotFoundError"), "{err}");
    // The same import from the disk works: the view is what hides it.
    let (code, out, _) = run_with_timeout(
        Command::new("python3").args(["-B", "-c"]).arg(format!(
            "import sys; sys.path.insert(0, {:?}); import evilhelper; print(evilhelper.hi())",
            p.path().join(".claude/skills/evil").to_str().unwrap()
        )),
        Duration::from_secs(60),
    );
    assert_eq!((code, out.as_slice()), (0, &b"666\n"[..]));
    let records = audit_records(&audit);
    assert!(
        records.iter().any(|r| r["event"] == "allow"
            && r["path"] == "./.claude/skills/x/helper.py"
            && r["comm"].as_str().is_some_and(|c| c.starts_with("python"))),
        "{records:?}"
    );
}

/// Writes `size` bytes of a cheap deterministic pattern, 1 MiB at a time.
fn write_pattern(path: &Path, size: u64, seed: u64) {
    use std::io::Write;
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut f = std::io::BufWriter::new(fs::File::create(path).unwrap());
    let mut x = seed | 1;
    let mut chunk = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for w in chunk.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            w.copy_from_slice(&x.to_le_bytes()[..w.len()]);
        }
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    f.flush().unwrap();
}

fn sha256_of(dir: &Path, script: &str) -> String {
    sh(dir, script)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn cat_of_big_files_matches_the_disk() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    write_pattern(&p.path().join("data/big.bin"), 1 << 30, 7);
    // A bundle file big enough to take many reads, small enough to keep the
    // snapshot's memory modest.
    write_pattern(&p.path().join(".claude/skills/big/blob.bin"), 128 << 20, 11);
    p.write(".claude/skills/big/SKILL.md", "big\n");
    p.init(&[]);
    let m = Mounted::new(&p, &[]);
    for rel in ["data/big.bin", ".claude/skills/big/blob.bin"] {
        let disk = sha256_of(p.path(), &format!("sha256sum {rel}"));
        let view = sha256_of(&m.mountpoint, &format!("cat {rel} | sha256sum"));
        assert_eq!(view, disk, "{rel}");
        assert_eq!(disk.len(), 64);
    }
    // Read with a different block size too (dd), for the bundle file.
    let disk = sha256_of(p.path(), "sha256sum .claude/skills/big/blob.bin");
    let view = sha256_of(
        &m.mountpoint,
        "dd if=.claude/skills/big/blob.bin bs=1000000 status=none | sha256sum",
    );
    assert_eq!(view, disk);
}
