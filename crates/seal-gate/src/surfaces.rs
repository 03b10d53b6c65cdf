//! The built-in table of where AI agents load extensions from, as data.
//!
//! One table serves four users: `seal init` and `seal pin` propose discovery
//! patterns from it ([`crate::propose`]), the mount's gate treats a path it
//! names (and no lockfile root covers) as an unverified artifact, `seal
//! verify --strict` counts such paths as unverified bundles, and `seal run`
//! masks its project-external half. docs/SURFACES.md lists every row with
//! its source; keep the two in step.
//!
//! The project-local surface of a path is decided by the first segment, from
//! the root down, that starts a surface (every surface counts at any depth:
//! agents load a monorepo package's `.claude/`, `.mcp.json` and `AGENTS.md`
//! when they work in it); where that segment stands at `k`:
//! 1. an instruction file (`CLAUDE.md`, `AGENTS.md`, ...) is a single-file
//!    artifact root (the first `k + 1` segments);
//! 2. a row whose pattern matches the segments from `k` on: the matched
//!    prefix is the artifact root (`.claude/skills/*` makes
//!    `pkg/.claude/skills/x` a root);
//! 3. a path on the way down to a row is a container (`pkg/.claude/skills`);
//! 4. any other entry directly inside an agent directory (`.claude/notes.md`)
//!    is an artifact root of its own: agents add new places to their
//!    directories faster than any table, so unknown entries there fail closed;
//! 5. else (a row's first name with the path going elsewhere, such as
//!    `.github/workflows`) the next segment is tried.
//!
//! Each segment costs one look at a 256-entry table of first bytes and, for
//! the few names that pass it, one hash lookup ([`classify`] runs at every
//! lookup of the mount).

pub use crate::filters::{
    AGENT_ENV, AIDER_CONF, AMP_SETTINGS, CLAUDE_SETTINGS, CLAUDE_STATE, CODEX_CONFIG,
    CODEX_SYSTEM_CONFIG, CONTINUE_JSON, CONTINUE_YAML, COPILOT_CONFIG, COPILOT_SETTINGS,
    CRUSH_CONFIG, CRUSH_DATA, FACTORY_CONFIG, FACTORY_SETTINGS, FILTER_RULES, FilterRule, Format,
    GEMINI_SETTINGS, GOOSE_CONFIG, HERMES_CONFIG, HOOKS_JSON, KIMI_CODE_CONFIG, KIMI_CODE_TUI,
    KIMI_CODE_WORKSPACES, KIMI_CONFIG, KIMI_METADATA, MCP_SERVERS_JSON, OPENCODE_CONFIG, PI_AUTH,
    PI_MODELS, PI_SETTINGS, QWEN_SETTINGS, VIBE_CONFIG,
};
use seal_core::pattern::Pattern;

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
    row(
        ".github/chatmodes/*",
        Unit::File,
        "VS Code Copilot Chat (custom chat modes, now custom agents)",
        "vscode-chatmodes",
    ),
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
    // Cline's own directory (Cline CLI 3: rules, workflows, hooks it runs,
    // skills, plugins: JavaScript it runs).
    row(".cline/rules", Unit::Dir, "Cline", "cline-cli"),
    row(".cline/workflows", Unit::Dir, "Cline", "cline-cli"),
    row(
        ".cline/hooks",
        Unit::Dir,
        "Cline (hooks: programs it runs)",
        "cline-cli",
    ),
    row(".cline/skills/*", Unit::Dir, "Cline", "cline-cli"),
    row(
        ".cline/plugins",
        Unit::Dir,
        "Cline (plugins: JavaScript it runs)",
        "cline-cli",
    ),
    row(".cline/agents", Unit::Dir, "Cline", "cline-cli"),
    row(".continue/rules", Unit::Dir, "Continue", "continue-rules"),
    row(
        ".continue/skills/*",
        Unit::Dir,
        "Continue CLI",
        "continue-cli",
    ),
    row(
        ".pi/extensions/*",
        Unit::Dir,
        "Pi (extensions: TypeScript it runs)",
        "pi-coding-agent",
    ),
    row(".pi/skills/*", Unit::Dir, "Pi", "pi-coding-agent"),
    row(".pi/prompts", Unit::Dir, "Pi", "pi-coding-agent"),
    row(".pi/themes", Unit::Dir, "Pi", "pi-coding-agent"),
    row(
        ".pi/settings.json",
        Unit::File,
        "Pi (the packages, extensions and skills it loads, the shell it runs)",
        "pi-coding-agent",
    ),
    row(".pi/SYSTEM.md", Unit::File, "Pi", "pi-coding-agent"),
    row(".pi/APPEND_SYSTEM.md", Unit::File, "Pi", "pi-coding-agent"),
    row(
        ".pi/npm",
        Unit::Dir,
        "Pi (packages it installed for the project: code it runs)",
        "pi-coding-agent",
    ),
    row(
        ".pi/git",
        Unit::Dir,
        "Pi (packages it installed for the project: code it runs)",
        "pi-coding-agent",
    ),
    row(
        ".continue/mcpServers",
        Unit::Dir,
        "Continue (the IDE extension; not Continue CLI 1.5)",
        "continue-mcp",
    ),
    row(
        ".continue/prompts",
        Unit::Dir,
        "Continue (the IDE extension, unconfirmed; not Continue CLI 1.5)",
        "research",
    ),
    row(
        ".amp/settings.json",
        Unit::File,
        "Amp (unconfirmed)",
        "research",
    ),
    // Qwen Code
    row(
        ".qwen/settings.json",
        Unit::File,
        "Qwen Code (hooks, MCP)",
        "qwen-config",
    ),
    row(".qwen/skills/*", Unit::Dir, "Qwen Code", "qwen-skills"),
    row(".qwen/agents/*", Unit::File, "Qwen Code", "qwen-subagents"),
    row(
        ".qwen/commands",
        Unit::Dir,
        "Qwen Code (unconfirmed)",
        "qwen-commands",
    ),
    // Roo Code
    row(
        ".roo/rules*",
        Unit::Dir,
        "Roo Code (workspace and per-mode rules)",
        "roo-rules",
    ),
    row(".roo/skills/*", Unit::Dir, "Roo Code", "roo-skills"),
    row(
        ".roo/commands/*",
        Unit::File,
        "Roo Code (unconfirmed)",
        "research",
    ),
    row(".roo/mcp.json", Unit::File, "Roo Code", "roo-mcp"),
    row(
        ".roomodes",
        Unit::File,
        "Roo Code (custom modes; unconfirmed)",
        "roo-modes",
    ),
    row(".roorules", Unit::File, "Roo Code", "roo-rules"),
    row(
        ".roorules-*",
        Unit::File,
        "Roo Code (per-mode rules)",
        "roo-rules",
    ),
    // Kilo Code
    row(".kilocode/rules*", Unit::Dir, "Kilo Code", "kilo-rules"),
    row(
        ".kilocode/skills/*",
        Unit::Dir,
        "Kilo Code (unconfirmed)",
        "kilo-skills",
    ),
    row(
        ".kilocode/workflows",
        Unit::Dir,
        "Kilo Code (unconfirmed)",
        "research",
    ),
    row(
        ".kilocode/mcp.json",
        Unit::File,
        "Kilo Code (unconfirmed)",
        "research",
    ),
    row(
        ".kilocodemodes",
        Unit::File,
        "Kilo Code (unconfirmed)",
        "research",
    ),
    // Kilo Code CLI (a fork of OpenCode): `.kilo` (and `.kilocode`, an
    // agent directory already) with OpenCode's names, its rules, workflows
    // and a legacy `mcp.json`; `kilo.json(c)` at any depth; the
    // `.kilocoderules` files Kilo Code reads as Roo reads `.roorules`.
    row(".kilo/rules*", Unit::Dir, "Kilo Code", "kilo-cli"),
    row(".kilo/skills/*", Unit::Dir, "Kilo Code", "kilo-cli"),
    row(".kilo/skill/*", Unit::Dir, "Kilo Code", "kilo-cli"),
    row(
        "kilo.json",
        Unit::File,
        "Kilo Code (agents, instructions, MCP servers, plugins)",
        "kilo-cli",
    ),
    row(
        "kilo.jsonc",
        Unit::File,
        "Kilo Code (agents, instructions, MCP servers, plugins)",
        "kilo-cli",
    ),
    row(".kilocoderules", Unit::File, "Kilo Code", "kilo-cli"),
    row(
        ".kilocoderules-*",
        Unit::File,
        "Kilo Code (per-mode rules)",
        "kilo-cli",
    ),
    // VS Code agent mode
    row(
        ".vscode/mcp.json",
        Unit::File,
        "VS Code agent mode (starts the servers it names)",
        "vscode-mcp",
    ),
    // Copilot CLI extensions and plugins
    row(
        ".github/extensions/*",
        Unit::Dir,
        "Copilot CLI (extensions: Node.js code)",
        "copilot-extensions",
    ),
    row(
        ".github/plugin",
        Unit::Dir,
        "Copilot CLI (plugin and marketplace manifests; unconfirmed)",
        "copilot-plugins",
    ),
    // Kiro
    row(".kiro/steering", Unit::Dir, "Kiro", "kiro"),
    row(
        ".kiro/hooks",
        Unit::Dir,
        "Kiro (agent hooks: commands and prompts)",
        "kiro",
    ),
    row(
        ".kiro/settings/mcp.json",
        Unit::File,
        "Kiro (starts the servers it names)",
        "kiro",
    ),
    row(
        ".kiro/agents",
        Unit::Dir,
        "Kiro (custom agents; unconfirmed)",
        "research",
    ),
    row(
        ".kiro/skills/*",
        Unit::Dir,
        "Kiro (Agent Skills; unconfirmed)",
        "research",
    ),
    row(
        ".kiro/powers/*",
        Unit::Dir,
        "Kiro (powers; unconfirmed)",
        "research",
    ),
    // Amazon Q Developer
    row(
        ".amazonq/rules",
        Unit::Dir,
        "Amazon Q Developer",
        "amazonq-rules",
    ),
    row(
        ".amazonq/default.json",
        Unit::File,
        "Amazon Q Developer (MCP servers)",
        "amazonq-mcp",
    ),
    row(
        ".amazonq/mcp.json",
        Unit::File,
        "Amazon Q Developer (MCP servers, legacy file)",
        "amazonq-mcp",
    ),
    row(
        ".amazonq/cli-agents/*",
        Unit::File,
        "Amazon Q Developer CLI (agents: hooks, MCP; unconfirmed)",
        "research",
    ),
    // Junie
    row(
        ".junie/guidelines.md",
        Unit::File,
        "Junie",
        "junie-guidelines",
    ),
    // OpenHands
    row(
        ".openhands/microagents",
        Unit::Dir,
        "OpenHands",
        "openhands-microagents",
    ),
    row(
        ".openhands/skills",
        Unit::Dir,
        "OpenHands (skills, formerly microagents)",
        "openhands-repository",
    ),
    row(
        ".openhands/setup.sh",
        Unit::File,
        "OpenHands (runs at the start of every session)",
        "openhands-repository",
    ),
    row(
        ".openhands/pre-commit.sh",
        Unit::File,
        "OpenHands (its git pre-commit hook)",
        "openhands-repository",
    ),
    row(
        ".openhands/hooks.json",
        Unit::File,
        "OpenHands (hooks)",
        "openhands-repository",
    ),
    row(
        ".openhands/hooks",
        Unit::Dir,
        "OpenHands (the hooks' scripts)",
        "openhands-repository",
    ),
    // Trae
    row(".trae/rules", Unit::Dir, "Trae", "trae-rules"),
    row(
        ".trae/mcp.json",
        Unit::File,
        "Trae (MCP servers; unconfirmed)",
        "research",
    ),
    row(
        ".trae/skills/*",
        Unit::Dir,
        "Trae (Agent Skills; unconfirmed)",
        "research",
    ),
    row(
        ".trae/agents",
        Unit::Dir,
        "Trae (custom agents; unconfirmed)",
        "research",
    ),
    // Augment Code (its IDE extensions and the Auggie CLI)
    row(
        ".augment/rules",
        Unit::Dir,
        "Augment Code, Auggie CLI",
        "augment-rules",
    ),
    row(
        ".augment-guidelines",
        Unit::File,
        "Augment Code, Auggie CLI (workspace guidelines)",
        "augment-rules",
    ),
    // Firebase Studio
    row(
        ".idx/airules.md",
        Unit::File,
        "Firebase Studio (Gemini's AI rules)",
        "firebase-studio",
    ),
    row(
        ".idx/mcp.json",
        Unit::File,
        "Firebase Studio (MCP servers)",
        "firebase-studio",
    ),
    // Aider: its `read` files enter the context, its `lint-cmd` and
    // `test-cmd` run.
    row(
        ".aider.conf.yml",
        Unit::File,
        "Aider (files it reads, commands it runs)",
        "aider-conf",
    ),
    // Aider's model settings: a `system_prompt_prefix` goes into its
    // system prompt, `extra_params` into every request.
    row(
        ".aider.model.settings.yml",
        Unit::File,
        "Aider (model settings: text in its system prompt)",
        "aider-conf",
    ),
    // Crush: its configuration (MCP servers, LSP commands, hooks, and
    // values it expands as a shell does) in every directory from where it
    // starts up to the git root, the closest `.crush` there (its data
    // directory: a workspace configuration and commands), and `crushrc`
    // files, shell scripts it runs as it starts, beside each.
    row(
        ".crush.json",
        Unit::File,
        "Crush (MCP servers, LSP commands, hooks)",
        "crush",
    ),
    row(
        "crush.json",
        Unit::File,
        "Crush (MCP servers, LSP commands, hooks)",
        "crush",
    ),
    row(
        ".crush/crush.json",
        Unit::File,
        "Crush (its workspace configuration)",
        "crush",
    ),
    row(
        "crushrc",
        Unit::File,
        "Crush (a shell script it runs as it starts)",
        "crush",
    ),
    row(
        ".crushrc",
        Unit::File,
        "Crush (a shell script it runs as it starts)",
        "crush",
    ),
    row(
        ".crush/commands",
        Unit::Dir,
        "Crush (custom commands)",
        "crush",
    ),
    row(
        ".crush/skills/*",
        Unit::Dir,
        "Crush (Agent Skills)",
        "crush",
    ),
    // Factory Droid: hooks in its settings (or `hooks.json`), MCP
    // servers, custom droids, commands and skills.
    row(
        ".factory/settings.json",
        Unit::File,
        "Factory Droid (hooks)",
        "factory",
    ),
    row(
        ".factory/settings.local.json",
        Unit::File,
        "Factory Droid (hooks)",
        "factory",
    ),
    row(
        ".factory/hooks.json",
        Unit::File,
        "Factory Droid (hooks)",
        "factory",
    ),
    row(
        ".factory/mcp.json",
        Unit::File,
        "Factory Droid (MCP servers)",
        "factory",
    ),
    row(
        ".factory/droids",
        Unit::Dir,
        "Factory Droid (custom droids)",
        "factory",
    ),
    row(
        ".factory/commands",
        Unit::Dir,
        "Factory Droid (custom commands)",
        "factory",
    ),
    row(".factory/skills/*", Unit::Dir, "Factory Droid", "factory"),
    // Google Antigravity: `.agent`, the singular it still reads beside
    // `.agents`.
    row(".agent/rules", Unit::Dir, "Antigravity", "antigravity"),
    row(
        ".agent/workflows",
        Unit::Dir,
        "Antigravity (workflows; a `// turbo` step runs without asking)",
        "antigravity",
    ),
    row(".agent/skills/*", Unit::Dir, "Antigravity", "antigravity"),
    // Zed: the first of its project rule files.
    row(".rules", Unit::File, "Zed", "zed-rules"),
    // JetBrains AI Assistant
    row(
        ".aiassistant/rules",
        Unit::Dir,
        "JetBrains AI Assistant",
        "jetbrains-rules",
    ),
    // Plugin and marketplace manifests
    row(
        ".claude-plugin",
        Unit::Dir,
        "Claude Code, Copilot CLI (plugin and marketplace manifests)",
        "claude-plugins",
    ),
    row(
        ".cursor-plugin",
        Unit::Dir,
        "Cursor (plugin and marketplace manifests; unconfirmed)",
        "cursor-plugins",
    ),
    row(
        ".codebuddy-plugin",
        Unit::Dir,
        "CodeBuddy Code (plugin manifests)",
        "codebuddy",
    ),
    row(
        ".qoder-plugin",
        Unit::Dir,
        "Qoder CLI (plugin manifests, their hooks)",
        "qoder",
    ),
    // GitLab Duo keeps its project configuration in `.gitlab/duo` (chat
    // rules, MCP servers it may run unasked, hooks, plugins, flows, the
    // setup script of its CI agent); `.gitlab` itself holds CI templates.
    row(
        ".gitlab/duo",
        Unit::Dir,
        "GitLab Duo (rules, MCP servers, hooks, plugins, flows)",
        "gitlab-duo",
    ),
    row(
        ".codex-plugin",
        Unit::Dir,
        "Codex CLI (plugin manifest, since 0.117)",
        "codex-plugins",
    ),
    row(
        ".factory-plugin",
        Unit::Dir,
        "Factory Droid (plugin and marketplace manifests; unconfirmed)",
        "research",
    ),
];

/// Directories that belong to an agent as a whole: any entry directly inside
/// one that no specific row claims is an artifact of its own.
pub static AGENT_DIRS: &[&str] = &[
    ".agent",
    ".agents",
    ".amazonq",
    ".amp",
    ".augment",
    ".claude",
    ".cline",
    ".codebuddy",
    ".codex",
    ".continue",
    ".cursor",
    ".devin",
    ".factory",
    ".gemini",
    ".goose",
    ".hermes",
    ".iflow",
    ".junie",
    ".kilo",
    ".kilocode",
    ".kimi",
    ".kimi-code",
    ".kiro",
    ".opencode",
    ".openhands",
    ".pi",
    ".qoder",
    ".qwen",
    ".roo",
    ".trae",
    ".vibe",
    ".windsurf",
];

/// An agent directory its agent writes its own housekeeping into as it
/// starts, wherever one stands in the project ([`SCRATCH_DIRS`]).
#[derive(Debug)]
pub struct ScratchDir {
    /// The directory's name.
    pub dir: &'static str,
    /// What the agent writes there for itself. Not extensions: the view never
    /// shows the disk's (they are artifacts of [`SurfaceRule::Housekeeping`],
    /// which `init` and `pin` never propose and `verify --strict` does not
    /// count).
    pub housekeeping: &'static [&'static str],
    /// Every name in the directory the agent loads something from (a
    /// superset of what the table's rows claim there), with whether it is a
    /// directory. In the scratch layer `seal run` lays over the directory
    /// (src/run/scratch.rs) each stays the view's, read-only, and empty when
    /// the view does not show it: the agent cannot plant there what a later
    /// process of the run would load.
    pub loads: &'static [(&'static str, Unit)],
}

/// The agent directories that get a private scratch layer under `seal run`.
/// OpenCode writes `.gitignore` (naming the housekeeping below) into every
/// `.opencode` it uses, and installs its plugins' dependencies there
/// (`package.json`, `node_modules`, a lock file); it exits when it cannot.
/// It loads `{agent,agents}`, `{command,commands}`, `{mode,modes}`,
/// `{plugin,plugins}`, `{tool,tools}`, `{skill,skills}`, `themes` and
/// `opencode.json{,c}` from such a directory (its `config/*.ts` loaders).
/// Pi takes a lock on `.pi/settings.json` each time it reads it, as a
/// directory beside it (`settings.json.lock`), and reads the settings as
/// empty when it cannot. It loads the names of `loads` from `.pi`
/// (Pi 0.73: its resource loader and package manager).
/// (Qwen Code's rewrite of `.qwen/settings.json` is not housekeeping: that
/// file is a surface, so it stays the verified one, and Qwen goes on when
/// the write fails.)
pub static SCRATCH_DIRS: &[ScratchDir] = &[
    ScratchDir {
        dir: ".opencode",
        housekeeping: &[
            ".gitignore",
            "bun.lock",
            "node_modules",
            "package-lock.json",
            "package.json",
        ],
        loads: &[
            ("agent", Unit::Dir),
            ("agents", Unit::Dir),
            ("command", Unit::Dir),
            ("commands", Unit::Dir),
            ("mode", Unit::Dir),
            ("modes", Unit::Dir),
            ("opencode.json", Unit::File),
            ("opencode.jsonc", Unit::File),
            ("plugin", Unit::Dir),
            ("plugins", Unit::Dir),
            ("skill", Unit::Dir),
            ("skills", Unit::Dir),
            ("themes", Unit::Dir),
            ("tool", Unit::Dir),
            ("tools", Unit::Dir),
        ],
    },
    ScratchDir {
        dir: ".pi",
        housekeeping: &["settings.json.lock"],
        loads: &[
            ("APPEND_SYSTEM.md", Unit::File),
            ("SYSTEM.md", Unit::File),
            ("commands", Unit::Dir),
            ("extensions", Unit::Dir),
            ("git", Unit::Dir),
            ("hooks", Unit::Dir),
            ("npm", Unit::Dir),
            ("prompts", Unit::Dir),
            ("settings.json", Unit::File),
            ("skills", Unit::Dir),
            ("themes", Unit::Dir),
            ("tools", Unit::Dir),
        ],
    },
];

/// Directories the search for [`SCRATCH_DIRS`] does not enter: trees a
/// package manager or a build fills (often most of a project's files: a
/// JavaScript project's `node_modules` alone can hold a few hundred
/// thousand), in which no one starts an agent. The search runs at every
/// `seal run` start, so it would cost their walk each time. Passing one
/// over loses nothing the view guarantees: an agent directory in it gets no
/// scratch layer, so it stays the view's, where nothing unverified is
/// shown and the agent's writes are refused.
pub const NO_SCRATCH_BELOW: &[&str] = &["node_modules", ".venv", "__pycache__", ".tox", "target"];

/// The scratch directory named `dir`, if it is one.
pub fn scratch_dir(dir: &str) -> Option<&'static ScratchDir> {
    SCRATCH_DIRS.iter().find(|s| s.dir == dir)
}

/// The housekeeping names of agent directory `dir` ([`SCRATCH_DIRS`]).
fn housekeeping(dir: &str) -> &'static [&'static str] {
    scratch_dir(dir).map_or(&[], |s| s.housekeeping)
}

/// Instruction files agents load by name from the project root and from
/// subdirectories (so at any depth).
/// Names match exactly (Linux names are case-sensitive), so the spellings
/// an agent also reads are listed one by one: Crush reads `agents.md`,
/// `Agents.md`, `gemini.md` and its own file in three spellings, Windsurf
/// `agents.md`, Hermes `claude.md`.
pub(crate) static INSTRUCTION_FILES: &[&str] = &[
    ".goosehints",
    ".hermes.md",
    "AGENT.md",
    "AGENTS.MD",
    "AGENTS.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    "Agents.md",
    "CLAUDE.MD",
    "CLAUDE.local.md",
    "CLAUDE.md",
    "CODEBUDDY.local.md",
    "CODEBUDDY.md",
    "CODEX.md",
    "CONTEXT.md",
    "CRUSH.local.md",
    "CRUSH.md",
    "Claude.md",
    "Crush.local.md",
    "Crush.md",
    "DESIGN.md",
    "Design.md",
    "GEMINI.md",
    "HERMES.md",
    "IFLOW.md",
    "QWEN.md",
    "WARP.md",
    "agents.md",
    "claude.md",
    "crush.local.md",
    "crush.md",
    "design.md",
    "gemini.md",
];

/// Instruction files an agent finds whatever the letter case of their
/// name (Factory Droid compares names without case: checked offline with
/// 0.215.0 and 0.225.2, a `Design.md` and a `design.md` arrived as its
/// `DESIGN.md`): in the project, every spelling of these is one; above the
/// project `seal run` masks every spelling it finds there
/// ([`caseless_instruction_file`]).
pub(crate) static CASELESS_INSTRUCTION_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "DESIGN.md"];

/// The instruction file `segment` spells without regard to case, if any.
pub fn caseless_instruction_file(segment: &str) -> Option<&'static str> {
    CASELESS_INSTRUCTION_FILES
        .iter()
        .copied()
        .find(|name| name.eq_ignore_ascii_case(segment))
}

/// Why a path counts as (part of) an agent artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceRule {
    Row(&'static SurfaceRow),
    AgentDir(&'static str),
    InstructionFile(&'static str),
    /// What the agent of this directory writes there for itself
    /// ([`SCRATCH_DIRS`]).
    Housekeeping(&'static str),
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
            SurfaceRule::Housekeeping(d) => format!(
                "what the agent writes in \"{d}\" for itself (never shown from the disk or \
                 pinned; `seal run` gives it a private scratch copy)"
            ),
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

/// What a name means where it stands in a path: the rows that start with it,
/// whether it is an agent directory, an instruction file.
#[derive(Default)]
pub(crate) struct Anchor {
    pub(crate) rows: Vec<(Pattern, &'static SurfaceRow)>,
    pub(crate) agent_dir: Option<&'static str>,
    pub(crate) instruction: Option<&'static str>,
}

impl Anchor {
    /// The class of `segments` when this anchor stands at `k`, or `None`
    /// when it does not decide (a name some row starts with, with the path
    /// going elsewhere: `.github/workflows`).
    fn classify_at(&self, segments: &[&str], k: usize) -> Option<SurfaceClass> {
        if let Some(name) = self.instruction {
            return Some(SurfaceClass::Artifact {
                root_len: k + 1,
                rule: SurfaceRule::InstructionFile(name),
            });
        }
        let rest = &segments[k..];
        for (pattern, row) in &self.rows {
            if let Some(len) = pattern.root_len_within(rest.iter().copied()) {
                return Some(SurfaceClass::Artifact {
                    root_len: k + len,
                    rule: SurfaceRule::Row(row),
                });
            }
        }
        if self
            .rows
            .iter()
            .any(|(p, _)| p.passes_through(rest.iter().copied()))
        {
            return Some(SurfaceClass::Container);
        }
        let dir = self.agent_dir?;
        Some(match rest.get(1) {
            None => SurfaceClass::Container,
            Some(name) if housekeeping(dir).contains(name) => SurfaceClass::Artifact {
                root_len: k + 2,
                rule: SurfaceRule::Housekeeping(dir),
            },
            Some(_) => SurfaceClass::Artifact {
                root_len: k + 2,
                rule: SurfaceRule::AgentDir(dir),
            },
        })
    }
}

/// The table arranged for [`classify`]: every name that can start a surface,
/// so that each segment of a path costs at most one hash lookup, and most
/// none at all (a name whose first byte starts no surface is passed over).
pub(crate) struct Anchors {
    pub(crate) by_name: std::collections::HashMap<&'static str, Anchor, Fnv>,
    /// Rows whose first segment holds a wildcard (`.roorules-*`), with the
    /// literal text before it: matched against a segment that starts so.
    pub(crate) glob_rows: Vec<(&'static str, Pattern, &'static SurfaceRow)>,
    /// The first bytes of every anchor name and glob row.
    first_bytes: [bool; 256],
}

/// FNV-1a for the anchor table. The table is fixed (built once, never
/// grown), so no name an attacker chooses can make a lookup slow; a cheap
/// hash keeps the lookup of a segment at a few nanoseconds where the
/// default one costs tens (it runs for every name with a leading `.`, such
/// as each `.git` of a path git looks up in the view).
#[derive(Default, Clone, Copy)]
pub(crate) struct Fnv;

/// The state of [`Fnv`].
pub(crate) struct FnvHasher(u64);

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;
    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) fn anchors() -> &'static Anchors {
    static CELL: std::sync::OnceLock<Anchors> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut by_name: std::collections::HashMap<&'static str, Anchor, Fnv> =
            std::collections::HashMap::default();
        let mut glob_rows = Vec::new();
        let mut first_bytes = [false; 256];
        for (pattern, row) in row_patterns() {
            let first = row.pattern.split('/').next().unwrap_or_default();
            assert!(
                !first.starts_with('*'),
                "surface rows start with a literal character"
            );
            first_bytes[first.as_bytes()[0] as usize] = true;
            if let Some((prefix, _)) = first.split_once('*') {
                glob_rows.push((prefix, pattern.clone(), *row));
            } else {
                by_name
                    .entry(first)
                    .or_default()
                    .rows
                    .push((pattern.clone(), *row));
            }
        }
        for dir in AGENT_DIRS {
            first_bytes[dir.as_bytes()[0] as usize] = true;
            by_name.entry(dir).or_default().agent_dir = Some(dir);
        }
        for name in INSTRUCTION_FILES {
            first_bytes[name.as_bytes()[0] as usize] = true;
            by_name.entry(name).or_default().instruction = Some(name);
        }
        for name in CASELESS_INSTRUCTION_FILES {
            let first = name.as_bytes()[0];
            first_bytes[first.to_ascii_lowercase() as usize] = true;
            first_bytes[first.to_ascii_uppercase() as usize] = true;
        }
        Anchors {
            by_name,
            glob_rows,
            first_bytes,
        }
    })
}

/// Classifies a project-relative path given as NFC segments. Every surface
/// counts at any depth (agents load a monorepo package's `.claude/`,
/// `.mcp.json` or `AGENTS.md` when they work in it): the first segment, from
/// the root down, that starts a surface decides.
pub fn classify(segments: &[&str]) -> SurfaceClass {
    if segments.is_empty() {
        return SurfaceClass::Container;
    }
    let table = anchors();
    for (k, segment) in segments.iter().enumerate() {
        let Some(&first) = segment.as_bytes().first() else {
            continue;
        };
        if !table.first_bytes[first as usize] {
            continue;
        }
        if let Some(anchor) = table.by_name.get(segment)
            && let Some(class) = anchor.classify_at(segments, k)
        {
            return class;
        }
        if let Some(name) = caseless_instruction_file(segment) {
            return SurfaceClass::Artifact {
                root_len: k + 1,
                rule: SurfaceRule::InstructionFile(name),
            };
        }
        for (prefix, pattern, row) in &table.glob_rows {
            if !segment.starts_with(prefix) {
                continue;
            }
            if let Some(len) = pattern.root_len_within(segments[k..].iter().copied()) {
                return SurfaceClass::Artifact {
                    root_len: k + len,
                    rule: SurfaceRule::Row(row),
                };
            }
        }
    }
    SurfaceClass::Outside
}

/// The paths below `segments` (a [`SurfaceClass::Container`]) that the
/// built-in table makes artifacts, as pattern segments relative to it: what
/// a symlink standing there must lead to sealed roots for (see
/// [`crate::links`]). `*` stands for any name. Instruction files and surfaces
/// that start below (at any depth) are left out: they are artifacts wherever
/// the link leads.
pub(crate) fn remainders_below(segments: &[&str]) -> Vec<Vec<&'static str>> {
    let table = anchors();
    for (k, segment) in segments.iter().enumerate() {
        let Some(anchor) = table.by_name.get(segment) else {
            continue;
        };
        match anchor.classify_at(segments, k) {
            Some(SurfaceClass::Container) => {}
            Some(_) => return Vec::new(),
            None => continue,
        }
        let rest = &segments[k..];
        if anchor.agent_dir.is_some() && rest.len() == 1 {
            return vec![vec!["*"]];
        }
        return anchor
            .rows
            .iter()
            .filter(|(p, _)| p.passes_through(rest.iter().copied()))
            .map(|(_, row)| row.pattern.split('/').skip(rest.len()).collect())
            .collect();
    }
    Vec::new()
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

    /// The patterns, parsed.
    pub(crate) fn patterns_parsed(&self) -> impl Iterator<Item = &Pattern> + '_ {
        self.0.iter().map(|(pattern, _)| pattern)
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
    fn the_names_a_scratch_directory_keeps_read_only_come_from_the_rows() {
        // The names a row claims directly inside an agent directory
        // (`skills` for `.opencode/skills/*`).
        let claimed = |dir: &str| -> Vec<&'static str> {
            PROJECT_ROWS
                .iter()
                .filter_map(|r| {
                    let mut segments = r.pattern.split('/');
                    (segments.next() == Some(dir)).then(|| segments.next())?
                })
                .collect()
        };
        assert_eq!(
            claimed(".opencode"),
            ["skills", "agents", "commands", "plugins", "tools"]
        );
        // Every scratch directory is an agent directory, whose unknown
        // entries the view hides as artifacts; what it keeps read-only
        // covers the rows, and never names its housekeeping.
        for s in SCRATCH_DIRS {
            assert!(AGENT_DIRS.contains(&s.dir), "{}", s.dir);
            let loads: Vec<&str> = s.loads.iter().map(|(n, _)| *n).collect();
            for name in claimed(s.dir) {
                assert!(loads.contains(&name), "{} {name}", s.dir);
            }
            assert!(
                s.housekeeping.iter().all(|n| !loads.contains(n)),
                "{}",
                s.dir
            );
        }
        // The housekeeping is an artifact of its own rule at any depth;
        // every other unknown entry stays an artifact of the directory.
        for path in [
            ".opencode/node_modules/x/index.js",
            "pkg/.opencode/package.json",
        ] {
            assert!(
                matches!(
                    class(path),
                    SurfaceClass::Artifact {
                        rule: SurfaceRule::Housekeeping(".opencode"),
                        ..
                    }
                ),
                "{path}"
            );
        }
        assert_eq!(root_len("pkg/.opencode/node_modules/x"), Some(3));
        assert!(matches!(
            class(".opencode/opencode.json"),
            SurfaceClass::Artifact {
                rule: SurfaceRule::AgentDir(".opencode"),
                ..
            }
        ));
        assert!(matches!(
            class(".claude/node_modules"),
            SurfaceClass::Artifact {
                rule: SurfaceRule::AgentDir(".claude"),
                ..
            }
        ));
    }

    /// Kiro, Amazon Q Developer, Junie, OpenHands, Goose, Warp and Crush: what
    /// each loads from a project is an artifact at any depth, with the root
    /// its unit has; the rest of their directories fails closed.
    #[test]
    fn the_later_agents_surfaces_are_artifacts_at_any_depth() {
        let rows = [
            ("pkg/.kiro/steering/style.md", 3),
            (".kiro/hooks/lint.kiro.hook", 2),
            (".kiro/settings/mcp.json", 3),
            (".kiro/skills/review/SKILL.md", 3),
            (".amazonq/rules/a/b.md", 2),
            (".amazonq/default.json", 2),
            (".amazonq/cli-agents/dev.json", 3),
            ("pkg/.junie/guidelines.md", 3),
            (".openhands/microagents/repo.md", 2),
            (".openhands/setup.sh", 2),
            ("app/.openhands/pre-commit.sh", 3),
            (".openhands/hooks.json", 2),
            (".openhands/hooks/gate.sh", 2),
        ];
        for (path, len) in rows {
            assert_eq!(root_len(path), Some(len), "{path}");
            assert!(
                matches!(
                    class(path),
                    SurfaceClass::Artifact {
                        rule: SurfaceRule::Row(_),
                        ..
                    }
                ),
                "{path}"
            );
        }
        for (path, dir) in [
            (".kiro/specs/feature/tasks.md", ".kiro"),
            (".kiro/settings/other.json", ".kiro"),
            (".amazonq/notes.md", ".amazonq"),
            (".junie/mcp/mcp.json", ".junie"),
            ("pkg/.openhands/anything", ".openhands"),
        ] {
            assert!(
                matches!(
                    class(path),
                    SurfaceClass::Artifact {
                        rule: SurfaceRule::AgentDir(d),
                        ..
                    } if d == dir
                ),
                "{path}: {:?}",
                class(path)
            );
        }
        for (path, len) in [
            (".goosehints", 1),
            ("pkg/sub/WARP.md", 3),
            ("agents.md", 1),
            ("pkg/Agents.md", 2),
            ("CRUSH.md", 1),
            ("a/crush.local.md", 2),
            ("gemini.md", 1),
        ] {
            assert_eq!(root_len(path), Some(len), "{path}");
            assert!(
                matches!(
                    class(path),
                    SurfaceClass::Artifact {
                        rule: SurfaceRule::InstructionFile(_),
                        ..
                    }
                ),
                "{path}"
            );
        }
        assert_eq!(class(".kiro/settings"), SurfaceClass::Container);
        assert_eq!(class("pkg/goosehints"), SurfaceClass::Outside);
        // Exact names: a spelling no agent reads is an ordinary file; but
        // Factory Droid reads `AGENTS.md`, `CLAUDE.md` and `DESIGN.md` in
        // any letter case.
        assert_eq!(class("GEMINI.Md"), SurfaceClass::Outside);
        assert_eq!(class("pkg/gEMINI.md"), SurfaceClass::Outside);
        assert_eq!(root_len("AGENTS.Md"), Some(1));
        assert_eq!(root_len("pkg/dEsIgN.MD"), Some(2));
        assert_eq!(root_len("docs/Claude.Md"), Some(2));
        assert_eq!(class("DESIGN.md.bak"), SurfaceClass::Outside);
        assert_eq!(root_len("pkg/AGENTS.MD"), Some(2));
        assert_eq!(root_len("CLAUDE.MD"), Some(1));
        // Pi's directory and its rows.
        assert_eq!(root_len("pkg/.pi/extensions/x/index.ts"), Some(4));
        assert_eq!(root_len(".pi/skills/s/SKILL.md"), Some(3));
        assert_eq!(root_len(".pi/settings.json"), Some(2));
        assert_eq!(root_len(".pi/npm/node_modules/p/index.js"), Some(2));
        assert_eq!(class("pkg/pi/extensions/x.ts"), SurfaceClass::Outside);
        assert_eq!(class("Gemini.md"), SurfaceClass::Outside);
        // Crush's configuration at any depth; its data directory is not
        // an agent directory (its database and logs are ordinary files).
        assert_eq!(root_len("pkg/.crush.json"), Some(2));
        assert_eq!(root_len("crush.json"), Some(1));
        assert_eq!(root_len(".crush/skills/s/SKILL.md"), Some(3));
        assert_eq!(class(".crush/crush.db"), SurfaceClass::Outside);
        assert_eq!(root_len("svc/.aider.conf.yml"), Some(2));
        assert_eq!(root_len(".trae/rules/project_rules.md"), Some(2));
        assert_eq!(root_len("web/.augment/rules/a/b.md"), Some(3));
        assert_eq!(root_len(".augment-guidelines"), Some(1));
        assert_eq!(root_len(".idx/airules.md"), Some(2));
        assert_eq!(class(".idx/dev.nix"), SurfaceClass::Outside);
        assert!(matches!(
            class(".augment/settings.json"),
            SurfaceClass::Artifact {
                rule: SurfaceRule::AgentDir(".augment"),
                ..
            }
        ));
        assert_eq!(root_len(".github/chatmodes/plan.chatmode.md"), Some(3));
        assert_eq!(class(".github/workflows/ci.yml"), SurfaceClass::Outside);
        // Found in public repositories (2026-12-07): Factory Droid's
        // hooks, MCP servers, droids and skills, Antigravity's `.agent`,
        // Zed's `.rules`, JetBrains' rules, `AGENTS.local.md`.
        assert_eq!(root_len(".factory/settings.json"), Some(2));
        assert_eq!(root_len("svc/.factory/mcp.json"), Some(3));
        assert_eq!(root_len(".factory/droids/reviewer.md"), Some(2));
        assert_eq!(root_len(".factory/skills/s/SKILL.md"), Some(3));
        assert_eq!(root_len(".factory/hooks/hooks.json"), Some(2));
        assert_eq!(root_len(".factory-plugin/marketplace.json"), Some(1));
        assert_eq!(root_len(".agent/rules/rules.md"), Some(2));
        assert_eq!(root_len(".agent/workflows/deploy.md"), Some(2));
        assert_eq!(root_len(".agent/skills/s/SKILL.md"), Some(3));
        assert_eq!(root_len("app/.rules"), Some(2));
        assert_eq!(root_len(".aiassistant/rules/style.md"), Some(2));
        assert_eq!(class(".aiassistant/other.xml"), SurfaceClass::Outside);
        assert_eq!(root_len("pkg/AGENTS.local.md"), Some(2));
        assert_eq!(class("pkg/.rules.bak"), SurfaceClass::Outside);
        assert_eq!(root_len(".kilo/agent/reviewer.md"), Some(2));
        assert_eq!(root_len(".kilo/rules-code/r.md"), Some(2));
        assert_eq!(root_len("app/.kilo/skill/s/SKILL.md"), Some(4));
        assert_eq!(root_len("pkg/kilo.jsonc"), Some(2));
        assert_eq!(root_len(".kilocoderules-debug"), Some(1));
        assert_eq!(root_len("docs/CONTEXT.md"), Some(2));
        assert_eq!(class("kilo.json.bak"), SurfaceClass::Outside);
        assert_eq!(root_len(".cline/rules/r.md"), Some(2));
        assert_eq!(root_len("web/.cline/skills/s/SKILL.md"), Some(4));
        assert_eq!(root_len(".cline/plugins/p.js"), Some(2));
        assert!(matches!(
            class(".cline/team/managed.json"),
            SurfaceClass::Artifact {
                root_len: 2,
                rule: SurfaceRule::AgentDir(".cline"),
            }
        ));
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

    #[test]
    fn every_surface_counts_at_any_depth() {
        assert_eq!(root_len("packages/x/.claude/skills/s/SKILL.md"), Some(5));
        assert_eq!(class("packages/x/.claude/skills"), SurfaceClass::Container);
        assert_eq!(class("packages/x/.claude"), SurfaceClass::Container);
        assert_eq!(class("packages/x"), SurfaceClass::Outside);
        assert_eq!(root_len("packages/x/.mcp.json"), Some(3));
        assert_eq!(root_len("tools/bot/.gemini/agents/a.md"), Some(5));
        assert_eq!(
            root_len("extensions/cli/.continue/agents/y.md"),
            Some(4),
            "an unknown entry of a nested agent directory"
        );
        assert_eq!(root_len("plugins/p/.claude-plugin/plugin.json"), Some(3));
        // The outermost surface decides.
        assert_eq!(root_len(".claude/skills/x/.claude/settings.json"), Some(3));
        assert_eq!(root_len("a/CLAUDE.md/b"), Some(2));
        // A row's first name with the path going elsewhere decides nothing.
        assert_eq!(class("pkg/.github/workflows/ci.yml"), SurfaceClass::Outside);
        assert_eq!(root_len(".github/workflows/.claude/x"), Some(4));
        assert_eq!(class("src/.git/objects/ab"), SurfaceClass::Outside);
    }

    #[test]
    fn the_new_agents_rows() {
        assert_eq!(root_len("QWEN.md"), Some(1));
        assert_eq!(root_len("sub/QWEN.md"), Some(2));
        assert_eq!(root_len(".qwen/skills/s/SKILL.md"), Some(3));
        assert_eq!(root_len(".qwen/agents/a.md"), Some(3));
        assert_eq!(root_len(".qwen/commands/git/commit.toml"), Some(2));
        assert_eq!(root_len(".qwen/settings.json"), Some(2));
        assert_eq!(root_len(".qwen/other"), Some(2), "agent directory");
        assert_eq!(root_len(".roo/rules/a.md"), Some(2));
        assert_eq!(root_len(".roo/rules-code/a.md"), Some(2));
        assert_eq!(root_len(".roo/skills/s/SKILL.md"), Some(3));
        assert_eq!(root_len(".roo/mcp.json"), Some(2));
        assert_eq!(root_len(".roomodes"), Some(1));
        assert_eq!(root_len(".roorules-architect"), Some(1));
        assert_eq!(root_len("pkg/.roorules-code"), Some(2));
        assert_eq!(class(".roorules_notes"), SurfaceClass::Outside);
        assert_eq!(root_len(".kilocode/rules-debug/d.md"), Some(2));
        assert_eq!(root_len(".kilocode/workflows/w.md"), Some(2));
        assert_eq!(root_len(".kilocodemodes"), Some(1));
        assert_eq!(root_len(".vscode/mcp.json"), Some(2));
        assert_eq!(class(".vscode/settings.json"), SurfaceClass::Outside);
        assert_eq!(class(".vscode"), SurfaceClass::Container);
        assert_eq!(root_len(".github/extensions/hello/extension.mjs"), Some(3));
        assert_eq!(root_len(".github/plugin/marketplace.json"), Some(2));
        assert_eq!(root_len(".claude-plugin/marketplace.json"), Some(1));
        assert_eq!(root_len(".cursor-plugin/plugin.json"), Some(1));
        assert_eq!(root_len("plugins/p/.codex-plugin/plugin.json"), Some(3));
    }

    #[test]
    fn what_a_link_standing_for_a_container_must_lead_to() {
        let r = |p: &str| {
            let segs: Vec<&str> = p.split('/').collect();
            remainders_below(&segs)
        };
        assert_eq!(r(".claude/skills"), vec![vec!["*"]]);
        assert_eq!(r("pkg/.agents/skills"), vec![vec!["*"]]);
        assert_eq!(r(".claude"), vec![vec!["*"]], "every entry of an agent dir");
        assert!(r(".github").contains(&vec!["mcp.json"]));
        assert!(r(".github").contains(&vec!["prompts", "*"]));
        assert!(r(".github/copilot").contains(&vec!["settings.json"]));
        assert!(r("src").is_empty());
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
    /// filtered copy (see [`crate::filters`]).
    Filtered(&'static FilterRule),
    /// A directory the agent must write as it runs and reads back later
    /// unchecked (a cache of what it loads): an empty writable directory of
    /// the run's own, in memory, gone with the run: the host's is never
    /// shown and nothing written there reaches a later session.
    Private,
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
const fn private(name: &'static str) -> Loc {
    Loc {
        name,
        show: Show::Private,
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
    filtered(".env", &AGENT_ENV),
];
const GEMINI_USER: &[Loc] = &[
    file("GEMINI.md"),
    dir("skills"),
    dir("commands"),
    dir("agents"),
    filtered("settings.json", &GEMINI_SETTINGS),
    dir("extensions"),
    dir("policies"),
    filtered(".env", &AGENT_ENV),
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

const QWEN_USER: &[Loc] = &[
    file("QWEN.md"),
    file("AGENTS.md"),
    filtered("settings.json", &QWEN_SETTINGS),
    dir("skills"),
    dir("agents"),
    dir("commands"),
    dir("hooks"),
    dir("extensions"),
    dir("output-styles"),
    filtered(".env", &AGENT_ENV),
];

/// Cline CLI's directory (`~/.cline`, or `CLINE_DIR`): its extensions
/// beside the state it writes as it runs (settings, credentials, a session
/// database).
const CLINE_USER: &[Loc] = &[
    dir("rules"),
    dir("workflows"),
    dir("hooks"),
    dir("skills"),
    dir("plugins"),
    dir("agents"),
    dir("cron"),
    filtered("data/settings/cline_mcp_settings.json", &MCP_SERVERS_JSON),
];

/// Continue's directory (`~/.continue`, or `CONTINUE_GLOBAL_DIR`, which
/// replaces it whole): its configuration, rules and skills beside the
/// sessions, logs and index it writes. `permissions.yaml` lists the tools
/// it may run unasked, `settings.json` its hooks.
const CONTINUE_USER: &[Loc] = &[
    filtered("config.yaml", &CONTINUE_YAML),
    filtered("config.json", &CONTINUE_JSON),
    dir("rules"),
    dir("skills"),
    dir("prompts"),
    dir("mcpServers"),
    file("permissions.yaml"),
    file("settings.json"),
];

/// Pi's agent directory (`~/.pi/agent`, or `PI_CODING_AGENT_DIR`): its
/// instructions, extensions (TypeScript it runs), packages, skills, prompts,
/// themes and the programs its tools run first (`bin`), beside the
/// sessions, credentials and locks it writes.
const PI_USER: &[Loc] = &[
    file("AGENTS.md"),
    file("AGENTS.MD"),
    file("CLAUDE.md"),
    file("CLAUDE.MD"),
    file("SYSTEM.md"),
    file("APPEND_SYSTEM.md"),
    dir("extensions"),
    dir("skills"),
    dir("prompts"),
    dir("themes"),
    dir("git"),
    dir("npm"),
    dir("bin"),
    dir("tools"),
    dir("hooks"),
    dir("commands"),
    filtered("settings.json", &PI_SETTINGS),
    filtered("models.json", &PI_MODELS),
    filtered("auth.json", &PI_AUTH),
];

/// CodeBuddy Code's directory (`~/.codebuddy`, or `CODEBUDDY_CONFIG_DIR`),
/// laid out as Claude Code's: its instructions, rules, agents, skills,
/// commands, workflows (JavaScript it runs) and plugins, its settings
/// (hooks, a status line, a key helper) and MCP servers, beside the
/// sessions it writes.
const CODEBUDDY_USER: &[Loc] = &[
    file("CODEBUDDY.md"),
    dir("rules"),
    dir("agents"),
    dir("skills"),
    dir("commands"),
    dir("output-styles"),
    dir("workflows"),
    dir("plugins"),
    filtered("settings.json", &CLAUDE_SETTINGS),
    filtered("settings.local.json", &CLAUDE_SETTINGS),
    filtered("mcp.json", &MCP_SERVERS_JSON),
    filtered(".mcp.json", &MCP_SERVERS_JSON),
];

/// Qoder CLI's directory (`~/.qoder`, `~/.qoder-cn`, or
/// `QODER_CONFIG_DIR`): Gemini CLI's layout with Claude Code's extras.
const QODER_USER: &[Loc] = &[
    file("AGENTS.md"),
    dir("rules"),
    dir("skills"),
    dir("commands"),
    dir("agents"),
    dir("output-styles"),
    dir("workflows"),
    dir("extensions"),
    dir("plugins"),
    file("scheduled_tasks.json"),
    filtered("settings.json", &GEMINI_SETTINGS),
];

/// Hermes Agent's directory (`~/.hermes`, or `HERMES_HOME`): its persona,
/// skills, plugins (Python), hooks, the memories it puts into every
/// prompt, the profiles `active_profile` switches its home to, its
/// scheduled jobs, the snapshot of its skills' prompt and the hooks it was
/// allowed to run, its configuration and the `.env` it reads; beside the
/// logs, sessions and caches it writes as it starts (it exits when it
/// cannot). Checked offline with Hermes Agent 0.19.
const HERMES_USER: &[Loc] = &[
    file("SOUL.md"),
    file("AGENTS.md"),
    dir("skills"),
    dir("plugins"),
    dir("hooks"),
    dir("memories"),
    dir("profiles"),
    file("active_profile"),
    dir("cron"),
    file(".skills_prompt_snapshot.json"),
    file("shell-hooks-allowlist.json"),
    filtered("config.yaml", &HERMES_CONFIG),
    filtered(".env", &AGENT_ENV),
];

/// Hermes Agent's managed configuration (`/etc/hermes`, or
/// `HERMES_MANAGED_DIR`), laid over the user's.
const HERMES_MANAGED: &[Loc] = &[
    filtered("config.yaml", &HERMES_CONFIG),
    filtered(".env", &AGENT_ENV),
];

/// Kimi Code CLI's directory (`~/.kimi-code`, or `KIMI_CODE_HOME`): its
/// instructions, system prompt, skills, agents, plugins (from anywhere
/// `plugins/installed.json` points) and MCP servers, its configuration
/// (hooks among its models) and its interface's (commands among its
/// theme); beside the sessions, logs and workspace list it writes as it
/// starts (it exits when it cannot: the list replaced by a rename, which a
/// bound entry would refuse, so a copy merged back). The programs it
/// downloads into `bin` and runs from there (`rg`) are the run's own.
/// Checked offline with Kimi Code CLI 2.1.
const KIMI_CODE_USER: &[Loc] = &[
    file("AGENTS.md"),
    file("SYSTEM.md"),
    dir("skills"),
    dir("agents"),
    dir("plugins"),
    dir("hooks"),
    filtered("mcp.json", &MCP_SERVERS_JSON),
    filtered("config.toml", &KIMI_CODE_CONFIG),
    filtered("tui.toml", &KIMI_CODE_TUI),
    filtered("workspaces.json", &KIMI_CODE_WORKSPACES),
    private("bin"),
];

/// Kimi CLI's directory (`~/.kimi`, or `KIMI_SHARE_DIR`): its skills,
/// plugins (skills and tools whose commands it runs), MCP servers and
/// configuration, and `kimi_code_tips.json`, whose install script the
/// `kimi` command of Kimi CLI 1.52 runs unasked; beside the logs,
/// sessions and metadata it writes as it starts (it exits when it cannot).
/// Checked offline with Kimi CLI 1.52.
const KIMI_USER: &[Loc] = &[
    dir("skills"),
    dir("plugins"),
    filtered("mcp.json", &MCP_SERVERS_JSON),
    filtered("config.toml", &KIMI_CONFIG),
    filtered("kimi.json", &KIMI_METADATA),
    file("kimi_code_tips.json"),
];

/// Mistral Vibe's directory (`~/.vibe`, or `VIBE_HOME`): its instructions,
/// tools (Python it imports), skills, agents, prompts, plugins and hooks,
/// its configuration and the `.env` it reads; beside the logs, sessions and
/// trusted folders it writes as it starts (it exits when it cannot). Two
/// of its caches it reads back unchecked are the run's own: the store it
/// checks plugins out into (a checkout changed there was loaded by the next
/// session) and the tools its MCP servers described. Checked offline with
/// Mistral Vibe 3.0.
const VIBE_USER: &[Loc] = &[
    file("AGENTS.md"),
    dir("tools"),
    dir("skills"),
    dir("agents"),
    dir("prompts"),
    dir("plugins"),
    file("hooks.toml"),
    filtered("config.toml", &VIBE_CONFIG),
    filtered(".env", &AGENT_ENV),
    private("logs/session/plugins"),
    private("logs/mcp-descriptors"),
];

/// Goose's configuration directory (`~/.config/goose`, or `config` under
/// `GOOSE_PATH_ROOT`): its configuration (extensions, which it starts,
/// among its provider settings), the hints and instructions it puts into
/// every prompt, the prompts that replace its own, its skills, recipes and
/// subagents, the tools it runs unasked (`permission.yaml`) and the plugins
/// it enables (`settings.json`). Read-only in a run: Goose writes nothing
/// there as it runs (its sessions and logs are in its data and state
/// directories). Checked offline with Goose 1.52.
const GOOSE_USER: &[Loc] = &[
    filtered("config.yaml", &GOOSE_CONFIG),
    file(".goosehints"),
    file("AGENTS.md"),
    dir("prompts"),
    dir("skills"),
    dir("recipes"),
    dir("agents"),
    file("permission.yaml"),
    file("settings.json"),
];

/// Crush's configuration directory (`~/.config/crush`, or
/// `CRUSH_GLOBAL_CONFIG`): its configuration, the shell script it runs as
/// it starts, its global instructions, skills and commands.
const CRUSH_USER: &[Loc] = &[
    filtered("crush.json", &CRUSH_CONFIG),
    file("crushrc"),
    file("CRUSH.md"),
    dir("skills"),
    dir("commands"),
];

/// Factory Droid's directory (`~/.factory`; `~/.factory-dev` with
/// `FACTORY_ENV=development`; `.factory` under `FACTORY_HOME_OVERRIDE`):
/// its instructions, droids, commands, skills, output styles, plugins and
/// hooks, its settings and MCP servers, beside the sessions, logs and
/// caches it writes as it starts (it exits when it cannot).
const FACTORY_USER: &[Loc] = &[
    file("AGENTS.md"),
    file("CLAUDE.md"),
    file("DESIGN.md"),
    file("Design.md"),
    file("design.md"),
    dir("droids"),
    dir("commands"),
    dir("skills"),
    dir("output-styles"),
    dir("plugins"),
    dir("hooks"),
    filtered("settings.json", &FACTORY_SETTINGS),
    filtered("settings.local.json", &FACTORY_SETTINGS),
    filtered("hooks.json", &HOOKS_JSON),
    filtered("mcp.json", &MCP_SERVERS_JSON),
    filtered("config.json", &FACTORY_CONFIG),
];

/// Kilo Code CLI's configuration directories (`~/.config/kilo`,
/// `KILO_CONFIG_DIR`, `~/.kilo`, `~/.kilocode`): OpenCode's names, singular
/// and plural, its own files, rules and workflows. Kilo writes a
/// `.gitignore` into each as it starts (its state lives in
/// `~/.local/share/kilo` and `~/.local/state/kilo`).
const KILO_USER: &[Loc] = &[
    file("AGENTS.md"),
    filtered("kilo.json", &OPENCODE_CONFIG),
    filtered("kilo.jsonc", &OPENCODE_CONFIG),
    filtered("opencode.json", &OPENCODE_CONFIG),
    filtered("opencode.jsonc", &OPENCODE_CONFIG),
    filtered("config.json", &OPENCODE_CONFIG),
    dir("agent"),
    dir("agents"),
    dir("command"),
    dir("commands"),
    dir("mode"),
    dir("modes"),
    dir("plugin"),
    dir("plugins"),
    dir("skill"),
    dir("skills"),
    dir("tool"),
    dir("tools"),
    dir("rules"),
    dir("workflows"),
    file("mcp.json"),
    file("cli/global/settings/custom_modes.yaml"),
];

/// Cline CLI's data directory moved by `CLINE_DATA_DIR`: its MCP settings
/// beside its database and sessions.
const CLINE_DATA: &[Loc] = &[filtered(
    "settings/cline_mcp_settings.json",
    &MCP_SERVERS_JSON,
)];

/// VS Code extensions' global storage that holds agent configuration.
const ROO_STORAGE: &[Loc] = &[
    filtered("settings/mcp_settings.json", &MCP_SERVERS_JSON),
    file("settings/custom_modes.yaml"),
    file("settings/custom_modes.json"),
];

/// Rows that are a fixed list of names under one directory per base: an
/// agent's directory, which a run may write (its state) but for the names.
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
        state: true,
    }
}

/// A [`group`] whose directory a run may not write: the agent was not run
/// here, so what else it loads from there is not known, and a run that
/// could write there could leave it for a later session.
const fn read_only_group(
    base: Base,
    dir: &'static str,
    names: &'static [Loc],
    agents: &'static str,
    source: &'static str,
) -> ExternalGroup {
    ExternalGroup {
        state: false,
        ..group(base, dir, names, agents, source)
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
    /// Whether the directory is the agent's state, which a run may write
    /// (`seal run`'s write scope) but for the names.
    pub state: bool,
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
    group(Base::Home, ".qwen", QWEN_USER, "Qwen Code", "qwen-config"),
    group(Base::Home, ".cline", CLINE_USER, "Cline", "cline-cli"),
    group(Base::XdgConfig, "kilo", KILO_USER, "Kilo Code", "kilo-cli"),
    group(
        Base::EnvDir("KILO_CONFIG_DIR"),
        "",
        KILO_USER,
        "Kilo Code",
        "kilo-cli",
    ),
    group(Base::Home, ".kilo", KILO_USER, "Kilo Code", "kilo-cli"),
    group(Base::Home, ".kilocode", KILO_USER, "Kilo Code", "kilo-cli"),
    group(
        Base::EnvDir("CLINE_DIR"),
        "",
        CLINE_USER,
        "Cline",
        "cline-cli",
    ),
    group(
        Base::EnvDir("CLINE_DATA_DIR"),
        "",
        CLINE_DATA,
        "Cline",
        "cline-cli",
    ),
    group(
        Base::EnvDir("QWEN_HOME"),
        "",
        QWEN_USER,
        "Qwen Code",
        "qwen-config",
    ),
    group(
        Base::Root,
        "/etc/qwen-code",
        &[
            filtered("settings.json", &QWEN_SETTINGS),
            filtered("system-defaults.json", &QWEN_SETTINGS),
        ],
        "Qwen Code (system settings and defaults)",
        "qwen-config",
    ),
    group(
        Base::XdgConfig,
        "Code/User",
        &[filtered("mcp.json", &MCP_SERVERS_JSON)],
        "VS Code (user MCP servers, agent mode)",
        "vscode-mcp",
    ),
    group(
        Base::XdgConfig,
        "Code - Insiders/User",
        &[filtered("mcp.json", &MCP_SERVERS_JSON)],
        "VS Code Insiders (user MCP servers)",
        "vscode-mcp",
    ),
    group(
        Base::XdgConfig,
        "Code/User/globalStorage/rooveterinaryinc.roo-cline",
        ROO_STORAGE,
        "Roo Code (global MCP servers and modes)",
        "roo-modes",
    ),
    group(
        Base::XdgConfig,
        "Code/User/globalStorage/kilocode.kilo-code",
        ROO_STORAGE,
        "Kilo Code (global MCP servers and modes)",
        "kilo-rules",
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
        CONTINUE_USER,
        "Continue",
        "continue-cli",
    ),
    group(Base::Home, ".pi/agent", PI_USER, "Pi", "pi-coding-agent"),
    group(
        Base::EnvDir("PI_CODING_AGENT_DIR"),
        "",
        PI_USER,
        "Pi",
        "pi-coding-agent",
    ),
    group(
        Base::EnvDir("CONTINUE_GLOBAL_DIR"),
        "",
        CONTINUE_USER,
        "Continue",
        "continue-cli",
    ),
    read_only_group(Base::XdgConfig, "crush", CRUSH_USER, "Crush", "crush"),
    read_only_group(Base::XdgConfig, "goose", GOOSE_USER, "Goose", "goose"),
    read_only_group(
        Base::EnvDir("GOOSE_PATH_ROOT"),
        "config",
        GOOSE_USER,
        "Goose",
        "goose",
    ),
    // Its sessions and logs under its root (in the home:
    // `scope::HOME_AGENT_STATE`).
    group(
        Base::EnvDir("GOOSE_PATH_ROOT"),
        "data",
        &[],
        "Goose (its sessions)",
        "goose",
    ),
    group(
        Base::EnvDir("GOOSE_PATH_ROOT"),
        "state",
        &[],
        "Goose (its logs)",
        "goose",
    ),
    read_only_group(
        Base::Home,
        ".goose",
        &[dir("recipes"), dir("agents")],
        "Goose (recipes and subagents)",
        "goose",
    ),
    group(
        Base::Root,
        "/etc/goose",
        &[filtered("config.yaml", &GOOSE_CONFIG)],
        "Goose (system configuration, laid under the user's)",
        "goose",
    ),
    group(
        Base::Home,
        ".factory",
        FACTORY_USER,
        "Factory Droid",
        "factory",
    ),
    group(
        Base::Home,
        ".factory-dev",
        FACTORY_USER,
        "Factory Droid (its development environment)",
        "factory",
    ),
    group(
        Base::EnvDir("FACTORY_HOME_OVERRIDE"),
        ".factory",
        FACTORY_USER,
        "Factory Droid",
        "factory",
    ),
    read_only_group(
        Base::Home,
        ".codebuddy",
        CODEBUDDY_USER,
        "CodeBuddy Code",
        "codebuddy",
    ),
    read_only_group(
        Base::EnvDir("CODEBUDDY_CONFIG_DIR"),
        "",
        CODEBUDDY_USER,
        "CodeBuddy Code",
        "codebuddy",
    ),
    read_only_group(Base::Home, ".qoder", QODER_USER, "Qoder CLI", "qoder"),
    read_only_group(Base::Home, ".qoder-cn", QODER_USER, "Qoder CLI", "qoder"),
    read_only_group(
        Base::EnvDir("QODER_CONFIG_DIR"),
        "",
        QODER_USER,
        "Qoder CLI",
        "qoder",
    ),
    group(Base::Home, ".hermes", HERMES_USER, "Hermes Agent", "hermes"),
    group(
        Base::EnvDir("HERMES_HOME"),
        "",
        HERMES_USER,
        "Hermes Agent",
        "hermes",
    ),
    group(
        Base::Root,
        "/etc/hermes",
        HERMES_MANAGED,
        "Hermes Agent (managed configuration)",
        "hermes",
    ),
    read_only_group(
        Base::EnvDir("HERMES_MANAGED_DIR"),
        "",
        HERMES_MANAGED,
        "Hermes Agent (managed configuration)",
        "hermes",
    ),
    group(
        Base::Home,
        ".kimi-code",
        KIMI_CODE_USER,
        "Kimi Code CLI",
        "kimi-code",
    ),
    group(
        Base::EnvDir("KIMI_CODE_HOME"),
        "",
        KIMI_CODE_USER,
        "Kimi Code CLI",
        "kimi-code",
    ),
    group(Base::Home, ".kimi", KIMI_USER, "Kimi CLI", "kimi-cli"),
    group(
        Base::EnvDir("KIMI_SHARE_DIR"),
        "",
        KIMI_USER,
        "Kimi CLI",
        "kimi-cli",
    ),
    group(Base::Home, ".vibe", VIBE_USER, "Mistral Vibe", "vibe"),
    group(
        Base::EnvDir("VIBE_HOME"),
        "",
        VIBE_USER,
        "Mistral Vibe",
        "vibe",
    ),
    group(
        Base::EnvDir("MISTRAL_VIBE_SESSION_ROOT"),
        "",
        &[private("plugins")],
        "Mistral Vibe (its session store)",
        "vibe",
    ),
    read_only_group(
        Base::EnvDir("CRUSH_GLOBAL_CONFIG"),
        "",
        CRUSH_USER,
        "Crush",
        "crush",
    ),
    group(
        Base::Home,
        ".local/share/crush",
        &[filtered("crush.json", &CRUSH_DATA)],
        "Crush (its data configuration: models it chose, sign-in tokens)",
        "crush",
    ),
    read_only_group(
        Base::EnvDir("CRUSH_GLOBAL_DATA"),
        "",
        &[filtered("crush.json", &CRUSH_DATA)],
        "Crush (its data configuration)",
        "crush",
    ),
    group(
        Base::Root,
        "/etc/crush",
        &[filtered("crush.json", &CRUSH_CONFIG)],
        "Crush (system configuration)",
        "crush",
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
        Base::Home,
        ".aws/amazonq",
        &[
            filtered("default.json", &MCP_SERVERS_JSON),
            filtered("mcp.json", &MCP_SERVERS_JSON),
            dir("agents"),
            dir("cli-agents"),
            dir("prompts"),
        ],
        "Amazon Q Developer (global MCP servers and agents)",
        "amazonq-mcp",
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
    // Kiro, OpenHands, Goose and Augment keep their settings and state in the same
    // directories as their extensions, and settings there can start
    // programs (Goose's `config.yaml` extensions, OpenHands' MCP servers):
    // single locations, so that the directories are not an agent's state a
    // run may write (run/scope.rs), which would let it plant such settings.
    ext(Base::Home, ".kiro/steering", Show::EmptyDir, "Kiro", "kiro"),
    ext(
        Base::Home,
        ".kiro/hooks",
        Show::EmptyDir,
        "Kiro (agent hooks)",
        "kiro",
    ),
    ext(
        Base::Home,
        ".kiro/settings/mcp.json",
        Show::Filtered(&MCP_SERVERS_JSON),
        "Kiro (user MCP servers)",
        "kiro",
    ),
    ext(
        Base::Home,
        ".kiro/agents",
        Show::EmptyDir,
        "Kiro (custom agents; unconfirmed)",
        "research",
    ),
    ext(
        Base::Home,
        ".kiro/skills",
        Show::EmptyDir,
        "Kiro (Agent Skills; unconfirmed)",
        "research",
    ),
    ext(
        Base::Home,
        ".kiro/powers",
        Show::EmptyDir,
        "Kiro (powers; unconfirmed)",
        "research",
    ),
    ext(
        Base::Home,
        ".openhands/microagents",
        Show::EmptyDir,
        "OpenHands (user microagents)",
        "openhands-microagents",
    ),
    ext(
        Base::Home,
        ".openhands/skills",
        Show::EmptyDir,
        "OpenHands (user skills)",
        "openhands-repository",
    ),
    ext(
        Base::Home,
        ".augment/rules",
        Show::EmptyDir,
        "Augment Code, Auggie CLI (user rules)",
        "augment-rules",
    ),
    ext(
        Base::Home,
        ".augment/user-guidelines.md",
        Show::EmptyFile,
        "Augment Code (user guidelines)",
        "augment-rules",
    ),
    // A settings file Droid merges for one process (`droid exec
    // --settings` sets the variable), and an organisation's local one.
    ext(
        Base::EnvFile("FACTORY_RUNTIME_SETTINGS_PATH"),
        "",
        Show::Filtered(&FACTORY_SETTINGS),
        "Factory Droid (settings for one run: hooks among them)",
        "factory",
    ),
    ext(
        Base::EnvFile("FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH"),
        "",
        Show::Filtered(&FACTORY_SETTINGS),
        "Factory Droid (organisation settings)",
        "factory",
    ),
    ext(
        Base::EnvDir("GOOSE_PATH_ROOT"),
        ".agents",
        Show::EmptyDir,
        "Goose (its Agent Skills and plugins, under its root)",
        "goose",
    ),
    // Aider reads `.aider.conf.yml` from the home directory, and Gemini
    // CLI, Qwen Code and Aider the home's `.env` into their environment,
    // wherever the project is (above it, in a home that is one of its
    // parents, these rows come first).
    ext(
        Base::Home,
        ".aider.conf.yml",
        Show::Filtered(&AIDER_CONF),
        "Aider (its user configuration)",
        "aider-conf",
    ),
    ext(
        Base::Home,
        ".env",
        Show::Filtered(&AGENT_ENV),
        "Gemini CLI, Qwen Code, Aider (read into their environment)",
        "agent-env",
    ),
    // Crush's global instructions beside its configuration directory, its
    // own commands directory, and the skills directory that replaces its
    // others when named.
    ext(
        Base::XdgConfig,
        "AGENTS.md",
        Show::EmptyFile,
        "Crush (global instructions)",
        "crush",
    ),
    ext(
        Base::EnvDir("CRUSH_GLOBAL_CONFIG"),
        "../AGENTS.md",
        Show::EmptyFile,
        "Crush (global instructions beside a relocated configuration directory)",
        "crush",
    ),
    // GitLab Duo's user configuration (the project's `.gitlab/duo` row shown
    // empty there).
    ext(
        Base::Home,
        ".gitlab/duo",
        Show::EmptyDir,
        "GitLab Duo (user rules, skills, commands, MCP servers, hooks)",
        "gitlab-duo",
    ),
    ext(
        Base::Home,
        ".crush/commands",
        Show::EmptyDir,
        "Crush (user commands)",
        "crush",
    ),
    ext(
        Base::EnvDir("CRUSH_SKILLS_DIR"),
        "",
        Show::EmptyDir,
        "Crush (skills)",
        "crush",
    ),
    ext(
        Base::Home,
        ".aider/oauth-keys.env",
        Show::Filtered(&AGENT_ENV),
        "Aider (the keys its sign-in wrote, read into its environment)",
        "agent-env",
    ),
    ext(
        Base::Home,
        ".aider.model.settings.yml",
        Show::EmptyFile,
        "Aider (its user model settings)",
        "aider-conf",
    ),
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
    // `~/.agents` and `~/.agent` hold nothing but what agents load (skills,
    // instructions in any letter case, plugins, agents, commands): shown
    // empty whole, as `FACTORY_HOME_OVERRIDE` moves them for Factory Droid.
    ext(
        Base::Home,
        ".agents",
        Show::EmptyDir,
        "Codex CLI, Gemini CLI, Copilot CLI, OpenCode (Agent Skills); Cline (instructions, \
         plugins); Kimi Code CLI, GitLab Duo (agents, commands); Factory Droid (instructions)",
        "agent-skills",
    ),
    ext(
        Base::Home,
        ".agent",
        Show::EmptyDir,
        "Factory Droid (instructions, skills)",
        "factory",
    ),
    ext(
        Base::EnvDir("FACTORY_HOME_OVERRIDE"),
        ".agents",
        Show::EmptyDir,
        "Factory Droid (in place of `~/.agents`)",
        "factory",
    ),
    ext(
        Base::EnvDir("FACTORY_HOME_OVERRIDE"),
        ".agent",
        Show::EmptyDir,
        "Factory Droid (in place of `~/.agent`)",
        "factory",
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
        Base::EnvDir("CLINE_HOOKS_DIR"),
        "",
        Show::EmptyDir,
        "Cline (hooks: programs it runs)",
        "cline-cli",
    ),
    ext(
        Base::EnvFile("CLINE_MCP_SETTINGS_PATH"),
        "",
        Show::Filtered(&MCP_SERVERS_JSON),
        "Cline (MCP servers)",
        "cline-cli",
    ),
    ext(
        Base::Home,
        "Documents/Cline/Workflows",
        Show::EmptyDir,
        "Cline",
        "cline-cli",
    ),
    ext(
        Base::Home,
        "Documents/Cline/Hooks",
        Show::EmptyDir,
        "Cline (hooks: programs it runs)",
        "cline-cli",
    ),
    ext(
        Base::Home,
        "Documents/Cline/Plugins",
        Show::EmptyDir,
        "Cline (plugins: JavaScript it runs)",
        "cline-cli",
    ),
    ext(
        Base::Home,
        ".roo",
        Show::EmptyDir,
        "Roo Code (global rules, rules-<mode> directories)",
        "roo-rules",
    ),
    ext(
        Base::Home,
        ".kilocodemodes",
        Show::EmptyFile,
        "Kilo Code (the user's modes)",
        "kilo-cli",
    ),
    ext(
        Base::EnvFile("QWEN_CODE_SYSTEM_SETTINGS_PATH"),
        "",
        Show::Filtered(&QWEN_SETTINGS),
        "Qwen Code",
        "qwen-config",
    ),
    ext(
        Base::EnvFile("QWEN_CODE_SYSTEM_DEFAULTS_PATH"),
        "",
        Show::Filtered(&QWEN_SETTINGS),
        "Qwen Code",
        "qwen-config",
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
        "/etc/kilo",
        Show::EmptyDir,
        "Kilo Code (managed configuration)",
        "kilo-cli",
    ),
    ext(
        Base::Root,
        "/etc/ampcode",
        Show::EmptyDir,
        "Amp (unconfirmed)",
        "research",
    ),
];

/// The commands of the agents the tables know, by the name they are run by,
/// with the agent's name. `seal run` says so in one line when the command it
/// starts is none of them (the tables still hold whatever it is).
pub(crate) static AGENT_COMMANDS: &[(&str, &str)] = &[
    ("claude", "Claude Code"),
    ("codex", "Codex CLI"),
    ("gemini", "Gemini CLI"),
    ("copilot", "Copilot CLI"),
    ("opencode", "OpenCode"),
    ("qwen", "Qwen Code"),
    ("cursor-agent", "Cursor CLI"),
    ("amp", "Amp"),
    ("cn", "Continue CLI"),
    ("pi", "Pi"),
    ("cline", "Cline CLI"),
    ("kilo", "Kilo Code CLI"),
    ("kilocode", "Kilo Code CLI"),
    ("droid", "Factory Droid"),
    ("kiro-cli", "Kiro CLI"),
    ("q", "Amazon Q Developer CLI"),
    ("crush", "Crush"),
    ("aider", "Aider"),
    ("codebuddy", "CodeBuddy Code"),
    ("qodercli", "Qoder CLI"),
    ("hermes", "Hermes Agent"),
    ("kimi", "Kimi CLI"),
    ("vibe", "Mistral Vibe"),
    ("duo", "GitLab Duo CLI"),
    ("goose", "Goose"),
];

/// Agents whose own sandbox, on by default, runs each command the model asks
/// for in a new user namespace that maps the agent's user into it (Codex CLI:
/// bubblewrap). Linux lets a process map root so only with `CAP_SETFCAP`
/// (5.12+), which a command `seal run` starts as root never has.
pub static AGENTS_SANDBOXED_IN_A_USER_NAMESPACE: &[&str] = &["codex"];

/// The agent a command name is, if the tables know it.
pub fn agent_of_command(name: &str) -> Option<&'static str> {
    AGENT_COMMANDS
        .iter()
        .find(|(c, _)| *c == name)
        .map(|(_, agent)| *agent)
}

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

/// What `seal run` holds a variable of [`HELD_VARIABLES`] to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// The command's home directory.
    Home,
    /// This directory of the command's home.
    InHome(&'static str),
    /// This value.
    Value(&'static str),
    /// This value, whatever the caller set: any other takes the command
    /// out of the run.
    Always(&'static str),
}

/// Variables Gemini CLI and Qwen Code take from the project's `.env` as
/// they start (every variable of it that the environment does not have;
/// Qwen Code also one it has empty) and that decide what they load: checked
/// offline, a `.env` setting `GEMINI_CLI_HOME` made a sealed Gemini CLI load
/// the user configuration of a directory `seal run` never masked, and
/// `GEMINI_SYSTEM_MD` or `QWEN_SYSTEM_MD` replaced the system prompt with a
/// file of its choosing. (Their other relocating variables, `QWEN_HOME` and
/// the system settings paths, are read before the `.env`: a `.env` setting
/// them changed nothing.) `seal run` gives each one the caller left unset
/// the agent's own default, so the agent loads what it would without the
/// `.env`, and no `.env` moves it.
///
/// Cline CLI hands its session to a hub process it finds running on the
/// machine (`~/.cline/data/locks/hub`, a local WebSocket), which would run it
/// outside the run, every extension there loaded: `seal run` gives it
/// `CLINE_SESSION_BACKEND_MODE=local`, its session in its own process
/// (checked offline with Cline CLI 3.0.65: a hub a native run left behind
/// took a sealed session whole without it, and with the caller's own
/// `auto`), whatever the caller set.
///
/// Pi compiles its TypeScript extensions with jiti, which keeps the output
/// in a cache under `/tmp` (shared with the host, and writable in a run)
/// and takes an entry that ends with the hash of the source: a run could
/// rewrite the cached output of a pinned extension (its source is in the
/// project) and every later session would run that instead. Checked offline
/// with Pi 0.73.1: a sealed run planted one, and the next sealed and native
/// runs ran it. `JITI_FS_CACHE=false` turns the cache off, whatever the
/// caller set.
///
/// Crush with `CRUSH_CLIENT_SERVER` set hands its workspace to a Crush
/// server it finds on the machine (a socket in the runtime directory or
/// `/tmp`), which would load the host's files outside the run, as Cline's
/// hub would (from Crush's source, not run): `seal run` gives it `0`.
pub const HELD_VARIABLES: &[(&str, Held)] = &[
    ("GEMINI_CLI_HOME", Held::Home),
    ("GEMINI_SYSTEM_MD", Held::Value("0")),
    ("QWEN_SYSTEM_MD", Held::Value("0")),
    ("CLINE_SESSION_BACKEND_MODE", Held::Always("local")),
    ("CONTINUE_GLOBAL_DIR", Held::InHome(".continue")),
    (
        "CONTINUE_API_BASE",
        Held::Value("https://api.continue.dev/"),
    ),
    ("JITI_FS_CACHE", Held::Always("false")),
    ("CRUSH_CLIENT_SERVER", Held::Always("0")),
];

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
    // Gemini CLI and Qwen Code read the first `.env` on their way up into
    // their environment: above the project only the provider's credentials
    // are shown, and none can be planted there (in the project the writable
    // view never makes one: `policy::BuiltInRule::AgentEnvFile`).
    out.push((".env".to_string(), Show::Filtered(&AGENT_ENV)));
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
    (".vscode/mcp.json", &MCP_SERVERS_JSON),
    (".github/copilot/settings.json", &COPILOT_SETTINGS),
    ("opencode.json", &OPENCODE_CONFIG),
    ("opencode.jsonc", &OPENCODE_CONFIG),
    ("kilo.json", &OPENCODE_CONFIG),
    ("kilo.jsonc", &OPENCODE_CONFIG),
    (".aider.conf.yml", &AIDER_CONF),
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
