//! What `seal run` keeps of a configuration file that mixes extensions with
//! settings and state (`~/.claude.json`, `~/.codex/config.toml`, ...): an
//! **allow-list** per file, per agent and version. Every key not listed is
//! dropped, in the copy the run shows and in what the run merges back, so a
//! key an agent adds in a new version (or one a table forgot) fails closed.
//!
//! A [`Keep`] is a path of keys: `*` stands for any key at its level, and a
//! segment ending in `*` for any key starting with what precedes it
//! (`ANTHROPIC_*`). A listed path keeps its whole value; an object on the
//! way to listed paths is kept with only its listed members. A string value
//! may be kept only when it starts with a given prefix (a package name an
//! agent installs and loads).
//!
//! docs/SURFACES.md lists every rule with every key it keeps; a unit test
//! holds the two together. The run's filter (`src/run/filter.rs`) applies
//! these lists.

/// The document format of a filtered file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON, also with comments and trailing commas (JSONC).
    Json,
    Toml,
    /// YAML, cut by top-level entry only (no reader here reads YAML exactly
    /// as the agents do): whole top-level entries are kept or dropped.
    Yaml,
    /// A dotenv file: `KEY=VALUE` lines an agent reads into its environment
    /// as it starts, kept only where every dotenv reader reads them alike.
    Dotenv,
}

/// One kept path.
#[derive(Debug, PartialEq, Eq)]
pub struct Keep {
    pub path: &'static [&'static str],
    /// Kept only when the value is a string starting with this.
    pub string_prefix: Option<&'static str>,
}

impl Keep {
    /// Whether the kept path begins with segments matching `path`.
    fn starts_like(&self, path: &[&str]) -> bool {
        self.path.len() >= path.len()
            && self
                .path
                .iter()
                .zip(path)
                .all(|(p, k)| segment_matches(p, k))
    }
}

const fn k(path: &'static [&'static str]) -> Keep {
    Keep {
        path,
        string_prefix: None,
    }
}

/// What `seal run` shows of a file that mixes extensions with settings and
/// state: only the keys of `keep`.
#[derive(Debug, PartialEq, Eq)]
pub struct FilterRule {
    pub id: &'static str,
    pub format: Format,
    /// The kept paths, in lists (several rules share some).
    pub keep: &'static [&'static [Keep]],
    /// The agent writes this file while it runs (state, ids, trust decisions):
    /// its copy is writable and the agent's changes to kept keys are merged
    /// back into the host file at the end. A file that is not writable is a
    /// read-only copy.
    pub writable: bool,
    /// How a string value the agent runs as a shell command for its value
    /// looks (Pi's `!command` for an API key or a header, Crush's `$(...)`):
    /// a kept map entry ([`FilterRule::is_map_entry`]) or value holding such
    /// a string anywhere is dropped whole, from the copy a run is shown (as
    /// `apiKeyHelper` is from Claude Code's settings) and from what it
    /// merges back, so a run neither runs the user's nor leaves one for a
    /// later session; the other entries stay valid. JSON only.
    pub commands: Option<CommandMark>,
    pub agents: &'static str,
    /// The versions whose files the list was written from.
    pub versions: &'static str,
    pub source: &'static str,
}

/// How an agent tells a string value it runs as a shell command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandMark {
    /// The value starts with this (Pi's `!command`).
    StartsWith(&'static str),
    /// The value holds one of these anywhere: a shell's command
    /// substitution, `$(...)` or backquotes, in a value the agent expands
    /// as a shell would (Crush's).
    Holds(&'static [&'static str]),
}

impl CommandMark {
    /// Whether the agent runs `value` (or a part of it) as a command.
    pub fn marks(&self, value: &str) -> bool {
        match self {
            CommandMark::StartsWith(prefix) => value.starts_with(prefix),
            CommandMark::Holds(marks) => marks.iter().any(|m| value.contains(m)),
        }
    }
}

/// Does the key `key` match the path segment `pattern`?
pub(crate) fn segment_matches(pattern: &str, key: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some("") => true,
        Some(prefix) => key.starts_with(prefix),
        None => pattern == key,
    }
}

/// What a rule says about the value at a key path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Keep the whole value (if it starts with the prefix, for a string
    /// kept only so).
    Whole(Option<&'static str>),
    /// Keep it if it is an object (or table), with only its kept members.
    Inside,
    Drop,
}

impl FilterRule {
    /// The verdict on the value at `path`.
    pub fn verdict(&self, path: &[&str]) -> Verdict {
        let matches = |keep: &Keep, n: usize| keep.starts_like(&path[..n]);
        let n = path.len();
        if let Some(keep) = self
            .kept()
            .find(|keep| keep.path.len() == n && matches(keep, n))
        {
            return Verdict::Whole(keep.string_prefix);
        }
        if self
            .kept()
            .any(|keep| keep.path.len() > n && matches(keep, n))
        {
            return Verdict::Inside;
        }
        Verdict::Drop
    }

    /// Whether the value at `path` is an entry of a map the rule keeps
    /// entry by entry (a `*` segment: a provider of Pi's `providers.*`):
    /// the unit [`FilterRule::commands`] drops.
    pub fn is_map_entry(&self, path: &[&str]) -> bool {
        let n = path.len();
        n > 0
            && self
                .kept()
                .any(|keep| keep.starts_like(path) && keep.path[n - 1] == "*")
    }

    /// Every kept path.
    pub fn kept(&self) -> impl Iterator<Item = &'static Keep> + '_ {
        self.keep.iter().flat_map(|list| list.iter())
    }
}

/// `~/.claude.json`: Claude Code's state (ids, onboarding, caches, per-project
/// trust and history). Dropped, among the rest: `mcpServers` and the
/// per-project `mcpServers`, `enableAllProjectMcpServers` and the approval of
/// `CLAUDE.md` imports from outside the project.
pub static CLAUDE_STATE: FilterRule = FilterRule {
    id: "claude-state",
    format: Format::Json,
    keep: &[&[
        k(&["numStartups"]),
        k(&["installMethod"]),
        k(&["autoUpdates"]),
        k(&["userID"]),
        k(&["anonymousId"]),
        k(&["firstStartTime"]),
        k(&["claudeCodeFirstTokenDate"]),
        k(&["theme"]),
        k(&["verbose"]),
        k(&["editorMode"]),
        k(&["preferredNotifChannel"]),
        k(&["hasCompletedOnboarding"]),
        k(&["lastOnboardingVersion"]),
        k(&["lastReleaseNotesSeen"]),
        k(&["hasSeenTasksHint"]),
        k(&["hasSeenStashHint"]),
        k(&["hasUsedBackslashReturn"]),
        k(&["hasAcknowledgedCostThreshold"]),
        k(&["bypassPermissionsModeAccepted"]),
        k(&["oauthAccount"]),
        k(&["customApiKeyResponses"]),
        k(&["primaryApiKey"]),
        k(&["tipsHistory"]),
        k(&["memoryUsageCount"]),
        k(&["promptQueueUseCount"]),
        k(&["shiftEnterKeyBindingInstalled"]),
        k(&["optionAsMetaKeyInstalled"]),
        k(&["subscriptionNoticeCount"]),
        k(&["hasAvailableSubscription"]),
        k(&["recommendedSubscription"]),
        k(&["cachedChangelog"]),
        k(&["changelogLastFetched"]),
        k(&["fallbackAvailableWarningThreshold"]),
        k(&["isQualifiedForDataSharing"]),
        k(&["feedbackSurveyState"]),
        k(&["cachedStatsigGates"]),
        k(&["cachedDynamicConfigs"]),
        k(&["cachedGrowthBookFeatures"]),
        k(&["showExpandedTodos"]),
        k(&["autoCompactEnabled"]),
        k(&["messageIdleNotifThresholdMs"]),
        k(&["diffTool"]),
        k(&["lastPlanModeUse"]),
        k(&["hasIdeOnboardingBeenShown"]),
        k(&["githubRepoPaths"]),
        k(&["projects", "*", "allowedTools"]),
        k(&["projects", "*", "history"]),
        k(&["projects", "*", "mcpContextUris"]),
        k(&["projects", "*", "enabledMcpjsonServers"]),
        k(&["projects", "*", "disabledMcpjsonServers"]),
        k(&["projects", "*", "disabledMcpServers"]),
        k(&["projects", "*", "hasTrustDialogAccepted"]),
        k(&["projects", "*", "projectOnboardingSeenCount"]),
        k(&["projects", "*", "hasCompletedProjectOnboarding"]),
        k(&["projects", "*", "ignorePatterns"]),
        k(&["projects", "*", "exampleFiles"]),
        k(&["projects", "*", "exampleFilesGeneratedAt"]),
        k(&["projects", "*", "dontCrawlDirectory"]),
        k(&["projects", "*", "last*"]),
    ]],
    writable: true,
    commands: None,
    agents: "Claude Code",
    versions: "Claude Code 2.1",
    source: "claude-mcp",
};

/// Environment variables Claude Code settings may set in the run: its model
/// and provider settings, timeouts and switches; never one that relocates a
/// configuration directory, names a shell, a command or a helper, or makes
/// another program load code (`NODE_OPTIONS`, `BASH_ENV`, ...).
const CLAUDE_ENV: &[Keep] = &[
    k(&["env", "ANTHROPIC_*"]),
    k(&["env", "DISABLE_*"]),
    k(&["env", "OTEL_*"]),
    k(&["env", "CLAUDE_CODE_USE_BEDROCK"]),
    k(&["env", "CLAUDE_CODE_USE_VERTEX"]),
    k(&["env", "CLAUDE_CODE_SKIP_BEDROCK_AUTH"]),
    k(&["env", "CLAUDE_CODE_SKIP_VERTEX_AUTH"]),
    k(&["env", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"]),
    k(&["env", "CLAUDE_CODE_MAX_RETRIES"]),
    k(&["env", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]),
    k(&["env", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE"]),
    k(&["env", "CLAUDE_CODE_ENABLE_TELEMETRY"]),
    k(&["env", "CLAUDE_CODE_SUBAGENT_MODEL"]),
    k(&["env", "MAX_THINKING_TOKENS"]),
    k(&["env", "MAX_MCP_OUTPUT_TOKENS"]),
    k(&["env", "MCP_TIMEOUT"]),
    k(&["env", "MCP_TOOL_TIMEOUT"]),
    k(&["env", "BASH_DEFAULT_TIMEOUT_MS"]),
    k(&["env", "BASH_MAX_TIMEOUT_MS"]),
    k(&["env", "BASH_MAX_OUTPUT_LENGTH"]),
    k(&["env", "HTTP_PROXY"]),
    k(&["env", "HTTPS_PROXY"]),
    k(&["env", "NO_PROXY"]),
    k(&["env", "AWS_REGION"]),
    k(&["env", "CLOUD_ML_REGION"]),
    k(&["env", "VERTEX_REGION_*"]),
    k(&["env", "USE_BUILTIN_RIPGREP"]),
];

/// Claude Code settings (user, local, managed): model, permission rules,
/// switches, the environment above. Dropped, among the rest: `hooks`,
/// `statusLine`, `apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`,
/// `otelHeadersHelper` (commands), `enabledPlugins`,
/// `extraKnownMarketplaces`, `mcpServers`, `fileSuggestion`,
/// `autoMemoryDirectory`, `permissions.additionalDirectories` (they would
/// load from elsewhere).
pub static CLAUDE_SETTINGS: FilterRule = FilterRule {
    id: "claude-settings",
    format: Format::Json,
    keep: &[
        &[
            k(&["$schema"]),
            k(&["model"]),
            k(&["availableModels"]),
            k(&["permissions", "allow"]),
            k(&["permissions", "deny"]),
            k(&["permissions", "ask"]),
            k(&["permissions", "defaultMode"]),
            k(&["permissions", "disableBypassPermissionsMode"]),
            k(&["cleanupPeriodDays"]),
            k(&["includeCoAuthoredBy"]),
            k(&["attribution"]),
            k(&["outputStyle"]),
            k(&["language"]),
            k(&["alwaysThinkingEnabled"]),
            k(&["forceLoginMethod"]),
            k(&["forceLoginOrgUUID"]),
            k(&["disableAllHooks"]),
            k(&["allowManagedHooksOnly"]),
            k(&["allowManagedPermissionRulesOnly"]),
            k(&["allowedMcpServers"]),
            k(&["deniedMcpServers"]),
            k(&["strictKnownMarketplaces"]),
            k(&["enabledMcpjsonServers"]),
            k(&["disabledMcpjsonServers"]),
            k(&["spinnerTipsEnabled"]),
            k(&["companyAnnouncements"]),
            k(&["sandbox"]),
            k(&["autoUpdatesChannel"]),
            k(&["respectGitignore"]),
            k(&["feedbackSurveyRate"]),
            k(&["showTurnDuration"]),
            k(&["terminalProgressBarEnabled"]),
            k(&["theme"]),
            k(&["verbose"]),
        ],
        CLAUDE_ENV,
    ],
    writable: false,
    commands: None,
    agents: "Claude Code",
    versions: "Claude Code 2.1",
    source: "claude-settings",
};

/// Codex CLI's `config.toml` (user and system): the model and its providers
/// (their endpoints and headers), approval and sandbox settings, trusted
/// projects, history, the interface, profiles of the same. Dropped, among the
/// rest: `mcp_servers`, `notify`, `hooks`, `plugins`, `marketplaces`,
/// `agents`, `skills`, every instruction and prompt (inline or by file),
/// `project_doc_fallback_filenames`, command-valued keys (`zsh_path`,
/// `js_repl_node_path`, in profiles too) and `shell_environment_policy`
/// (it sets the shell tool's environment).
const CODEX_KEPT: &[Keep] = &[
    k(&["model"]),
    k(&["review_model"]),
    k(&["model_provider"]),
    k(&["model_providers", "*", "name"]),
    k(&["model_providers", "*", "base_url"]),
    k(&["model_providers", "*", "env_key"]),
    k(&["model_providers", "*", "env_key_instructions"]),
    k(&["model_providers", "*", "wire_api"]),
    k(&["model_providers", "*", "query_params"]),
    k(&["model_providers", "*", "http_headers"]),
    k(&["model_providers", "*", "env_http_headers"]),
    k(&["model_providers", "*", "request_max_retries"]),
    k(&["model_providers", "*", "stream_max_retries"]),
    k(&["model_providers", "*", "stream_idle_timeout_ms"]),
    k(&["model_providers", "*", "requires_openai_auth"]),
    k(&["model_context_window"]),
    k(&["model_max_output_tokens"]),
    k(&["model_auto_compact_token_limit"]),
    k(&["model_reasoning_effort"]),
    k(&["model_reasoning_summary"]),
    k(&["model_verbosity"]),
    k(&["model_supports_reasoning_summaries"]),
    k(&["approval_policy"]),
    k(&["sandbox_mode"]),
    k(&["sandbox_workspace_write"]),
    k(&["disable_response_storage"]),
    k(&["hide_agent_reasoning"]),
    k(&["show_raw_agent_reasoning"]),
    k(&["file_opener"]),
    k(&["history"]),
    k(&["tui", "notifications"]),
    k(&["tui", "animations"]),
    k(&["tui", "show_tooltips"]),
    k(&["features"]),
    k(&["tools"]),
    k(&["notice"]),
    k(&["preferred_auth_method"]),
    k(&["forced_login_method"]),
    k(&["forced_chatgpt_workspace_id"]),
    k(&["chatgpt_base_url"]),
    k(&["cli_auth_credentials_store"]),
    k(&["check_for_update_on_startup"]),
    k(&["windows_wsl_setup_acknowledged"]),
    k(&["profile"]),
    k(&["profiles", "*", "model"]),
    k(&["profiles", "*", "model_provider"]),
    k(&["profiles", "*", "approval_policy"]),
    k(&["profiles", "*", "sandbox_mode"]),
    k(&["profiles", "*", "model_reasoning_effort"]),
    k(&["profiles", "*", "model_reasoning_summary"]),
    k(&["profiles", "*", "model_verbosity"]),
    k(&["profiles", "*", "chatgpt_base_url"]),
    k(&["projects", "*", "trust_level"]),
];

/// `~/.codex/config.toml` (writable: Codex records trusted projects there).
pub static CODEX_CONFIG: FilterRule = FilterRule {
    id: "codex-config",
    format: Format::Toml,
    keep: &[CODEX_KEPT],
    writable: true,
    commands: None,
    agents: "Codex CLI",
    versions: "Codex CLI 0.171",
    source: "codex-config",
};

/// `/etc/codex/config.toml`: as the user's, read-only.
pub static CODEX_SYSTEM_CONFIG: FilterRule = FilterRule {
    id: "codex-system-config",
    format: Format::Toml,
    keep: &[CODEX_KEPT],
    writable: false,
    commands: None,
    agents: "Codex CLI",
    versions: "Codex CLI 0.171",
    source: "codex-config",
};

/// Hook files (Codex, Cursor): nothing but the format version.
pub static HOOKS_JSON: FilterRule = FilterRule {
    id: "hooks-json",
    format: Format::Json,
    keep: &[&[k(&["version"])]],
    writable: false,
    commands: None,
    agents: "Codex CLI, Cursor",
    versions: "Codex CLI 0.171",
    source: "codex-config",
};

/// MCP configuration files (`.mcp.json` in parent directories, Copilot's
/// `mcp-config.json`, Cursor's `mcp.json`, Windsurf's `mcp_config.json`,
/// managed MCP, VS Code's user `mcp.json`): they hold servers and nothing
/// else an agent needs. Nothing is kept.
pub static MCP_SERVERS_JSON: FilterRule = FilterRule {
    id: "mcp-json",
    format: Format::Json,
    keep: &[],
    writable: false,
    commands: None,
    agents: "Claude Code, Copilot, Cursor, Windsurf, VS Code",
    versions: "all",
    source: "claude-mcp",
};

/// Gemini CLI settings (user and system, and Qwen Code's, which keeps
/// Gemini's schema): interface, model, authentication choice, privacy,
/// telemetry, the tool and MCP server allow and deny lists. Dropped, among
/// the rest: `mcpServers`, `mcp.serverCommand`, `hooks`, tool discovery and
/// call commands, `context` (the context file name and directories whose
/// instructions load), `advanced`, `experimental`.
const GEMINI_KEPT: &[Keep] = &[
    k(&["$schema"]),
    k(&["general", "vimMode"]),
    k(&["general", "disableAutoUpdate"]),
    k(&["general", "disableUpdateNag"]),
    k(&["general", "checkpointing"]),
    k(&["general", "enablePromptCompletion"]),
    k(&["general", "sessionRetention"]),
    k(&["ui"]),
    k(&["model"]),
    k(&["security", "auth"]),
    k(&["security", "folderTrust"]),
    k(&["privacy"]),
    k(&["telemetry"]),
    k(&["ide"]),
    k(&["output"]),
    k(&["tools", "sandbox"]),
    k(&["tools", "core"]),
    k(&["tools", "exclude"]),
    k(&["tools", "allowed"]),
    k(&["mcp", "allowed"]),
    k(&["mcp", "excluded"]),
    k(&["extensions", "disabled"]),
    k(&["theme"]),
    k(&["selectedAuthType"]),
    k(&["sandbox"]),
    k(&["autoAccept"]),
    k(&["usageStatisticsEnabled"]),
    k(&["hideBanner"]),
    k(&["hideTips"]),
    k(&["vimMode"]),
    k(&["checkpointing"]),
    k(&["coreTools"]),
    k(&["excludeTools"]),
    k(&["allowMCPServers"]),
    k(&["excludeMCPServers"]),
    k(&["maxSessionTurns"]),
    k(&["disableAutoUpdate"]),
];

/// Gemini CLI settings (user, system, system defaults).
pub static GEMINI_SETTINGS: FilterRule = FilterRule {
    id: "gemini-settings",
    format: Format::Json,
    keep: &[GEMINI_KEPT],
    writable: false,
    commands: None,
    agents: "Gemini CLI",
    versions: "Gemini CLI 0.61",
    source: "gemini-config",
};

/// Qwen Code's settings (user, system): Gemini CLI's schema, which it
/// keeps. Writable: Qwen Code rewrites the user's file when it migrates it.
pub static QWEN_SETTINGS: FilterRule = FilterRule {
    id: "qwen-settings",
    format: Format::Json,
    keep: &[GEMINI_KEPT],
    writable: true,
    commands: None,
    agents: "Qwen Code",
    versions: "Qwen Code 0.24",
    source: "qwen-config",
};

/// Copilot CLI's state and settings: trusted folders, logged-in users, the
/// model and interface. Dropped, among the rest: `hooks`, `mcpServers`,
/// `enabledPlugins`, `plugins`, `marketplaces`, `statusLine`,
/// `custom_instructions_dirs`.
const COPILOT_KEPT: &[Keep] = &[
    k(&["$schema"]),
    k(&["trusted_folders"]),
    k(&["trustedFolders"]),
    k(&["logged_in_users"]),
    k(&["loggedInUsers"]),
    k(&["last_logged_in_user"]),
    k(&["lastLoggedInUser"]),
    k(&["first_launch_at"]),
    k(&["firstLaunchAt"]),
    k(&["asked_setup_terminals"]),
    k(&["banner"]),
    k(&["theme"]),
    k(&["model"]),
    k(&["reasoning_effort"]),
    k(&["render_markdown"]),
    k(&["screen_reader"]),
    k(&["beep"]),
    k(&["stream"]),
    k(&["auto_update"]),
    k(&["allowed_urls"]),
    k(&["denied_urls"]),
];

/// Copilot CLI's `settings.json` (and a parent directory's
/// `.github/copilot/settings.json`).
pub static COPILOT_SETTINGS: FilterRule = FilterRule {
    id: "copilot-settings",
    format: Format::Json,
    keep: &[COPILOT_KEPT],
    writable: false,
    commands: None,
    agents: "Copilot CLI",
    versions: "Copilot CLI 1.0",
    source: "copilot-cli",
};

/// Copilot CLI's `config.json`: its state; the CLI writes it.
pub static COPILOT_CONFIG: FilterRule = FilterRule {
    id: "copilot-config",
    format: Format::Json,
    keep: &[COPILOT_KEPT],
    writable: true,
    commands: None,
    agents: "Copilot CLI",
    versions: "Copilot CLI 1.0",
    source: "copilot-cli",
};

/// OpenCode's `opencode.json(c)`: the model and its providers (a provider's
/// `npm` package, which OpenCode installs and loads, only from the AI SDK's
/// `@ai-sdk/` scope), the interface, permissions and tool switches. Dropped,
/// among the rest: `mcp`, `plugin`, `agent`, `mode`, `command`,
/// `instructions`, `formatter`, `lsp`, `experimental`.
pub static OPENCODE_CONFIG: FilterRule = FilterRule {
    id: "opencode-config",
    format: Format::Json,
    keep: &[&[
        k(&["$schema"]),
        k(&["model"]),
        k(&["small_model"]),
        k(&["provider", "*", "name"]),
        k(&["provider", "*", "api"]),
        k(&["provider", "*", "env"]),
        k(&["provider", "*", "options"]),
        k(&["provider", "*", "models"]),
        Keep {
            path: &["provider", "*", "npm"],
            string_prefix: Some("@ai-sdk/"),
        },
        k(&["disabled_providers"]),
        k(&["enabled_providers"]),
        k(&["theme"]),
        k(&["autoupdate"]),
        k(&["share"]),
        k(&["username"]),
        k(&["keybinds"]),
        k(&["tui", "notifications"]),
        k(&["tui", "animations"]),
        k(&["tui", "show_tooltips"]),
        k(&["layout"]),
        k(&["permission"]),
        k(&["tools"]),
        k(&["snapshot"]),
    ]],
    writable: false,
    commands: None,
    agents: "OpenCode",
    versions: "OpenCode 1.18",
    source: "opencode-config",
};

/// Continue's `config.yaml`: its model settings, the four top-level entries
/// Continue CLI needs to start (without `name` and `version` it refuses the
/// file); its `rules`, `prompts`, `mcpServers`, `context`, `docs` and `data`
/// are dropped. YAML is cut by top-level entry only (`src/run/filter.rs`),
/// so only whole top-level keys can be kept.
pub static CONTINUE_YAML: FilterRule = FilterRule {
    id: "continue-yaml",
    format: Format::Yaml,
    keep: &[&[
        k(&["name"]),
        k(&["version"]),
        k(&["schema"]),
        k(&["models"]),
    ]],
    writable: false,
    commands: None,
    agents: "Continue",
    versions: "Continue CLI 1.5",
    source: "continue-cli",
};

/// The `.env` Gemini CLI, Qwen Code and Codex CLI read from their home
/// directory into their environment as they start (Gemini CLI, Qwen Code
/// and Aider the home's own `~/.env` too): what they would read there from
/// an earlier session's plant is a system prompt of its choosing
/// (`GEMINI_SYSTEM_MD`, `QWEN_SYSTEM_MD`), a script before every shell
/// command (`BASH_ENV`) or, for Aider, any of its options (`AIDER_LINT_CMD`).
/// Kept: the model provider's credentials and endpoint, which is what users
/// keep there.
pub static AGENT_ENV: FilterRule = FilterRule {
    id: "agent-env",
    format: Format::Dotenv,
    keep: &[&[
        k(&["GEMINI_API_KEY"]),
        k(&["GEMINI_MODEL"]),
        k(&["GOOGLE_API_KEY"]),
        k(&["GOOGLE_CLOUD_PROJECT"]),
        k(&["GOOGLE_CLOUD_LOCATION"]),
        k(&["GOOGLE_GENAI_USE_VERTEXAI"]),
        k(&["GOOGLE_APPLICATION_CREDENTIALS"]),
        k(&["GOOGLE_GEMINI_BASE_URL"]),
        k(&["OPENAI_API_KEY"]),
        k(&["OPENAI_BASE_URL"]),
        k(&["OPENAI_MODEL"]),
        k(&["OPENAI_ORGANIZATION"]),
        k(&["OPENAI_PROJECT"]),
        k(&["AZURE_OPENAI_API_KEY"]),
        k(&["DASHSCOPE_API_KEY"]),
        k(&["ANTHROPIC_API_KEY"]),
        k(&["OPENAI_API_BASE"]),
        k(&["OPENROUTER_API_KEY"]),
        k(&["AIDER_MODEL"]),
    ]],
    writable: false,
    commands: None,
    agents: "Gemini CLI, Qwen Code, Codex CLI, Aider",
    versions: "Gemini CLI 0.61, Qwen Code 0.24, Codex CLI 0.171, Aider 0.86",
    source: "agent-env",
};

/// Aider's `.aider.conf.yml` (its home directory's, and a parent
/// directory's where Aider starts below one): every key is an option of
/// its command line, so the list keeps the model, its provider and the
/// interface, and drops what loads or runs something: `read` and `file`
/// (files into the context), `lint-cmd`, `test-cmd`, `notifications-command`
/// and `editor` (commands it runs), `load` (commands from a file),
/// `env-file`, `set-env` and `config` (more settings from elsewhere),
/// `model-settings-file` and `model-metadata-file`, `commit-prompt` and
/// `chat-language` (text in its prompts), `git-commit-verify` (the
/// repository's git hooks), `yes-always` (what it runs unasked). Read by
/// top-level entry (Aider reads it with PyYAML).
pub static AIDER_CONF: FilterRule = FilterRule {
    id: "aider-yaml",
    format: Format::Yaml,
    keep: &[&[
        k(&["model"]),
        k(&["weak-model"]),
        k(&["editor-model"]),
        k(&["edit-format"]),
        k(&["editor-edit-format"]),
        k(&["architect"]),
        k(&["auto-accept-architect"]),
        k(&["reasoning-effort"]),
        k(&["thinking-tokens"]),
        k(&["alias"]),
        k(&["openai-api-key"]),
        k(&["anthropic-api-key"]),
        k(&["openai-api-base"]),
        k(&["openai-api-type"]),
        k(&["openai-api-version"]),
        k(&["openai-api-deployment-id"]),
        k(&["openai-organization-id"]),
        k(&["api-key"]),
        k(&["verify-ssl"]),
        k(&["timeout"]),
        k(&["show-model-warnings"]),
        k(&["check-model-accepts-settings"]),
        k(&["max-chat-history-tokens"]),
        k(&["cache-prompts"]),
        k(&["cache-keepalive-pings"]),
        k(&["map-tokens"]),
        k(&["map-refresh"]),
        k(&["map-multiplier-no-files"]),
        k(&["dark-mode"]),
        k(&["light-mode"]),
        k(&["pretty"]),
        k(&["stream"]),
        k(&["code-theme"]),
        k(&["show-diffs"]),
        k(&["auto-commits"]),
        k(&["dirty-commits"]),
        k(&["attribute-author"]),
        k(&["attribute-committer"]),
        k(&["attribute-co-authored-by"]),
        k(&["analytics"]),
        k(&["analytics-disable"]),
        k(&["check-update"]),
        k(&["show-release-notes"]),
        k(&["vim"]),
        k(&["encoding"]),
        k(&["line-endings"]),
        k(&["suggest-shell-commands"]),
        k(&["fancy-input"]),
        k(&["multiline"]),
        k(&["detect-urls"]),
        k(&["notifications"]),
    ]],
    writable: false,
    commands: None,
    agents: "Aider",
    versions: "Aider 0.86",
    source: "aider-conf",
};

/// Continue's legacy `config.json`: models and the interface. Dropped, among
/// the rest: `mcpServers`, `experimental`, `slashCommands`, `customCommands`,
/// `contextProviders`, `rules`, `systemMessage`.
pub static CONTINUE_JSON: FilterRule = FilterRule {
    id: "continue-json",
    format: Format::Json,
    keep: &[&[
        k(&["models"]),
        k(&["tabAutocompleteModel"]),
        k(&["embeddingsProvider"]),
        k(&["allowAnonymousTelemetry"]),
        k(&["ui"]),
        k(&["disableIndexing"]),
        k(&["disableSessionTitles"]),
    ]],
    writable: false,
    commands: None,
    agents: "Continue",
    versions: "Continue 1.0 (legacy config.json)",
    source: "continue-mcp",
};

/// Amp's `settings.json` (flat dotted keys, each one segment).
pub static AMP_SETTINGS: FilterRule = FilterRule {
    id: "amp-settings",
    format: Format::Json,
    keep: &[&[
        k(&["amp.url"]),
        k(&["amp.notifications.enabled"]),
        k(&["amp.anthropic.thinking.enabled"]),
        k(&["amp.updates.autoUpdate.enabled"]),
        k(&["amp.git.commit.ampThread.enabled"]),
        k(&["amp.git.commit.coauthor.enabled"]),
        k(&["amp.permissions"]),
    ]],
    writable: false,
    commands: None,
    agents: "Amp (unconfirmed)",
    versions: "unconfirmed",
    source: "research",
};

/// What Crush's configuration keeps: the models and providers and the
/// interface. Dropped, among the rest: `mcp`, `lsp`, `hooks` (programs it
/// starts), `env` (its own environment), `permissions` (tools it runs
/// unasked), a provider's `system_prompt_prefix` (text in its prompts) and
/// `aws_auth_refresh` (a command), and the options that name files to read
/// (`context_paths`, `global_context_paths`, `skills_paths`) or move its
/// data directory (`data_directory`). Crush expands every value as a shell
/// does, so a provider holding a command substitution anywhere is dropped
/// whole.
const CRUSH_KEEP: &[Keep] = &[
    k(&["$schema"]),
    k(&["models"]),
    k(&["recent_models"]),
    k(&["providers", "*", "id"]),
    k(&["providers", "*", "name"]),
    k(&["providers", "*", "base_url"]),
    k(&["providers", "*", "type"]),
    k(&["providers", "*", "api_key"]),
    k(&["providers", "*", "oauth"]),
    k(&["providers", "*", "disable"]),
    k(&["providers", "*", "extra_headers"]),
    k(&["providers", "*", "extra_body"]),
    k(&["providers", "*", "provider_options"]),
    k(&["providers", "*", "models"]),
    k(&["options", "tui"]),
    k(&["options", "debug"]),
    k(&["options", "debug_lsp"]),
    k(&["options", "disable_auto_summarize"]),
    k(&["options", "disabled_tools"]),
    k(&["options", "disable_provider_auto_update"]),
    k(&["options", "disable_default_providers"]),
    k(&["options", "attribution"]),
    k(&["options", "disable_metrics"]),
    k(&["options", "progress"]),
    k(&["options", "notifications"]),
    k(&["options", "disabled_skills"]),
];

/// A shell's command substitution, which Crush runs in any value.
const SHELL_COMMANDS: CommandMark = CommandMark::Holds(&["$(", "`"]);

/// Crush's `crush.json` in its configuration directory and in
/// `/etc/crush` ([`CRUSH_KEEP`]).
pub static CRUSH_CONFIG: FilterRule = FilterRule {
    id: "crush-config",
    format: Format::Json,
    keep: &[CRUSH_KEEP],
    writable: false,
    commands: Some(SHELL_COMMANDS),
    agents: "Crush",
    versions: "Crush 0.90 (from its source)",
    source: "crush",
};

/// Crush's `crush.json` in its data directory, which it writes as it runs
/// (the models it chose, its sign-in tokens): the same list, writable.
pub static CRUSH_DATA: FilterRule = FilterRule {
    id: "crush-data",
    format: Format::Json,
    keep: &[CRUSH_KEEP],
    writable: true,
    commands: Some(SHELL_COMMANDS),
    agents: "Crush",
    versions: "Crush 0.90 (from its source)",
    source: "crush",
};

/// Factory Droid's `settings.json` and `settings.local.json` (user level,
/// and a file `FACTORY_RUNTIME_SETTINGS_PATH` or an organisation's local
/// path names): its hooks live there among the preferences. Kept: the
/// session defaults and the user's own models (`customModels`, item by
/// item: without them a run with a model of its own cannot start), without
/// the commands a model may name (`apiKeyHelper`, Bedrock's credential
/// commands); dropped among the rest: `hooks`, the plugins and
/// marketplaces it loads, and what widens what it runs unasked
/// (`commandAllowlist`, `permissionRules`, `maxAutonomyLevel`, ...).
pub static FACTORY_SETTINGS: FilterRule = FilterRule {
    id: "factory-settings",
    format: Format::Json,
    keep: &[&[
        k(&["model"]),
        k(&["reasoningEffort"]),
        k(&["sessionDefaultSettings"]),
        k(&["customModels", "*", "model"]),
        k(&["customModels", "*", "id"]),
        k(&["customModels", "*", "index"]),
        k(&["customModels", "*", "displayName"]),
        k(&["customModels", "*", "baseUrl"]),
        k(&["customModels", "*", "apiKey"]),
        k(&["customModels", "*", "provider"]),
        k(&["customModels", "*", "maxOutputTokens"]),
        k(&["customModels", "*", "maxContextLimit"]),
        k(&["customModels", "*", "enableThinking"]),
        k(&["customModels", "*", "thinkingMaxTokens"]),
        k(&["customModels", "*", "reasoningEffort"]),
        k(&["customModels", "*", "extraHeaders"]),
        k(&["customModels", "*", "extraArgs"]),
        k(&["customModels", "*", "noImageSupport"]),
    ]],
    writable: false,
    commands: None,
    agents: "Factory Droid",
    versions: "Factory Droid 0.225",
    source: "factory",
};

/// Factory Droid's legacy `config.json` in `~/.factory`: the user's own
/// models in their old names (Droid reads them, and moves them into its
/// settings when it can), without Bedrock's credential commands.
pub static FACTORY_CONFIG: FilterRule = FilterRule {
    id: "factory-config",
    format: Format::Json,
    keep: &[&[
        k(&["custom_models", "*", "model"]),
        k(&["custom_models", "*", "model_display_name"]),
        k(&["custom_models", "*", "base_url"]),
        k(&["custom_models", "*", "api_key"]),
        k(&["custom_models", "*", "provider"]),
        k(&["custom_models", "*", "max_tokens"]),
        k(&["custom_models", "*", "extra_headers"]),
        k(&["custom_models", "*", "extra_args"]),
    ]],
    writable: false,
    commands: None,
    agents: "Factory Droid",
    versions: "Factory Droid 0.225",
    source: "factory",
};

/// Pi's `settings.json` (`~/.pi/agent`, or `PI_CODING_AGENT_DIR`), which it
/// writes as it runs: its model and interface preferences. Dropped: the
/// `packages`, `extensions`, `skills`, `prompts` and `themes` it loads, the
/// shell it runs commands with (`shellPath`, `shellCommandPrefix`) and the
/// `npmCommand` it installs packages with, `sessionDir`.
pub static PI_SETTINGS: FilterRule = FilterRule {
    id: "pi-settings",
    format: Format::Json,
    keep: &[&[
        k(&["defaultProvider"]),
        k(&["defaultModel"]),
        k(&["defaultThinkingLevel"]),
        k(&["enabledModels"]),
        k(&["transport"]),
        k(&["steeringMode"]),
        k(&["followUpMode"]),
        k(&["theme"]),
        k(&["compaction"]),
        k(&["branchSummary"]),
        k(&["retry"]),
        k(&["hideThinkingBlock"]),
        k(&["quietStartup"]),
        k(&["collapseChangelog"]),
        k(&["enableInstallTelemetry"]),
        k(&["enableSkillCommands"]),
        k(&["terminal"]),
        k(&["images"]),
        k(&["doubleEscapeAction"]),
        k(&["treeFilterMode"]),
        k(&["thinkingBudgets"]),
        k(&["editorPaddingX"]),
        k(&["autocompleteMaxVisible"]),
        k(&["showHardwareCursor"]),
        k(&["markdown"]),
        k(&["warnings"]),
        k(&["lastChangelogVersion"]),
    ]],
    writable: true,
    commands: Some(CommandMark::StartsWith("!")),
    agents: "Pi",
    versions: "Pi 0.73",
    source: "pi-coding-agent",
};

/// Pi's `models.json`: the providers and models it may use. An `apiKey` or
/// a header value starting with `!` is a shell command Pi runs for the
/// value: a provider holding one is dropped whole (a provider without its
/// `apiKey` would make Pi refuse the whole file).
pub static PI_MODELS: FilterRule = FilterRule {
    id: "pi-models",
    format: Format::Json,
    keep: &[&[
        k(&["providers", "*", "name"]),
        k(&["providers", "*", "baseUrl"]),
        k(&["providers", "*", "api"]),
        k(&["providers", "*", "apiKey"]),
        k(&["providers", "*", "authHeader"]),
        k(&["providers", "*", "headers"]),
        k(&["providers", "*", "compat"]),
        k(&["providers", "*", "models"]),
        k(&["providers", "*", "modelOverrides"]),
    ]],
    writable: false,
    commands: Some(CommandMark::StartsWith("!")),
    agents: "Pi",
    versions: "Pi 0.73",
    source: "pi-coding-agent",
};

/// Pi's `auth.json`, the credentials it writes as it logs in: every
/// provider's, but one whose key is a `!` command.
pub static PI_AUTH: FilterRule = FilterRule {
    id: "pi-auth",
    format: Format::Json,
    keep: &[&[k(&["*"])]],
    writable: true,
    commands: Some(CommandMark::StartsWith("!")),
    agents: "Pi",
    versions: "Pi 0.73",
    source: "pi-coding-agent",
};

/// What Kimi CLI's and Kimi Code CLI's `config.toml` share (Kimi Code CLI
/// keeps Kimi CLI's shape): the default model, the models, their providers
/// without a provider's `env`, and limits.
const KIMI_KEPT: &[Keep] = &[
    k(&["default_model"]),
    k(&["models"]),
    k(&["providers", "*", "type"]),
    k(&["providers", "*", "base_url"]),
    k(&["providers", "*", "api_key"]),
    k(&["providers", "*", "custom_headers"]),
    k(&["loop_control"]),
    k(&["background"]),
    k(&["telemetry"]),
];

/// Kimi CLI's `config.toml` (in `~/.kimi`, or `KIMI_SHARE_DIR`): its models
/// and providers beside what runs or reads: `hooks` (shell commands at its
/// events), `extra_skill_dirs` (skills from anywhere, a relative one from
/// the project), a provider's `env` (put into its environment, which its
/// hooks, MCP servers and shell tool inherit), `default_editor` (a
/// command) and `default_yolo` (every tool call approved unasked).
/// Checked offline with Kimi CLI 1.52.
pub static KIMI_CONFIG: FilterRule = FilterRule {
    id: "kimi-config",
    format: Format::Toml,
    keep: &[
        KIMI_KEPT,
        &[
            k(&["providers", "*", "reasoning_key"]),
            k(&["providers", "*", "oauth"]),
            k(&["services"]),
            k(&["mcp", "client"]),
            k(&["theme"]),
            k(&["merge_all_available_skills"]),
        ],
    ],
    writable: false,
    commands: None,
    agents: "Kimi CLI",
    versions: "Kimi CLI 1.52",
    source: "kimi-cli",
};

/// Kimi CLI's `kimi.json`: the directories it worked in and their last
/// sessions, which it rewrites as it starts by renaming a new file onto it
/// (a bound entry refuses that: `EBUSY`), so a run gets a copy that is
/// merged back.
pub static KIMI_METADATA: FilterRule = FilterRule {
    id: "kimi-metadata",
    format: Format::Json,
    keep: &[&[k(&["work_dirs"])]],
    writable: true,
    commands: None,
    agents: "Kimi CLI",
    versions: "Kimi CLI 1.52",
    source: "kimi-cli",
};

/// Hermes Agent's `config.yaml` (in `~/.hermes`, `HERMES_HOME`, and its
/// managed directory): its model beside what runs or reads, which is most
/// of it: `mcp_servers`, `hooks`, `plugins`, `lsp` (programs it starts),
/// `terminal` (its shell's backend and the files it sources), `skills`
/// (directories and inline shell), `agent` (text in its prompts),
/// `secrets` (password managers it runs), `memory` and `context` (engines
/// it loads), `toolsets`, `approvals` and `command_allowlist` (what it runs
/// unasked), other providers and endpoints. Read by top-level entry.
/// Checked offline with Hermes Agent 0.19.
pub static HERMES_CONFIG: FilterRule = FilterRule {
    id: "hermes-config",
    format: Format::Yaml,
    keep: &[&[
        k(&["_config_version"]),
        k(&["model"]),
        k(&["display"]),
        k(&["logging"]),
    ]],
    writable: false,
    commands: None,
    agents: "Hermes Agent",
    versions: "Hermes Agent 0.19",
    source: "hermes",
};

/// Mistral Vibe's `config.toml` (in `~/.vibe`, or `VIBE_HOME`): its models
/// and providers beside what runs or reads: `mcp_servers` and `connectors`
/// (servers it starts or reaches), `tool_paths` (Python it imports),
/// `skill_paths` and `agent_paths` (skills and agents from anywhere), the
/// prompts it picks (`system_prompt_id`, ...), what it runs unasked
/// (`tools`, `bypass_tool_permissions`, `enable_auto_approve`,
/// `default_agent`, ...), endpoints that send data out (`otel_endpoint`,
/// `vibe_base_url`, ...) and `session_logging` (which moves its plugin
/// store). Checked offline with Mistral Vibe 3.0.
pub static VIBE_CONFIG: FilterRule = FilterRule {
    id: "vibe-config",
    format: Format::Toml,
    keep: &[&[
        k(&["active_model"]),
        k(&["providers"]),
        k(&["models"]),
        k(&["allowed_models"]),
        k(&["compaction_model"]),
        k(&["vision_model"]),
        k(&["utility_models"]),
        k(&["auto_compact_threshold"]),
        k(&["enable_connectors"]),
        k(&["enable_mcp"]),
        k(&["disabled_tools"]),
        k(&["disabled_agents"]),
        k(&["disabled_skills"]),
        k(&["enable_telemetry"]),
        k(&["enable_update_checks"]),
        k(&["enable_auto_update"]),
        k(&["enable_notifications"]),
        k(&["experimental_enable_model_catalog"]),
        k(&["applied_migrations"]),
        k(&["theme"]),
        k(&["disable_welcome_banner_animation"]),
        k(&["cursor_blink"]),
        k(&["show_greeting"]),
        k(&["autocopy_to_clipboard"]),
        k(&["enable_mouse_capture"]),
        k(&["ask_confirmation_on_exit"]),
        k(&["context_warnings"]),
        k(&["show_thinking_nodes"]),
        k(&["api_timeout"]),
        k(&["api_connect_timeout"]),
        k(&["api_stream_idle_timeout"]),
        k(&["log_level"]),
        k(&["experiments", "enable"]),
    ]],
    writable: false,
    commands: None,
    agents: "Mistral Vibe",
    versions: "Mistral Vibe 3.0",
    source: "vibe",
};

/// Kimi Code CLI's `config.toml` (in `~/.kimi-code`, or `KIMI_CODE_HOME`):
/// its models and providers beside what runs or reads: `hooks` (shell
/// commands at its events, their output put into its prompts),
/// `extra_skill_dirs` and `extra_agent_dirs` (skills and agents from
/// anywhere), `identity` (text in its prompts), `default_permission_mode`,
/// `permission` and `tools` (what it runs unasked), `services` (other
/// endpoints), a provider's `env`. Checked offline with Kimi Code CLI 2.1.
pub static KIMI_CODE_CONFIG: FilterRule = FilterRule {
    id: "kimi-code-config",
    format: Format::Toml,
    keep: &[KIMI_KEPT, &[k(&["thinking"]), k(&["subagent"])]],
    writable: false,
    commands: None,
    agents: "Kimi Code CLI",
    versions: "Kimi Code CLI 2.1",
    source: "kimi-code",
};

/// Kimi Code CLI's `tui.toml`: its interface's theme; its status line's
/// and editor's commands and its updater dropped.
pub static KIMI_CODE_TUI: FilterRule = FilterRule {
    id: "kimi-code-tui",
    format: Format::Toml,
    keep: &[&[k(&["theme"])]],
    writable: false,
    commands: None,
    agents: "Kimi Code CLI",
    versions: "Kimi Code CLI 2.1",
    source: "kimi-code",
};

/// Kimi Code CLI's `workspaces.json`: the directories it worked in, which
/// it rewrites as it starts by renaming a new file onto it (a bound entry
/// refuses that: `EBUSY`), so a run gets a copy that is merged back.
pub static KIMI_CODE_WORKSPACES: FilterRule = FilterRule {
    id: "kimi-code-workspaces",
    format: Format::Json,
    keep: &[&[
        k(&["version"]),
        k(&["workspaces"]),
        k(&["deleted_workspace_ids"]),
    ]],
    writable: true,
    commands: None,
    agents: "Kimi Code CLI",
    versions: "Kimi Code CLI 2.1",
    source: "kimi-code",
};

/// Goose's `config.yaml` (in `~/.config/goose`, under `GOOSE_PATH_ROOT`,
/// and `/etc/goose`): a map of top-level keys, its provider's and model's
/// among the rest. Dropped, among the rest: `extensions` (programs it
/// starts), `plugins`, `GOOSE_STATUS_HOOK`, `GOOSE_PROMPT_EDITOR`, the
/// commands of the agents it drives (`CLAUDE_CODE_COMMAND`, ...),
/// `GOOSE_SEARCH_PATHS`; text in its prompts or files from elsewhere
/// (`CONTEXT_FILE_NAMES`, `GOOSE_SYSTEM_PROMPT_FILE_PATH`,
/// `GOOSE_MOIM_MESSAGE_*`, `slash_commands`, `experiments`); endpoints that
/// send data out (`otel_exporter_otlp_*`,
/// `SECURITY_PROMPT_CLASSIFIER_ENDPOINT`). Kept: its provider and model,
/// their endpoints and limits, its mode (unset, Goose runs every tool
/// unasked) and its interface. Read by top-level entry (Goose reads it with
/// serde_yaml). Checked offline with Goose 1.52.
pub static GOOSE_CONFIG: FilterRule = FilterRule {
    id: "goose-config",
    format: Format::Yaml,
    keep: &[&[
        k(&["GOOSE_PROVIDER"]),
        k(&["GOOSE_MODEL"]),
        k(&["active_provider"]),
        k(&["providers"]),
        k(&["GOOSE_LEAD_PROVIDER"]),
        k(&["GOOSE_LEAD_MODEL"]),
        k(&["GOOSE_PLANNER_PROVIDER"]),
        k(&["GOOSE_PLANNER_MODEL"]),
        k(&["GOOSE_SUBAGENT_PROVIDER"]),
        k(&["GOOSE_SUBAGENT_MODEL"]),
        k(&["GOOSE_TEMPERATURE"]),
        k(&["GOOSE_MAX_TOKENS"]),
        k(&["GOOSE_CONTEXT_LIMIT"]),
        k(&["GOOSE_INPUT_LIMIT"]),
        k(&["GOOSE_STREAM_TIMEOUT"]),
        k(&["GOOSE_MAX_TURNS"]),
        k(&["GOOSE_AUTO_COMPACT_THRESHOLD"]),
        k(&["GOOSE_MODE"]),
        k(&["GOOSE_ALLOWLIST"]),
        k(&["GOOSE_DISABLE_KEYRING"]),
        k(&["GOOSE_DISABLE_SESSION_NAMING"]),
        k(&["GOOSE_TELEMETRY_ENABLED"]),
        k(&["GOOSE_DEBUG"]),
        k(&["GOOSE_CLI_*"]),
        k(&["RANDOM_THINKING_MESSAGES"]),
        k(&["OPENAI_HOST"]),
        k(&["OPENAI_BASE_URL"]),
        k(&["OPENAI_BASE_PATH"]),
        k(&["OPENAI_ORGANIZATION"]),
        k(&["OPENAI_PROJECT"]),
        k(&["OPENAI_TIMEOUT"]),
        k(&["ANTHROPIC_HOST"]),
        k(&["GOOGLE_HOST"]),
        k(&["XAI_HOST"]),
        k(&["OPENROUTER_HOST"]),
        k(&["HF_HOST"]),
        k(&["OLLAMA_*"]),
        k(&["DATABRICKS_*"]),
        k(&["AZURE_OPENAI_*"]),
        k(&["GCP_*"]),
        k(&["AWS_REGION"]),
        k(&["AWS_PROFILE"]),
        k(&["BEDROCK_*"]),
        k(&["LITELLM_*"]),
        k(&["VENICE_*"]),
    ]],
    writable: false,
    commands: None,
    agents: "Goose",
    versions: "Goose 1.52",
    source: "goose",
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
    &QWEN_SETTINGS,
    &COPILOT_SETTINGS,
    &COPILOT_CONFIG,
    &OPENCODE_CONFIG,
    &CONTINUE_YAML,
    &CONTINUE_JSON,
    &AMP_SETTINGS,
    &FACTORY_SETTINGS,
    &FACTORY_CONFIG,
    &PI_SETTINGS,
    &PI_MODELS,
    &PI_AUTH,
    &AIDER_CONF,
    &CRUSH_CONFIG,
    &CRUSH_DATA,
    &KIMI_CONFIG,
    &KIMI_METADATA,
    &HERMES_CONFIG,
    &VIBE_CONFIG,
    &KIMI_CODE_CONFIG,
    &KIMI_CODE_TUI,
    &KIMI_CODE_WORKSPACES,
    &GOOSE_CONFIG,
    &AGENT_ENV,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_kept_paths() {
        use Verdict::*;
        let r = &CLAUDE_STATE;
        assert_eq!(r.verdict(&["numStartups"]), Whole(None));
        assert_eq!(r.verdict(&["mcpServers"]), Drop);
        assert_eq!(r.verdict(&["projects"]), Inside);
        assert_eq!(r.verdict(&["projects", "/p"]), Inside);
        assert_eq!(r.verdict(&["projects", "/p", "allowedTools"]), Whole(None));
        assert_eq!(r.verdict(&["projects", "/p", "lastCost"]), Whole(None));
        assert_eq!(r.verdict(&["projects", "/p", "mcpServers"]), Drop);
        assert_eq!(r.verdict(&["someFutureKey"]), Drop);
        let s = &CLAUDE_SETTINGS;
        assert_eq!(s.verdict(&["env"]), Inside);
        assert_eq!(s.verdict(&["env", "ANTHROPIC_BASE_URL"]), Whole(None));
        assert_eq!(s.verdict(&["env", "NODE_OPTIONS"]), Drop);
        assert_eq!(s.verdict(&["env", "CLAUDE_CONFIG_DIR"]), Drop);
        assert_eq!(s.verdict(&["apiKeyHelper"]), Drop);
        assert_eq!(s.verdict(&["permissions", "additionalDirectories"]), Drop);
        assert_eq!(
            OPENCODE_CONFIG.verdict(&["provider", "p", "npm"]),
            Whole(Some("@ai-sdk/"))
        );
        assert_eq!(MCP_SERVERS_JSON.verdict(&["servers"]), Drop);
        assert!(segment_matches("*", "anything"));
        assert!(segment_matches("last*", "lastCost"));
        assert!(!segment_matches("last*", "mcpServers"));
        assert!(segment_matches("model", "model"));
        assert!(!segment_matches("model", "models"));
    }

    /// Prints each rule's kept paths as docs/SURFACES.md lists them
    /// (`cargo test -p seal-gate print_kept -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_kept() {
        for rule in FILTER_RULES {
            let kept: Vec<String> = rule
                .kept()
                .map(|k| match k.string_prefix {
                    Some(p) => format!("`{}` (only a string starting `{p}`)", k.path.join(".")),
                    None => format!("`{}`", k.path.join(".")),
                })
                .collect();
            println!("{}: {}", rule.id, kept.join(", "));
        }
    }

    /// docs/SURFACES.md lists every rule with its versions, its source and
    /// every path it keeps.
    #[test]
    fn surfaces_doc_lists_every_kept_path() {
        let doc = include_str!("../../../docs/SURFACES.md");
        let mut missing = Vec::new();
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
            for keep in rule.kept() {
                if !section.contains(&format!("`{}`", keep.path.join("."))) {
                    missing.push(format!("{}: {}", rule.id, keep.path.join(".")));
                }
            }
            for needed in [rule.source, rule.versions] {
                if !section.contains(needed) {
                    missing.push(format!("{}: {needed}", rule.id));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "docs/SURFACES.md does not list: {missing:?}"
        );
    }
}
