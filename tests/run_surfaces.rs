//! Linked and nested agent surfaces under `seal run` (issue 24): the view is
//! at the project's own path, so absolute links to the project land in it;
//! an agent reads the verified target through each link or nothing, cannot
//! write itself a nested surface, and reads no tampered or unpinned file
//! through a link.

#[path = "run_world/mod.rs"]
mod run_world;
mod support;

use std::path::Path;

use run_world::{World, no_sealfs_mounts_left, write};
use support::fuse_available;

fn symlink(target: impl AsRef<Path>, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(at);
    std::os::unix::fs::symlink(target, at).unwrap();
}

#[test]
fn linked_and_nested_surfaces_under_seal_run() {
    if !fuse_available() {
        return;
    }
    let w = World::new();
    let p = &w.project;
    // Re-initialised with the conventions of real repositories.
    std::fs::remove_file(p.join("seal.json")).unwrap();
    std::fs::remove_file(p.join("CLAUDE.md")).unwrap();
    write(&p.join("AGENTS.md"), "linked instructions");
    symlink("AGENTS.md", &p.join("CLAUDE.md"));
    symlink(p.join("AGENTS.md"), &p.join("QWEN.md"));
    write(&p.join("skills/deploy/SKILL.md"), "linked deploy skill");
    symlink("../skills", &p.join(".gemini/skills"));
    write(
        &p.join("packages/x/.claude/skills/n/SKILL.md"),
        "nested skill",
    );
    write(&p.join("packages/x/.mcp.json"), "{\"mcpServers\": {}}");
    symlink("/etc/hostname", &p.join("GEMINI.md"));
    let (code, _, err) = w.seal(&["init"], "y\n", &[]);
    assert_eq!(code, 0, "init: {err}");
    let script = r#"
        echo "claude:$(cat CLAUDE.md)"
        echo "qwen:$(cat QWEN.md)"
        echo "qwen-abs:$(cat "$PWD/QWEN.md")"
        echo "gemini-skill:$(cat .gemini/skills/deploy/SKILL.md)"
        echo "nested:$(cat packages/x/.claude/skills/n/SKILL.md)"
        echo "gemini:$(cat GEMINI.md 2>/dev/null)"
        refused() { if "$@" 2>/dev/null; then echo made; else echo refused; fi; }
        echo "mkdir-evil:$(refused mkdir -p packages/x/.claude/skills/evil)"
        mkdir -p packages/y
        echo "write-mcp:$(refused sh -c 'echo {} > packages/y/.mcp.json')"
        echo "write-through:$(refused sh -c 'echo evil > .gemini/skills/deploy/SKILL.md')"
        echo "ln:$(refused ln -s /etc/passwd AGENTS.override.md)"
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "claude:linked instructions",
            "qwen:linked instructions",
            "qwen-abs:linked instructions",
            "gemini-skill:linked deploy skill",
            "nested:nested skill",
            "gemini:",
            "mkdir-evil:refused",
            "write-mcp:refused",
            "write-through:refused",
            "ln:refused",
        ],
        "{err}"
    );
    assert!(!p.join("packages/y/.mcp.json").exists());
    assert_eq!(
        std::fs::read_to_string(p.join("skills/deploy/SKILL.md")).unwrap(),
        "linked deploy skill"
    );
    // Tampered on the host: nothing is read through the links.
    write(&p.join("AGENTS.md"), "TAMPERED");
    write(&p.join("skills/deploy/SKILL.md"), "TAMPERED");
    write(
        &p.join("packages/x/.mcp.json"),
        "{\"mcpServers\": {\"evil\": {}}}",
    );
    let script = r#"
        cat CLAUDE.md 2>/dev/null; echo "claude:$?"
        cat QWEN.md 2>/dev/null; echo "qwen:$?"
        cat .gemini/skills/deploy/SKILL.md 2>/dev/null; echo "skill:$?"
        cat packages/x/.mcp.json 2>/dev/null; echo "mcp:$?"
    "#;
    let (code, out, err) = w.run_sh(script, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "claude:1\nqwen:1\nskill:1\nmcp:1\n", "{err}");
    // A link retargeted out of the project.
    symlink("/etc/passwd", &p.join("CLAUDE.md"));
    let (_, out, err) = w.run_sh("cat CLAUDE.md 2>/dev/null; echo \"claude:$?\"", &[]);
    assert_eq!(out, "claude:1\n", "{err}");
    no_sealfs_mounts_left(&w.root);
}
