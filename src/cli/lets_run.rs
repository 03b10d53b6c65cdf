//! What approving a bundle lets run: the MCP servers (commands and URLs),
//! hook commands, plugins and other commands its configuration files name,
//! and the executable scripts and shebang files it holds. `seal pin` and
//! `seal init` show this, apart and prominent, before they ask (one `y`
//! must not approve a `.mcp.json` whose `command` is `evil` unseen;
//! [`super::approval`]), and `seal diff --base` for a pull request.
//!
//! Which keys of a configuration file can make something run is said here,
//! per kind of file ([`ConfigReading`]): `seal run`'s filters are
//! allow-lists of what is safe to keep, the other side of the coin, so the
//! two are written apart. [`CONFIG_FILES`] says which reading a project
//! file gets, at any depth; this module finds, in the entries it names,
//! what an agent would start or connect to. A few settings run commands
//! without being extensions (Claude Code's `apiKeyHelper`, ...):
//! [`ALSO_RUN`] names those.
//!
//! Everything here is pure (bytes in, list out) but [`mode_of`], which
//! looks at a file's mode below the project without following links: the
//! bytes come from the hashing that approves them ([`in_read`]).
//! A file that does not parse is listed as such: what it would run is
//! unknown, which a reviewer must see rather than an empty list.

use std::fmt::Write as _;
use std::os::fd::{AsFd, BorrowedFd};

use seal_core::escape::escaped;
use seal_gate::surfaces::Format;
use serde_json::Value;

/// What kind of thing an approval lets run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An MCP server: a command the agent starts, or a URL it connects to.
    McpServer,
    /// A hook: a command the agent runs at an event.
    Hook,
    /// A plugin: code the agent loads (a Claude Code plugin, an OpenCode
    /// plugin or tool, a plugin id or marketplace a settings file enables).
    Plugin,
    /// Another command a setting runs (a status line, a notifier, a
    /// formatter, an API key helper, ...).
    Command,
    /// A file of the bundle that is executable or starts with `#!`.
    Script,
    /// A configuration file whose content could not be read: what it runs
    /// is unknown.
    Unreadable,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::McpServer => "MCP server",
            Kind::Hook => "hook",
            Kind::Plugin => "plugin",
            Kind::Command => "command",
            Kind::Script => "script",
            Kind::Unreadable => "unreadable",
        }
    }
}

/// What is run or reached.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "type", content = "value")]
pub enum Target {
    /// A command line (an argument vector is joined as a POSIX shell reads
    /// it back).
    Command(String),
    /// A URL the agent connects to.
    Url(String),
    /// Code the agent loads or runs: a package, a plugin id, a file.
    Code(String),
    /// Nothing runnable could be read from the entry; why.
    Unknown(String),
}

/// One thing an approval lets run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Runnable {
    pub kind: Kind,
    /// The project-relative path of the file that says so.
    pub file: String,
    /// The entry's name: the MCP server, the hook's event (and matcher), the
    /// setting's key, the plugin; empty for a script.
    pub name: String,
    pub target: Target,
}

/// The largest configuration file read (agent configuration files are
/// kilobytes; a larger one is listed as unreadable).
pub const MAX_BYTES: u64 = 4 << 20;

/// What one kind of configuration file can make run: its format and the
/// key paths (`*` for every key at its level) that hold MCP servers, hooks,
/// plugins and commands. These are the entries a reviewer must see; `seal
/// run`'s filters are the other side of the coin (allow-lists of what is
/// safe to keep), so the two are written apart on purpose.
pub struct ConfigReading {
    pub id: &'static str,
    pub format: Format,
    pub runnable: &'static [&'static [&'static str]],
}

const fn reading_of(
    id: &'static str,
    format: Format,
    runnable: &'static [&'static [&'static str]],
) -> ConfigReading {
    ConfigReading {
        id,
        format,
        runnable,
    }
}

static MCP_SERVERS_JSON: ConfigReading =
    reading_of("mcp-json", Format::Json, &[&["mcpServers"], &["servers"]]);
static HOOKS_JSON: ConfigReading = reading_of("hooks-json", Format::Json, &[&["hooks"]]);
/// Factory Droid's `hooks.json`: a bare map of events (its settings'
/// `hooks` without the key around it), or one under `hooks`.
static FACTORY_HOOKS: ConfigReading = reading_of("factory-hooks", Format::Json, &[&["hooks"]]);
/// MCP servers and hooks: an Amazon Q Developer agent
/// (`.amazonq/default.json`, its CLI's `.amazonq/cli-agents/*.json`),
/// Augment's `.augment/settings.json`, Factory Droid's settings.
static SERVERS_AND_HOOKS: ConfigReading = reading_of(
    "servers-and-hooks",
    Format::Json,
    &[&["mcpServers"], &["hooks"]],
);
/// Mistral Vibe's `config.toml`: its MCP servers (a list of tables).
static VIBE_CONFIG: ConfigReading = reading_of("vibe-config", Format::Toml, &[&["mcp_servers"]]);
/// Mistral Vibe's `hooks.toml`: a list of hooks, each a command.
static VIBE_HOOKS: ConfigReading = reading_of("vibe-hooks", Format::Toml, &[&["hooks"]]);
/// A Goose recipe: the extensions it starts (JSON; YAML is read line by
/// line, [`in_yaml`]).
static GOOSE_RECIPE: ConfigReading = reading_of("goose-recipe", Format::Json, &[&["extensions"]]);
/// A Kiro agent hook (`.kiro/hooks/NAME.kiro.hook`): the command of a
/// `runCommand` hook (an `askAgent` hook sends a prompt instead).
static KIRO_HOOK: ConfigReading = reading_of("kiro-hook", Format::Json, &[&["then", "command"]]);
static CLAUDE_SETTINGS: ConfigReading = reading_of(
    "claude-settings",
    Format::Json,
    &[
        &["hooks"],
        &["statusLine"],
        &["enabledPlugins"],
        &["extraKnownMarketplaces"],
        &["mcpServers"],
        &["fileSuggestion"],
    ],
);
/// Gemini CLI's settings, and Qwen Code's (a fork that keeps their shape).
static GEMINI_SETTINGS: ConfigReading = reading_of(
    "gemini-settings",
    Format::Json,
    &[
        &["mcpServers"],
        &["mcp", "serverCommand"],
        &["hooks"],
        &["tools", "discoveryCommand"],
        &["tools", "callCommand"],
        &["toolDiscoveryCommand"],
        &["toolCallCommand"],
    ],
);
static COPILOT_SETTINGS: ConfigReading = reading_of(
    "copilot-settings",
    Format::Json,
    &[
        &["hooks"],
        &["mcpServers"],
        &["enabledPlugins"],
        &["plugins"],
        &["marketplaces"],
        &["statusLine"],
    ],
);
static AMP_SETTINGS: ConfigReading =
    reading_of("amp-settings", Format::Json, &[&["amp.mcpServers"]]);
static CODEX_CONFIG: ConfigReading = reading_of(
    "codex-config",
    Format::Toml,
    &[
        &["mcp_servers"],
        &["notify"],
        &["hooks"],
        &["plugins"],
        &["marketplaces"],
        &["zsh_path"],
        &["js_repl_node_path"],
        &["profiles", "*", "mcp_servers"],
        &["profiles", "*", "notify"],
        &["profiles", "*", "zsh_path"],
        &["profiles", "*", "js_repl_node_path"],
    ],
);
static OPENCODE_CONFIG: ConfigReading = reading_of(
    "opencode-config",
    Format::Json,
    &[
        &["mcp"],
        &["plugin"],
        &["command"],
        &["formatter"],
        &["lsp"],
        &["experimental", "hook"],
    ],
);
/// Pi's `.pi/settings.json`: the packages and extensions it loads (npm or
/// git packages, file paths), the shell its tools run commands with and
/// what it installs packages with.
static PI_SETTINGS: ConfigReading = reading_of(
    "pi-settings",
    Format::Json,
    &[
        &["packages"],
        &["extensions"],
        &["shellPath"],
        &["shellCommandPrefix"],
        &["npmCommand"],
    ],
);
/// Aider's `.aider.conf.yml`: the commands it runs to lint and to test
/// (read line by line, [`in_aider_yaml`]).
static AIDER_CONF: ConfigReading =
    reading_of("aider-conf", Format::Yaml, &[&["lint-cmd"], &["test-cmd"]]);
/// Crush's `.crush.json` / `crush.json`: MCP servers, the language
/// servers and hooks it starts, a provider's credential refresh command.
static CRUSH_CONFIG: ConfigReading = reading_of(
    "crush-config",
    Format::Json,
    &[
        &["mcp"],
        &["lsp"],
        &["hooks"],
        &["providers", "*", "aws_auth_refresh"],
    ],
);
static CONTINUE_JSON: ConfigReading = reading_of(
    "continue-json",
    Format::Json,
    &[
        &["mcpServers"],
        &["experimental", "modelContextProtocolServers"],
        &["slashCommands"],
        &["customCommands"],
        &["contextProviders"],
    ],
);

/// The project files read as configuration, by where they are (`*` is one
/// name), with the rule that names their extension entries. A pattern
/// matches at any depth (agents load a monorepo package's `.mcp.json` and
/// `.claude/` as they load the root's; surfaces.rs). The first match wins.
pub const CONFIG_FILES: &[(&str, &ConfigReading)] = &[
    // MCP server files: Claude Code (also inside a plugin), Copilot,
    // Cursor, VS Code, Continue, Roo, Kilo.
    (".mcp.json", &MCP_SERVERS_JSON),
    (".github/mcp.json", &MCP_SERVERS_JSON),
    (".cursor/mcp.json", &MCP_SERVERS_JSON),
    (".vscode/mcp.json", &MCP_SERVERS_JSON),
    (".continue/mcpServers/*", &MCP_SERVERS_JSON),
    (".roo/mcp.json", &MCP_SERVERS_JSON),
    (".kilocode/mcp.json", &MCP_SERVERS_JSON),
    (".kilo/mcp.json", &MCP_SERVERS_JSON),
    (".kiro/settings/mcp.json", &MCP_SERVERS_JSON),
    (".trae/mcp.json", &MCP_SERVERS_JSON),
    (".idx/mcp.json", &MCP_SERVERS_JSON),
    (".factory/mcp.json", &MCP_SERVERS_JSON),
    (".augment/settings.json", &SERVERS_AND_HOOKS),
    (".amazonq/mcp.json", &MCP_SERVERS_JSON),
    (".amazonq/default.json", &SERVERS_AND_HOOKS),
    (".amazonq/cli-agents/*", &SERVERS_AND_HOOKS),
    // Settings that hold hooks, MCP servers, plugins and commands.
    (".claude/settings.json", &CLAUDE_SETTINGS),
    (".claude/settings.local.json", &CLAUDE_SETTINGS),
    // Factory Droid keeps Claude Code's hook shape in its settings.
    (".factory/settings.json", &SERVERS_AND_HOOKS),
    (".factory/settings.local.json", &SERVERS_AND_HOOKS),
    (".gemini/settings.json", &GEMINI_SETTINGS),
    // CodeBuddy Code keeps Claude Code's settings' shape; Qoder CLI and
    // iFlow CLI (Gemini CLI forks) keep Gemini CLI's.
    (".codebuddy/settings.json", &CLAUDE_SETTINGS),
    (".codebuddy/settings.local.json", &CLAUDE_SETTINGS),
    (".qoder/settings.json", &GEMINI_SETTINGS),
    (".qoder/settings.local.json", &GEMINI_SETTINGS),
    (".iflow/settings.json", &GEMINI_SETTINGS),
    (".gitlab/duo/mcp.json", &MCP_SERVERS_JSON),
    (".kimi-code/mcp.json", &MCP_SERVERS_JSON),
    // Mistral Vibe: MCP servers in its configuration, hooks in their own
    // file, and a plugin's (checked offline with Mistral Vibe 3.0).
    (".vibe/config.toml", &VIBE_CONFIG),
    (".vibe/hooks.toml", &VIBE_HOOKS),
    (".vibe/plugins/*/mcp.json", &MCP_SERVERS_JSON),
    (".vibe/plugins/*/ai.mistral.vibe/hooks.toml", &VIBE_HOOKS),
    // Goose recipes: the extensions (MCP servers) they start.
    (".goose/recipes/*", &GOOSE_RECIPE),
    (".agents/recipes/*", &GOOSE_RECIPE),
    (".gitlab/duo/hooks.json", &HOOKS_JSON),
    (".devin/hooks.v1.json", &HOOKS_JSON),
    // Qwen Code is a fork of Gemini CLI and keeps its settings' shape.
    (".qwen/settings.json", &GEMINI_SETTINGS),
    (".github/copilot/settings.json", &COPILOT_SETTINGS),
    (".amp/settings.json", &AMP_SETTINGS),
    (".codex/config.toml", &CODEX_CONFIG),
    ("opencode.json", &OPENCODE_CONFIG),
    ("opencode.jsonc", &OPENCODE_CONFIG),
    // Kilo Code (a fork of OpenCode) keeps its configuration's shape.
    ("kilo.json", &OPENCODE_CONFIG),
    ("kilo.jsonc", &OPENCODE_CONFIG),
    (".crush.json", &CRUSH_CONFIG),
    ("crush.json", &CRUSH_CONFIG),
    (".aider.conf.yml", &AIDER_CONF),
    (".continue/config.json", &CONTINUE_JSON),
    (".pi/settings.json", &PI_SETTINGS),
    // Hook files: Codex CLI, Cursor, Windsurf, Copilot, a Claude Code
    // plugin's.
    (".codex/hooks.json", &HOOKS_JSON),
    (".cursor/hooks.json", &HOOKS_JSON),
    (".windsurf/hooks.json", &HOOKS_JSON),
    (".github/hooks/*", &HOOKS_JSON),
    (".claude/plugins/*/hooks/hooks.json", &HOOKS_JSON),
    (".openhands/hooks.json", &HOOKS_JSON),
    (".factory/hooks.json", &FACTORY_HOOKS),
    (".factory/hooks/hooks.json", &FACTORY_HOOKS),
    (".kiro/hooks/*", &KIRO_HOOK),
    // Plugin manifests (Claude Code, Copilot CLI, Cursor, Codex CLI): the
    // plugin, its hooks and MCP servers; marketplaces: the plugins they
    // offer.
    (".claude-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".codex-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".cursor-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".codebuddy-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".qoder-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".factory-plugin/plugin.json", &PLUGIN_MANIFEST),
    (".github/plugin/plugin.json", &PLUGIN_MANIFEST),
    (".claude-plugin/marketplace.json", &MARKETPLACE),
    (".cursor-plugin/marketplace.json", &MARKETPLACE),
    (".factory-plugin/marketplace.json", &MARKETPLACE),
    (".github/plugin/marketplace.json", &MARKETPLACE),
];

/// A plugin's manifest (`.claude-plugin/plugin.json` and its kin): its
/// hooks and MCP servers, inline or as paths of files in the plugin.
pub static PLUGIN_MANIFEST: ConfigReading = reading_of(
    "plugin-manifest",
    Format::Json,
    &[&["hooks"], &["mcpServers"], &["lspServers"]],
);

/// A marketplace manifest: the plugins it offers, each with its source.
pub static MARKETPLACE: ConfigReading =
    reading_of("plugin-marketplace", Format::Json, &[&["plugins"]]);

/// Directories whose files are code an agent loads as plugins or tools:
/// OpenCode's, Kilo Code's (its fork, singular or plural), Cline's, Pi's
/// extensions, CodeBuddy Code's workflows (JavaScript), Mistral Vibe's
/// tools and Hermes Agent's plugins (Python).
const PLUGIN_DIRS: &[&str] = &[
    ".opencode/plugins",
    ".opencode/tools",
    ".kilo/plugin",
    ".kilo/plugins",
    ".kilo/tool",
    ".kilo/tools",
    ".kilocode/plugin",
    ".kilocode/plugins",
    ".cline/plugins",
    ".pi/extensions",
    ".codebuddy/workflows",
    ".vibe/tools",
    ".hermes/plugins",
];

/// Copilot CLI extensions: `.github/extensions/NAME/extension.mjs` is
/// Node.js code run alongside the session (its other files are what it
/// imports).
const EXTENSION_ENTRY: &str = ".github/extensions/*/*";

/// Files an agent runs as they are, whatever their mode: OpenHands runs
/// `.openhands/setup.sh` whenever it begins work in the repository, and
/// `.openhands/pre-commit.sh` as its git pre-commit hook; Crush runs each
/// `crushrc` and `.crushrc` from where it starts up to the git root as a
/// shell script as it starts (its own POSIX shell). Each with what runs it.
const RUN_AS_IS: &[(&str, &str)] = &[
    (".openhands/setup.sh", "bash"),
    (".openhands/pre-commit.sh", "bash"),
    ("crushrc", "sh"),
    (".crushrc", "sh"),
];

/// Settings that run a command without being extensions (`seal run` keeps
/// them in the user's own files), by rule: in a project's file they run
/// what the project says.
const ALSO_RUN: &[(&str, &[&str])] = &[(
    "claude-settings",
    &[
        "apiKeyHelper",
        "awsAuthRefresh",
        "awsCredentialExport",
        "otelHeadersHelper",
    ],
)];

/// How the entries under a key of a rule are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// A map (or list) of MCP servers.
    Servers,
    /// Hooks, however nested: every command, shell line or URL inside.
    Hooks,
    /// Plugin ids, packages or marketplaces.
    Plugins,
    /// A command: a string, an argument vector, an object with `command`,
    /// or a map of those.
    Commands,
    /// Not something that runs (instructions, prompts, agent roles).
    Nothing,
}

/// The reading of a rule's key path, by its last name.
fn reading(last: &str) -> Reading {
    match last {
        "mcpServers"
        | "servers"
        | "mcp"
        | "mcp_servers"
        | "amp.mcpServers"
        | "modelContextProtocolServers"
        | "lspServers" => Reading::Servers,
        "hooks" | "hook" => Reading::Hooks,
        "enabledPlugins"
        | "plugin"
        | "plugins"
        | "extraKnownMarketplaces"
        | "marketplaces"
        | "packages"
        | "extensions" => Reading::Plugins,
        "statusLine"
        | "fileSuggestion"
        | "notify"
        | "formatter"
        | "lsp"
        | "serverCommand"
        | "discoveryCommand"
        | "callCommand"
        | "toolDiscoveryCommand"
        | "toolCallCommand"
        | "shellPath"
        | "shellCommandPrefix"
        | "npmCommand"
        | "aws_auth_refresh"
        | "command" => Reading::Commands,
        _ => Reading::Nothing,
    }
}

/// Whether `path` (project-relative, `/`-separated) ends with what
/// `pattern` (names, `*` for any one name) names: at the root or at any
/// depth below it.
fn matches(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    s.len() >= p.len()
        && p.iter()
            .zip(&s[s.len() - p.len()..])
            .all(|(p, s)| *p == "*" || p == s)
}

/// Whether `path` lies below a `dir` (names) at any depth.
fn below(dir: &str, path: &str) -> bool {
    let d: Vec<&str> = dir.split('/').collect();
    let s: Vec<&str> = path.split('/').collect();
    s.len() > d.len()
        && s.windows(d.len())
            .take(s.len() - d.len())
            .any(|w| w == d.as_slice())
}

/// How a project file is read, if it is a configuration file.
pub fn config_reading(path: &str) -> Option<&'static ConfigReading> {
    CONFIG_FILES
        .iter()
        .find(|(pattern, _)| matches(pattern, path))
        .map(|(_, rule)| *rule)
}

/// What the file at `path` (project-relative) with `bytes` and mode `mode`
/// lets run: the entries of a configuration file, and the file itself when
/// it is a script or a plugin's code.
pub fn in_file(path: &str, bytes: &[u8], mode: u32) -> Vec<Runnable> {
    let mut out = Vec::new();
    if let Some(rule) = config_reading(path) {
        if std::ptr::eq(rule, &PLUGIN_MANIFEST) {
            // The plugin itself: its manifest names it.
            let name = jsonc_value(bytes)
                .ok()
                .and_then(|m| m.get("name").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_default();
            out.push(Runnable {
                kind: Kind::Plugin,
                file: path.to_string(),
                name: name.clone(),
                target: Target::Code(format!("the plugin {name}")),
            });
        }
        in_config(path, bytes, rule, &mut out);
    }
    let extension = matches(EXTENSION_ENTRY, path)
        && path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.starts_with("extension."));
    if extension || PLUGIN_DIRS.iter().any(|dir| below(dir, path)) {
        out.push(Runnable {
            kind: Kind::Plugin,
            file: path.to_string(),
            name: String::new(),
            target: Target::Code(path.to_string()),
        });
    }
    let shebang = bytes
        .strip_prefix(b"#!")
        .map(|rest| rest.split(|b| *b == b'\n').next().unwrap_or_default());
    let run_as_is = RUN_AS_IS
        .iter()
        .find(|(pattern, _)| matches(pattern, path))
        .map(|(_, shell)| *shell);
    if shebang.is_some() || mode & 0o111 != 0 || run_as_is.is_some() {
        out.push(Runnable {
            kind: Kind::Script,
            file: path.to_string(),
            name: String::new(),
            target: match shebang {
                Some(line) => {
                    Target::Code(format!("#!{}", String::from_utf8_lossy(line).trim_end()))
                }
                // Whatever their mode.
                None if let Some(shell) = run_as_is => Target::Command(format!("{shell} {path}")),
                None => Target::Code("an executable file".to_string()),
            },
        });
    }
    out
}

/// What a file read while it was hashed lets run ([`in_file`]): `bytes`
/// when they were kept, else only its first bytes `head` are known, and a
/// configuration file among them is listed as unreadable.
pub fn in_read(path: &str, bytes: Option<&[u8]>, head: &[u8], mode: u32) -> Vec<Runnable> {
    match bytes {
        Some(bytes) => in_file(path, bytes, mode),
        None if config_reading(path).is_some() => {
            vec![unknown(
                path,
                &format!("larger than {} MiB", MAX_BYTES >> 20),
            )]
        }
        None => in_file(path, head, mode),
    }
}

/// A configuration file whose content could not be read, and why: what it
/// runs is unknown.
pub fn unknown(path: &str, why: &str) -> Runnable {
    Runnable {
        kind: Kind::Unreadable,
        file: path.to_string(),
        name: String::new(),
        target: Target::Unknown(why.to_string()),
    }
}

/// The mode of the regular file at `path` below `project`, reached without
/// following links and without opening it (0 for anything else, or when it
/// cannot be looked at). Only its executable bits are read: `seal.json`
/// records no mode.
pub fn mode_of(project: BorrowedFd<'_>, path: &str) -> u32 {
    let names = path.split('/').map(std::ffi::OsString::from).collect();
    let Ok(fd) = seal_core::fs::open_path_beneath(project, &seal_core::fs::RawPath(names)) else {
        return 0;
    };
    match seal_core::fs::fstat_fd(fd.as_fd()) {
        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFREG => st.st_mode,
        _ => 0,
    }
}

/// The entries of a configuration file that `rule` names, read for what
/// they run.
fn in_config(path: &str, bytes: &[u8], rule: &ConfigReading, out: &mut Vec<Runnable>) {
    let unreadable = |why: String| unknown(path, &why);
    let yaml = path.ends_with(".yaml") || path.ends_with(".yml");
    if bytes.len() as u64 > MAX_BYTES {
        out.push(unreadable(format!("larger than {} MiB", MAX_BYTES >> 20)));
        return;
    }
    if std::ptr::eq(rule, &AIDER_CONF) {
        in_aider_yaml(path, bytes, out);
        return;
    }
    if yaml {
        in_yaml(path, bytes, out);
        return;
    }
    let document = match rule.format {
        Format::Json => jsonc_value(bytes),
        Format::Toml => toml_value(bytes),
        Format::Yaml => Err("YAML".to_string()),
        Format::Dotenv => Err("dotenv".to_string()),
    };
    let document = match document {
        Ok(d) => d,
        Err(why) => {
            out.push(unreadable(format!("does not parse ({why})")));
            return;
        }
    };
    if std::ptr::eq(rule, &FACTORY_HOOKS) && document.get("hooks").is_none() {
        let found = Found {
            file: path,
            key: "hooks",
        };
        found.hooks(&document, out);
        return;
    }
    let extensions = rule
        .runnable
        .iter()
        .map(|path| (*path, reading(path.last().copied().unwrap_or_default())));
    let also = ALSO_RUN
        .iter()
        .filter(|(id, _)| *id == rule.id)
        .flat_map(|(_, keys)| {
            keys.iter()
                .map(|k| (std::slice::from_ref(k), Reading::Commands))
        });
    for (key_path, how) in extensions.chain(also) {
        if how == Reading::Nothing {
            continue;
        }
        for (named, value) in at_path(&document, key_path) {
            let found = Found {
                file: path,
                key: &named,
            };
            match how {
                Reading::Servers => found.servers(value, out),
                Reading::Hooks => found.hooks(value, out),
                Reading::Plugins => found.plugins(value, out),
                Reading::Commands => found.commands(value, out),
                Reading::Nothing => {}
            }
        }
    }
}

/// The values at a key path (`*` for every key at its level), each with
/// its path written out (`profiles.work.mcp_servers`).
fn at_path<'v>(value: &'v Value, path: &[&str]) -> Vec<(String, &'v Value)> {
    let Some((first, rest)) = path.split_first() else {
        return vec![(String::new(), value)];
    };
    let Some(object) = value.as_object() else {
        return Vec::new();
    };
    let children: Vec<(&String, &Value)> = if *first == "*" {
        object.iter().collect()
    } else {
        object.get_key_value(*first).into_iter().collect()
    };
    children
        .into_iter()
        .flat_map(|(key, child)| {
            at_path(child, rest).into_iter().map(move |(below, v)| {
                let named = if below.is_empty() {
                    key.clone()
                } else {
                    format!("{key}.{below}")
                };
                (named, v)
            })
        })
        .collect()
}

/// Reads one entry of a rule in one file.
struct Found<'a> {
    file: &'a str,
    /// The key path the entry is at (`mcpServers`, `profiles.x.notify`).
    key: &'a str,
}

impl Found<'_> {
    fn push(&self, out: &mut Vec<Runnable>, kind: Kind, name: String, target: Target) {
        out.push(Runnable {
            kind,
            file: self.file.to_string(),
            name,
            target,
        });
    }

    /// MCP servers: a map of name to server, or a list of servers with a
    /// `name`. A server runs `command` (with `args`) or reaches `url`.
    fn servers(&self, value: &Value, out: &mut Vec<Runnable>) {
        let servers: Vec<(String, &Value)> = match value {
            Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
            Value::Array(list) => {
                let mut servers = Vec::new();
                for (i, v) in list.iter().enumerate() {
                    match v {
                        Value::String(_) => self.servers(v, out),
                        _ => {
                            let name = v.get("name").and_then(Value::as_str);
                            servers.push((name.map_or_else(|| i.to_string(), str::to_string), v));
                        }
                    }
                }
                servers
            }
            // A path of a file of servers (a plugin manifest).
            Value::String(file) => {
                let target = Target::Code(format!("servers from {file}"));
                return self.push(out, Kind::McpServer, self.key.to_string(), target);
            }
            _ => return,
        };
        for (name, server) in servers {
            // Continue's legacy servers keep their launch in `transport`
            // (Mistral Vibe's names a kind there: `"stdio"`).
            let server = server
                .get("transport")
                .filter(|t| t.is_object())
                .unwrap_or(server);
            let command = server.get("command").and_then(argv);
            let url = ["url", "httpUrl", "serverUrl"]
                .iter()
                .find_map(|k| server.get(*k).and_then(Value::as_str));
            let target = match (command, url) {
                (Some(mut argv), _) => {
                    if let Some(args) = server.get("args").and_then(Value::as_array) {
                        argv.extend(args.iter().map(scalar_text));
                    }
                    Target::Command(shell_line(&argv))
                }
                (None, Some(url)) => Target::Url(url.to_string()),
                (None, None) => Target::Unknown("no command or url".into()),
            };
            self.push(out, Kind::McpServer, name, target);
        }
    }

    /// Hooks, in any agent's nesting: every `command` (a string or an
    /// argument vector), `bash` or `powershell` line and `url` below the
    /// hooks object, named by the event (and a `matcher` on the way).
    fn hooks(&self, value: &Value, out: &mut Vec<Runnable>) {
        match value {
            Value::Object(events) => {
                for (event, handlers) in events {
                    self.hook_handlers(event, handlers, out);
                }
            }
            Value::String(file) => {
                let target = Target::Code(format!("hooks from {file}"));
                self.push(out, Kind::Hook, self.key.to_string(), target);
            }
            // A plugin manifest's list of hook files and inline hooks; a
            // list of handlers, each naming its event (Mistral Vibe's and
            // Kimi's `[[hooks]]`).
            Value::Array(items) => {
                for item in items {
                    let event = ["event", "type", "name"]
                        .iter()
                        .find_map(|k| item.get(*k).and_then(Value::as_str));
                    match event {
                        Some(event) if item.get("command").is_some() => {
                            self.hook_handlers(event, item, out)
                        }
                        _ => self.hooks(item, out),
                    }
                }
            }
            _ => {}
        }
    }

    fn hook_handlers(&self, name: &str, value: &Value, out: &mut Vec<Runnable>) {
        match value {
            Value::Array(list) => {
                for item in list {
                    self.hook_handlers(name, item, out);
                }
            }
            Value::Object(map) => {
                let name = match map.get("matcher").and_then(Value::as_str) {
                    Some(m) if !m.is_empty() => format!("{name} ({m})"),
                    _ => name.to_string(),
                };
                let mut runs = false;
                for key in ["command", "bash", "powershell"] {
                    if let Some(argv) = map.get(key).and_then(argv) {
                        self.push(
                            out,
                            Kind::Hook,
                            name.clone(),
                            Target::Command(shell_line(&argv)),
                        );
                        runs = true;
                    }
                }
                if let Some(url) = map.get("url").and_then(Value::as_str) {
                    self.push(out, Kind::Hook, name.clone(), Target::Url(url.to_string()));
                    runs = true;
                }
                if !runs {
                    // Nested handlers (`{"matcher": ..., "hooks": [...]}`),
                    // or a map of globs to handlers.
                    for (key, child) in map {
                        if matches!(child, Value::Array(_) | Value::Object(_)) {
                            let inner = if key == "hooks" {
                                name.clone()
                            } else {
                                format!("{name} {key}")
                            };
                            self.hook_handlers(&inner, child, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Plugins: enabled ids (`{"id": true}`), lists of packages or files,
    /// or named marketplaces with their source.
    fn plugins(&self, value: &Value, out: &mut Vec<Runnable>) {
        match value {
            Value::Array(list) => {
                for item in list {
                    // A marketplace's entry: a named plugin and its source.
                    let named = item.get("name").and_then(Value::as_str);
                    let (name, target) = match (named, item.get("source")) {
                        (Some(name), Some(source)) => {
                            (name.to_string(), Target::Code(scalar_text(source)))
                        }
                        _ => (self.key.to_string(), Target::Code(scalar_text(item))),
                    };
                    self.push(out, Kind::Plugin, name, target);
                }
            }
            Value::Object(map) => {
                for (name, entry) in map {
                    let target = match entry {
                        Value::Bool(false) => continue,
                        Value::Bool(true) => Target::Code(name.clone()),
                        other => Target::Code(format!("{name}: {other}")),
                    };
                    self.push(out, Kind::Plugin, self.key.to_string(), target);
                }
            }
            Value::String(s) => {
                self.push(
                    out,
                    Kind::Plugin,
                    self.key.to_string(),
                    Target::Code(s.clone()),
                );
            }
            _ => {}
        }
    }

    /// Commands: a string, an argument vector, an object with `command`,
    /// or a map of names to those.
    fn commands(&self, value: &Value, out: &mut Vec<Runnable>) {
        if let Some(argv) = argv(value) {
            let target = Target::Command(shell_line(&argv));
            return self.push(out, Kind::Command, self.key.to_string(), target);
        }
        let Some(map) = value.as_object() else {
            return;
        };
        if let Some(argv) = map.get("command").and_then(argv) {
            let target = Target::Command(shell_line(&argv));
            return self.push(out, Kind::Command, self.key.to_string(), target);
        }
        for (name, entry) in map {
            if let Some(argv) = entry.get("command").and_then(argv).or_else(|| argv(entry)) {
                let target = Target::Command(shell_line(&argv));
                self.push(out, Kind::Command, format!("{}.{name}", self.key), target);
            }
        }
    }
}

/// A command as an argument vector: a string is one shell line (one
/// element), an array its words.
fn argv(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(s) if !s.is_empty() => Some(vec![s.clone()]),
        Value::Array(words) if !words.is_empty() => Some(words.iter().map(scalar_text).collect()),
        _ => None,
    }
}

/// A scalar as text (a string without its quotes).
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Words joined into one line: a single element is already a shell line;
/// more are quoted as a POSIX shell reads them back.
fn shell_line(argv: &[String]) -> String {
    match argv {
        [line] => line.clone(),
        words => words
            .iter()
            .map(|w| super::hidden::shell_word(w))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Aider's configuration, line by line as [`in_yaml`] reads Continue's: a
/// `lint-cmd:` or `test-cmd:` with a value, or followed by a list of them
/// (`- python: flake8 --select=E9`), is a command each.
fn in_aider_yaml(path: &str, bytes: &[u8], out: &mut Vec<Runnable>) {
    let text = String::from_utf8_lossy(bytes);
    let unquoted = |v: &str| v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
    let mut list_of: Option<String> = None;
    for line in text.lines() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let item = line.trim_start().strip_prefix("- ");
        if let (Some(key), Some(item)) = (&list_of, item) {
            out.push(Runnable {
                kind: Kind::Command,
                file: path.to_string(),
                name: key.clone(),
                target: Target::Command(unquoted(item)),
            });
            continue;
        }
        list_of = None;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        if !AIDER_CONF.runnable.iter().any(|k| k.first() == Some(&key)) {
            continue;
        }
        match unquoted(value) {
            v if v.is_empty() => list_of = Some(key.to_string()),
            v => out.push(Runnable {
                kind: Kind::Command,
                file: path.to_string(),
                name: key.to_string(),
                target: Target::Command(v),
            }),
        }
    }
}

/// A YAML MCP block (Continue's `.continue/mcpServers/*.yaml`, a Goose
/// recipe's extensions), read line by line: there is no YAML parser in this
/// build, so every `command:` (Goose: `cmd:`), `url:` (Goose: `uri:`) and
/// `name:` value is listed as it is written.
fn in_yaml(path: &str, bytes: &[u8], out: &mut Vec<Runnable>) {
    let text = String::from_utf8_lossy(bytes);
    let mut name = String::new();
    for line in text.lines() {
        let line = line.trim_start().trim_start_matches("- ");
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value
            .trim()
            .trim_matches(|c| c == '"' || c == '\'')
            .to_string();
        let target = match key.trim() {
            "name" => {
                name = value;
                continue;
            }
            "command" | "cmd" => Target::Command(value),
            "url" | "uri" => Target::Url(value),
            _ => continue,
        };
        out.push(Runnable {
            kind: Kind::McpServer,
            file: path.to_string(),
            name: name.clone(),
            target,
        });
    }
}

/// JSON, also with comments and trailing commas (JSONC), as a value: read
/// by the one JSON reader, in the dialect `seal run`'s filters read agents'
/// files with, so that a reviewer is shown what the agent would read (a
/// document readers disagree about, such as a `//` comment holding a lone
/// carriage return, is listed as unreadable, never read one way).
fn jsonc_value(bytes: &[u8]) -> Result<Value, String> {
    let document = seal_core::json::parse_as(bytes, seal_core::json::Dialect::Jsonc)
        .map_err(|e| e.to_string())?;
    Ok(plain(&document.kind))
}

/// The reader's value as a `serde_json` value (the lists below walk those).
fn plain(kind: &seal_core::json::Kind) -> Value {
    use seal_core::json::Kind as K;
    match kind {
        K::Null => Value::Null,
        K::Bool(b) => Value::Bool(*b),
        K::Number(text) => text
            .parse::<serde_json::Number>()
            .map_or_else(|_| Value::String(text.clone()), Value::Number),
        K::String(s) => Value::String(s.clone()),
        K::Array(items) => Value::Array(items.iter().map(|v| plain(&v.kind)).collect()),
        K::Object(members) => Value::Object(
            members
                .iter()
                .map(|m| (m.key.clone(), plain(&m.value.kind)))
                .collect(),
        ),
    }
}

/// A TOML document as a JSON value (tables as objects, arrays as arrays,
/// every other value as its text or number).
fn toml_value(bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let document: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    Ok(toml_item(document.as_item()))
}

fn toml_item(item: &toml_edit::Item) -> Value {
    match item {
        toml_edit::Item::None => Value::Null,
        toml_edit::Item::Value(v) => toml_plain(v),
        toml_edit::Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_item(v)))
                .collect(),
        ),
        toml_edit::Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| toml_item(&toml_edit::Item::Table(t.clone())))
                .collect(),
        ),
    }
}

fn toml_plain(value: &toml_edit::Value) -> Value {
    use toml_edit::Value as T;
    match value {
        T::String(s) => Value::String(s.value().clone()),
        T::Integer(i) => Value::from(*i.value()),
        T::Float(f) => Value::from(*f.value()),
        T::Boolean(b) => Value::Bool(*b.value()),
        T::Datetime(d) => Value::String(d.value().to_string()),
        T::Array(a) => Value::Array(a.iter().map(toml_plain).collect()),
        T::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), toml_plain(v)))
                .collect(),
        ),
    }
}

/// The list for a terminal: a heading with the count (and how many are
/// new: `true` beside an item), then one line per item, the new ones
/// first and marked, each group sorted by kind, file and name, every name
/// escaped. Empty when there is nothing.
pub fn render(list: &[(&Runnable, bool)]) -> String {
    let mut out = String::new();
    if list.is_empty() {
        return out;
    }
    let mut sorted: Vec<&(&Runnable, bool)> = list.iter().collect();
    sorted.sort_by(|(a, a_new), (b, b_new)| {
        (!a_new, a.kind, &a.file, &a.name).cmp(&(!b_new, b.kind, &b.file, &b.name))
    });
    let new = list.iter().filter(|(_, new)| *new).count();
    let _ = match new {
        0 => writeln!(out, "What this approval lets run ({}):", list.len()),
        n => writeln!(
            out,
            "What this approval lets run ({}, {n} not approved before):",
            list.len()
        ),
    };
    for (r, new) in sorted {
        let target = match &r.target {
            Target::Command(c) => format!("runs {}", escaped(c)),
            Target::Url(u) => format!("connects to {}", escaped(u)),
            Target::Code(c) => format!("loads {}", escaped(c)),
            Target::Unknown(why) => format!("unknown: {}", escaped(why)),
        };
        let name = if r.name.is_empty() {
            String::new()
        } else {
            format!(" {}", escaped(&r.name))
        };
        let _ = writeln!(
            out,
            "  {}{}{name} in {}: {target}",
            if *new { "new: " } else { "" },
            r.kind.word(),
            escaped(&r.file)
        );
    }
    out
}

#[cfg(test)]
mod tests;
