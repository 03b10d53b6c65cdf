//! The built-in table of where AI agents load extensions from, as data.
//!
//! One table serves three users: `seal init` proposes discovery patterns from
//! it, the mount's gate treats a path it names (and no lockfile root covers) as
//! an unverified artifact, and `seal run` masks its project-external half.
//! docs/SURFACES.md lists every row with its source; keep the two in step.
//!
//! The project-local surface of a path is decided in this order:
//! 1. a specific row whose pattern matches the path's first segments: the
//!    matched prefix is the artifact root (`.claude/skills/*` makes
//!    `.claude/skills/x` a root);
//! 2. a path on the way down to a specific row is a container (`.claude/skills`);
//! 3. any other entry directly inside an agent directory (`.claude/notes.md`) is
//!    an artifact root of its own: agents add new places to their directories
//!    faster than any table, so unknown entries there fail closed;
//! 4. an instruction file (`CLAUDE.md`, `AGENTS.md`, ...) at any depth is a
//!    single-file artifact root, because agents load them from subdirectories.

use seal_core::discovery::{DiscoveryError, Listings, has_trackable_entry};
use seal_core::fs::{EntryKind, RawPath, nfc_name};
use seal_core::pattern::Pattern;
pub use seal_core::plan::Proposal;

/// The shape of a unit an agent loads from a row's pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A directory loaded as one unit (recursively).
    Dir,
    /// A single file.
    File,
    /// A file or a directory, depending on the agent.
    Either,
}

/// One project-local place agents load extensions from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceRow {
    /// A Seal discovery pattern producing exactly the units of this row.
    pub pattern: &'static str,
    pub unit: Unit,
    pub agents: &'static str,
    /// Where this row comes from (see docs/SURFACES.md for the links).
    pub source: &'static str,
}

const fn row(
    pattern: &'static str,
    unit: Unit,
    agents: &'static str,
    source: &'static str,
) -> SurfaceRow {
    SurfaceRow {
        pattern,
        unit,
        agents,
        source,
    }
}

/// Specific project-local rows, in the fixed order `seal init` proposes them.
pub static PROJECT_ROWS: &[SurfaceRow] = &[
    // Claude Code
    row(
        ".claude/skills/*",
        Unit::Dir,
        "Claude Code, Copilot, Cursor, OpenCode, Amp",
        "claude-skills",
    ),
    row(
        ".claude/commands/*",
        Unit::Either,
        "Claude Code",
        "claude-commands",
    ),
    row(
        ".claude/agents",
        Unit::Dir,
        "Claude Code",
        "claude-subagents",
    ),
    row(".claude/rules", Unit::Dir, "Claude Code", "claude-memory"),
    row(
        ".claude/output-styles/*",
        Unit::File,
        "Claude Code",
        "claude-output-styles",
    ),
    row(".claude/workflows/*", Unit::File, "Claude Code", "research"),
    row(
        ".claude/plugins/*",
        Unit::Dir,
        "Claude Code",
        "claude-plugins",
    ),
    row(
        ".claude/settings.json",
        Unit::File,
        "Claude Code (hooks, permissions)",
        "claude-settings",
    ),
    row(
        ".claude/settings.local.json",
        Unit::File,
        "Claude Code",
        "claude-settings",
    ),
    row(
        ".mcp.json",
        Unit::File,
        "Claude Code, Copilot",
        "claude-mcp",
    ),
    // Codex CLI and the Agent Skills convention
    row(
        ".agents/skills/*",
        Unit::Dir,
        "Codex CLI, Gemini CLI, Copilot, Amp (Agent Skills)",
        "agent-skills",
    ),
    row(
        ".codex/skills/*",
        Unit::Dir,
        "Codex CLI (older), Cursor",
        "codex-skills",
    ),
    row(".codex/agents/*", Unit::File, "Codex CLI", "codex-config"),
    row(".codex/rules", Unit::Dir, "Codex CLI", "codex-config"),
    row(
        ".codex/config.toml",
        Unit::File,
        "Codex CLI",
        "codex-config",
    ),
    row(".codex/hooks.json", Unit::File, "Codex CLI", "codex-config"),
    // Gemini CLI
    row(".gemini/skills/*", Unit::Dir, "Gemini CLI", "gemini-skills"),
    row(
        ".gemini/commands",
        Unit::Dir,
        "Gemini CLI",
        "gemini-commands",
    ),
    row(
        ".gemini/agents/*",
        Unit::File,
        "Gemini CLI",
        "gemini-config",
    ),
    row(
        ".gemini/settings.json",
        Unit::File,
        "Gemini CLI (hooks, MCP)",
        "gemini-config",
    ),
    // GitHub Copilot
    row(
        ".github/copilot-instructions.md",
        Unit::File,
        "Copilot",
        "copilot-instructions",
    ),
    row(
        ".github/instructions",
        Unit::Dir,
        "Copilot",
        "copilot-instructions",
    ),
    row(
        ".github/prompts/*",
        Unit::File,
        "Copilot",
        "copilot-prompts",
    ),
    row(".github/agents/*", Unit::File, "Copilot", "copilot-agents"),
    row(".github/skills/*", Unit::Dir, "Copilot", "copilot-skills"),
    row(".github/hooks/*", Unit::File, "Copilot", "copilot-hooks"),
    row(".github/mcp.json", Unit::File, "Copilot", "copilot-mcp"),
    row(
        ".github/copilot/settings.json",
        Unit::File,
        "Copilot",
        "copilot-mcp",
    ),
    // Cursor
    row(".cursor/rules", Unit::Dir, "Cursor, Cline", "cursor-rules"),
    row(".cursor/skills/*", Unit::Dir, "Cursor", "cursor-skills"),
    row(".cursor/hooks.json", Unit::File, "Cursor", "cursor-hooks"),
    row(
        ".cursor/mcp.json",
        Unit::File,
        "Cursor (unconfirmed)",
        "research",
    ),
    row(".cursorrules", Unit::File, "Cursor", "cursor-rules"),
    // OpenCode
    row(
        ".opencode/skills/*",
        Unit::Dir,
        "OpenCode",
        "opencode-skills",
    ),
    row(".opencode/agents", Unit::Dir, "OpenCode", "opencode-agents"),
    row(
        ".opencode/commands",
        Unit::Dir,
        "OpenCode",
        "opencode-commands",
    ),
    row(
        ".opencode/plugins",
        Unit::Dir,
        "OpenCode",
        "opencode-plugins",
    ),
    row(".opencode/tools", Unit::Dir, "OpenCode", "opencode-tools"),
    row("opencode.json", Unit::File, "OpenCode", "opencode-config"),
    row("opencode.jsonc", Unit::File, "OpenCode", "opencode-config"),
    // Windsurf, Cline, Continue, Amp
    row(
        ".windsurf/rules",
        Unit::Dir,
        "Windsurf, Cline",
        "windsurf-rules",
    ),
    row(
        ".windsurf/skills/*",
        Unit::Dir,
        "Windsurf (unconfirmed)",
        "research",
    ),
    row(
        ".windsurf/hooks.json",
        Unit::File,
        "Windsurf (unconfirmed)",
        "research",
    ),
    row(".windsurfrules", Unit::File, "Windsurf", "windsurf-rules"),
    row(".clinerules", Unit::Either, "Cline", "cline-rules"),
    row(".continue/rules", Unit::Dir, "Continue", "continue-rules"),
    row(
        ".continue/mcpServers",
        Unit::Dir,
        "Continue",
        "continue-mcp",
    ),
    row(
        ".continue/prompts",
        Unit::Dir,
        "Continue (unconfirmed)",
        "research",
    ),
    row(
        ".amp/settings.json",
        Unit::File,
        "Amp (unconfirmed)",
        "research",
    ),
];

/// Directories that belong to an agent as a whole: any entry directly inside
/// one that no specific row claims is an artifact of its own.
pub static AGENT_DIRS: &[&str] = &[
    ".agents",
    ".amp",
    ".claude",
    ".codex",
    ".continue",
    ".cursor",
    ".gemini",
    ".opencode",
    ".windsurf",
];

/// Instruction files agents load by name from the project root and from
/// subdirectories (so at any depth).
pub(crate) static INSTRUCTION_FILES: &[&str] = &[
    "AGENT.md",
    "AGENTS.md",
    "AGENTS.override.md",
    "CLAUDE.local.md",
    "CLAUDE.md",
    "GEMINI.md",
];

/// Why a path counts as (part of) an agent artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceRule {
    Row(&'static SurfaceRow),
    AgentDir(&'static str),
    InstructionFile(&'static str),
}

impl SurfaceRule {
    /// A one-line description for `seal why` and the audit log.
    pub fn describe(&self) -> String {
        match self {
            SurfaceRule::Row(r) => format!("surface row \"{}\" ({})", r.pattern, r.agents),
            SurfaceRule::AgentDir(d) => {
                format!("agent directory \"{d}\" (every entry in it is loadable)")
            }
            SurfaceRule::InstructionFile(n) => {
                format!("instruction file name \"{n}\" (loaded at any depth)")
            }
        }
    }
}

/// Where a path sits relative to the built-in surfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceClass {
    /// Not an agent surface.
    Outside,
    /// A directory on the way down to a surface (`.claude`, `.claude/skills`).
    Container,
    /// The first `root_len` segments of the path are an artifact root.
    Artifact { root_len: usize, rule: SurfaceRule },
}

fn row_patterns() -> &'static [(Pattern, &'static SurfaceRow)] {
    static CELL: std::sync::OnceLock<Vec<(Pattern, &'static SurfaceRow)>> =
        std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        PROJECT_ROWS
            .iter()
            .map(|r| {
                (
                    Pattern::parse(r.pattern).expect("built-in surface pattern is valid"),
                    r,
                )
            })
            .collect()
    })
}

/// The rows by their first segment (every row starts with a literal one), so
/// that a path outside every surface is classified with one hash lookup.
fn rows_by_first_segment()
-> &'static std::collections::HashMap<&'static str, Vec<(Pattern, &'static SurfaceRow)>> {
    static CELL: std::sync::OnceLock<
        std::collections::HashMap<&'static str, Vec<(Pattern, &'static SurfaceRow)>>,
    > = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut map: std::collections::HashMap<&'static str, Vec<(Pattern, &'static SurfaceRow)>> =
            std::collections::HashMap::new();
        for (pattern, row) in row_patterns() {
            let first = row.pattern.split('/').next().unwrap_or_default();
            assert!(
                !first.contains('*'),
                "surface rows start with a literal segment"
            );
            map.entry(first).or_default().push((pattern.clone(), *row));
        }
        map
    })
}

/// Classifies a project-relative path given as NFC segments.
pub fn classify(segments: &[&str]) -> SurfaceClass {
    if segments.is_empty() {
        return SurfaceClass::Container;
    }
    let rows: &[(Pattern, &SurfaceRow)] = rows_by_first_segment()
        .get(segments[0])
        .map_or(&[], Vec::as_slice);
    for (pattern, row) in rows {
        if let Some(root_len) = pattern.root_len_within(segments.iter().copied()) {
            return SurfaceClass::Artifact {
                root_len,
                rule: SurfaceRule::Row(row),
            };
        }
    }
    if rows
        .iter()
        .any(|(p, _)| p.passes_through(segments.iter().copied()))
    {
        return SurfaceClass::Container;
    }
    if let Some(dir) = AGENT_DIRS.iter().find(|d| **d == segments[0]) {
        return if segments.len() == 1 {
            SurfaceClass::Container
        } else {
            SurfaceClass::Artifact {
                root_len: 2,
                rule: SurfaceRule::AgentDir(dir),
            }
        };
    }
    let last = segments[segments.len() - 1];
    if let Some(name) = INSTRUCTION_FILES.iter().find(|n| **n == last) {
        return SurfaceClass::Artifact {
            root_len: segments.len(),
            rule: SurfaceRule::InstructionFile(name),
        };
    }
    SurfaceClass::Outside
}

/// Surface rows added at run time (a machine policy's `extraSurfaces`, see
/// [`crate::policy`]): Seal discovery patterns whose roots are artifacts, on
/// top of the built-in table.
#[derive(Debug, Clone, Default)]
pub struct ExtraRows(Vec<(Pattern, &'static SurfaceRow)>);

impl ExtraRows {
    pub fn new(rows: Vec<(Pattern, &'static SurfaceRow)>) -> ExtraRows {
        ExtraRows(rows)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The patterns, as written.
    pub fn patterns(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(_, row)| row.pattern)
    }
}

/// [`classify`], then the `extra` rows: a built-in artifact stays one; else
/// an extra row producing a prefix of the path makes that prefix an artifact
/// root, and a path on the way to one is a container.
pub(crate) fn classify_with(segments: &[&str], extra: &ExtraRows) -> SurfaceClass {
    let built_in = classify(segments);
    if extra.is_empty() || matches!(built_in, SurfaceClass::Artifact { .. }) {
        return built_in;
    }
    for (pattern, row) in &extra.0 {
        if let Some(root_len) = pattern.root_len_within(segments.iter().copied()) {
            return SurfaceClass::Artifact {
                root_len,
                rule: SurfaceRule::Row(row),
            };
        }
    }
    let on_the_way = extra
        .0
        .iter()
        .any(|(p, _)| p.passes_through(segments.iter().copied()));
    if on_the_way {
        SurfaceClass::Container
    } else {
        built_in
    }
}

/// Proposes discovery patterns for every agent surface present in the project,
/// so that after `seal init` nothing the mount would treat as an artifact is
/// left unsealed: rows whose container exists (`X/*` when `X` is a directory,
/// exact rows when the path exists), each unclaimed entry of an agent
/// directory, and every instruction file outside those roots, at any depth.
pub fn propose(listings: &mut Listings<'_>) -> Result<Proposal, DiscoveryError> {
    let mut proposal = Proposal::default();
    for (pattern, _) in row_patterns() {
        let segments: Vec<&str> = pattern.segments().collect();
        let wanted = match segments.split_last() {
            Some((&"*", parent)) => matches!(find(listings, parent)?, Some((_, EntryKind::Dir))),
            _ => match find(listings, &segments)? {
                Some((raw, EntryKind::Dir)) => has_trackable_entry(listings, &raw)?,
                Some(_) => true,
                None => false,
            },
        };
        if wanted {
            proposal.patterns.push(pattern.clone());
        }
    }
    for dir in AGENT_DIRS {
        let Some((raw, EntryKind::Dir)) = find(listings, &[dir])? else {
            continue;
        };
        let mut extra = Vec::new();
        for entry in listings.list(&raw)?.iter() {
            let Some(name) = nfc_name(&entry.name) else {
                proposal.skipped.push((
                    format!("{dir}/{}", seal_core::escape::escaped_os(&entry.name)),
                    "its name is not UTF-8".to_string(),
                ));
                continue;
            };
            if !matches!(
                classify(&[dir, &name]),
                SurfaceClass::Artifact {
                    rule: SurfaceRule::AgentDir(_),
                    ..
                }
            ) {
                continue;
            }
            if entry.kind == EntryKind::Dir
                && !has_trackable_entry(listings, &raw.join(&entry.name))?
            {
                continue;
            }
            match Pattern::parse(&format!("{dir}/{name}")) {
                Ok(p) => extra.push(p),
                Err(rule) => proposal
                    .skipped
                    .push((format!("{dir}/{name}"), format!("a pattern for it {rule}"))),
            }
        }
        extra.sort();
        proposal.patterns.extend(extra);
    }
    let mut instructions = Vec::new();
    let mut stack = vec![(RawPath::default(), Vec::<String>::new())];
    while let Some((dir, nfc_dir)) = stack.pop() {
        for entry in listings.list(&dir)?.iter() {
            if entry.name == ".git" {
                continue;
            }
            let Some(name) = nfc_name(&entry.name) else {
                continue;
            };
            let mut path = nfc_dir.clone();
            path.push(name.clone());
            let refs: Vec<&str> = path.iter().map(String::as_str).collect();
            if proposal
                .patterns
                .iter()
                .any(|p| p.root_len_within(refs.iter().copied()).is_some())
            {
                continue;
            }
            if INSTRUCTION_FILES.contains(&name.as_str()) {
                match Pattern::parse(&path.join("/")) {
                    Ok(p) => instructions.push(p),
                    Err(rule) => proposal
                        .skipped
                        .push((path.join("/"), format!("a pattern for it {rule}"))),
                }
            } else if entry.kind == EntryKind::Dir {
                stack.push((dir.join(&entry.name), path));
            }
        }
    }
    instructions.sort();
    proposal.patterns.extend(instructions);
    proposal.patterns.dedup();
    Ok(proposal)
}

/// Finds a project-relative path by exact NFC names, through real directories.
fn find(
    listings: &mut Listings<'_>,
    segments: &[&str],
) -> Result<Option<(RawPath, EntryKind)>, DiscoveryError> {
    let mut dir = RawPath::default();
    let mut kind = EntryKind::Dir;
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 && kind != EntryKind::Dir {
            return Ok(None);
        }
        let entries = listings.list(&dir)?;
        let Some(entry) = entries
            .iter()
            .find(|e| nfc_name(&e.name).as_deref() == Some(*segment))
        else {
            return Ok(None);
        };
        kind = entry.kind;
        dir = dir.join(&entry.name);
    }
    Ok(Some((dir, kind)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(path: &str) -> SurfaceClass {
        let segs: Vec<&str> = path.split('/').collect();
        classify(&segs)
    }

    fn root_len(path: &str) -> Option<usize> {
        match class(path) {
            SurfaceClass::Artifact { root_len, .. } => Some(root_len),
            _ => None,
        }
    }

    #[test]
    fn table_patterns_are_valid_and_never_nest() {
        let rows = row_patterns();
        for (i, (a, _)) in rows.iter().enumerate() {
            for (b, _) in &rows[i + 1..] {
                assert!(
                    !a.can_nest_with(b),
                    "{} and {} nest",
                    a.as_str(),
                    b.as_str()
                );
                assert_ne!(a, b, "duplicate row {}", a.as_str());
            }
        }
    }

    #[test]
    fn classification() {
        assert_eq!(root_len(".claude/skills/review/SKILL.md"), Some(3));
        assert_eq!(root_len(".claude/skills/review"), Some(3));
        assert_eq!(class(".claude/skills"), SurfaceClass::Container);
        assert_eq!(class(".claude"), SurfaceClass::Container);
        assert_eq!(root_len(".claude/agents/x/y.md"), Some(2));
        assert_eq!(
            root_len(".claude/notes.md"),
            Some(2),
            "unknown entry in an agent dir"
        );
        assert_eq!(root_len(".claude/CLAUDE.md"), Some(2));
        assert_eq!(root_len("CLAUDE.md"), Some(1));
        assert_eq!(root_len("src/deep/AGENTS.md"), Some(3));
        assert_eq!(root_len(".github/copilot-instructions.md"), Some(2));
        assert_eq!(class(".github"), SurfaceClass::Container);
        assert_eq!(class(".github/workflows/ci.yml"), SurfaceClass::Outside);
        assert_eq!(class("src/main.rs"), SurfaceClass::Outside);
        assert_eq!(root_len(".mcp.json"), Some(1));
        assert_eq!(root_len(".clinerules/a.md"), Some(1));
    }

    fn proposed(files: &[&str], dirs: &[&str]) -> Vec<String> {
        let t = tempfile::tempdir().unwrap();
        for d in dirs {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        for f in files {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let fd = seal_core::fs::open_project(t.path()).unwrap();
        let mut l = Listings::new(std::os::fd::AsFd::as_fd(&fd));
        propose(&mut l)
            .unwrap()
            .patterns
            .iter()
            .map(|p| p.as_str().to_string())
            .collect()
    }

    #[test]
    fn proposals_cover_every_surface_present() {
        let got = proposed(
            &[
                ".claude/skills/a/SKILL.md",
                ".claude/settings.json",
                ".claude/notes.md",
                ".claude/CLAUDE.md",
                "CLAUDE.md",
                "src/AGENTS.md",
                ".claude/skills/a/CLAUDE.md",
                ".git/CLAUDE.md",
                ".github/workflows/ci.yml",
            ],
            &[".agents/skills", ".claude/emptydir"],
        );
        assert_eq!(
            got,
            [
                ".claude/skills/*",
                ".claude/settings.json",
                ".agents/skills/*",
                ".claude/CLAUDE.md",
                ".claude/notes.md",
                "CLAUDE.md",
                "src/AGENTS.md",
            ]
        );
    }

    #[test]
    fn empty_project_proposes_nothing() {
        assert!(proposed(&["README.md", "src/lib.rs"], &[]).is_empty());
    }
}

/// Where a project-external location is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// The target user's home directory.
    Home,
    /// `$XDG_CONFIG_HOME`, or `~/.config` when unset or not absolute.
    XdgConfig,
    /// A directory named by an environment variable (only when it is set).
    EnvDir(&'static str),
    /// A file named by an environment variable (only when it is set).
    EnvFile(&'static str),
    /// A list of directories in an environment variable, separated by `:` or `,`.
    EnvDirList(&'static str),
    /// An absolute path.
    Root,
}

/// How `seal run` shows a project-external location, decided by the location
/// alone (whatever is there, a symlink included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    /// An extension directory: shown as an empty read-only directory.
    EmptyDir,
    /// An extension file (an instruction file): shown as an empty read-only file.
    EmptyFile,
    /// A file or a directory, whichever is on the host (a file when absent).
    Empty,
    /// A file that mixes extensions with settings and state: shown as a
    /// filtered copy (see [`FILTER_RULES`]).
    Filtered(&'static FilterRule),
}

/// One name in a project-external agent directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub name: &'static str,
    pub show: Show,
}

const fn dir(name: &'static str) -> Loc {
    Loc {
        name,
        show: Show::EmptyDir,
    }
}
const fn file(name: &'static str) -> Loc {
    Loc {
        name,
        show: Show::EmptyFile,
    }
}
const fn filtered(name: &'static str, rule: &'static FilterRule) -> Loc {
    Loc {
        name,
        show: Show::Filtered(rule),
    }
}

/// One project-external place an agent loads extensions from (SPEC: in a
/// sealed project these are suppressed unconditionally; `seal run` shows
/// them empty or filtered).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalRow {
    pub base: Base,
    /// Relative to the base (empty for the base itself).
    pub path: &'static str,
    pub show: Show,
    pub agents: &'static str,
    pub source: &'static str,
}

const fn ext(
    base: Base,
    path: &'static str,
    show: Show,
    agents: &'static str,
    source: &'static str,
) -> ExternalRow {
    ExternalRow {
        base,
        path,
        show,
        agents,
        source,
    }
}

const CLAUDE_USER: &[Loc] = &[
    file("CLAUDE.md"),
    dir("rules"),
    dir("skills"),
    dir("commands"),
    dir("agents"),
    dir("output-styles"),
    dir("workflows"),
    filtered("settings.json", &CLAUDE_SETTINGS),
    filtered("settings.local.json", &CLAUDE_SETTINGS),
    dir("plugins"),
];
const CODEX_USER: &[Loc] = &[
    file("AGENTS.md"),
    file("AGENTS.override.md"),
    filtered("config.toml", &CODEX_CONFIG),
    filtered("hooks.json", &HOOKS_JSON),
    dir("rules"),
    dir("agents"),
    dir("skills"),
    dir("prompts"),
    dir("plugins"),
];
const GEMINI_USER: &[Loc] = &[
    file("GEMINI.md"),
    dir("skills"),
    dir("commands"),
    dir("agents"),
    filtered("settings.json", &GEMINI_SETTINGS),
    dir("extensions"),
    dir("policies"),
];
const COPILOT_USER: &[Loc] = &[
    file("copilot-instructions.md"),
    dir("instructions"),
    dir("agents"),
    dir("skills"),
    dir("hooks"),
    filtered("mcp-config.json", &MCP_SERVERS_JSON),
    filtered("settings.json", &COPILOT_SETTINGS),
    filtered("config.json", &COPILOT_CONFIG),
    dir("installed-plugins"),
];
const OPENCODE_USER: &[Loc] = &[
    filtered("opencode.json", &OPENCODE_CONFIG),
    filtered("opencode.jsonc", &OPENCODE_CONFIG),
    file("AGENTS.md"),
    dir("agents"),
    dir("commands"),
    dir("plugins"),
    dir("skills"),
    dir("tools"),
];

/// Rows that are a fixed list of names under one directory per base.
const fn group(
    base: Base,
    dir: &'static str,
    names: &'static [Loc],
    agents: &'static str,
    source: &'static str,
) -> ExternalGroup {
    ExternalGroup {
        base,
        dir,
        names,
        agents,
        source,
    }
}

/// Several names under one directory of one base. The directory itself is
/// never hidden whole: it holds credentials and state too, which stay.
#[derive(Debug, Clone, Copy)]
pub struct ExternalGroup {
    pub base: Base,
    pub dir: &'static str,
    pub names: &'static [Loc],
    pub agents: &'static str,
    pub source: &'static str,
}

/// The project-external table, grouped by directory.
pub static EXTERNAL_GROUPS: &[ExternalGroup] = &[
    group(
        Base::Home,
        ".claude",
        CLAUDE_USER,
        "Claude Code (Cursor and OpenCode read some of it)",
        "claude-settings",
    ),
    group(
        Base::EnvDir("CLAUDE_CONFIG_DIR"),
        "",
        CLAUDE_USER,
        "Claude Code",
        "claude-settings",
    ),
    group(
        Base::Home,
        ".codex",
        CODEX_USER,
        "Codex CLI (Cursor reads skills)",
        "codex-config",
    ),
    group(
        Base::EnvDir("CODEX_HOME"),
        "",
        CODEX_USER,
        "Codex CLI",
        "codex-config",
    ),
    group(
        Base::Home,
        ".gemini",
        GEMINI_USER,
        "Gemini CLI",
        "gemini-config",
    ),
    group(
        Base::EnvDir("GEMINI_CLI_HOME"),
        ".gemini",
        GEMINI_USER,
        "Gemini CLI",
        "gemini-config",
    ),
    group(
        Base::Home,
        ".copilot",
        COPILOT_USER,
        "Copilot CLI",
        "copilot-cli",
    ),
    group(
        Base::EnvDir("COPILOT_HOME"),
        "",
        COPILOT_USER,
        "Copilot CLI",
        "copilot-cli",
    ),
    group(
        Base::XdgConfig,
        "opencode",
        OPENCODE_USER,
        "OpenCode",
        "opencode-config",
    ),
    group(
        Base::EnvDir("OPENCODE_CONFIG_DIR"),
        "",
        OPENCODE_USER,
        "OpenCode",
        "opencode-config",
    ),
    group(
        Base::Home,
        ".cursor",
        &[
            dir("skills"),
            filtered("hooks.json", &HOOKS_JSON),
            filtered("mcp.json", &MCP_SERVERS_JSON),
            dir("rules"),
        ],
        "Cursor",
        "cursor-rules",
    ),
    group(
        Base::Home,
        ".codeium/windsurf",
        &[
            dir("skills"),
            filtered("mcp_config.json", &MCP_SERVERS_JSON),
            file("global_rules.md"),
            dir("memories"),
        ],
        "Windsurf (unconfirmed)",
        "research",
    ),
    group(
        Base::Home,
        ".continue",
        &[
            filtered("config.yaml", &CONTINUE_YAML),
            filtered("config.json", &CONTINUE_JSON),
            dir("rules"),
            dir("prompts"),
            dir("mcpServers"),
        ],
        "Continue",
        "continue-rules",
    ),
    group(
        Base::XdgConfig,
        "amp",
        &[
            file("AGENTS.md"),
            filtered("settings.json", &AMP_SETTINGS),
            dir("skills"),
        ],
        "Amp (unconfirmed)",
        "research",
    ),
    group(
        Base::Root,
        "/etc/claude-code",
        &[
            file("CLAUDE.md"),
            filtered("managed-settings.json", &CLAUDE_SETTINGS),
            dir("managed-settings.d"),
            filtered("managed-mcp.json", &MCP_SERVERS_JSON),
            dir(".claude"),
        ],
        "Claude Code (managed settings, CLAUDE.md, MCP, skills)",
        "claude-settings",
    ),
    group(
        Base::Root,
        "/etc/codex",
        &[
            filtered("config.toml", &CODEX_SYSTEM_CONFIG),
            file("AGENTS.md"),
            dir("skills"),
            dir("rules"),
        ],
        "Codex CLI (system config and skills)",
        "codex-config",
    ),
    group(
        Base::Root,
        "/etc/gemini-cli",
        &[
            filtered("settings.json", &GEMINI_SETTINGS),
            filtered("system-defaults.json", &GEMINI_SETTINGS),
            dir("policies"),
        ],
        "Gemini CLI (system settings, defaults, policies)",
        "gemini-config",
    ),
];

/// Single project-external locations.
pub static EXTERNAL_ROWS: &[ExternalRow] = &[
    ext(
        Base::Home,
        ".claude.json",
        Show::Filtered(&CLAUDE_STATE),
        "Claude Code (state; user MCP servers)",
        "claude-mcp",
    ),
    ext(
        Base::EnvDir("CLAUDE_CONFIG_DIR"),
        ".claude.json",
        Show::Filtered(&CLAUDE_STATE),
        "Claude Code (state; user MCP servers)",
        "claude-mcp",
    ),
    ext(
        Base::Home,
        ".agents/skills",
        Show::EmptyDir,
        "Codex CLI, Gemini CLI, Copilot CLI, OpenCode (Agent Skills)",
        "agent-skills",
    ),
    ext(
        Base::XdgConfig,
        "agents/skills",
        Show::EmptyDir,
        "Amp (unconfirmed)",
        "research",
    ),
    ext(
        Base::Home,
        "Documents/Cline/Rules",
        Show::EmptyDir,
        "Cline",
        "cline-rules",
    ),
    ext(
        Base::Home,
        "Cline/Rules",
        Show::EmptyDir,
        "Cline",
        "cline-rules",
    ),
    ext(
        Base::EnvFile("OPENCODE_CONFIG"),
        "",
        Show::Filtered(&OPENCODE_CONFIG),
        "OpenCode",
        "opencode-config",
    ),
    ext(
        Base::EnvFile("GEMINI_CLI_SYSTEM_SETTINGS_PATH"),
        "",
        Show::Filtered(&GEMINI_SETTINGS),
        "Gemini CLI",
        "gemini-config",
    ),
    ext(
        Base::EnvFile("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"),
        "",
        Show::Filtered(&GEMINI_SETTINGS),
        "Gemini CLI",
        "gemini-config",
    ),
    ext(
        Base::EnvDirList("COPILOT_CUSTOM_INSTRUCTIONS_DIRS"),
        "",
        Show::EmptyDir,
        "Copilot CLI",
        "copilot-cli",
    ),
    ext(
        Base::Root,
        "/etc/opencode",
        Show::EmptyDir,
        "OpenCode",
        "opencode-config",
    ),
    ext(
        Base::Root,
        "/etc/ampcode",
        Show::EmptyDir,
        "Amp (unconfirmed)",
        "research",
    ),
];

/// Claude Code's per-project auto memory: `<config dir>/projects/<the
/// project's path, each character other than a letter or digit made '-'>/memory`,
/// loaded into the prompt like `CLAUDE.md`. `seal run` empties it for the
/// project and each of its parent directories (the memory of a git root above
/// the project is used too).
pub const CLAUDE_PROJECT_MEMORY: &str = "memory";

/// The directory name Claude Code gives a project path under
/// `<config dir>/projects` (names longer than 200 characters get a hash suffix
/// this does not reproduce: `None`).
pub fn claude_project_dir_name(path: &std::path::Path) -> Option<String> {
    let s = path.to_str()?;
    let name: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    (name.chars().count() <= 200).then_some(name)
}

/// How the locations named in every parent directory of the project (agents
/// walk up from the working directory for these) are shown: instruction files,
/// agent directories, and the fixed part of every project row outside agent
/// directories (`.github/copilot-instructions.md`, `.mcp.json`, ...), JSON
/// configuration files among them filtered.
pub fn parent_locations() -> Vec<(String, Show)> {
    let mut out: Vec<(String, Show)> = INSTRUCTION_FILES
        .iter()
        .map(|s| (s.to_string(), Show::EmptyFile))
        .collect();
    out.extend(AGENT_DIRS.iter().map(|s| (s.to_string(), Show::EmptyDir)));
    for row in PROJECT_ROWS {
        let fixed: Vec<&str> = row
            .pattern
            .split('/')
            .take_while(|s| !s.contains('*'))
            .collect();
        if fixed.is_empty() || AGENT_DIRS.contains(&fixed[0]) {
            continue;
        }
        let whole = fixed.len() == row.pattern.split('/').count();
        let path = fixed.join("/");
        let show = match PARENT_FILTERS.iter().find(|(p, _)| *p == path) {
            Some((_, rule)) => Show::Filtered(rule),
            None if !whole => Show::EmptyDir,
            None => match row.unit {
                Unit::Dir => Show::EmptyDir,
                Unit::File => Show::EmptyFile,
                Unit::Either => Show::Empty,
            },
        };
        out.push((path, show));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// Project rows that are configuration files: in a parent directory they are
/// shown filtered rather than empty.
static PARENT_FILTERS: &[(&str, &FilterRule)] = &[
    (".mcp.json", &MCP_SERVERS_JSON),
    (".github/mcp.json", &MCP_SERVERS_JSON),
    (".github/copilot/settings.json", &COPILOT_SETTINGS),
    ("opencode.json", &OPENCODE_CONFIG),
    ("opencode.jsonc", &OPENCODE_CONFIG),
];

/// The document format of a filtered file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, also with comments and trailing commas (JSONC).
    Json,
    Toml,
    /// Not filtered (no format-preserving YAML editor): shown empty.
    Yaml,
}

/// What `seal run` removes from a file that mixes extensions with settings and
/// state. Each entry is a path of keys, `*` standing for any key at its level.
/// Everything else in the document is shown as it is.
#[derive(Debug, PartialEq, Eq)]
pub struct FilterRule {
    pub id: &'static str,
    pub format: Format,
    pub remove: &'static [&'static [&'static str]],
    /// The agent writes this file while it runs (state, ids, trust decisions):
    /// its copy is writable and the agent's changes are merged back into the
    /// host file at the end, never an extension entry. A file that is not
    /// writable is a read-only copy (it can hold hooks: an agent must not
    /// write itself one).
    pub writable: bool,
    pub agents: &'static str,
    pub source: &'static str,
}

/// `~/.claude.json`: Claude Code's state (ids, onboarding, per-project state)
/// and the user's MCP servers, at the top level and per project.
pub static CLAUDE_STATE: FilterRule = FilterRule {
    id: "claude-state",
    format: Format::Json,
    remove: &[&["mcpServers"], &["projects", "*", "mcpServers"]],
    writable: true,
    agents: "Claude Code",
    source: "claude-mcp",
};

/// Claude Code settings (user, local, managed): hooks, the status line
/// command, plugins and marketplaces, MCP servers, file-suggestion commands,
/// and a relocated auto-memory directory. Kept: `env`, `model`, `apiKeyHelper`,
/// permissions and the rest.
pub static CLAUDE_SETTINGS: FilterRule = FilterRule {
    id: "claude-settings",
    format: Format::Json,
    remove: &[
        &["hooks"],
        &["statusLine"],
        &["enabledPlugins"],
        &["extraKnownMarketplaces"],
        &["mcpServers"],
        &["fileSuggestion"],
        &["autoMemoryDirectory"],
    ],
    writable: false,
    agents: "Claude Code",
    source: "claude-settings",
};

/// Codex CLI's `config.toml`: MCP servers, the notify command, hooks, plugins
/// and marketplaces, sub-agent roles, skills settings, inline or file
/// instructions and prompts, and fallback instruction file names, at the top
/// level and in profiles. Kept: the model, providers (`base_url`), sandbox and
/// approval settings, trusted projects, the rest.
pub static CODEX_CONFIG: FilterRule = FilterRule {
    id: "codex-config",
    format: Format::Toml,
    remove: CODEX_REMOVED,
    writable: true,
    agents: "Codex CLI",
    source: "codex-config",
};

/// `/etc/codex/config.toml`: as the user's, read-only.
pub(crate) static CODEX_SYSTEM_CONFIG: FilterRule = FilterRule {
    id: "codex-system-config",
    format: Format::Toml,
    remove: CODEX_REMOVED,
    writable: false,
    agents: "Codex CLI",
    source: "codex-config",
};

const CODEX_REMOVED: &[&[&str]] = &[
    &["mcp_servers"],
    &["notify"],
    &["hooks"],
    &["plugins"],
    &["marketplaces"],
    &["agents"],
    &["skills"],
    &["instructions"],
    &["developer_instructions"],
    &["model_instructions_file"],
    &["experimental_instructions_file"],
    &["compact_prompt"],
    &["experimental_compact_prompt_file"],
    &["project_doc_fallback_filenames"],
    &["profiles", "*", "mcp_servers"],
    &["profiles", "*", "notify"],
    &["profiles", "*", "instructions"],
    &["profiles", "*", "developer_instructions"],
    &["profiles", "*", "model_instructions_file"],
    &["profiles", "*", "experimental_instructions_file"],
    &["profiles", "*", "compact_prompt"],
    &["profiles", "*", "experimental_compact_prompt_file"],
];

/// Hook files (Codex, Cursor): the hooks.
pub static HOOKS_JSON: FilterRule = FilterRule {
    id: "hooks-json",
    format: Format::Json,
    remove: &[&["hooks"]],
    writable: false,
    agents: "Codex CLI, Cursor",
    source: "codex-config",
};

/// MCP configuration files (`.mcp.json`, Copilot's `mcp-config.json`,
/// Cursor's `mcp.json`, Windsurf's `mcp_config.json`): the servers.
pub static MCP_SERVERS_JSON: FilterRule = FilterRule {
    id: "mcp-json",
    format: Format::Json,
    remove: &[&["mcpServers"], &["servers"]],
    writable: false,
    agents: "Claude Code, Copilot, Cursor, Windsurf",
    source: "claude-mcp",
};

/// Gemini CLI settings (user and system): MCP servers and the legacy MCP
/// server command, hooks, tool discovery and call commands, and the context
/// file name (it would make the agent load another file as instructions).
pub static GEMINI_SETTINGS: FilterRule = FilterRule {
    id: "gemini-settings",
    format: Format::Json,
    remove: &[
        &["mcpServers"],
        &["mcp", "serverCommand"],
        &["hooks"],
        &["tools", "discoveryCommand"],
        &["tools", "callCommand"],
        &["toolDiscoveryCommand"],
        &["toolCallCommand"],
        &["context", "fileName"],
        &["contextFileName"],
    ],
    writable: false,
    agents: "Gemini CLI",
    source: "gemini-config",
};

/// Copilot CLI's `settings.json` (and a project's `.github/copilot/settings.json`).
pub(crate) static COPILOT_SETTINGS: FilterRule = FilterRule {
    id: "copilot-settings",
    format: Format::Json,
    remove: COPILOT_REMOVED,
    writable: false,
    agents: "Copilot CLI",
    source: "copilot-cli",
};

/// Copilot CLI's `config.json`: its state (trusted folders, logged-in users)
/// with the same keys removed; the CLI writes it.
pub(crate) static COPILOT_CONFIG: FilterRule = FilterRule {
    id: "copilot-config",
    format: Format::Json,
    remove: COPILOT_REMOVED,
    writable: true,
    agents: "Copilot CLI",
    source: "copilot-cli",
};

const COPILOT_REMOVED: &[&[&str]] = &[
    &["hooks"],
    &["mcpServers"],
    &["enabledPlugins"],
    &["plugins"],
    &["marketplaces"],
    &["statusLine"],
];

/// OpenCode's `opencode.json(c)`: MCP servers, plugins, agent and mode
/// definitions (prompts), commands, instruction file lists, formatter and LSP
/// commands, experimental hooks.
pub static OPENCODE_CONFIG: FilterRule = FilterRule {
    id: "opencode-config",
    format: Format::Json,
    remove: &[
        &["mcp"],
        &["plugin"],
        &["agent"],
        &["mode"],
        &["command"],
        &["instructions"],
        &["formatter"],
        &["lsp"],
        &["experimental", "hook"],
    ],
    writable: false,
    agents: "OpenCode",
    source: "opencode-config",
};

/// Continue's `config.yaml`: not filtered, shown empty.
pub static CONTINUE_YAML: FilterRule = FilterRule {
    id: "continue-yaml",
    format: Format::Yaml,
    remove: &[],
    writable: false,
    agents: "Continue",
    source: "continue-rules",
};

/// Continue's legacy `config.json`.
pub(crate) static CONTINUE_JSON: FilterRule = FilterRule {
    id: "continue-json",
    format: Format::Json,
    remove: &[
        &["mcpServers"],
        &["experimental", "modelContextProtocolServers"],
        &["slashCommands"],
        &["customCommands"],
        &["contextProviders"],
        &["rules"],
        &["systemMessage"],
    ],
    writable: false,
    agents: "Continue",
    source: "continue-mcp",
};

/// Amp's `settings.json` (flat dotted keys).
pub(crate) static AMP_SETTINGS: FilterRule = FilterRule {
    id: "amp-settings",
    format: Format::Json,
    remove: &[&["amp.mcpServers"]],
    writable: false,
    agents: "Amp (unconfirmed)",
    source: "research",
};

/// Every filter rule (for documentation and tests).
pub static FILTER_RULES: &[&FilterRule] = &[
    &CLAUDE_STATE,
    &CLAUDE_SETTINGS,
    &CODEX_CONFIG,
    &CODEX_SYSTEM_CONFIG,
    &HOOKS_JSON,
    &MCP_SERVERS_JSON,
    &GEMINI_SETTINGS,
    &COPILOT_SETTINGS,
    &COPILOT_CONFIG,
    &OPENCODE_CONFIG,
    &CONTINUE_YAML,
    &CONTINUE_JSON,
    &AMP_SETTINGS,
];

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// docs/SURFACES.md must list every row of the tables (as `code`), and
    /// every filter rule with every key it removes.
    #[test]
    fn surfaces_doc_lists_every_row() {
        let doc = include_str!("../../../docs/SURFACES.md");
        let mut missing = Vec::new();
        for row in PROJECT_ROWS {
            if !doc.contains(&format!("`{}`", row.pattern)) {
                missing.push(row.pattern.to_string());
            }
        }
        for name in AGENT_DIRS.iter().chain(INSTRUCTION_FILES) {
            if !doc.contains(&format!("`{name}`")) {
                missing.push(name.to_string());
            }
        }
        for g in EXTERNAL_GROUPS {
            if !g.dir.is_empty() && !doc.contains(&format!("`{}`", g.dir)) {
                missing.push(g.dir.to_string());
            }
            for loc in g.names {
                if !doc.contains(&format!("`{}`", loc.name)) {
                    missing.push(format!("{}/{}", g.dir, loc.name));
                }
            }
            if let Base::EnvDir(v) = g.base {
                if !doc.contains(&format!("`{v}`")) {
                    missing.push(v.to_string());
                }
            }
        }
        for r in EXTERNAL_ROWS {
            if !r.path.is_empty() && !doc.contains(&format!("`{}`", r.path)) {
                missing.push(r.path.to_string());
            }
            if let Base::EnvDir(v) | Base::EnvFile(v) | Base::EnvDirList(v) = r.base {
                if !doc.contains(&format!("`{v}`")) {
                    missing.push(v.to_string());
                }
            }
        }
        for rule in FILTER_RULES {
            let heading = format!("#### `{}`", rule.id);
            let Some(at) = doc.find(&heading) else {
                missing.push(rule.id.to_string());
                continue;
            };
            let section = &doc[at..];
            let section = &section[..section[1..]
                .find("\n#### ")
                .map_or(section.len(), |e| e + 1)];
            for path in rule.remove {
                if !section.contains(&format!("`{}`", path.join("."))) {
                    missing.push(format!("{}: {}", rule.id, path.join(".")));
                }
            }
            if !section.contains(rule.source) {
                missing.push(format!("{}: source {}", rule.id, rule.source));
            }
        }
        assert!(
            missing.is_empty(),
            "docs/SURFACES.md does not list: {missing:?}"
        );
    }

    #[test]
    fn parent_locations_filter_configuration_files() {
        let locs = parent_locations();
        let show = |n: &str| locs.iter().find(|(p, _)| p == n).map(|(_, s)| *s);
        assert_eq!(show("CLAUDE.md"), Some(Show::EmptyFile));
        assert_eq!(show(".claude"), Some(Show::EmptyDir));
        assert_eq!(show(".mcp.json"), Some(Show::Filtered(&MCP_SERVERS_JSON)));
        assert_eq!(show(".github/instructions"), Some(Show::EmptyDir));
        assert_eq!(show(".github/prompts"), Some(Show::EmptyDir));
        assert_eq!(show(".clinerules"), Some(Show::Empty));
    }

    #[test]
    fn claude_project_names() {
        assert_eq!(
            claude_project_dir_name(std::path::Path::new("/home/u/my.proj")).as_deref(),
            Some("-home-u-my-proj")
        );
        assert_eq!(
            claude_project_dir_name(&std::path::Path::new("/").join("x".repeat(300))),
            None
        );
    }

    /// Prints the project table as Markdown (`cargo test print_surface_table -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_surface_table() {
        for r in PROJECT_ROWS {
            let unit = match r.unit {
                Unit::Dir => "directory",
                Unit::File => "file",
                Unit::Either => "file or directory",
            };
            println!("| `{}` | {unit} | {} | {} |", r.pattern, r.agents, r.source);
        }
    }
}
