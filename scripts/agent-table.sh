# The agents sealfs is tested against and how each runs offline, shared by
# scripts/agent-compat.sh and scripts/agent-work.sh (sourced, not run).

# FAMILY VERSION PACKAGE BIN RELOCATING-VAR USER-CONFIG NATIVE-PACKAGE
#   RELOCATING-VAR: the environment variable that moves the user config
#   (the native-reloc and seal-reloc runs set it); USER-CONFIG: where the
#   user-level config lives by default. NATIVE-PACKAGE: the per-platform
#   optional dependency holding the native binary, installed by hand when
#   npm skipped it (%p: platform, %v: version; "-": none).
# Claude Code 2.1.197 and Codex 0.171.0 are the versions sealfs was first
# tested against; 2.1.332 is the newest Claude Code on npm on 2026-12-02
# (0.171.0 is still Codex's newest), the others are their newest that day.
# Kilo Code CLI: 7.7.7, as the registry here lacks the native package of its
# newest (7.8.1); KILO_CONFIG_DIR adds a config directory, it does not
# replace ~/.config/kilo. Continue CLI: CONTINUE_GLOBAL_DIR replaces ~/.continue.
# Pi: PI_CODING_AGENT_DIR replaces ~/.pi/agent. Factory Droid: npm `droid`
# 0.215.0, the same CLI under its other npm name (its native package is
# @factory/cli-linux-x64 too), as the registry here has @factory/cli only at
# 0.225.1, whose native package it lacks; offline it loads from the same
# places as 0.225.2. FACTORY_HOME_OVERRIDE stands for the home: it replaces
# ~/.factory, ~/.agents and ~/.agent with the ones in the directory it names.
AGENT_TABLE='
claude   2.1.197  @anthropic-ai/claude-code  claude    CLAUDE_CONFIG_DIR    ~/.claude,~/.claude.json    @anthropic-ai/claude-code-%p@%v
claude   2.1.332  @anthropic-ai/claude-code  claude    CLAUDE_CONFIG_DIR    ~/.claude,~/.claude.json    @anthropic-ai/claude-code-%p@%v
codex    0.171.0  @openai/codex              codex     CODEX_HOME           ~/.codex,~/.agents          @openai/codex-%p@npm:@openai/codex@%v-%p
gemini   0.61.0   @google/gemini-cli         gemini    GEMINI_CLI_HOME      ~/.gemini,~/.agents         -
copilot  1.0.102  @github/copilot            copilot   COPILOT_HOME         ~/.copilot,~/.agents        -
opencode 1.18.33  opencode-ai                opencode  OPENCODE_CONFIG_DIR  ~/.config/opencode,~/.claude -
qwen     0.24.4   @qwen-code/qwen-code       qwen      QWEN_HOME            ~/.qwen                     -
cline    3.0.65   cline                      cline     CLINE_DIR            ~/.cline,~/Documents/Cline  @cline/cli-%p@%v
kilo     7.7.7    @kilocode/cli              kilo      KILO_CONFIG_DIR      ~/.config/kilo,~/.kilo,~/.kilocode @kilocode/cli-%p@%v
continue 1.5.47   @continuedev/cli           cn        CONTINUE_GLOBAL_DIR  ~/.continue                 -
pi       0.73.1   @mariozechner/pi-coding-agent pi     PI_CODING_AGENT_DIR  ~/.pi/agent                 -
factory  0.215.0  droid                      droid     FACTORY_HOME_OVERRIDE ~/.factory,~/.agents,~/.agent @factory/cli-%p@%v
'
# Aider comes from PyPI, not npm: scripts/agent-work.sh installs this
# version into a virtual environment in the same cache.
AIDER_VERSION=0.86.2

# FAMILY TITLE | how it runs offline: its environment, then its command line
#   @URL@ is the fake server (http://127.0.0.1:PORT), @PROMPT@ the prompt.
#   Model and provider come from the user config where the agent has such a
#   setting (Codex, Gemini, OpenCode, Qwen, Cline, Kilo, Continue, Pi,
#   Factory Droid, Claude's model), else from here.
#   Cline: CLINE_SESSION_BACKEND_MODE=local runs the session in its own
#   process (else it starts a hub daemon that outlives the run); E2E_TEST
#   turns off its feature-flag client (PostHog at data.cline.bot).
#   Kilo: OpenCode's switches under the KILO_ prefix, and its own for
#   telemetry, session upload and a background daemon.
#   Continue: its telemetry and metrics switches (the model is in
#   ~/.continue/config.yaml).
#   Pi: offline (no package installs or version check), no telemetry (the
#   provider and model are in ~/.pi/agent/models.json and settings.json).
#   Factory Droid: air-gapped (no sign-in, no Factory service); the model is
#   one of its own, customModels in ~/.factory/settings.json, picked by its
#   display name and index.
OFFLINE_TABLE='
claude   Claude Code | ANTHROPIC_API_KEY=sealtest-key ANTHROPIC_BASE_URL=@URL@ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 CLAUDE_CODE_MAX_RETRIES=0 IS_SANDBOX=1 | claude -p @PROMPT@ --output-format stream-json --verbose --dangerously-skip-permissions
codex    Codex CLI   | SEALTEST_PROVIDER_KEY=sealtest-key | codex exec -c features.plugins=false -c analytics.enabled=false -c feedback.enabled=false --skip-git-repo-check --dangerously-bypass-hook-trust @PROMPT@
gemini   Gemini CLI  | GEMINI_API_KEY=sealtest-key GOOGLE_GEMINI_BASE_URL=@URL@ GEMINI_CLI_TRUST_WORKSPACE=true | gemini -p @PROMPT@
copilot  Copilot CLI | COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false COPILOT_PROVIDER_BASE_URL=@URL@/sealtest-copilot/v1 COPILOT_PROVIDER_API_KEY=sealtest-key COPILOT_MODEL=sealtest-copilot-model | copilot --trust-folder --allow-all-tools --no-auto-update -p @PROMPT@
opencode OpenCode    | OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 | opencode run @PROMPT@
qwen     Qwen Code   | OPENAI_API_KEY=sealtest-key OPENAI_BASE_URL=@URL@/sealtest-qwen/v1 | qwen -p @PROMPT@
cline    Cline CLI   | CLINE_SESSION_BACKEND_MODE=local E2E_TEST=true | cline @PROMPT@
kilo     Kilo Code CLI | KILO_DISABLE_MODELS_FETCH=1 KILO_DISABLE_AUTOUPDATE=1 KILO_DISABLE_SHARE=1 KILO_DISABLE_LSP_DOWNLOAD=1 KILO_TELEMETRY_LEVEL=off KILO_DISABLE_SESSION_INGEST=1 KILO_NO_DAEMON=1 | kilo run @PROMPT@
continue Continue CLI | CONTINUE_CLI_ENABLE_TELEMETRY=0 CONTINUE_METRICS_ENABLED=0 | cn -p @PROMPT@
pi       Pi          | PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0 | pi -p @PROMPT@
factory  Factory Droid | FACTORY_AIRGAP_ENABLED=1 | droid exec --auto high -m custom:Sealtest-0 @PROMPT@
'
# agent_rows [FILTER...]: the AGENT_TABLE rows, as "FAMILY@VERSION FAMILY
# VERSION PACKAGE BIN VAR CONFIG NATIVE", of the agents FILTER names.
agent_rows() {
  local family version rest want
  while read -r family version rest; do
    [ -n "$family" ] || continue
    if [ $# -gt 0 ]; then
      for want in "$@"; do
        if [ "$want" = "$family" ] || [ "$want" = "$family@$version" ]; then
          echo "$family@$version $family $version $rest"
          break
        fi
      done
    else
      echo "$family@$version $family $version $rest"
    fi
  done <<<"$AGENT_TABLE"
}
# offline_field FAMILY N: field N (1 title, 2 environment, 3 command) of its OFFLINE_TABLE row.
offline_field() {
  awk -F' *[|] *' -v fam="$1" -v n="$2" '$1 ~ "^" fam " " { sub("^" fam " +", "", $1); print $n }' <<<"$OFFLINE_TABLE"
}

# offline_words FAMILY N URL [PROMPT [WORD...]]: field N (2 environment, 3
# command) of FAMILY's OFFLINE_TABLE row, a word a line, with @URL@ made URL
# and @PROMPT@ made PROMPT; then the WORDs (more options: each agent's
# parser takes options after its prompt too, and some take the prompt as
# the value of `-p`).
offline_words() {
  local family=$1 n=$2 url=$3 prompt=${4:-} word
  shift $(($# < 4 ? $# : 4))
  for word in $(offline_field "$family" "$n"); do
    if [ "$word" = @PROMPT@ ]; then
      printf '%s\n' "$prompt"
    else
      printf '%s\n' "${word//@URL@/$url}"
    fi
  done
  [ $# -eq 0 ] || printf '%s\n' "$@"
}

# newest_row FAMILY: its AGENT_TABLE row (as agent_rows prints it) of the
# newest version, the last listed.
newest_row() {
  agent_rows "$1" | tail -n 1
}
