#!/usr/bin/env bash
# Benchmarks what users feel: an agent session's whole commands, natively and
# under `seal run` (writable, the mode agents get), side by side in one
# interleaved run, and `seal run`'s start-up. Prints a ratio table (this
# machine is shared and noisy: compare the columns of one run, not runs).
#
#   scripts/bench-session.sh                  # build --release, make the project, measure
#   ROUNDS=5 scripts/bench-session.sh         # sessions per mode (default 3), medians
#   MODES="native run ro" scripts/...         # add `seal run --read-only` (read steps only,
#                                             # against a native session of the same steps)
#   MODES="native run cpu0" scripts/...       # add `seal run` held to CPU 0 (`taskset -c 0`:
#                                             # the command and the view on one CPU)
#   BENCH_DIR=/tmp/x scripts/...              # where the project lives (default: a new
#                                             # directory under /tmp, removed at the end)
#   SEAL=path/to/seal scripts/...             # a seal binary instead of building one
#   COUNT=0 scripts/...                       # skip the request-counting session
#   BIG=1 scripts/...                         # also the start-up on 200 bundles, 1 GB
#   AGENT_START=0 scripts/...                 # the first step the moment the session starts
#                                             # (default: 0.5 s later, below)
#   VARIANTS="nopt=/tmp/seal-nopt ..." scripts/...
#                                             # more `seal run` columns, each another seal
#                                             # binary (e.g. one built without a speed
#                                             # mechanism: docs/ARCHITECTURE.md's table)
#
# The project: a clone of this repository (its history, for `git log -p`),
# 20 skills in .claude/skills (5 files each) and a 20,000-file dependency
# tree in deps/ (200 directories), committed, then sealed by `seal init`.
# Outside it, a tarball of another 20,000-file tree (200 directories, one
# file in ten a Python module).
#
# A session is one shell running, in the project, each step timed on its
# own (bash's EPOCHREALTIME, no fork per timestamp):
#   first:  git status, git log -p (last 100 commits), grep -r, find, reading
#           every file of the skills
#   then:   untar of the 20,000-file tree into vendor/, python3 -m compileall
#           of it, git add -A && git commit of it
#   again:  the five read commands (a run's later commands: what it has
#           cached), then rm -rf vendor/
# Before the first step the session waits AGENT_START seconds (0.5 by
# default, untimed, in every mode): an agent's first command comes after
# its own start-up (Claude Code's takes about a second), and `seal run`
# lists the project's ordinary directories into the kernel meanwhile
# (docs/ARCHITECTURE.md, seal run). AGENT_START=0 measures a first command
# started the moment the run is.
# natively (`bash session.sh` in the project), and under `seal run -- bash
# session.sh` (its start-up not counted; it is a row of its own). The order
# of the modes alternates each round; after each session the project is
# reset to its base commit. Each step's median over the rounds, and the
# ratio to native; "all together" is the sum of the steps.
# Start-up: `seal run -- true` against `true`, 10 times each, interleaved,
# on the project and (with BIG=1) on a project of 200 pinned skills of 5 MB
# each (1 GB; issue 25's start-up row): `seal run` hashes at most 32 MiB
# of bundles before it starts the command (the rest at their first open),
# so this row is that budget and the run's set-up. Variants get the rows too.
# The mode cpu0 is `seal run` with the command and the view's daemon held to
# one CPU: it shows what waking a thread on another CPU costs each round
# trip (docs/ARCHITECTURE.md, "Where FUSE is the limit"), which the line
# printed first measures apart, as a pipe's round trip between two
# processes on one CPU and on two.
# Then one more `seal run` session with the FUSE requests logged
# (SEAL_LOG=sealfs::requests=debug), counted per step by opcode: the round trips each
# command costs (a RELEASE the kernel sends after a step may count in the
# next).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/bench-lib.sh
rounds=${ROUNDS:-3}
agent_start=${AGENT_START:-0.5}
modes=${MODES:-native run}
# Each variant NAME=BINARY is one more mode, "v:NAME".
declare -A variant_bin=()
for v in ${VARIANTS:-}; do
  variant_bin[${v%%=*}]=${v#*=}
  [ -x "${v#*=}" ] || { echo "bench-session: variant ${v%%=*}: no binary at ${v#*=}" >&2; exit 2; }
  modes="$modes v:${v%%=*}"
done

if [ "$(id -u)" != 0 ]; then
  echo "bench-session: run as root (seal run serves FUSE and builds namespaces)" >&2
  exit 2
fi
case " $modes " in *" cpu0 "*) need=taskset ;; *) need= ;; esac
for tool in git python3 tar $need; do
  command -v "$tool" >/dev/null || { echo "bench-session: needs $tool" >&2; exit 2; }
done
if [ -z "${SEAL:-}" ]; then
  cargo build --release --quiet --bin seal
  SEAL=$repo/target/release/seal
fi

if [ -n "${BENCH_DIR:-}" ]; then
  dir=$BENCH_DIR
  mkdir -p "$dir"
else
  dir=$(mktemp -d /tmp/sealfs-bench-session.XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi
project=$dir/project

# A tree of $2 directories of $3 files under $1 (a few hundred bytes each;
# every tenth a Python module).
make_tree() {
  python3 - "$1" "$2" "$3" <<'PY'
import os, sys
root, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    p = os.path.join(root, f"pkg{d:03}")
    os.makedirs(p, exist_ok=True)
    for f in range(files):
        if f % 10 == 0:
            name, body = f"mod{f:03}.py", f"def f{f}(x):\n    return x * {f}\n" * 8
        else:
            name, body = f"file{f:03}.js", f"// module {d}/{f}\nexport const v{f} = {f};\n" * 6
        with open(os.path.join(p, name), "w") as fh:
            fh.write(body)
PY
}

if [ ! -e "$project/seal.json" ]; then
  echo "== making the project in $dir" >&2
  rm -rf "$project"
  git clone -q --no-local "$repo" "$project"
  git -C "$project" config user.email bench@example.invalid
  git -C "$project" config user.name bench
  git -C "$project" config commit.gpgsign false
  for i in $(seq -w 1 20); do
    s=$project/.claude/skills/skill-$i
    mkdir -p "$s/scripts" "$s/reference"
    printf -- '---\nname: skill-%s\ndescription: benchmark skill %s\n---\n# Skill %s\n' "$i" "$i" "$i" > "$s/SKILL.md"
    for f in a b; do
      python3 -c "print('reference text ' * 200)" > "$s/reference/$f.md"
      printf '#!/bin/sh\necho %s\n' "$f" > "$s/scripts/$f.sh"
    done
  done
  make_tree "$project/deps" 200 100
  git -C "$project" add -A
  git -C "$project" commit -qm "bench: skills and a dependency tree"
  (cd "$project" && echo y | "$SEAL" init >/dev/null 2>&1)
  git -C "$project" add -A
  git -C "$project" commit -qm "bench: seal.json"
  tree=$dir/tree
  rm -rf "$tree"
  make_tree "$tree/vendor" 200 100
  tar -C "$tree" -cf "$dir/vendor.tar" vendor
  rm -rf "$tree"
fi
base=$(git -C "$project" rev-parse HEAD)
(cd "$project" && "$SEAL" verify >/dev/null) || {
  echo "bench-session: the project does not verify; remove $dir and start again" >&2
  exit 2
}

# The session: prints "STEP SECONDS" per step.
cat > "$dir/session.sh" <<EOF
set -e
tarball=$dir/vendor.tar
read_only=\${1:-}
# A needle made now, found nowhere in the project (not even in git's packs,
# which hold every version of this script).
needle=absent-\$(date +%s%N)-\$\$
t() {
  local name=\$1; shift
  [ -z "\${SEAL_BENCH_MARK:-}" ] || echo "@@step \$name" >&2
  local start=\$EPOCHREALTIME
  "\$@" >/dev/null 2>&1 || { echo "\$name failed" >&2; exit 1; }
  local end=\$EPOCHREALTIME
  echo "\$name \$(python3 -c "print(\$end - \$start)")"
}
reads() {
  t "git-status\$1" git status --porcelain
  t "git-log-p\$1" git log -p -n 100
  t "grep-r\$1" sh -c "grep -r \$needle . ; [ \\\$? = 1 ]"
  t "find\$1" find . -name '*.md'
  t "read-skills\$1" sh -c 'cat .claude/skills/*/SKILL.md .claude/skills/*/*/*'
}
# The agent's own start-up, untimed (AGENT_START above).
sleep $agent_start
reads ""
if [ -z "\$read_only" ]; then
  t untar tar -xf "\$tarball"
  t compileall python3 -m compileall -q vendor
  t git-add-commit sh -c 'git add -A && git commit -qm vendor'
fi
reads " again"
if [ -z "\$read_only" ]; then
  t rm-rf rm -rf vendor
fi
EOF

reset_project() {
  git -C "$project" reset -q --hard "$base"
  git -C "$project" clean -qfdx
}

results=$dir/results
: > "$results"
session() { # MODE
  reset_project
  local out
  case $1 in
    native) out=$(cd "$project" && bash "$dir/session.sh") ;;
    native-ro) out=$(cd "$project" && bash "$dir/session.sh" ro) ;;
    run) out=$(cd "$project" && "$SEAL" run -- bash "$dir/session.sh" 2>/dev/null) ;;
    ro) out=$(cd "$project" && "$SEAL" run --read-only -- bash "$dir/session.sh" ro 2>/dev/null) ;;
    cpu0) out=$(cd "$project" && taskset -c 0 "$SEAL" run -- bash "$dir/session.sh" 2>/dev/null) ;;
    v:*) out=$(cd "$project" && "${variant_bin[${1#v:}]}" run -- bash "$dir/session.sh" 2>/dev/null) ;;
  esac
  printf '%s\n' "$out" | sed "s/^/$1 /" >> "$results"
}

echo "== $rounds rounds of: $modes (order alternating)" >&2
read -r -a mode_list <<< "$modes"
# A read-only run's session has no write steps, so its reads "again" see a
# smaller tree: it is compared with a native session of the same steps.
case " $modes " in *" ro "*) mode_list+=(native-ro) ;; esac
interleave "$rounds" session "${mode_list[@]}"
reset_project

# Start-up: `seal run -- true` against `true` in DIR, TIMES times each,
# interleaved, recorded as the row STEP.
startup() { # STEP DIR TIMES
  local s e
  for _ in $(seq 1 "$3"); do
    s=$EPOCHREALTIME; (cd "$2" && true); e=$EPOCHREALTIME
    echo "native $1 $(python3 -c "print($e - $s)")" >> "$results"
    s=$EPOCHREALTIME; (cd "$2" && "$SEAL" run -- true 2>/dev/null); e=$EPOCHREALTIME
    echo "run $1 $(python3 -c "print($e - $s)")" >> "$results"
    for v in "${!variant_bin[@]}"; do
      s=$EPOCHREALTIME; (cd "$2" && "${variant_bin[$v]}" run -- true 2>/dev/null); e=$EPOCHREALTIME
      echo "v:$v $1 $(python3 -c "print($e - $s)")" >> "$results"
    done
  done
}
startup start-up "$project" 10

if [ "${BIG:-0}" = 1 ]; then
  big=$dir/big
  if [ ! -e "$big/seal.json" ]; then
    echo "== making the 200-bundle, 1 GB project" >&2
    rm -rf "$big"
    mkdir -p "$big"
    git -C "$big" init -q
    for i in $(seq -w 1 200); do
      s=$big/.claude/skills/s$i
      mkdir -p "$s"
      printf -- '---\nname: s%s\ndescription: benchmark skill\n---\n' "$i" > "$s/SKILL.md"
      head -c 5000000 /dev/urandom > "$s/data.bin"
    done
    (cd "$big" && echo y | "$SEAL" init >/dev/null 2>&1)
  fi
  startup start-up-1GB "$big" 5
fi

count=$dir/requests.log
rm -f "$count"
if [ "${COUNT:-1}" != 0 ]; then
  reset_project
  (cd "$project" && SEAL_LOG=sealfs::requests=debug SEAL_BENCH_MARK=1 "$SEAL" run -- bash "$dir/session.sh" \
    >/dev/null 2>"$count") || true
  reset_project
fi

# What waking a process on another CPU costs here: a pipe's round trip
# between two processes held to one CPU, and to two.
python3 - <<'PY'
import os, time
def round_trip(cpu_a, cpu_b, n=20000):
    to_b, from_a = os.pipe()
    to_a, from_b = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpu_b})
        for _ in range(n):
            os.read(to_b, 1)
            os.write(from_b, b"x")
        os._exit(0)
    os.sched_setaffinity(0, {cpu_a})
    start = time.perf_counter()
    for _ in range(n):
        os.write(from_a, b"x")
        os.read(to_a, 1)
    took = time.perf_counter() - start
    os.waitpid(pid, 0)
    return took / n * 1e6
cpus = sorted(os.sched_getaffinity(0))
if len(cpus) > 1:
    same, other = round_trip(cpus[0], cpus[0]), round_trip(cpus[0], cpus[1])
    print(f"a pipe's round trip between two processes: {same:.1f} us on one CPU, {other:.1f} us across two")
PY
python3 - "$results" "$modes" "$(git -C "$repo" rev-parse --short HEAD)" <<'PY'
import statistics, sys
path, modes, commit = sys.argv[1], sys.argv[2].split(), sys.argv[3]
rows = {}
order = []
for line in open(path):
    mode, rest = line.split(" ", 1)
    step, secs = rest.rsplit(" ", 1)
    if step not in order:
        order.append(step)
    rows.setdefault(step, {}).setdefault(mode, []).append(float(secs))
med = {s: {m: statistics.median(v) for m, v in d.items()} for s, d in rows.items()}
label = {"native": "native", "run": "seal run", "ro": "run --read-only", "native-ro": "native (ro steps)",
         "cpu0": "run, one CPU"}
base = {"run": "native", "ro": "native-ro", "cpu0": "native"}
variants = [m for m in modes if m.startswith("v:")]
for m in variants:
    label[m], base[m] = m[2:], "native"
shown = [m for m in ("native", "run", "native-ro", "ro", "cpu0") if m in modes or (m == "native-ro" and "ro" in modes)]
shown += variants
print(f"seal run session benchmark, commit {commit}, medians of each step (ms) and ratio to native")
head = f"{'step':<32}" + "".join(f"{label[m]:>19}" for m in shown) + "".join(
    f"{label[m] + ' ×':>19}" for m in shown if m in base)
print(head)
def line(step, vals):
    cells = "".join(f"{vals[m]*1000:>19.1f}" if m in vals else f"{'-':>19}" for m in shown)
    ratios = "".join(
        (f"{vals[m]/vals[base[m]]:>19.2f}" if m in vals and vals.get(base[m]) else f"{'-':>19}")
        for m in shown if m in base)
    print(f"{step:<32}{cells}{ratios}")
steps = [s for s in order if not s.startswith("start-up")]
for s in steps:
    line(s, med[s])
for m in shown:
    if m not in base:
        continue
    both = [s for s in steps if m in med[s] and base[m] in med[s]]
    total = {base[m]: sum(med[s][base[m]] for s in both), m: sum(med[s][m] for s in both)}
    line(f"all together ({label[m]})", total)
if "start-up" in med:
    line("start-up (run -- true)", med["start-up"])
if "start-up-1GB" in med:
    line("start-up, 200 bundles, 1 GB", med["start-up-1GB"])
PY

if [ -s "$count" ]; then
  python3 scripts/bench-requests.py "$count" "per step, one seal run session,"
fi
