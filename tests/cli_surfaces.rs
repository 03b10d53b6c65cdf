//! Issue 24 through the real binary, without a mount: `seal init`, `seal
//! pin`, `seal verify -v` and `seal why` on linked and nested agent
//! surfaces, and `seal verify --strict` in every output format (plain
//! `verify` stays SPEC's, byte for byte).

mod support;

use support::Project;

/// `seal ARGS` with `stdin`, outside any GitHub workspace.
fn seal(p: &Project, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = support::output_with_stdin(
        std::process::Command::new(support::seal_bin())
            .args(args)
            .current_dir(p.path())
            .env_remove("GITHUB_WORKSPACE"),
        stdin,
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn discovery(p: &Project) -> Vec<String> {
    let lock: serde_json::Value = serde_json::from_slice(&p.read("seal.json")).unwrap();
    lock["discovery"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn link(p: &Project, target: &str, rel: &str) {
    p.symlink(target, rel);
}

#[test]
fn plain_verify_ignores_the_table_and_strict_verify_fails_on_it() {
    let p = Project::new();
    p.write("CLAUDE.md", "pinned instructions\n")
        .write("src/main.rs", "fn main() {}\n");
    p.init(&[]);
    let formats: [&[&str]; 5] = [
        &["verify"],
        &["verify", "--json"],
        &["verify", "--format", "github"],
        &["verify", "--format", "sarif"],
        &["verify", "-q"],
    ];
    let before: Vec<_> = formats.iter().map(|a| seal(&p, a, "")).collect();
    // Artifacts no pattern covers: a nested MCP config, a new sub-agent, a
    // link to unsealed content, one out of the project.
    p.write("packages/x/.mcp.json", "{\"mcpServers\": {}}\n")
        .write(".claude/agents/new.md", "a new agent\n")
        .write("docs/guide.md", "a guide\n");
    link(&p, "docs/guide.md", "GEMINI.md");
    link(&p, "/etc/hostname", "QWEN.md");
    // SPEC: standalone verify follows seal.json alone. Byte for byte.
    for (args, was) in formats.iter().zip(&before) {
        assert_eq!(&seal(&p, args, ""), was, "{args:?}");
    }
    let names = [
        "./.claude/agents",
        "./GEMINI.md",
        "./QWEN.md",
        "./packages/x/.mcp.json",
    ];
    let (code, _, err) = seal(&p, &["verify", "--strict"], "");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("1 verified, 4 unverified"), "{err}");
    assert!(
        err.contains(
            "Strict: 4 agent artifact(s) no discovery pattern covers count as unverified:"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "Agent surface ./GEMINI.md is a link to docs/guide.md, which leads to \
             ./docs/guide.md: content no sealed root covers"
        ),
        "{err}"
    );
    assert!(err.contains("seal pin docs/guide.md"), "{err}");
    let (code, out, _) = seal(&p, &["verify", "--strict", "--json"], "");
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["unverified"], serde_json::json!(names));
    assert_eq!(doc["verified"], serde_json::json!(["./CLAUDE.md"]));
    assert_eq!(doc["strict"], "true");
    let (code, out, _) = seal(&p, &["verify", "--strict", "--format", "github"], "");
    assert_eq!(code, 1);
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len(), 4, "{out}");
    assert!(
        errors.iter().any(|l| l.starts_with(
            "::error file=packages/x/.mcp.json,title=seal%3A Unverified agent artifact ./packages/x/.mcp.json::Agent artifact ./packages/x/.mcp.json: no discovery pattern in seal.json covers it"
        )),
        "{out}"
    );
    let (code, out, _) = seal(&p, &["verify", "--strict", "--format", "sarif"], "");
    assert_eq!(code, 1);
    let sarif: serde_json::Value = serde_json::from_str(&out).unwrap();
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        uris,
        [
            ".claude/agents",
            "GEMINI.md",
            "QWEN.md",
            "packages/x/.mcp.json"
        ]
    );
    // Under warn they are warnings: exit 0.
    let w = Project::new();
    w.write("CLAUDE.md", "x");
    w.init(&["--warn"]);
    w.write("pkg/AGENTS.md", "unpinned");
    let (code, _, err) = seal(&w, &["verify", "--strict"], "");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Result: Warning (warn mode)"), "{err}");
}

#[test]
fn init_and_pin_seal_what_links_lead_to_and_verify_and_why_name_each_link() {
    let p = Project::new();
    p.write("AGENTS.md", "shared\n")
        .write("skills/a/SKILL.md", "a\n")
        .mkdir(".claude")
        .mkdir(".agents");
    link(&p, "AGENTS.md", "CLAUDE.md");
    link(&p, "../.agents/skills", ".claude/skills");
    link(&p, "../skills", ".agents/skills");
    let (code, _, err) = seal(&p, &["init"], "y\n");
    assert_eq!(
        code, 0,
        "init never aborts because a surface is a link: {err}"
    );
    assert!(
        err.contains(
            "Linked agent surfaces (3): a link is never sealed itself; init seals what it leads to"
        ),
        "{err}"
    );
    assert!(
        err.contains("  ./CLAUDE.md -> AGENTS.md: leads to ./AGENTS.md; the view shows it"),
        "{err}"
    );
    assert!(
        err.contains(
            "  ./.claude/skills -> ../.agents/skills: leads to ./skills; pinning skills/*; the \
             view shows it"
        ),
        "{err}"
    );
    assert_eq!(discovery(&p), ["AGENTS.md", "skills/*"]);
    let (code, _, err) = seal(&p, &["verify", "-v"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("Agent surfaces that are symlinks (3):\n  visible  ./.agents/skills -> ../skills  (a link inside the project"),
        "{err}"
    );
    assert!(!err.contains("  hidden "), "{err}");
    let (_, _, why) = seal(&p, &["why", "CLAUDE.md"], "");
    assert!(
        why.contains("link:     -> AGENTS.md (leads to ./AGENTS.md)\ndecision: visible"),
        "{why}"
    );
    let (_, _, why) = seal(&p, &["why", ".claude/skills/a/SKILL.md"], "");
    assert!(
        why.contains("via:      ./.claude/skills\n") && why.contains("decision: visible (recorded"),
        "{why}"
    );
    // A targeted pin of the link pins what it leads to.
    p.write("AGENTS.md", "changed\n");
    let (code, _, err) = seal(&p, &["pin", "CLAUDE.md"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "seal: pin: ./CLAUDE.md is a link to AGENTS.md: pinning what it leads to, ./AGENTS.md"
        ),
        "{err}"
    );
    assert_eq!(seal(&p, &["verify"], "").0, 0);
    // New links to unsealed content: hidden, each with a remedy that works.
    p.write("docs/guide.md", "guide\n")
        .write("gskills/x/SKILL.md", "x\n")
        .mkdir(".gemini");
    link(&p, "docs/guide.md", "GEMINI.md");
    link(&p, "../gskills", ".gemini/skills");
    let (code, _, err) = seal(&p, &["verify", "-v"], "");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "  hidden   ./GEMINI.md -> docs/guide.md  (a link to content no sealed root covers: \
             hidden until what it leads to is sealed; it leads to ./docs/guide.md)\n           \
             to seal it: seal pin docs/guide.md\n"
        ),
        "{err}"
    );
    assert!(
        err.contains("to seal it: 'seal pin' offers the discovery pattern gskills/*"),
        "{err}"
    );
    let (_, _, why) = seal(&p, &["why", "GEMINI.md"], "");
    assert!(
        why.contains("decision: hidden (a link to content no sealed root covers")
            && why.contains("to seal it: seal pin docs/guide.md"),
        "{why}"
    );
    // The remedies: the targeted pin, then a bulk pin offering the pattern.
    p.pin(&["docs/guide.md"]);
    let (code, _, err) = seal(&p, &["pin"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "  ./.gemini/skills -> ../gskills: leads to ./gskills; offering ./gskills/x below"
        ),
        "{err}"
    );
    assert!(
        err.contains("Discovery patterns to add:\n  + gskills/*\n"),
        "{err}"
    );
    let (code, _, err) = seal(&p, &["verify", "-v"], "");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("  hidden "), "{err}");
    assert!(
        err.contains("  visible  ./GEMINI.md -> docs/guide.md"),
        "{err}"
    );
    assert!(
        err.contains("  visible  ./.gemini/skills -> ../gskills"),
        "{err}"
    );
}

#[test]
fn nested_surfaces_get_patterns_of_their_package_and_new_ones_are_offered() {
    let p = Project::new();
    for pkg in ["api", "web"] {
        p.write(&format!("packages/{pkg}/.claude/skills/s/SKILL.md"), "s")
            .write(&format!("packages/{pkg}/.mcp.json"), "{}")
            .write(&format!("packages/{pkg}/AGENTS.md"), "agents")
            .write(&format!("packages/{pkg}/src/lib.rs"), "");
    }
    p.write("tools/bot/.gemini/agents/triage.md", "t");
    p.init(&[]);
    assert_eq!(
        discovery(&p),
        [
            "packages/api/.claude/skills/*",
            "packages/api/.mcp.json",
            "packages/api/AGENTS.md",
            "packages/web/.claude/skills/*",
            "packages/web/.mcp.json",
            "packages/web/AGENTS.md",
            "tools/bot/.gemini/agents/*",
        ]
    );
    let (code, _, err) = seal(&p, &["verify", "-v"], "");
    assert_eq!(code, 0);
    assert!(!err.contains("no discovery pattern covers"), "{err}");
    p.write("packages/cli/.mcp.json", "{}")
        .write("packages/cli/.claude/skills/t/SKILL.md", "t");
    let (_, _, err) = seal(&p, &["verify", "-v"], "");
    assert!(
        err.contains(
            "  hidden   ./packages/cli/.mcp.json  (surface row \".mcp.json\" (Claude Code, Copilot); \
             block mode)\n           to seal it: seal pin packages/cli/.mcp.json"
        ),
        "{err}"
    );
    let (code, _, err) = seal(&p, &["pin"], "y\n");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "Discovery patterns to add:\n  + packages/cli/.claude/skills/*\n  + packages/cli/.mcp.json\n"
        ),
        "{err}"
    );
    let (_, _, err) = seal(&p, &["verify", "-v"], "");
    assert!(!err.contains("no discovery pattern covers"), "{err}");
}
