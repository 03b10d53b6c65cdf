//! The README's demo (`scripts/demo.sh`, with the tests' seal) runs start to
//! finish on a machine like CI's: every step of the main job on its built-in
//! project, the mount and run steps included, and exit 0.

mod support;

use std::process::Command;

use support::{fuse_available, seal_bin};

#[test]
fn the_readme_demo_runs_start_to_finish() {
    if !fuse_available() {
        return;
    }
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/demo.sh"))
        .env("SEAL", seal_bin())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{:?}\n{text}", out.status);
    assert!(!text.contains("skipped"), "{text}");
    // The mount step: the tampered skill is absent, the verified one read.
    assert!(
        text.contains("code-review/SKILL.md: No such file or directory"),
        "{text}"
    );
    assert!(text.contains("Summarise merged PRs."), "{text}");
    // The audit step printed records, and the run step came after it.
    assert!(text.contains("\"event\":\"mount-start\""), "{text}");
    let under_run = text
        .split("under seal run it sees:")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    let loaded = under_run.split("== seal why").next().unwrap();
    assert!(loaded.contains("code-review/SKILL.md"), "{text}");
    for never in ["personal/SKILL.md", "helper/SKILL.md", "parent/CLAUDE.md"] {
        assert!(!loaded.contains(never), "{never} under seal run: {text}");
    }
    assert!(text.contains("Demo done"), "{text}");
}
