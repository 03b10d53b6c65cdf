#!/usr/bin/env bash
# Real agents doing real work under `seal run`: the fake model
# (tests/fixtures/fake_model_server.py --tool-calls) asks the agent for tools,
# as a model does, and the agent runs them in the sealed view:
#   * Claude Code runs a shell command (writes a file, reads a pinned skill,
#     `git status`), writes a new file, reads and edits a tracked one, then
#     tries to plant a skill with its own Write tool and with a shell command,
#     and commits;
#   * Codex runs shell commands in its own sandbox (bubblewrap): one writes a
#     file and reads the pinned skill, one tries to plant a skill.
#   * Copilot CLI, OpenCode, Qwen Code and Gemini CLI run the same two shell
#     commands through their own shell tools, every tool allowed; their plant
#     is a skill and a `.env` (which Gemini CLI and Qwen Code read into their
#     environment as they start: a system prompt of its choosing). Their
#     projects have a `.env` of their own that names a system prompt and
#     moves Gemini CLI's user configuration: natively it takes effect, sealed
#     it must not.
#   * Aider (from PyPI) edits files as the model's reply says: it writes one
#     file and tries to plant a skill; its project configuration
#     (`.aider.conf.yml`, pinned) makes it read a file whose marker must reach
#     the model, and must not once the configuration changed after the pin.
# Each agent runs natively first (the oracle: there the same plants land, so
# the script really exercises them), then under `seal run` on a fresh copy:
# the ordinary work must reach the project, no plant may, the tool results the
# agent sent back must say so, and `seal verify` must still pass afterwards.
# Codex runs sealed as a user (`--user`), where its sandbox works, and as
# root, where it cannot (a command without CAP_SETFCAP cannot map root into a
# user namespace): there seal must say so before the command starts.
#
# Usage: [SEAL=/path/to/seal] scripts/agent-work.sh [--keep]
# Needs root (the user run), node and npm (the agents, installed by
# scripts/agent-compat.sh into its cache), python3 with venv (Aider, from
# PyPI, into the same cache), git, util-linux.
set -euo pipefail

# The agents that run tools with no sandbox of their own (Claude Code and
# Codex have runs of their own below); each runs at its newest version in
# the agent table.
OTHERS="copilot opencode qwen gemini"
WORK_USER=sealtest-agent # made if missing: the user of the `--user` run
TIMEOUT=${SEAL_AGENT_TIMEOUT:-90}

repo=$(cd "$(dirname "$0")/.." && pwd)
fixtures="$repo/tests/fixtures"
keep=0
[ "${1:-}" = --keep ] && keep=1
die() { echo "agent-work: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (it runs an agent as another user too)"

# shellcheck source=scripts/agent-table.sh
source "$repo/scripts/agent-table.sh"
# The newest version of each agent: "FAMILY@VERSION FAMILY VERSION PACKAGE BIN ...".
declare -A row_of
install=()
for family in claude codex $OTHERS; do
  row_of[$family]=$(newest_row "$family")
  install+=(--agent "${row_of[$family]%% *}")
done
"$repo/scripts/agent-compat.sh" --install-only "${install[@]}" >&2
cache=${SEAL_AGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sealfs-agents}
# row_field FAMILY N: field N of its newest row (3 version, 4 package, 5 binary).
row_field() { awk -v n="$2" '{print $n}' <<<"${row_of[$1]}"; }
version_of() { row_field "$1" 3; }
# agent_bin FAMILY: the binary agent-compat.sh installed for its newest version.
agent_bin() {
  local package
  package=$(row_field "$1" 4)
  echo "$cache/${package##*/}-$(version_of "$1")/node_modules/.bin/$(row_field "$1" 5)"
}
CLAUDE_VERSION=$(version_of claude) CODEX_VERSION=$(version_of codex)
# Aider into a virtual environment of its own (made in place: a moved one
# breaks), marked complete only once it runs and reports its version.
aider_dir="$cache/aider-chat-$AIDER_VERSION"
aider="$aider_dir/bin/aider"
aider_ok() { [ -e "$aider_dir/.complete" ] && "$aider" --version 2>/dev/null | grep -qF "$AIDER_VERSION"; }
if ! aider_ok; then
  echo "agent-work: installing aider-chat $AIDER_VERSION into $aider_dir" >&2
  rm -rf "$aider_dir"
  python3 -m venv "$aider_dir" && "$aider_dir/bin/pip" install -q "aider-chat==$AIDER_VERSION" >&2 &&
    touch "$aider_dir/.complete" && aider_ok || die "aider-chat $AIDER_VERSION did not install into $aider_dir"
fi
claude=$(agent_bin claude)
case $(uname -m) in
  x86_64 | amd64) triple=x86_64-unknown-linux-musl platform=linux-x64 ;;
  aarch64 | arm64) triple=aarch64-unknown-linux-musl platform=linux-arm64 ;;
  *) die "no agent builds for $(uname -m)" ;;
esac
codex_vendor="$(dirname "$(dirname "$(agent_bin codex)")")/@openai/codex-$platform/vendor/$triple"
[ -x "$claude" ] && [ -x "$codex_vendor/bin/codex" ] || die "the agents are not where agent-compat.sh installs them"

if [ -z "${SEAL:-}" ]; then
  (cd "$repo" && cargo build --quiet)
  SEAL="$repo/target/debug/seal"
fi
SEAL=$(realpath "$(command -v "$SEAL")")

# The shell command of the other agents' steps, under each name they give
# their shell tool. What they find goes to files, not only to the tool's
# output: Qwen Code's shell tool now and then reports "(empty)" natively too.
shell_step() {
  printf '[{"name": "bash", "arguments": {"command": "%s", "description": "work"}}, {"name": "run_shell_command", "arguments": {"command": "%s", "description": "work"}}]' "$1" "$1"
}
WORK_CMD='echo made-by-agent > agent-out.txt && cat .claude/skills/ok/SKILL.md > skill-read.txt'
# The plant: a skill, and a .env that would give the next Gemini CLI or
# Qwen Code session a system prompt of its choosing (both read the .env
# where they start into their environment).
PLANT_CMD='mkdir -p .claude/skills/planted && echo planted > .claude/skills/planted/SKILL.md; echo plant-rc=$? > plant-rc.txt; echo GEMINI_SYSTEM_MD=README.md > .env; echo env-rc=$? >> plant-rc.txt'

# Codex refuses to make its helper links under /tmp, so the work lives in
# /var/tmp; it is open to the user of the `--user` run.
work=$(mktemp -d /var/tmp/seal-agent-work.XXXXXX)
chmod 755 "$work"
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  if [ "$keep" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# Codex's native binary, where the other user can run it (the cache may be
# in root's private home): hard links where the filesystem allows.
cp -al "$codex_vendor" "$work/codex" 2>/dev/null || cp -a "$codex_vendor" "$work/codex"
codex="$work/codex/bin/codex"
id "$WORK_USER" >/dev/null 2>&1 ||
  useradd --create-home --home-dir "/var/lib/$WORK_USER" --shell /bin/sh "$WORK_USER"
user_home=$(getent passwd "$WORK_USER" | cut -d: -f6)

# --- the model's side -----------------------------------------------------------
# Claude Code's tool uses (paths are the project's, filled in per run) and
# Codex's commands.
P=@PROJECT@
cat >"$work/calls.json" <<EOF
{"anthropic": [
  {"name": "Bash", "input": {"command": "echo made-by-bash > bash-out.txt && cat .claude/skills/ok/SKILL.md && git status --short", "description": "work"}},
  {"name": "Write", "input": {"file_path": "$P/notes.md", "content": "notes from the agent\\n"}},
  {"name": "Read", "input": {"file_path": "$P/README.md"}},
  {"name": "Edit", "input": {"file_path": "$P/README.md", "old_string": "hello", "new_string": "hello, edited"}},
  {"name": "Write", "input": {"file_path": "$P/.claude/skills/planted/SKILL.md", "content": "---\\nname: planted\\ndescription: planted\\n---\\nplanted by the Write tool\\n"}},
  {"name": "Bash", "input": {"command": "mkdir -p .claude/skills/planted2 && echo planted > .claude/skills/planted2/SKILL.md; echo plant-rc=\$?; git -c user.name=agent -c user.email=agent@example.com commit -qam agent-work && git log --oneline | head -1", "description": "plant"}}
],
"responses": [
  "echo made-by-codex > codex-out.txt && cat .claude/skills/ok/SKILL.md",
  "mkdir -p .claude/skills/planted && echo planted > .claude/skills/planted/SKILL.md; echo plant-rc=\$?"
],
"chat": [$(shell_step "$WORK_CMD"), $(shell_step "$PLANT_CMD")],
"gemini": [$(shell_step "$WORK_CMD"), $(shell_step "$PLANT_CMD")]
}
EOF

# One server per run: its log is that run's conversation.
serve() {
  local log=$1 calls=$2 reply=${3:-sealtest-work-done}
  [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  rm -f "$work/port"
  : >"$log"
  python3 "$fixtures/fake_model_server.py" --log "$log" --port-file "$work/port" \
    --reply "$reply" --tool-calls "$calls" &
  server_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || die "the fake model server did not start"
  url="http://127.0.0.1:$(cat "$work/port")"
}

# fresh_project DIR OWNER: a git project with one pinned skill, sealed.
fresh_project() {
  local dir=$1
  rm -rf "$dir"
  mkdir -p "$dir/.claude/skills/ok"
  printf 'hello\n' >"$dir/README.md"
  printf -- '---\nname: ok\ndescription: the pinned skill\n---\nsealtest pinned skill text\n' >"$dir/.claude/skills/ok/SKILL.md"
  git -C "$dir" init -q
  (cd "$dir" && echo y | "$SEAL" init >/dev/null 2>&1) || die "seal init failed in $dir"
  git -C "$dir" add -A
  git -C "$dir" -c user.name=t -c user.email=t@example.com commit -qm init
  chown -R "$2" "$dir"
}

codex_config() { # HOME PROJECT
  mkdir -p "$1/.codex"
  cat >"$1/.codex/config.toml" <<EOF
model = "sealtest-work-model"
model_provider = "sealtest"
check_for_update_on_startup = false

[model_providers.sealtest]
name = "sealtest loopback provider"
base_url = "$url/v1"
wire_api = "responses"
env_key = "SEALTEST_PROVIDER_KEY"

[projects."$2"]
trust_level = "trusted"
EOF
}

# --- the runs -------------------------------------------------------------------
# run_claude NAME PREFIX...: Claude Code in a fresh project, natively or
# under the prefix (seal run ...).
run_claude() {
  local name=$1 dir="$work/$1"
  shift
  fresh_project "$dir/project" root:root
  sed "s#$P#$dir/project#g" "$work/calls.json" >"$dir/calls.json"
  serve "$dir/requests.jsonl" "$dir/calls.json"
  mkdir -p "$dir/home"
  local env cmd
  mapfile -t env < <(offline_words claude 2 "$url")
  mapfile -t cmd < <(offline_words claude 3 "$url" "Do the work.")
  (cd "$dir/project" && timeout -s KILL "$TIMEOUT" env HOME="$dir/home" "${env[@]}" "$@" "$claude" "${cmd[@]:1}" \
    >"$dir/stdout" 2>"$dir/stderr") && echo 0 >"$dir/rc" || echo $? >"$dir/rc"
}

# run_codex NAME HOME OWNER PREFIX...: Codex (its workspace-write sandbox) in
# a fresh project.
run_codex() {
  local name=$1 dir="$work/$1" home=$2 owner=$3
  shift 3
  fresh_project "$dir/project" "$owner"
  serve "$dir/requests.jsonl" "$work/calls.json"
  rm -rf "$home/.codex"
  codex_config "$home" "$dir/project"
  chown -R "$owner" "$home/.codex"
  local env cmd
  mapfile -t env < <(offline_words codex 2 "$url")
  mapfile -t cmd < <(offline_words codex 3 "$url" "Do the work." -s workspace-write)
  (cd "$dir/project" && timeout -s KILL "$TIMEOUT" env HOME="$home" "${env[@]}" "$@" "$codex" "${cmd[@]:1}" </dev/null \
    >"$dir/stdout" 2>"$dir/stderr") && echo 0 >"$dir/rc" || echo $? >"$dir/rc"
}

# run_other NAME FAMILY PREFIX...: an agent with no sandbox of its own,
# told to run every tool without asking.
run_other() {
  local name=$1 family=$2 dir="$work/$1" extra=()
  shift 2
  local agent env cmd
  agent=$(agent_bin "$family")
  fresh_project "$dir/project" root:root
  serve "$dir/requests.jsonl" "$work/calls.json"
  local home="$dir/home"
  mkdir -p "$home"
  case $family in
    copilot)
      mkdir -p "$home/.copilot" && echo '{"autoUpdate": false}' >"$home/.copilot/settings.json" ;;
    opencode)
      mkdir -p "$home/.config/opencode"
      cat >"$home/.config/opencode/opencode.json" <<EOF
{"autoupdate": false, "share": "disabled", "permission": {"bash": "allow", "edit": "allow"},
 "provider": {"sealtest": {"npm": "@ai-sdk/openai-compatible", "name": "sealtest",
   "options": {"baseURL": "$url/v1", "apiKey": "sealtest-key"},
   "models": {"sealtest-work-model": {"name": "sealtest model"}}}},
 "model": "sealtest/sealtest-work-model"}
EOF
      ;;
    qwen)
      mkdir -p "$home/.qwen"
      echo '{"$version": 4, "security": {"auth": {"selectedType": "openai"}}, "model": {"name": "sealtest-work-model"}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}' >"$home/.qwen/settings.json"
      extra=(--yolo) ;;
    gemini)
      mkdir -p "$home/.gemini"
      echo '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "model": {"name": "sealtest-work-model"}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}' >"$home/.gemini/settings.json"
      extra=(--yolo) ;;
  esac
  case $family in
    gemini | qwen)
      # A .env already in the project (the project's own file, shown as
      # it is) that names a system prompt and, for Gemini CLI, moves its
      # user configuration to a directory no one masks: natively both
      # reach the model; sealed, seal run holds the variables to their
      # defaults.
      printf 'The system prompt of the .env: SEALTEST-DOTENV-PROMPT\n' >"$dir/dotenv-prompt.md"
      mkdir -p "$dir/elsewhere/.gemini"
      cp "$home/.gemini/settings.json" "$dir/elsewhere/.gemini/" 2>/dev/null || true
      printf 'Instructions of the moved home: SEALTEST-DOTENV-HOME\n' >"$dir/elsewhere/.gemini/GEMINI.md"
      printf 'GEMINI_SYSTEM_MD=%s\nQWEN_SYSTEM_MD=%s\nGEMINI_CLI_HOME=%s\n' \
        "$dir/dotenv-prompt.md" "$dir/dotenv-prompt.md" "$dir/elsewhere" >"$dir/project/.env"
      ;;
  esac
  mapfile -t env < <(offline_words "$family" 2 "$url")
  mapfile -t cmd < <(offline_words "$family" 3 "$url" "Do the work." "${extra[@]}")
  (cd "$dir/project" && timeout -s KILL "$TIMEOUT" env HOME="$home" "${env[@]}" "$@" "$agent" "${cmd[@]:1}" </dev/null \
    >"$dir/stdout" 2>"$dir/stderr") && echo 0 >"$dir/rc" || echo $? >"$dir/rc"
}

# What the model answers Aider: whole files to write (its `whole` edit
# format), the work and a plant.
AIDER_REPLY=$(printf 'agent-out.txt\n```\nmade-by-aider\n```\n\n.claude/skills/planted/SKILL.md\n```\nplanted by aider\n```\n')

# run_aider NAME PREFIX...: Aider in a fresh project whose pinned
# `.aider.conf.yml` makes it read NOTES.md (its marker shows whether the
# configuration was loaded); in a NAME ending in -tampered the configuration
# changes after the pin. The home has a git identity: without one Aider
# writes it into the repository's `.git/config`, which the view keeps
# read-only, and stops. The home (not above the project) has Aider's user
# configuration: its model (kept under `seal run`), a test command it runs
# after its edits (which must not run under `seal run`), model settings
# with text for the system prompt and a `.env` setting its chat language
# (markers that must not arrive under `seal run`).
run_aider() {
  local name=$1 dir="$work/$1"
  shift
  fresh_project "$dir/project" root:root
  printf 'SEALTEST-AIDER-NOTES\n' >"$dir/project/NOTES.md"
  printf 'read: NOTES.md\n' >"$dir/project/.aider.conf.yml"
  (cd "$dir/project" && echo y | "$SEAL" pin >/dev/null 2>&1) || die "seal pin failed in $dir"
  git -C "$dir/project" add -A
  git -C "$dir/project" -c user.name=t -c user.email=t@example.com commit -qm aider
  case $name in *-tampered) printf '# changed after the pin\n' >>"$dir/project/.aider.conf.yml" ;; esac
  serve "$dir/requests.jsonl" "$work/calls.json" "$AIDER_REPLY"
  mkdir -p "$dir/home"
  printf '[user]\n\tname = agent\n\temail = agent@example.com\n' >"$dir/home/.gitconfig"
  printf 'model: openai/sealtest-work-model\nauto-test: true\ntest-cmd: touch %s\n' "$dir/home-test-ran" \
    >"$dir/home/.aider.conf.yml"
  printf -- '- name: openai/sealtest-work-model\n  system_prompt_prefix: SEALTEST-AIDER-HOME-SETTINGS\n' \
    >"$dir/home/.aider.model.settings.yml"
  printf 'AIDER_CHAT_LANGUAGE=SEALTEST-AIDER-HOME-ENV\n' >"$dir/home/.env"
  (cd "$dir/project" && timeout -s KILL "$TIMEOUT" env HOME="$dir/home" OPENAI_API_KEY=sealtest-key \
    OPENAI_API_BASE="$url/v1" "$@" "$aider" --edit-format whole \
    --yes-always --no-check-update --no-show-model-warnings --no-analytics --no-auto-commits \
    --message "Do the work." </dev/null >"$dir/stdout" 2>"$dir/stderr") && echo 0 >"$dir/rc" || echo $? >"$dir/rc"
}

echo "agent-work: Claude Code $CLAUDE_VERSION, natively and sealed" >&2
run_claude claude-native
run_claude claude-sealed "$SEAL" run --
echo "agent-work: Codex $CODEX_VERSION, natively, sealed as $WORK_USER, sealed as root" >&2
mkdir -p "$work/codex-native/home"
run_codex codex-native "$work/codex-native/home" root:root
run_codex codex-sealed-user "$user_home" "$WORK_USER:" "$SEAL" run --user "$WORK_USER" --
mkdir -p "$work/codex-sealed-root/home"
run_codex codex-sealed-root "$work/codex-sealed-root/home" root:root "$SEAL" run --
rm -rf "$user_home/.codex"
runs="claude-native claude-sealed codex-native codex-sealed-user codex-sealed-root"
for family in $OTHERS; do
  echo "agent-work: $family $(version_of "$family"), natively and sealed" >&2
  run_other "$family-native" "$family"
  run_other "$family-sealed" "$family" "$SEAL" run --
  runs+=" $family-native $family-sealed"
done
echo "agent-work: Aider $AIDER_VERSION, natively, sealed, sealed with its configuration changed" >&2
run_aider aider-native
run_aider aider-sealed "$SEAL" run --
run_aider aider-sealed-tampered "$SEAL" run --
runs+=" aider-native aider-sealed aider-sealed-tampered"

# --- the judge ------------------------------------------------------------------
# shellcheck disable=SC2086 # $runs: one argument per run
SEAL="$SEAL" python3 - "$work" $runs <<'EOF'
import json, os, subprocess, sys
work = sys.argv[1]
failed = []

def check(run, what, ok, detail=""):
    print("%-4s %-18s %s%s" % ("ok" if ok else "FAIL", run, what, "" if ok else "  [%s]" % detail[:300]))
    if not ok:
        failed.append((run, what))

def read(run, name):
    try:
        with open(os.path.join(work, run, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None

def results(run):
    """The tool results of the run's last model request, in order: (text, is_error)."""
    last = None
    for line in open(os.path.join(work, run, "requests.jsonl"), encoding="utf-8"):
        body = json.loads(line).get("body") or {}
        if body.get("messages") or isinstance(body.get("input"), list) or body.get("contents"):
            last = body
    out = []
    for m in (last or {}).get("messages", []):
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                c = b.get("content")
                text = c if isinstance(c, str) else json.dumps(c)
                out.append((text, bool(b.get("is_error"))))
        if m.get("role") == "tool":
            c = m.get("content")
            out.append((c if isinstance(c, str) else json.dumps(c), False))
    for i in (last or {}).get("input", []) if isinstance((last or {}).get("input"), list) else []:
        if isinstance(i, dict) and i.get("type") == "function_call_output":
            o = i.get("output")
            out.append((o if isinstance(o, str) else json.dumps(o), False))
    for c in (last or {}).get("contents", []) or []:
        for p in (c.get("parts") or []) if isinstance(c, dict) else []:
            if isinstance(p, dict) and "functionResponse" in p:
                out.append((json.dumps(p["functionResponse"]), False))
    return out

def project(run, *path):
    return os.path.join(work, run, "project", *path)

def verify_passes(run):
    r = subprocess.run([os.environ["SEAL"], "verify"], cwd=project(run, ), capture_output=True)
    return r.returncode == 0, r.stdout.decode() + r.stderr.decode()

PLANTS = {"claude": [".claude/skills/planted/SKILL.md", ".claude/skills/planted2/SKILL.md"],
          "codex": [".claude/skills/planted/SKILL.md"]}
OTHERS_PLANTS = [".claude/skills/planted/SKILL.md", ".env"]
# The planted .env's line (Gemini CLI's and Qwen Code's projects have a .env
# of their own before the run).
ENV_PLANT = "GEMINI_SYSTEM_MD=README.md"

def planted_at(run, path):
    if path == ".env":
        return ENV_PLANT in (read(run, "project/.env") or "")
    return os.path.exists(project(run, path))

def judge_aider(run, sealed):
    """Aider works from the model's reply, not from tool calls."""
    log = read(run, "requests.jsonl") or ""
    if run.endswith("-tampered"):
        check(run, "its configuration, changed after the pin, was not loaded",
              "SEALTEST-AIDER-NOTES" not in log)
        ok, out = verify_passes(run)
        check(run, "seal verify reports the change", not ok and ".aider.conf.yml" in out, out)
    else:
        check(run, "its configuration was loaded (the file it names reached the model)",
              "SEALTEST-AIDER-NOTES" in log)
    bodies = [json.loads(line).get("body") or {} for line in log.splitlines() if line.strip()]
    models = {b.get("model") for b in bodies if isinstance(b, dict) and b.get("messages")}
    check(run, "the model of its home configuration was used", models == {"sealtest-work-model"}, repr(models))
    home = [m for m in ("SEALTEST-AIDER-HOME-SETTINGS", "SEALTEST-AIDER-HOME-ENV") if m in log]
    if os.path.exists(os.path.join(work, run, "home-test-ran")):
        home.append("the test command of its home configuration ran")
    if sealed:
        check(run, "nothing of its home configuration but the model arrived or ran", not home, repr(home))
    else:
        check(run, "natively its home configuration arrives and runs (the oracle)", len(home) == 3, repr(home))
    check(run, "a file it wrote reached the project",
          read(run, "project/agent-out.txt") == "made-by-aider\n", repr(read(run, "project/agent-out.txt")))
    planted = os.path.exists(project(run, ".claude/skills/planted/SKILL.md"))
    if sealed:
        check(run, "no skill was planted", not planted)
        if not run.endswith("-tampered"):
            ok, out = verify_passes(run)
            check(run, "seal verify still passes", ok, out)
    else:
        check(run, "natively the plant lands (the oracle)", planted)

for run in sys.argv[2:]:
    agent = run.split("-")[0]
    sealed = "sealed" in run
    rc = read(run, "rc")
    err = read(run, "stderr") or ""
    check(run, "the agent ran to its end (exit 0)", rc is not None and rc.strip() == "0", err[-300:])
    if agent == "aider":
        judge_aider(run, sealed)
        continue
    res = results(run)
    want = 6 if agent == "claude" else 2
    plants = PLANTS.get(agent, OTHERS_PLANTS)
    check(run, "it ran every tool the model asked for (%d results)" % want, len(res) == want, repr(res))
    if run == "codex-sealed-root":
        check(run, "seal said the agent's sandbox cannot start as root", "CAP_SETFCAP" in err, err[-300:])
        check(run, "as it said: each command failed to map root",
              all("setting up uid map" in t for t, _ in res) and len(res) == want, repr(res))
        continue
    work_file = {"claude": "bash-out.txt", "codex": "codex-out.txt"}.get(agent, "agent-out.txt")
    check(run, "a file a shell command wrote reached the project",
          (read(run, os.path.join("project", work_file)) or "").startswith("made-by-"))
    # What the shell found: in its output (Claude Code, Codex) or in files
    # (the others).
    found = res[0][0] if res else ""
    told = " ".join(t for t, _ in res)
    if agent not in ("claude", "codex"):
        found = read(run, "project/skill-read.txt") or ""
        told = read(run, "project/plant-rc.txt") or ""
    check(run, "the pinned skill was readable", "sealtest pinned skill text" in found, repr(found))
    if agent == "claude":
        check(run, "its Write tool made a file", read(run, "project/notes.md") == "notes from the agent\n")
        check(run, "its Edit tool changed a tracked file", read(run, "project/README.md") == "hello, edited\n",
              repr(read(run, "project/README.md")))
        log = subprocess.run(["git", "log", "--oneline"], cwd=project(run), capture_output=True).stdout.decode()
        check(run, "its commit landed", "agent-work" in log, log)
    planted = [p for p in plants if planted_at(run, p)]
    if agent in ("gemini", "qwen"):
        log = read(run, "requests.jsonl") or ""
        markers = ["SEALTEST-DOTENV-PROMPT"] + (["SEALTEST-DOTENV-HOME"] if agent == "gemini" else [])
        reached = [m for m in markers if m in log]
        if sealed:
            check(run, "the project's .env moved neither its system prompt nor its configuration",
                  not reached, repr(reached))
        else:
            check(run, "natively the project's .env names its system prompt and configuration (the oracle)",
                  reached == markers, repr(reached))
    if sealed:
        check(run, "no skill was planted", not planted, repr(planted))
        if agent == "claude":
            check(run, "its Write tool was told the skill is read-only", len(res) > 4 and res[4][1]
                  and "read-only" in res[4][0].lower(), repr(res[4:5]))
        check(run, "the shell was told the skill is read-only", "plant-rc=1" in told, repr(told[-200:]))
        if ".env" in plants:
            check(run, "the shell was told the .env is read-only", "env-rc=1" in told, repr(told[-200:]))
        ok, out = verify_passes(run)
        check(run, "seal verify still passes", ok, out)
    else:
        check(run, "natively the plants land (the oracle)", planted == plants, repr(planted))

print("agent-work: %d check(s) failed" % len(failed) if failed else "agent-work: every check passed")
sys.exit(1 if failed else 0)
EOF
