#!/usr/bin/env bash
# Proves that `seal run` works with real agents: Claude Code and Codex CLI at
# pinned versions, installed from npm, each talking to a loopback fake model
# server (tests/fixtures/fake_model_server.py) that records every request.
#
# In a temporary directory it builds a home directory as a real user has one
# (each agent run once so its state exists, then user-level extensions added:
# instruction files, skills, MCP servers, hooks, plus settings that are not
# extensions: Claude's model and env, Codex's model provider), a parent
# directory with its own CLAUDE.md and AGENTS.md, and, inside it, a project
# with pinned instructions and skills sealed by `seal init`. Then it runs each agent
#   * directly (control): the user-level and parent-directory items DO load and
#     the hooks and MCP servers DO run, so every check below can fail;
#   * under `seal run`, twice in a row: the agent exits 0; its request holds
#     the project's pinned instructions and skills and none of the user-level or
#     parent-directory ones; the settings still apply (Claude's request names
#     the configured model and sends the header its settings' env adds, Codex
#     calls the base_url of its configured provider); no user hook, notify
#     command or MCP server ran;
#   * directly again (control after): `seal run` left the home working.
# It prints a table of checks (tests/fixtures/agent_compat_judge.py) and exits
# 1 if any check fails, 2 if the set-up itself fails.
#
# Usage: [SEAL=/path/to/seal] scripts/agent-compat.sh [--control-only] [--keep] [--agent claude|codex]
#   --control-only   run the agents directly only (debug the fixture, not seal)
#   --keep           keep the temporary directory and print its path
#   --agent NAME     test one agent only
# Environment:
#   SEAL              the seal binary (default: `cargo build`, then target/debug/seal)
#   SEAL_AGENT_CACHE  where the agents are installed, outside the repository
#                     (default ${XDG_CACHE_HOME:-$HOME/.cache}/sealfs-agents);
#                     an install of the pinned version found there is reused
#   SEAL_RUN_ARGS     extra `seal run` options for the sealed runs, e.g.
#                     "--read-only --kernel-opens" (default: none)
#   SEAL_AGENT_TIMEOUT seconds one agent run may take (default 45); Codex
#                     without its provider setting retries until killed
# Needs node and npm (and the npm registry on first use), python3, git; `seal
# run` needs root (or user namespaces) and /dev/fuse. No network beyond npm:
# the agents only ever reach 127.0.0.1.
set -euo pipefail

CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
AGENT_TIMEOUT=${SEAL_AGENT_TIMEOUT:-45} # seconds per agent run (a healthy one takes 1-3)
REPLY=sealtest-fake-model-reply

repo=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$repo/tests/fixtures"
control_only=0
keep=0
agents=(claude codex)
while [ $# -gt 0 ]; do
  case $1 in
    --control-only) control_only=1 ;;
    --keep) keep=1 ;;
    --agent)
      shift
      case ${1:-} in claude | codex) agents=("$1") ;; *) echo "--agent takes claude or codex" >&2; exit 2 ;; esac
      ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
die() { echo "agent-compat: $*" >&2; exit 2; }
for tool in node npm python3 git timeout; do
  command -v "$tool" >/dev/null || die "$tool is required"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sealfs-agents.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- the agents, installed once into the cache --------------------------------
cache=${SEAL_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sealfs-agents}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
case $(uname -m) in
  x86_64 | amd64) platform=linux-x64 ;;
  aarch64 | arm64) platform=linux-arm64 ;;
  *) die "no Claude Code build for $(uname -m)" ;;
esac
if ldd --version 2>&1 | grep -qi musl; then platform="$platform-musl"; fi

# version_ok BIN VERSION: BIN runs and reports VERSION. Run with a throwaway
# HOME so that checking never writes agent state into the caller's home.
version_ok() {
  [ -x "$1" ] && HOME="$work/version-home" "$1" --version 2>/dev/null | grep -qF "$2"
}

# install_agent NAME PACKAGE VERSION BIN NATIVE-DIR NATIVE-SPEC: prints the
# directory of the install. Both agents ship their native binary as a
# per-platform optional dependency (NATIVE-DIR under node_modules, installed
# from NATIVE-SPEC when npm skipped it), and Claude Code's postinstall copies
# it over bin/claude.exe (run by hand when npm skipped install scripts).
# Installs into a fresh directory and renames it into place, so an
# interrupted install is never mistaken for a finished one.
install_agent() {
  local name=$1 package=$2 version=$3 bin=$4 native_dir=$5 native_spec=$6
  local dir="$cache/$name-$version"
  if version_ok "$dir/node_modules/.bin/$bin" "$version"; then
    echo "$dir"
    return
  fi
  step "installing $package@$version into $dir"
  local tmp npm_install=(npm install --no-audit --no-fund --save-exact --loglevel=error)
  tmp=$(mktemp -d "$cache/.install-$name.XXXXXX")
  "${npm_install[@]}" --prefix "$tmp" "$package@$version" >&2
  if [ ! -d "$tmp/node_modules/$native_dir" ]; then
    "${npm_install[@]}" --prefix "$tmp" "$native_spec" >&2
  fi
  if ! version_ok "$tmp/node_modules/.bin/$bin" "$version" && [ -f "$tmp/node_modules/$package/install.cjs" ]; then
    (cd "$tmp/node_modules/$package" && node install.cjs >&2)
  fi
  version_ok "$tmp/node_modules/.bin/$bin" "$version" || die "$package@$version does not run after install ($tmp)"
  chmod 755 "$tmp" # mktemp made it private; the agents may run as another user
  rm -rf "$dir"
  mv "$tmp" "$dir"
  echo "$dir"
}

claude_install=$(install_agent claude-code @anthropic-ai/claude-code "$CLAUDE_VERSION" claude \
  "@anthropic-ai/claude-code-$platform" "@anthropic-ai/claude-code-$platform@$CLAUDE_VERSION")
codex_platform=${platform%-musl} # Codex's Linux builds are static (musl) anyway
codex_install=$(install_agent codex @openai/codex "$CODEX_VERSION" codex \
  "@openai/codex-$codex_platform" "@openai/codex-$codex_platform@npm:@openai/codex@$CODEX_VERSION-$codex_platform")

# --- the seal binary ----------------------------------------------------------
if [ -z "${SEAL:-}" ]; then
  step "building seal"
  (cd "$repo" && cargo build --quiet)
  SEAL="$repo/target/debug/seal"
fi
resolved=$(command -v "$SEAL" 2>/dev/null) || die "SEAL is not an executable: $SEAL"
SEAL=$(realpath "$resolved")

# --- the fake model server ----------------------------------------------------
log="$work/requests.jsonl"
: >"$log"
python3 "$fixtures/fake_model_server.py" --log "$log" --port-file "$work/port" --reply "$REPLY" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || die "the fake model server did not start"
port=$(cat "$work/port")

# --- the world: a home, a parent directory, a project -------------------------
home="$work/home"
workspace="$work/workspace" # a repository holding the project (monorepo style)
project="$workspace/project"
markers="$home/sealtest-markers" # hooks and MCP servers append here
mkdir -p "$home" "$project" "$markers"

# The agents run from the home directory, like a user's own install in
# ~/.local/bin, so they do not depend on what `seal run` shows of the cache's
# location. Hard links when the cache is on the same file system.
place() { # NAME INSTALL-DIR BIN
  local dest="$home/.local/lib/sealtest-agents/$1"
  mkdir -p "$home/.local/lib/sealtest-agents" "$home/.local/bin"
  cp -al "$2" "$dest" 2>/dev/null || { rm -rf "$dest"; cp -a "$2" "$dest"; }
  ln -s "../lib/sealtest-agents/$1/node_modules/.bin/$3" "$home/.local/bin/$3"
}
place claude-code "$claude_install" claude
place codex "$codex_install" codex

# Every agent run gets this environment and nothing else from the caller.
node_dir=$(dirname "$(command -v node)")
agent_env=(env -i
  "PATH=$home/.local/bin:$node_dir:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  "HOME=$home" "USER=$(id -un)" "LOGNAME=$(id -un)" LANG=C.UTF-8 TERM=dumb
  # Claude Code: the loopback server, no other traffic, no retries; as root,
  # --dangerously-skip-permissions needs IS_SANDBOX=1.
  ANTHROPIC_API_KEY=sealtest-key "ANTHROPIC_BASE_URL=http://127.0.0.1:$port"
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
  CLAUDE_CODE_MAX_RETRIES=0 IS_SANDBOX=1
  # Codex: the key variable its configured provider names (env_key).
  SEALTEST_PROVIDER_KEY=sealtest-key)
claude_cmd=(claude -p "Say hello." --output-format stream-json --verbose --dangerously-skip-permissions)
# --dangerously-bypass-hook-trust: a user's hooks run only once trusted in the
# TUI; this stands in for that trust, so a hook Codex can see does run.
codex_cmd=(codex exec --skip-git-repo-check --dangerously-bypass-hook-trust "Say hello.")

in_project() { (cd "$project" && "${agent_env[@]}" "$@"); }

# A marker command: appends NAME to the marker directory when it runs.
marker_cmd() { printf "echo ran >> '%s/%s'" "$markers" "$1"; }

# skill DIR NAME DESCRIPTION: a skill as both agents read it.
skill() {
  mkdir -p "$1"
  printf -- '---\nname: %s\ndescription: %s\n---\n\nFollow the steps.\n' "$2" "$3" >"$1/SKILL.md"
}

# Unique strings, one per file: the judge looks for them in request bodies.
T_PROJECT_CLAUDE_MD=sealtest-token-project-claude-md
T_PROJECT_AGENTS_MD=sealtest-token-project-agents-md
T_PROJECT_CLAUDE_SKILL=sealtest-token-project-claude-skill
T_PROJECT_AGENTS_SKILL=sealtest-token-project-agents-skill
T_PARENT_CLAUDE_MD=sealtest-token-parent-claude-md
T_PARENT_AGENTS_MD=sealtest-token-parent-agents-md
T_USER_CLAUDE_MD=sealtest-token-user-claude-md
T_USER_CLAUDE_SKILL=sealtest-token-user-claude-skill
T_USER_CODEX_AGENTS_MD=sealtest-token-user-codex-agents-md
T_USER_CODEX_SKILL=sealtest-token-user-codex-skill
T_USER_AGENTS_SKILL=sealtest-token-user-agents-skill
CLAUDE_MODEL=sealtest-claude-model
# Set through "env" in ~/.claude/settings.json: Claude sends it as a header.
CLAUDE_SETTINGS_HEADER="x-sealtest-settings-env: applied"
CODEX_MODEL=sealtest-codex-model
CODEX_PROVIDER_PATH=/sealtest-provider/v1 # the path part of the provider's base_url

step "the project, in a parent directory that has instructions of its own"
printf '# Project rules\nKeep functions short. (%s)\n' "$T_PROJECT_CLAUDE_MD" >"$project/CLAUDE.md"
printf '# Project rules\nRun the tests first. (%s)\n' "$T_PROJECT_AGENTS_MD" >"$project/AGENTS.md"
skill "$project/.claude/skills/project-review" project-review "Review a diff the project's way. $T_PROJECT_CLAUDE_SKILL"
skill "$project/.agents/skills/project-release" project-release "Write release notes. $T_PROJECT_AGENTS_SKILL"
mkdir -p "$project/src"
printf 'fn main() {}\n' >"$project/src/main.rs"
printf 'Parent-directory instructions. (%s)\n' "$T_PARENT_CLAUDE_MD" >"$workspace/CLAUDE.md"
printf 'Parent-directory instructions. (%s)\n' "$T_PARENT_AGENTS_MD" >"$workspace/AGENTS.md"
# Codex reads AGENTS.md from the repository root down to the working
# directory, so the parent is the repository root.
git -C "$workspace" init -q
(cd "$project" && echo y | "$SEAL" init) >"$work/seal-init.log" 2>&1 || {
  cat "$work/seal-init.log" >&2
  die "seal init failed"
}
sed 's/^/  /' "$work/seal-init.log" >&2

step "a home directory: each agent run once, then user-level extensions and settings"
mkdir -p "$home/.codex"
cat >"$home/.codex/config.toml" <<EOF
model = "$CODEX_MODEL"
model_provider = "sealtest"

[model_providers.sealtest]
name = "sealtest loopback provider"
base_url = "http://127.0.0.1:$port$CODEX_PROVIDER_PATH"
wire_api = "responses"
env_key = "SEALTEST_PROVIDER_KEY"

[projects."$project"]
trust_level = "trusted"
EOF
# Both agents live in this home, whichever --agent is tested.
in_project "${claude_cmd[@]}" </dev/null >"$work/first-claude.log" 2>&1 ||
  die "the first Claude Code run failed: $(tail -5 "$work/first-claude.log")"
in_project "${codex_cmd[@]}" </dev/null >"$work/first-codex.log" 2>&1 ||
  die "the first Codex run failed: $(tail -5 "$work/first-codex.log")"

# Claude Code: a user MCP server (top level of ~/.claude.json) and a local one
# (per project: Claude keys it by the repository root), added by its own CLI;
# ~/.claude.json as after the interactive onboarding; settings with a model
# and env (settings) and a hook (an extension).
in_project claude mcp add --scope user sealtest-user-mcp -- sh -c "$(marker_cmd claude-user-mcp)" >/dev/null
in_project claude mcp add --scope local sealtest-local-mcp -- sh -c "$(marker_cmd claude-local-mcp)" >/dev/null
python3 - "$home/.claude.json" <<'EOF'
import json, sys
path = sys.argv[1]
state = json.load(open(path))
state.update({"hasCompletedOnboarding": True, "numStartups": 3, "theme": "dark",
              "autoUpdates": False, "lastOnboardingVersion": "2.1.197"})
for project in state.get("projects", {}).values():
    project.update({"hasTrustDialogAccepted": True, "projectOnboardingSeenCount": 1})
with open(path, "w") as f:
    json.dump(state, f, indent=2)
EOF
python3 - "$home/.claude/settings.json" "$(marker_cmd claude-session-hook)" "$CLAUDE_MODEL" \
  "$CLAUDE_SETTINGS_HEADER" <<'EOF'
import json, sys
path, hook, model, header = sys.argv[1:]
settings = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": model,
    "env": {"DISABLE_TELEMETRY": "1", "ANTHROPIC_CUSTOM_HEADERS": header},
    "permissions": {"allow": ["Bash(git status:*)"], "deny": []},
    "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]},
}
with open(path, "w") as f:
    json.dump(settings, f, indent=2)
EOF
printf '# My preferences\nAlways answer in French. (%s)\n' "$T_USER_CLAUDE_MD" >"$home/.claude/CLAUDE.md"
skill "$home/.claude/skills/user-notes" user-notes "Keep personal notes. $T_USER_CLAUDE_SKILL"

# Codex: a notify command and a commented line (config.toml keeps comments),
# a user MCP server added by its CLI, a SessionStart hook, AGENTS.md, skills.
{
  echo "# written by hand: run after every turn"
  echo "notify = [\"sh\", \"-c\", \"$(marker_cmd codex-notify)\"]"
  cat "$home/.codex/config.toml"
} >"$work/config.toml" && mv "$work/config.toml" "$home/.codex/config.toml"
in_project codex mcp add sealtest-user-mcp -- sh -c "$(marker_cmd codex-user-mcp)" >/dev/null 2>>"$work/setup.log"
python3 - "$home/.codex/hooks.json" "$(marker_cmd codex-session-hook)" <<'EOF'
import json, sys
path, hook = sys.argv[1:]
hooks = {"hooks": {"SessionStart": [{"matcher": "startup",
                                     "hooks": [{"type": "command", "command": hook}]}]}}
with open(path, "w") as f:
    json.dump(hooks, f, indent=2)
EOF
printf '# My preferences\nAlways answer in German. (%s)\n' "$T_USER_CODEX_AGENTS_MD" >"$home/.codex/AGENTS.md"
skill "$home/.codex/skills/user-codex-notes" user-codex-notes "Keep Codex notes. $T_USER_CODEX_SKILL"
skill "$home/.agents/skills/user-shared-notes" user-shared-notes "Keep shared notes. $T_USER_AGENTS_SKILL"
rm -f "$markers"/*

# --- the checks (tab-separated: agent, kind, label, value; see the judge) -----
checks="$work/checks.tsv"
{
  printf '%s\t%s\t%s\t%s\n' \
    claude exit "exits 0" - \
    claude reply "the fake model's reply is printed" "$REPLY" \
    claude present "project CLAUDE.md in the request" "$T_PROJECT_CLAUDE_MD" \
    claude present "project skill .claude/skills/project-review" "$T_PROJECT_CLAUDE_SKILL" \
    claude model "model from ~/.claude/settings.json" "$CLAUDE_MODEL" \
    claude header "env from ~/.claude/settings.json" "$CLAUDE_SETTINGS_HEADER" \
    claude hidden "user ~/.claude/CLAUDE.md in the request" "$T_USER_CLAUDE_MD" \
    claude hidden "user skill ~/.claude/skills/user-notes" "$T_USER_CLAUDE_SKILL" \
    claude hidden "parent-directory CLAUDE.md in the request" "$T_PARENT_CLAUDE_MD" \
    claude marker "user SessionStart hook ran" claude-session-hook \
    claude marker "user MCP server (~/.claude.json) ran" claude-user-mcp \
    claude marker "per-project MCP server (~/.claude.json) ran" claude-local-mcp \
    claude canary "seal run: the run can write markers" canary \
    codex exit "exits 0" - \
    codex reply "the fake model's reply is printed" "$REPLY" \
    codex present "project AGENTS.md in the request" "$T_PROJECT_AGENTS_MD" \
    codex present "project skill .agents/skills/project-release" "$T_PROJECT_AGENTS_SKILL" \
    codex path "calls base_url of the provider in config.toml" "$CODEX_PROVIDER_PATH/responses" \
    codex model "model from ~/.codex/config.toml" "$CODEX_MODEL" \
    codex hidden "user ~/.codex/AGENTS.md in the request" "$T_USER_CODEX_AGENTS_MD" \
    codex hidden "user skill ~/.codex/skills/user-codex-notes" "$T_USER_CODEX_SKILL" \
    codex hidden "user skill ~/.agents/skills/user-shared-notes" "$T_USER_AGENTS_SKILL" \
    codex hidden "parent-directory AGENTS.md in the request" "$T_PARENT_AGENTS_MD" \
    codex marker "user SessionStart hook (hooks.json) ran" codex-session-hook \
    codex marker "user MCP server (config.toml) ran" codex-user-mcp \
    codex marker "notify command (config.toml) ran" codex-notify \
    codex canary "seal run: the run can write markers" canary
} | awk -F'\t' -v sel=" ${agents[*]} " 'index(sel, " " $1 " ")' >"$checks"

# --- the runs -----------------------------------------------------------------
# run_one MODE AGENT: one agent run; keeps its exit status, output, the
# requests the server recorded meanwhile, and the markers written meanwhile.
run_one() {
  local mode=$1 agent=$2 dir="$work/runs/$2.$1" wrap=() cmd=()
  mkdir -p "$dir"
  rm -f "$markers"/*
  # shellcheck disable=SC2206 # SEAL_RUN_ARGS is split into options on purpose
  case $mode in seal*) wrap=("$SEAL" run ${SEAL_RUN_ARGS:-} --) ;; esac
  case $agent in claude) cmd=("${claude_cmd[@]}") ;; codex) cmd=("${codex_cmd[@]}") ;; esac
  local before rc=0
  before=$(wc -l <"$log")
  (cd "$project" && timeout -k 5 "$AGENT_TIMEOUT" "${agent_env[@]}" "${wrap[@]}" "${cmd[@]}") \
    </dev/null >"$dir/stdout" 2>"$dir/stderr" || rc=$?
  echo "$rc" >"$dir/rc"
  if [ "$mode" != control ] && [ "$mode" != control-after ]; then
    # Shows that what a hook or MCP server would write inside the run reaches
    # this script: without it, an absent marker would prove nothing.
    (cd "$project" && "${agent_env[@]}" "$SEAL" run -- sh -c "$(marker_cmd canary)") \
      >"$dir/canary.log" 2>&1 </dev/null || true
  fi
  tail -n +"$((before + 1))" "$log" >"$dir/requests.jsonl"
  ls -A "$markers" >"$dir/markers"
  printf '  %-7s %-14s exit %s, %s model request(s)\n' "$agent" "$mode" "$rc" \
    "$(grep -c '"method": "POST"' "$dir/requests.jsonl" || true)" >&2
}

modes=(control)
[ "$control_only" = 1 ] || modes+=(seal1 seal2 control-after)
step "running: ${modes[*]}"
for mode in "${modes[@]}"; do
  for agent in "${agents[@]}"; do run_one "$mode" "$agent"; done
done

step "agent compatibility: Claude Code $CLAUDE_VERSION, Codex CLI $CODEX_VERSION, seal $SEAL"
modes_csv=$(IFS=,; echo "${modes[*]}")
python3 "$fixtures/agent_compat_judge.py" --checks "$checks" --runs "$work/runs" --modes "$modes_csv"
