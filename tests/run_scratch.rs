//! `seal run` and an agent that writes its own housekeeping into its agent
//! directory as it starts (OpenCode's `.opencode/.gitignore`, `package.json`,
//! `node_modules`): the run gives it a private scratch layer there. The
//! agent starts and works; nothing it writes there reaches the disk or a
//! later run; it cannot plant an extension there; and what it loads there
//! stays the verified bundle, read-only.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use run_world::{World, open_up, write};
use support::{fuse_available, seal_bin};

/// An OpenCode-like layout in the world's project: a pinned plugin and
/// skill in `.opencode`, an unpinned plugin in its singular `plugin/`, the
/// disk's own housekeeping from an earlier native run, and a nested
/// package's `.opencode`.
fn opencode_world() -> World {
    let w = World::new();
    let p = &w.project;
    write(&p.join(".opencode/plugins/ok.js"), "export const Ok = 1\n");
    write(
        &p.join(".opencode/skills/s1/SKILL.md"),
        "---\nname: s1\ndescription: d\n---\napproved opencode skill\n",
    );
    write(
        &p.join("packages/app/.opencode/plugins/app.js"),
        "export const App = 1\n",
    );
    // A linked surface: OpenCode's agents are the repository's shared ones.
    write(&p.join(".agents/oc-agents/reviewer.md"), "reviewer agent\n");
    std::os::unix::fs::symlink("../.agents/oc-agents", p.join(".opencode/agents")).unwrap();
    let (code, _, err) = w.seal(
        &[
            "pin",
            ".opencode/plugins",
            ".opencode/skills/s1",
            "packages/app/.opencode/plugins",
            ".agents/oc-agents",
        ],
        "y\n",
        &[],
    );
    assert_eq!(code, 0, "pin: {err}");
    // A parent's `.opencode` (masked: outside the project).
    write(
        &w.root.join("parent/.opencode/plugins/parent.js"),
        "export const Parent = 1\n",
    );
    // Not pinned: must never load.
    write(
        &p.join(".opencode/plugin/evil.js"),
        "export const Evil = 1\n",
    );
    // What OpenCode left on disk natively: never shown by the view.
    write(
        &p.join(".opencode/node_modules/diskpkg/index.js"),
        "DISK PACKAGE\n",
    );
    write(&p.join(".opencode/package.json"), "{\"disk\": true}\n");
    w
}

/// What an agent like OpenCode does at start, then what an agent trying to
/// plant an extension there would try, each step reported on stdout.
const AGENT: &str = r#"
    try() { if eval "$2" 2>/dev/null; then echo "$1:ok"; else echo "$1:refused"; fi; }
    try disk-node-modules 'ls .opencode/node_modules'
    try disk-package 'cat .opencode/package.json'
    try gitignore 'printf "node_modules\npackage.json\n" > .opencode/.gitignore'
    try package 'echo "{\"dependencies\": {}}" > .opencode/package.json'
    try install 'mkdir -p .opencode/node_modules/dep && echo "export default 1" > .opencode/node_modules/dep/index.js'
    try lock 'echo lock > .opencode/bun.lock'
    try read-back 'grep -q dependencies .opencode/package.json && test -s .opencode/node_modules/dep/index.js && grep -q node_modules .opencode/.gitignore'
    try nested-gitignore 'echo node_modules > packages/app/.opencode/.gitignore'
    try plugin-pinned 'grep -q Ok .opencode/plugins/ok.js'
    try skill-pinned 'grep -q "approved opencode skill" .opencode/skills/s1/SKILL.md'
    try nested-plugin-pinned 'grep -q App packages/app/.opencode/plugins/app.js'
    try plugin-unpinned 'cat .opencode/plugin/evil.js'
    try plant-plugins 'echo x > .opencode/plugins/new.js'
    try plant-plugin 'echo x > .opencode/plugin/new.js'
    try plant-config 'echo "{}" > .opencode/opencode.json'
    try plant-tools 'mkdir -p .opencode/tools/t'
    try replace-skills 'mv .opencode/skills .opencode/old && mkdir .opencode/skills'
    try remove-plugin-dir 'rmdir .opencode/plugin'
    try plant-nested 'echo x > packages/app/.opencode/plugins/new.js'
    try own-scratch-name 'echo mine > .opencode/notes.txt'
    try linked-agent 'grep -q "reviewer agent" .opencode/agents/reviewer.md'
    try replace-link 'rm .opencode/agents && mkdir -p .opencode/agents && echo x > .opencode/agents/evil.md'
    try plant-through-link 'echo x > .opencode/agents/evil.md'
    try parent-gitignore 'echo node_modules > ../.opencode/.gitignore && test -s ../.opencode/.gitignore'
    try parent-plugin 'cat ../.opencode/plugins/parent.js'
    try plant-parent 'echo x > ../.opencode/plugins/new.js'
"#;

const EXPECTED: &str = "\
disk-node-modules:refused
disk-package:refused
gitignore:ok
package:ok
install:ok
lock:ok
read-back:ok
nested-gitignore:ok
plugin-pinned:ok
skill-pinned:ok
nested-plugin-pinned:ok
plugin-unpinned:refused
plant-plugins:refused
plant-plugin:refused
plant-config:refused
plant-tools:refused
replace-skills:refused
remove-plugin-dir:refused
plant-nested:refused
own-scratch-name:ok
linked-agent:ok
replace-link:refused
plant-through-link:refused
parent-gitignore:ok
parent-plugin:refused
plant-parent:refused
";

/// The disk after the runs: the housekeeping of the runs is nowhere, the
/// disk's own is untouched, nothing was planted.
fn assert_disk_untouched(p: &Path) {
    for gone in [
        ".opencode/.gitignore",
        ".opencode/bun.lock",
        ".opencode/node_modules/dep",
        ".opencode/notes.txt",
        ".opencode/plugins/new.js",
        ".opencode/plugin/new.js",
        ".opencode/opencode.json",
        ".opencode/tools",
        ".opencode/old",
        "packages/app/.opencode/.gitignore",
        "packages/app/.opencode/plugins/new.js",
        "../.opencode/.gitignore",
        "../.opencode/plugins/new.js",
    ] {
        assert!(!p.join(gone).exists(), "{gone} reached the disk");
    }
    assert_eq!(
        std::fs::read_to_string(p.join(".opencode/package.json")).unwrap(),
        "{\"disk\": true}\n"
    );
    assert!(p.join(".opencode/node_modules/diskpkg/index.js").exists());
    assert!(p.join(".opencode/plugin/evil.js").exists());
    assert!(p.join(".opencode/agents").is_symlink());
    assert!(!p.join(".agents/oc-agents/evil.md").exists());
}

/// A second run sees none of what the first wrote in its scratch layers.
const LATER: &str = r#"
    for f in ../.opencode/.gitignore .opencode/.gitignore .opencode/bun.lock .opencode/node_modules/dep .opencode/notes.txt packages/app/.opencode/.gitignore; do
        if [ -e "$f" ]; then echo "$f:still there"; fi
    done
    echo done
"#;

#[test]
fn an_agent_s_housekeeping_lives_in_a_private_scratch_layer() {
    if !fuse_available() {
        return;
    }
    let w = opencode_world();
    let (code, out, err) = w.run_sh(AGENT, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, EXPECTED, "{err}");
    assert_disk_untouched(&w.project);
    let (code, out, err) = w.run_sh(LATER, &[]);
    assert_eq!((code, out.as_str()), (0, "done\n"), "{err}");
    // A read-only run gets the layer too: the agent starts there as well.
    let (code, out, err) = w.seal(&["run", "--read-only", "--", "sh", "-c", AGENT], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, EXPECTED, "{err}");
    assert_disk_untouched(&w.project);
}

#[test]
fn the_scratch_layer_holds_in_an_unprivileged_run() {
    if !fuse_available() {
        return;
    }
    let fuse_open_to_all = std::fs::metadata("/dev/fuse")
        .map(|m| m.permissions().mode() & 0o006 == 0o006)
        .unwrap_or(false);
    if !fuse_open_to_all {
        // tests/run.rs's unprivileged test asserts CI opens /dev/fuse up.
        return;
    }
    let w = opencode_world();
    open_up(&w.root);
    let run = |script: &str| {
        let out = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                seal_bin(),
            ])
            .args(["run", "--", "sh", "-c", script])
            .current_dir(&w.project)
            .env("HOME", &w.home)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(AGENT);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, EXPECTED, "{err}");
    assert_disk_untouched(&w.project);
    let (code, out, err) = run(LATER);
    assert_eq!((code, out.as_str()), (Some(0), "done\n"), "{err}");
}

/// `path` with `..` resolved, as text.
fn lexical(path: &Path) -> String {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.display().to_string()
}

#[test]
fn the_dry_run_names_each_scratch_layer_and_init_never_proposes_housekeeping() {
    if !fuse_available() {
        return;
    }
    let w = opencode_world();
    // An agent directory inside a dependency tree gets no layer: the search
    // does not walk such trees (no one starts an agent there; it stays the
    // view's).
    let in_dependencies = w.project.join("node_modules/some-package/.opencode");
    write(
        &in_dependencies.join("plugins/evil.js"),
        "export const Evil = 1\n",
    );
    let (code, out, err) = w.seal(&["run", "--dry-run", "--", "true"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let text = format!("{out}{err}");
    for dir in [".opencode", "packages/app/.opencode", "../.opencode"] {
        let line = format!("  scratch  {}  [", lexical(&w.project.join(dir)));
        assert!(text.contains(&line), "{dir}: {text}");
    }
    assert!(
        !text
            .lines()
            .any(|l| l.trim_start().starts_with("scratch") && l.contains("some-package")),
        "{text}"
    );
    // Its unpinned plugin is one more hidden artifact.
    assert!(
        text.lines()
            .any(|l| l.contains("hidden") && l.contains("some-package/.opencode/plugins")),
        "{text}"
    );
    let (code, out, err) = w.seal(&["run", "--dry-run", "--json", "--", "true"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let scratch: Vec<&str> = json["writeScope"]["scratch"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let expected: Vec<String> = [".opencode", "packages/app/.opencode", "../.opencode"]
        .iter()
        .map(|d| lexical(&w.project.join(d)))
        .collect();
    assert_eq!(scratch, expected);
    // With no layer, it stays the view's: its unpinned plugin is hidden and
    // nothing can be planted in it.
    let probe = "cat node_modules/some-package/.opencode/plugins/evil.js >/dev/null 2>&1 && echo shown; \
                 echo x > node_modules/some-package/.opencode/plugins/new.js 2>/dev/null && echo planted; \
                 echo done";
    let (code, out, err) = w.seal(&["run", "--", "sh", "-c", probe], "", &[]);
    assert_eq!((code, out.as_str()), (0, "done\n"), "{err}");
    assert!(!in_dependencies.join("plugins/new.js").exists());
    std::fs::remove_dir_all(w.project.join("node_modules")).unwrap();
    // `seal why` on the disk's housekeeping: hidden, and nothing to pin.
    let (code, out, err) = w.seal(&["why", ".opencode/node_modules/diskpkg/index.js"], "", &[]);
    let text = format!("{out}{err}");
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("decision: hidden"), "{text}");
    assert!(text.contains("nothing to pin"), "{text}");
    assert!(!text.contains("seal pin"), "{text}");
    // Housekeeping is neither proposed nor counted as uncovered.
    let (code, out, err) = w.seal(&["verify", "-v"], "", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !format!("{out}{err}").contains("node_modules"),
        "{out}{err}"
    );
    std::fs::remove_file(w.project.join("seal.json")).unwrap();
    let (code, out, err) = w.seal(&["init", "--dry-run"], "", &[]);
    assert_eq!(code, 0, "{err}");
    let text = format!("{out}{err}");
    assert!(text.contains(".opencode/plugins"), "{text}");
    assert!(text.contains(".opencode/plugin"), "{text}");
    for never in ["node_modules", "package.json"] {
        assert!(!text.contains(never), "{never}: {text}");
    }
}
