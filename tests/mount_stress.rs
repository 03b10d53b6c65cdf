//! Concurrent opens of approved files never fail, through a real FUSE mount.
//!
//! Several processes (as agents that load modules in parallel do) open and
//! read every file of untouched, approved bundles thousands of times while a
//! writer keeps tampering with and restoring other bundles of the same
//! project. Every open must succeed with the approved bytes: a verification
//! shared between concurrent opens must hand each one the snapshot of the
//! file it asked for.

mod support;

use std::fs;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use support::*;

const PROCESSES: usize = 6;
/// Opens per process (each open reads the whole file).
const OPENS_EACH: usize = 2000;
const BUNDLES: usize = 3;
const FILES_EACH: usize = 4;

fn content(bundle: usize, file: usize) -> String {
    format!("bundle {bundle} file {file}\n").repeat(50)
}

/// A reader process: opens the approved files round-robin `opens` times and
/// reports the failures (errors or wrong bytes) as one line.
const READER: &str = r#"
import sys, os
root, opens = sys.argv[1], int(sys.argv[2])
files = sys.argv[3:]
want = {}
for f in files:
    b, i = f.split(":")
    want[f] = ("bundle %s file %s\n" % (b, i)) * 50
failed = 0
errors = {}
for n in range(opens):
    f = files[n % len(files)]
    b, i = f.split(":")
    path = os.path.join(root, ".claude/skills/s%s/f%s.md" % (b, i))
    try:
        with open(path) as fh:
            if fh.read() != want[f]:
                failed += 1
                errors["wrong bytes"] = errors.get("wrong bytes", 0) + 1
    except OSError as e:
        failed += 1
        errors[e.strerror] = errors.get(e.strerror, 0) + 1
print(failed, errors)
"#;

#[test]
fn concurrent_opens_of_approved_files_never_fail_while_other_bundles_change() {
    if !fuse_available() {
        return;
    }
    let p = Project::new();
    for b in 0..BUNDLES {
        for i in 0..FILES_EACH {
            p.write(&format!(".claude/skills/s{b}/f{i}.md"), content(b, i));
        }
    }
    for c in 0..2 {
        p.write(
            &format!(".claude/skills/churn{c}/SKILL.md"),
            "approved churn\n",
        );
    }
    p.write("src/main.rs", "fn main() {}\n");
    p.init(&[]);
    let m = Mounted::new(&p, &[]);

    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let dir = p.path().to_path_buf();
        std::thread::spawn(move || {
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for c in 0..2 {
                    let f = dir.join(format!(".claude/skills/churn{c}/SKILL.md"));
                    let body = if rounds % 2 == 0 {
                        "TAMPERED\n"
                    } else {
                        "approved churn\n"
                    };
                    fs::write(&f, body).unwrap();
                }
                rounds += 1;
            }
            rounds
        })
    };
    let files: Vec<String> = (0..BUNDLES)
        .flat_map(|b| (0..FILES_EACH).map(move |i| format!("{b}:{i}")))
        .collect();
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new("python3")
                .arg("-c")
                .arg(READER)
                .arg(&m.mountpoint)
                .arg(OPENS_EACH.to_string())
                .args(&files)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut report = Vec::new();
    let mut failures = 0usize;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "reader failed: {out:?}");
        let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
        failures += line
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap();
        report.push(line);
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = writer.join().unwrap();
    assert!(rounds > 0, "the writer never ran");
    assert_eq!(
        failures,
        0,
        "{} opens of approved files from {PROCESSES} processes: {report:?}",
        PROCESSES * OPENS_EACH
    );
}
