//! Linked and nested agent surfaces through a real FUSE mount, and the shapes
//! real repositories have (issue 24), as fixtures written here (none copied
//! from a repository):
//!
//! * each linked-surface convention (`CLAUDE.md -> AGENTS.md`,
//!   `.claude/skills -> ../.agents/skills -> ../skills`, an absolute link,
//!   one out of the project, a dangling one) with the target untouched,
//!   tampered and restored, through a view mounted elsewhere than the project;
//! * for every shape (a monorepo whose packages each carry `.claude/skills`,
//!   `.mcp.json` and `AGENTS.md`; linked skills folders; a plugin
//!   marketplace; VS Code and Copilot CLI; Roo Code, Kilo Code and Qwen Code
//!   layouts): `seal init` exits 0, the read-only view hides nothing that was
//!   on disk, and every extension file is sealed: appended to on disk, its
//!   open through the view (by its own path and through every link to it) is
//!   refused; restored, it reads again.

mod support;

use std::fs;
use std::path::Path;

use support::*;

/// A project holding `files` (path, content) and `links` (path, target).
fn project(files: &[(&str, &str)], links: &[(&str, &str)]) -> Project {
    let p = Project::new();
    for (rel, content) in files {
        p.write(rel, content);
    }
    for (rel, target) in links {
        p.symlink(target, rel);
    }
    p
}

/// `seal init` answered yes; its stderr.
fn init(p: &Project) -> String {
    let (code, _, err) = p.seal(&["init"], "y\n");
    assert_eq!(code, 0, "seal init: {err}");
    err
}

/// Appends to `rel` on the disk, checks that reading each of `through`
/// (paths of the view leading to it) is refused, restores it, and checks
/// that each reads the original bytes again (where the kernel opens files
/// itself, within 100 ms, and until then only the original bytes).
fn sealed(p: &Project, v: &Mounted, rel: &str, through: &[&str]) {
    let original = p.read(rel);
    let mut tampered = original.clone();
    tampered.extend_from_slice(b"\nINJECTED\n");
    fs::write(p.path().join(rel), &tampered).unwrap();
    for path in through {
        let refused = || {
            let r = fs::read(v.path(path));
            assert!(
                r.as_deref().map_or(true, |b| b == original),
                "{path} (leading to {rel}) read a tampered file: {:?}",
                r.map(|b| String::from_utf8_lossy(&b).into_owned())
            );
            r.is_err()
        };
        assert!(
            v.after_change(refused),
            "{path} (leading to {rel}) is not refused"
        );
    }
    fs::write(p.path().join(rel), &original).unwrap();
    for path in through {
        let restored = || {
            let r = fs::read(v.path(path));
            r.as_deref().ok() == Some(original.as_slice())
        };
        assert!(
            v.after_change(restored),
            "{path} (leading to {rel}) after restoring: {:?}",
            fs::read(v.path(path))
        );
    }
}

#[test]
fn linked_surfaces_read_the_verified_target_or_nothing() {
    if !fuse_available() {
        return;
    }
    let p = project(
        &[
            ("AGENTS.md", "shared instructions\n"),
            ("skills/review/SKILL.md", "review skill\n"),
            ("skills/review/run.sh", "echo ok\n"),
            ("src/main.rs", "fn main() {}\n"),
        ],
        &[
            ("CLAUDE.md", "AGENTS.md"),
            (".claude/skills", "../.agents/skills"),
            (".agents/skills", "../skills"),
            ("GEMINI.md", "/etc/hostname"),
            (".mcp.json", "missing.json"),
        ],
    );
    let err = init(&p);
    for line in [
        "./CLAUDE.md -> AGENTS.md: leads to ./AGENTS.md",
        "./.claude/skills -> ../.agents/skills: leads to ./skills; pinning skills/*; the view shows it",
        "./GEMINI.md -> /etc/hostname: leads out of the project; the view hides it",
        "./.mcp.json -> missing.json: leads nowhere; the view hides it",
    ] {
        assert!(err.contains(line), "init says {line:?}: {err}");
    }
    let v = Mounted::new(&p, &[]);
    assert_view(p.path(), &v.mountpoint, &["GEMINI.md", ".mcp.json"], true);
    // An absolute link to the project's own path (AGENTS.md is sealed).
    p.symlink(p.canonical().join("AGENTS.md"), "QWEN.md");
    // The absolute link is served as the equivalent relative one: it must
    // never lead out of the view (mounted elsewhere) to the raw project.
    assert_eq!(
        fs::read_link(v.path("QWEN.md")).unwrap(),
        Path::new("AGENTS.md")
    );
    assert_eq!(
        fs::read(v.path("QWEN.md")).unwrap(),
        b"shared instructions\n"
    );
    assert_eq!(
        fs::read_link(v.path(".claude/skills")).unwrap(),
        Path::new("../.agents/skills")
    );
    assert_eq!(
        listed_names(&v.path(".claude/skills")),
        ["review"],
        "the skills are listed through the links"
    );
    sealed(&p, &v, "AGENTS.md", &["AGENTS.md", "CLAUDE.md", "QWEN.md"]);
    sealed(
        &p,
        &v,
        "skills/review/SKILL.md",
        &[
            "skills/review/SKILL.md",
            ".claude/skills/review/SKILL.md",
            ".agents/skills/review/SKILL.md",
        ],
    );
    // A new skill where the links lead is unverified, absent through them.
    p.write("skills/evil/SKILL.md", "unpinned\n");
    assert!(within_100ms(
        || fs::metadata(v.path(".claude/skills/evil")).is_err()
    ));
    p.remove("skills/evil");
    // Retargeted on disk out of the project, or to unsealed content: the
    // link disappears at once (its answer is never remembered).
    fs::remove_file(p.path().join("CLAUDE.md")).unwrap();
    p.symlink("/etc/passwd", "CLAUDE.md");
    assert!(fs::symlink_metadata(v.path("CLAUDE.md")).is_err());
    assert!(fs::read(v.path("CLAUDE.md")).is_err());
    fs::remove_file(p.path().join("CLAUDE.md")).unwrap();
    p.write("docs/other.md", "not sealed\n");
    p.symlink("docs/other.md", "CLAUDE.md");
    assert!(fs::read(v.path("CLAUDE.md")).is_err());
    fs::remove_file(p.path().join(".agents/skills")).unwrap();
    p.symlink("../docs", ".agents/skills");
    assert!(fs::read_dir(v.path(".claude/skills")).is_err());
    fs::remove_file(p.path().join(".agents/skills")).unwrap();
    p.symlink("/usr/share", ".agents/skills");
    assert!(fs::read_dir(v.path(".claude/skills")).is_err());
    assert!(fs::read_link(v.path(".agents/skills")).is_err());
    // `seal verify -v` names each link with a remedy that works.
    let (code, _, err) = p.seal(&["verify", "-v"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "  hidden   ./CLAUDE.md -> docs/other.md  (a link to content no sealed root covers"
        ),
        "{err}"
    );
    assert!(err.contains("to seal it: seal pin docs/other.md"), "{err}");
    p.pin(&["docs/other.md"]);
    assert_eq!(fs::read(v.path("CLAUDE.md")).unwrap(), b"not sealed\n");
}

/// Every regular file of the project (relative paths) outside `.git`.
fn files_of(root: &Path) -> Vec<String> {
    tree(root, false)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(".git/") && p != ".git")
        .filter(|(p, _)| root.join(p).symlink_metadata().unwrap().is_file())
        .map(|(p, _)| p)
        .collect()
}

/// One shape: files, links, the files that are not extensions, and for an
/// extension file the other view paths that lead to it.
struct Shape {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    links: &'static [(&'static str, &'static str)],
    ordinary: &'static [&'static str],
    aliases: &'static [(&'static str, &'static str)],
    /// Extensions a later change adds, sealed by nothing: each must be
    /// absent from the view, and fail `seal verify --strict`.
    added: &'static [&'static str],
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "monorepo",
        added: &[
            "packages/new/.mcp.json",
            "packages/new/.claude/skills/x/SKILL.md",
            "packages/api/.claude/agents/a.md",
            "tools/bot/.gemini/agents/new.md",
        ],
        files: &[
            ("AGENTS.md", "root agents"),
            ("packages/api/AGENTS.md", "api agents"),
            (
                "packages/api/.mcp.json",
                r#"{"mcpServers": {"db": {"command": "db-mcp"}}}"#,
            ),
            ("packages/api/.claude/skills/migrate/SKILL.md", "migrate"),
            (
                "packages/api/.claude/skills/migrate/scripts/run.sh",
                "echo migrate",
            ),
            ("packages/api/src/main.rs", "fn main() {}"),
            ("packages/web/AGENTS.md", "web agents"),
            ("packages/web/.mcp.json", r#"{"mcpServers": {}}"#),
            ("packages/web/.claude/skills/ui/SKILL.md", "ui"),
            ("packages/web/.claude/settings.json", r#"{"hooks": {}}"#),
            ("packages/web/package.json", "{}"),
            ("packages/cli/AGENTS.md", "cli agents"),
            ("packages/cli/.mcp.json", "{}"),
            ("packages/cli/.claude/skills/release/SKILL.md", "release"),
            ("tools/bot/.gemini/agents/triage.md", "triage"),
            ("tools/bot/.gemini/skills/label/SKILL.md", "label"),
            (
                "extensions/cli/.continue/agents/helper.yaml",
                "name: helper",
            ),
            ("README.md", "readme"),
        ],
        links: &[
            ("CLAUDE.md", "AGENTS.md"),
            ("packages/web/CLAUDE.md", "AGENTS.md"),
        ],
        ordinary: &[
            "packages/api/src/main.rs",
            "packages/web/package.json",
            "README.md",
        ],
        aliases: &[
            ("AGENTS.md", "CLAUDE.md"),
            ("packages/web/AGENTS.md", "packages/web/CLAUDE.md"),
        ],
    },
    Shape {
        name: "linked skills",
        added: &["skills/new/SKILL.md", "docs/AGENTS.md"],
        files: &[
            ("AGENTS.md", "agents"),
            ("skills/pdf/SKILL.md", "pdf"),
            ("skills/pdf/scripts/extract.py", "print(1)"),
            ("skills/docx/SKILL.md", "docx"),
            ("src/lib.rs", ""),
        ],
        links: &[
            ("CLAUDE.md", "AGENTS.md"),
            ("GEMINI.md", "AGENTS.md"),
            (".claude/skills", "../.agents/skills"),
            (".agents/skills", "../skills"),
        ],
        ordinary: &["src/lib.rs"],
        aliases: &[
            ("AGENTS.md", "CLAUDE.md"),
            ("AGENTS.md", "GEMINI.md"),
            ("skills/pdf/SKILL.md", ".claude/skills/pdf/SKILL.md"),
            ("skills/pdf/SKILL.md", ".agents/skills/pdf/SKILL.md"),
            (
                "skills/pdf/scripts/extract.py",
                ".claude/skills/pdf/scripts/extract.py",
            ),
            ("skills/docx/SKILL.md", ".claude/skills/docx/SKILL.md"),
        ],
    },
    Shape {
        name: "plugin marketplace",
        added: &[
            "plugins/new/.claude-plugin/plugin.json",
            "plugins/lint/.claude-plugin/hooks.json",
        ],
        files: &[
            (
                ".claude-plugin/marketplace.json",
                r#"{"name": "m", "plugins": []}"#,
            ),
            (".cursor-plugin/marketplace.json", r#"{"name": "m"}"#),
            (".github/plugin/marketplace.json", r#"{"name": "m"}"#),
            (
                "plugins/lint/.claude-plugin/plugin.json",
                r#"{"name": "lint"}"#,
            ),
            ("plugins/lint/.mcp.json", r#"{"mcpServers": {}}"#),
            ("plugins/lint/README.md", "lint plugin"),
            (
                "plugins/fmt/.claude-plugin/plugin.json",
                r#"{"name": "fmt"}"#,
            ),
            (
                "plugins/fmt/.cursor-plugin/plugin.json",
                r#"{"name": "fmt"}"#,
            ),
            ("plugins/fmt/AGENTS.md", "fmt agents"),
            ("README.md", "marketplace"),
        ],
        links: &[],
        ordinary: &["plugins/lint/README.md", "README.md"],
        aliases: &[],
    },
    Shape {
        name: "VS Code and Copilot",
        added: &[
            "api/.vscode/mcp.json",
            ".github/extensions/evil/extension.mjs",
        ],
        files: &[
            (
                ".vscode/mcp.json",
                r#"{"servers": {"x": {"command": "x"}}}"#,
            ),
            (".vscode/settings.json", "{}"),
            (".vscode/launch.json", "{}"),
            (".github/copilot-instructions.md", "copilot"),
            (".github/instructions/ts.instructions.md", "ts"),
            (".github/prompts/review.prompt.md", "review"),
            (".github/agents/planner.agent.md", "planner"),
            (
                ".github/extensions/hello/extension.mjs",
                "export default {}",
            ),
            (".github/workflows/ci.yml", "on: push"),
            ("web/.vscode/mcp.json", r#"{"servers": {}}"#),
        ],
        links: &[],
        ordinary: &[
            ".vscode/settings.json",
            ".vscode/launch.json",
            ".github/workflows/ci.yml",
        ],
        aliases: &[],
    },
    Shape {
        name: "Roo, Kilo and Qwen",
        added: &[
            ".roo/rules-ask/x.md",
            "pkg/.qwen/settings.json",
            "pkg/QWEN.md",
            ".kilocode/rules/new.md",
        ],
        files: &[
            (".roo/rules/01-general.md", "general"),
            (".roo/rules-code/01-style.md", "style"),
            (".roo/skills/deploy/SKILL.md", "deploy"),
            (".roo/commands/release.md", "release"),
            (".roo/mcp.json", r#"{"mcpServers": {}}"#),
            (".roomodes", "customModes: []"),
            (".roorules-architect", "architect"),
            (".kilocode/rules/r.md", "kilo rule"),
            (".kilocode/rules-debug/d.md", "kilo debug"),
            (".kilocode/workflows/ship.md", "ship"),
            (".kilocode/mcp.json", "{}"),
            (".kilocodemodes", "customModes: []"),
            ("QWEN.md", "qwen"),
            ("sub/QWEN.md", "sub qwen"),
            (".qwen/settings.json", r#"{"hooks": {}}"#),
            (".qwen/skills/s/SKILL.md", "qwen skill"),
            (".qwen/agents/reviewer.md", "reviewer"),
            (".qwen/commands/git/commit.toml", "prompt = 'commit'"),
            ("sub/main.py", "print(1)"),
        ],
        links: &[],
        ordinary: &["sub/main.py"],
        aliases: &[],
    },
];

#[test]
fn real_repository_shapes_init_hide_nothing_and_seal_every_extension_file() {
    if !fuse_available() {
        return;
    }
    for shape in SHAPES {
        let p = project(shape.files, shape.links);
        let (code, _, err) = p.seal(&["init"], "y\n");
        assert_eq!(code, 0, "{}: seal init: {err}", shape.name);
        let v = Mounted::new(&p, &[]);
        // Nothing that was on disk is hidden after init.
        assert_view(p.path(), &v.mountpoint, &[], true);
        let (code, _, err) = p.seal(&["verify", "-v", "--strict"], "");
        assert_eq!(code, 0, "{}: {err}", shape.name);
        assert!(
            !err.contains("no discovery pattern covers") && !err.contains("  hidden "),
            "{}: {err}",
            shape.name
        );
        for rel in files_of(p.path()) {
            if rel == "seal.json" || shape.ordinary.contains(&rel.as_str()) {
                continue;
            }
            let mut through = vec![rel.as_str()];
            through.extend(
                shape
                    .aliases
                    .iter()
                    .filter(|(target, _)| *target == rel)
                    .map(|(_, alias)| *alias),
            );
            sealed(&p, &v, &rel, &through);
        }
        // Extensions added later are unverified: absent from the view, and
        // what `--strict` fails on.
        for rel in shape.added {
            p.write(rel, "added later");
            let r = fs::read(v.path(rel));
            assert!(r.is_err(), "{}: {rel} served unsealed: {r:?}", shape.name);
        }
        let (code, out, err) = p.seal(&["verify", "--strict", "--json"], "");
        assert_eq!(code, 1, "{}: {err}", shape.name);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(
            !doc["unverified"].as_array().unwrap().is_empty(),
            "{}: {doc}",
            shape.name
        );
        for rel in shape.added {
            fs::remove_file(p.path().join(rel)).unwrap();
        }
        // The ordinary files are ordinary: a change shows at once.
        for rel in shape.ordinary {
            let before = p.read(rel);
            p.write(rel, "changed");
            assert!(
                within_100ms(|| fs::read(v.path(rel)).is_ok_and(|b| b == b"changed")),
                "{}: {rel}",
                shape.name
            );
            fs::write(p.path().join(rel), before).unwrap();
        }
    }
}
