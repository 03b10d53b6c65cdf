//! The audit trail of `seal run` and `seal mount`: the command cannot erase
//! or forge it, and every record says which project, which session, which
//! `seal.json` and which run it belongs to, between a start and an end
//! record.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::path::Path;

use run_world::{World, write};
use support::{Mounted, Project, fuse_available};

fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn the_command_can_neither_erase_nor_forge_the_audit_log() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    // The log in a directory the command may write (/tmp, as the world).
    let logs = w.root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    write(&logs.join("other.txt"), "x");
    let log = logs.join("audit.jsonl");
    let script = r#"
        try() { if eval "$2" 2>/dev/null; then echo "$1:done"; else echo "$1:refused"; fi; }
        try append 'echo "{\"schema\":\"seal.audit/2\",\"event\":\"allow\"}" >> "$LOG"'
        try truncate 'true > "$LOG"'
        try remove 'rm -f "$LOG"'
        try rename 'mv "$LOG" "$LOG.old"'
        try replace 'echo forged > "$LOG.new" && mv -f "$LOG.new" "$LOG"'
        try dir-rename 'mv "$(dirname "$LOG")" "$(dirname "$LOG").old"'
        try dir-remove 'rm -rf "$(dirname "$LOG")"'
        try neighbour 'echo y > "$(dirname "$LOG")/other.txt"'
        cat .claude/skills/review/SKILL.md >/dev/null
    "#;
    let (code, out, err) = w.seal(
        &[
            "run",
            "--audit-log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        "",
        &[("LOG", log.as_path())],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    for refused in [
        "append",
        "truncate",
        "remove",
        "rename",
        "replace",
        "dir-rename",
        "dir-remove",
    ] {
        assert!(
            out.contains(&format!("{refused}:refused")),
            "{refused}:\n{out}\n{err}"
        );
    }
    assert!(
        out.contains("neighbour:done"),
        "the directory stays usable: {out}"
    );
    let all = records(&log);
    let events: Vec<&str> = all.iter().map(|r| r["event"].as_str().unwrap()).collect();
    assert_eq!(events.first(), Some(&"run-start"), "{events:?}");
    assert_eq!(events.last(), Some(&"run-end"), "{events:?}");
    // (A forged line would not parse, or would lack the session below.)
    // Every record names the project, the session, seal.json and the run.
    let digest = format!(
        "{}",
        seal_core::digest::Digest::of(&std::fs::read(w.project.join("seal.json")).unwrap())
    );
    let session = all[0]["session"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 32, "{session}");
    for r in &all {
        assert_eq!(r["schema"], "seal.audit/2", "{r}");
        assert_eq!(r["project"], w.project.to_str().unwrap(), "{r}");
        assert_eq!(r["session"], session.as_str(), "{r}");
        assert_eq!(r["lockfile_digest"], digest.as_str(), "{r}");
        assert_eq!(r["policy_digest"], serde_json::Value::Null, "{r}");
        assert_eq!(r["run_uid"], 0, "{r}");
        assert_eq!(r["run_command"][0], "sh", "{r}");
    }
    assert_eq!(all[0]["outcome"], "Verified");
    assert_eq!(all.last().unwrap()["exit_status"], 0);
    // The allowed open in between.
    assert!(
        all.iter()
            .any(|r| r["event"] == "allow" && r["path"] == "./.claude/skills/review/SKILL.md"),
        "{all:#?}"
    );
}

#[test]
fn an_audit_log_inside_the_project_is_refused() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let log = w.project.join("audit.jsonl");
    let (code, _, err) = w.seal(
        &["run", "--audit-log", log.to_str().unwrap(), "--", "true"],
        "",
        &[],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("inside the project"), "{err}");
}

#[test]
fn a_run_end_record_carries_the_exit_status() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let log = w.root.join("audit.jsonl");
    let (code, _, err) = w.seal(
        &[
            "run",
            "--audit-log",
            log.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "exit 3",
        ],
        "",
        &[],
    );
    assert_eq!(code, 3, "{err}");
    let all = records(&log);
    let end = all.last().unwrap();
    assert_eq!(
        (end["event"].as_str(), end["exit_status"].as_i64()),
        (Some("run-end"), Some(3))
    );
}

#[test]
fn a_mount_is_recorded_between_a_start_and_an_end() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    p.write("CLAUDE.md", "x\n");
    p.init(&[]);
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("audit.jsonl");
    let m = Mounted::new(&p, &["--audit-log", log.to_str().unwrap()]);
    let _ = std::fs::read(m.path("CLAUDE.md")).unwrap();
    drop(m);
    let all = records(&log);
    let events: Vec<&str> = all.iter().map(|r| r["event"].as_str().unwrap()).collect();
    assert_eq!(events.first(), Some(&"mount-start"), "{events:?}");
    assert_eq!(events.last(), Some(&"mount-end"), "{events:?}");
    assert!(events.contains(&"allow"), "{events:?}");
    let project = std::fs::canonicalize(p.path()).unwrap();
    assert!(
        all.iter()
            .all(|r| r["project"] == project.to_str().unwrap())
    );
    assert_eq!(all[0]["run_command"][1], "mount");
}

#[test]
fn a_refusal_a_read_only_view_makes_itself_is_recorded() {
    if !fuse_available() {
        return;
    }
    // The view is read-only but the kernel lets the change through to it
    // (the mount is writable): the view refuses and records it.
    let p = Project::new();
    p.write("CLAUDE.md", "x\n").write("src/a.rs", "a\n");
    p.init(&[]);
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("audit.jsonl");
    let m = Mounted::new(&p, &["--audit-log", log.to_str().unwrap()]);
    // Root makes the mount writable again, as mount(8) -o remount,rw does.
    use nix::mount::{MsFlags, mount};
    for flags in [MsFlags::MS_REMOUNT | MsFlags::MS_BIND, MsFlags::MS_REMOUNT] {
        mount(
            None::<&str>,
            &m.mountpoint,
            None::<&str>,
            flags,
            None::<&str>,
        )
        .unwrap();
    }
    let err = std::fs::write(m.path("src/a.rs"), "b\n").unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EROFS));
    drop(m);
    assert_eq!(std::fs::read(p.path().join("src/a.rs")).unwrap(), b"a\n");
    assert!(
        records(&log).iter().any(|r| r["event"] == "deny-write"
            && r["path"] == "./src/a.rs"
            && r["outcome"] == "the view is read-only"),
        "{:#?}",
        records(&log)
    );
}
