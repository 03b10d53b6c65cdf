#!/usr/bin/env bash
# Tries sealfs on real repositories, as a new user would, and prints a table.
#
# For each DIR (an extracted public repository; nothing of it is ever written:
# it is copied to a temporary directory first):
#   1. a fresh `git init` of the copy, then `seal init` (answered `y`): must
#      exit 0;
#   2. `seal verify`: must exit 0;
#   3. the read-only view (`seal mount`) must hide nothing that was on disk:
#      every path of the copy (links as links) is listed in the view;
#   4. every agent-extension file must be sealed. The extension files are found
#      by this script's own list of agent locations (below, deliberately wider
#      than sealfs's table, so that a surface sealfs does not know shows up
#      here as a failure): each one must be in a bundle of seal.json (through
#      the links that lead to it), and, appended to on disk, its open through
#      the view must be refused; restored, it must read again.
# Exits 1 if any check failed on any repository, 2 if the set-up failed.
#
# Usage: [SEAL=/path/to/seal] scripts/realrepos.sh [--keep] [--max-files N] DIR...
#   --keep         keep the temporary copies and print where they are
#   --max-files N  tamper with at most N extension files per repository, spread
#                  evenly over them (default: all)
# Needs root and /dev/fuse for the view, python3 and git. Fetch the
# repositories yourself; neither they nor a script that fetches them belong
# in this repository.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
keep=0
max_files=0
dirs=()
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1 ;;
    --max-files) shift; max_files=${1:?--max-files takes a number} ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
    *) dirs+=("$1") ;;
  esac
  shift
done
[ ${#dirs[@]} -gt 0 ] || { echo "usage: scripts/realrepos.sh [--keep] [--max-files N] DIR..." >&2; exit 2; }
for tool in python3 git; do command -v "$tool" >/dev/null || { echo "realrepos: $tool is required" >&2; exit 2; }; done

if [ -z "${SEAL:-}" ]; then
  (cd "$repo" && cargo build --quiet)
  SEAL="$repo/target/debug/seal"
fi
SEAL=$(realpath "$(command -v "$SEAL")")

work=$(mktemp -d "${TMPDIR:-/tmp}/sealfs-realrepos.XXXXXX")
cleanup() {
  # A view left mounted by an interrupted check must not keep its copy.
  for m in "$work"/*/view; do
    mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
  done
  if [ "$keep" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

exec_status=0
SEAL="$SEAL" WORK="$work" MAX_FILES="$max_files" python3 - "${dirs[@]}" <<'PY' || exec_status=$?
import json, os, re, shutil, subprocess, sys, time

SEAL = os.environ["SEAL"]
WORK = os.environ["WORK"]
MAX_FILES = int(os.environ["MAX_FILES"])

# Where agents load extensions from, by this script's own reckoning (wider
# than sealfs's table on purpose): a path is an extension when one of its
# segments is an agent directory, or it is an instruction file, an MCP or
# plugin manifest, or below one of the listed .github / .vscode places.
AGENT_DIRS = {
    ".agent", ".agents", ".amazonq", ".amp", ".claude", ".claude-plugin",
    ".cline", ".clinerules", ".codex", ".codex-plugin", ".continue", ".cursor",
    ".cursor-plugin", ".factory", ".factory-plugin", ".gemini", ".junie",
    ".kilo", ".kilocode", ".kiro", ".opencode", ".openhands", ".pi", ".qwen",
    ".roo", ".windsurf", ".trae", ".augment", ".codebuddy", ".codebuddy-plugin",
    ".qoder", ".qoder-plugin", ".iflow", ".hermes", ".kimi", ".kimi-code",
    ".vibe", ".devin",
}
INSTRUCTION_FILES = {
    ".goosehints", "AGENT.md", "AGENTS.md", "AGENTS.override.md", "CLAUDE.md",
    "CLAUDE.local.md", "GEMINI.md", "QWEN.md", "WARP.md",
    # The other spellings Crush and Windsurf read.
    "agents.md", "Agents.md", "gemini.md", "CRUSH.md", "CRUSH.local.md",
    "Crush.md", "Crush.local.md", "crush.md", "crush.local.md",
    # Roo Code and OpenCode read a local variant beside AGENTS.md.
    "AGENTS.local.md",
    # OpenCode's and Kilo's third choice, Continue CLI's fourth, Pi's
    # upper-case spellings.
    "CONTEXT.md", "CODEX.md", "AGENTS.MD", "CLAUDE.MD",
    # CodeBuddy Code's, iFlow CLI's, Hermes Agent's, Factory Droid's design
    # guidelines.
    "CODEBUDDY.md", "CODEBUDDY.local.md", "IFLOW.md", "HERMES.md", ".hermes.md",
    "claude.md", "DESIGN.md", "Design.md", "design.md",
}
SINGLE_FILES = {
    ".mcp.json", ".cursorrules", ".windsurfrules", ".roomodes", ".kilocodemodes",
    "opencode.json", "opencode.jsonc", ".crush.json", "crush.json",
    ".aider.conf.yml", ".augment-guidelines", ".rules", "kilo.json", "kilo.jsonc",
    # Crush's start-up shell scripts, Aider's model settings.
    "crushrc", ".crushrc", ".aider.model.settings.yml",
}
GITHUB_PLACES = (
    ".github/copilot-instructions.md", ".github/instructions/", ".github/prompts/",
    ".github/agents/", ".github/skills/", ".github/hooks/", ".github/mcp.json",
    ".github/copilot/", ".github/extensions/", ".github/plugin/",
    ".github/chatmodes/",
)
# Firebase Studio's, JetBrains AI Assistant's and Crush's places (`.crush`
# is also its data directory: its database and logs are not extensions).
OTHER_PLACES = (".idx/airules.md", ".idx/mcp.json", ".aiassistant/rules/",
                ".crush/commands/", ".crush/skills/", ".crush/crush.json",
                ".gitlab/duo/")
VSCODE_PLACES = (".vscode/mcp.json",)


def is_extension(rel):
    parts = rel.split("/")
    if ".git" in parts:
        return False
    if any(p in AGENT_DIRS for p in parts[:-1]) or parts[-1] in AGENT_DIRS:
        return True
    if parts[-1] in INSTRUCTION_FILES or parts[-1] in SINGLE_FILES:
        return True
    for i in range(len(parts)):
        tail = "/".join(parts[i:])
        if any(tail == p or tail.startswith(p) for p in GITHUB_PLACES + VSCODE_PLACES + OTHER_PLACES if p.endswith("/") or tail == p):
            return True
    return False


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def walk(root):
    """Every path under root (links as links), relative, without .git."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            out.add(rel)
    return out


def inside(root, path):
    real = os.path.realpath(path)
    return real == root or real.startswith(root + "/")


def check(src):
    name = os.path.basename(os.path.normpath(src))
    row = {"repo": name, "init": "-", "verify": "-", "hidden": "-", "ext": 0,
           "unpinned": "-", "tamper": "-", "notes": []}
    copy = os.path.join(WORK, name, "project")
    view = os.path.join(WORK, name, "view")
    os.makedirs(view)
    shutil.copytree(src, copy, symlinks=True)
    shutil.rmtree(os.path.join(copy, ".git"), ignore_errors=True)
    run(["git", "init", "-q", copy], check=True)
    root = os.path.realpath(copy)

    init = run([SEAL, "-C", copy, "init"], input="y\n")
    row["init"] = f"exit {init.returncode}"
    if init.returncode != 0:
        row["notes"].append("init: " + (init.stderr.strip().splitlines() or ["?"])[-1][:160])
        return row
    verify = run([SEAL, "-C", copy, "verify"])
    row["verify"] = f"exit {verify.returncode}"
    lock = json.load(open(os.path.join(copy, "seal.json")))
    pinned = set()  # project-relative paths of every pinned file
    for key, entry in lock.get("bundles", {}).items():
        base = key[2:] if key.startswith("./") else key
        for f in entry.get("files", {}):
            pinned.add(base if f == "." else f"{base}/{f}")

    # The extension files, each with the on-disk file its path leads to.
    extensions = []
    for rel in sorted(walk(copy)):
        full = os.path.join(copy, rel)
        if not is_extension(rel) or os.path.isdir(full) or not os.path.exists(full):
            continue
        if not inside(root, full):
            continue  # a link out of the project: the view hides it, nothing to pin
        target = os.path.relpath(os.path.realpath(full), root)
        extensions.append((rel, target))
    row["ext"] = len(extensions)
    unpinned = sorted({t for _, t in extensions if t not in pinned})
    row["unpinned"] = str(len(unpinned))
    if unpinned:
        row["notes"].append("not pinned: " + ", ".join(unpinned[:4]) + (" ..." if len(unpinned) > 4 else ""))

    mount = run([SEAL, "-C", copy, "mount", view, "--daemon"])
    if mount.returncode != 0:
        row["notes"].append("mount: " + mount.stderr.strip()[:160])
        return row
    try:
        on_disk = walk(copy)
        in_view = walk(view)
        hidden = sorted(on_disk - in_view)
        row["hidden"] = str(len(hidden))
        if hidden:
            row["notes"].append("hidden: " + ", ".join(hidden[:4]) + (" ..." if len(hidden) > 4 else ""))
        chosen = extensions
        if MAX_FILES and len(extensions) > MAX_FILES:
            step = len(extensions) / MAX_FILES
            chosen = [extensions[int(i * step)] for i in range(MAX_FILES)]
        failures = []
        for rel, target in chosen:
            disk = os.path.join(copy, target)
            through = os.path.join(view, rel)
            original = open(disk, "rb").read()
            mode = os.stat(disk).st_mode
            try:
                with open(disk, "ab") as f:
                    f.write(b"\nsealfs-realrepos-tamper\n")
                try:
                    with open(through, "rb") as f:
                        got = f.read()
                    failures.append(f"{rel}: tampered, still opened ({len(got)} bytes)")
                except OSError:
                    pass
            finally:
                with open(disk, "wb") as f:
                    f.write(original)
                os.chmod(disk, mode)
            deadline = time.time() + 5
            while True:
                try:
                    with open(through, "rb") as f:
                        if f.read() == original:
                            break
                        failures.append(f"{rel}: restored, reads other bytes")
                        break
                except OSError as e:
                    if time.time() > deadline:
                        failures.append(f"{rel}: restored, open fails ({e.strerror})")
                        break
                    time.sleep(0.05)
        row["tamper"] = f"{len(chosen) - len(failures)}/{len(chosen)}"
        if failures:
            row["notes"].append("tamper: " + "; ".join(failures[:3]) + (" ..." if len(failures) > 3 else ""))
    finally:
        r = run(["umount", view])
        if r.returncode != 0:
            run(["umount", "-l", view])
    return row


rows = [check(d) for d in sys.argv[1:]]
headers = ["repo", "init", "verify", "hidden", "ext", "unpinned", "tamper"]
widths = {h: max(len(h), *(len(str(r[h])) for r in rows)) for h in headers}
print("  ".join(h.ljust(widths[h]) for h in headers))
for r in rows:
    print("  ".join(str(r[h]).ljust(widths[h]) for h in headers))
failed = False
for r in rows:
    ok = (r["init"] == "exit 0" and r["verify"] == "exit 0" and r["hidden"] == "0"
          and r["unpinned"] == "0" and r["tamper"] != "-" and r["tamper"].split("/")[0] == r["tamper"].split("/")[1])
    failed |= not ok
    for n in r["notes"]:
        print(f"  {r['repo']}: {n}")
sys.exit(1 if failed else 0)
PY
exit "$exec_status"
