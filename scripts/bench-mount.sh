#!/usr/bin/env bash
# Benchmarks `seal mount` against the native tree (and bindfs when
# installed): reads through `seal mount` (read-only), `seal mount
# --kernel-opens` (seal-ko: the kernel opens files itself) and `bindfs -r`
# in one interleaved run, then writes through `seal mount
# --writable` and bindfs (read-write) in a second one; warm cache.
#
#   scripts/bench-mount.sh                 # build, make the tree, measure, count
#   REPS=9 scripts/bench-mount.sh          # more repetitions (default 5)
#   BENCH_TREE=/tmp/x scripts/...          # where the tree lives
#   KEEP_TREE=1 scripts/...                # keep the 2+ GiB tree for the next run
#   COUNT=0 scripts/...                    # skip the request-counting pass
#   RUNS=writes scripts/...                # only the write run (or: reads)
#   VARIANTS="nopt=/tmp/seal-nopt ..."     # more `seal mount` columns in both runs, each
#                                          # another seal binary (e.g. one built without a
#                                          # speed mechanism: docs/ARCHITECTURE.md's table)
#
# 1. Builds `seal` and the timing helper (examples/mount_bench.rs) --release.
# 2. Makes a tree: 20,000 small files (256 B..4 KiB) in 300 directories under
#    src/, a 4 KiB file, a 1 GiB ordinary file, a 1 GiB file inside a bundle,
#    a 10-file ~45 KB bundle and a 2,000-file 19 MB bundle (40 package
#    directories, as a skill that ships node_modules); `seal init` pins the
#    bundles. And, for the
#    write run, wproject/ with three git repositories of 20,000 4 KiB files.
# 3. Mounts it with `seal mount` and `bindfs -r` (if installed).
# 4. The helper warms every view, then repeats, rotating the order of the
#    views each time: walk+lstat of src/ after > 1 s ("settled": past the
#    view's one-second TTLs; where its directory feed watches, the kernel
#    keeps ordinary entries and listings for ten minutes and is told to forget
#    each at its change) and at once again; lstat of a name that does not
#    exist next to each of the 20,000 files (once, then measured: what
#    interpreters and build tools do as they search paths); open+read+
#    close of the 20,000 files; the same two walks over the whole tree (which
#    includes the bundle roots: a lookup of a bundle root is a fresh
#    verification, so this walk hashes the 1 GiB bundle); a 1 GiB sequential
#    read of the ordinary file and of the bundle file, open and read phases
#    apart (a bundle open verifies, i.e. hashes the whole bundle, first); 2,000
#    opens of the 4 KiB file and 300 opens of a file of the 10-file bundle
#    (p50/p99 over all repetitions), and 300 lstat of that bundle's root (one
#    fresh verification each, no open); and a program loading the 2,000-file
#    bundle (open+read+close of each file once, one process) just after its
#    SKILL.md was touched on the disk (the view verifies it again), then at
#    once again. Medians of the repetitions. Then the daemon's memory, and
#    once per view a walk of src/ just after the kernel dropped its dentry
#    and inode caches (drop_caches=2): what a walk costs once the kernel has
#    forgotten the tree (memory pressure, or the TTL run out).
# 5. The write run, with `seal mount --writable` and bindfs read-write, the
#    order rotating the same way: a 1 GiB sequential write in 1 MiB writes
#    (write+close, then fsync apart), create+write+close of 20,000 4 KiB files
#    in 300 directories (each after a sync(2), so that what the previous view
#    left dirty is not written back in this one's time), `git status` of a 20,000-file repository (after > 1 s
#    and at once again) and `git add -A && git commit` of 1,000 changed files.
#    This run has a project of its own (wproject/, kept apart so that the
#    read run's tree and walks stay as they were). Each view writes in a
#    directory of its own and has a git repository of its own (gitw/NAME,
#    made natively): git's index records
#    inode numbers, and a FUSE view's differ from the disk's, so a shared
#    repository would be re-hashed at every switch of view.
# 6. Counting pass: restarts the seal daemon with SEAL_LOG=sealfs::requests=debug and
#    runs each workload once, counting the FUSE requests it caused by opcode
#    (read-only, then writable); then `strace -c -f` on the daemon for the
#    open loops, a walk and the small-file creates.
#
# Why a compiled helper: a native open costs a few microseconds; `date`-based
# shell timing cannot see that, and a Python loop adds about as much per call
# as the open itself, which would shrink every ratio towards 1.
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-5}
TREE=${BENCH_TREE:-/tmp/sealfs-mount-bench}
TARGET=${CARGO_TARGET_DIR:-target}
COUNT=${COUNT:-1}
RUNS=${RUNS:-reads,writes}

[[ $(id -u) == 0 ]] || { echo "bench-mount: run as root (FUSE mounts)" >&2; exit 2; }

echo "building seal and the helper (release)..." >&2
cargo build --release --quiet --bin seal --example mount_bench
SEAL="$PWD/$TARGET/release/seal"
[[ "$TARGET" = /* ]] && SEAL="$TARGET/release/seal"
HELPER="${SEAL%/seal}/examples/mount_bench"

PROJECT="$TREE/project"
SEAL_MP="$TREE/seal-view"
BINDFS_MP="$TREE/bindfs-view"
# The read run measures `seal mount --kernel-opens` too (seal-ko: the
# kernel opens files itself and keeps their pages).
SEAL_KO_MP="$TREE/seal-ko-view"
LOG="$TREE/daemon.log"
SEAL_PID=
SEAL_KO_PID=

cleanup() {
  set +e
  if declare -f stop_variants >/dev/null; then stop_variants; fi
  for mp in "$SEAL_MP" "$SEAL_KO_MP" "$BINDFS_MP"; do
    if grep -q " $mp " /proc/self/mountinfo; then umount "$mp" 2>/dev/null || umount -l "$mp"; fi
  done
  for pid in "$SEAL_PID" "$SEAL_KO_PID"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"; wait "$pid" 2>/dev/null
    fi
  done
  if [[ "${KEEP_TREE:-0}" != 1 ]]; then rm -rf "$TREE"; fi
}
trap cleanup EXIT

# Makes project DIR with `mount_bench ARGS... DIR` and `seal init`, unless
# MARKER says it was made to SPEC already.
make_project() { # marker spec dir helper-args...
  local marker=$1 spec=$2 dir=$3
  shift 3
  [[ -f "$marker" && "$(cat "$marker")" == "$spec" ]] && return 0
  echo "making $dir ..." >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  "$HELPER" "$@"
  (cd "$dir" && echo y | "$SEAL" init >/dev/null 2>&1)
  echo "$spec" >"$marker"
}
make_project "$TREE/.bench-spec" "v3 20000 small, 1 GiB ordinary, 1 GiB bundle, 10-file bundle, 2000-file bundle" \
  "$PROJECT" gen "$PROJECT"
# The write run's project: a git repository of 20,000 4 KiB files per view.
WPROJECT="$TREE/wproject"
VARIANT_NAMES=()
declare -A VARIANT_BIN=() VARIANT_PID=()
for v in ${VARIANTS:-}; do
  VARIANT_NAMES+=("${v%%=*}")
  VARIANT_BIN[${v%%=*}]=${v#*=}
  [[ -x "${v#*=}" ]] || { echo "bench-mount: variant ${v%%=*}: no binary at ${v#*=}" >&2; exit 2; }
done
make_project "$TREE/.bench-wspec" "w1 git trees of 20000 files: native seal bindfs ${VARIANT_NAMES[*]}" \
  "$WPROJECT" git-prep "$WPROJECT" native seal bindfs "${VARIANT_NAMES[@]}"
(cd "$PROJECT" && "$SEAL" verify) >&2
mkdir -p "$SEAL_MP" "$SEAL_KO_MP" "$BINDFS_MP"

# The write run mounts its own project, writable.
SEAL_PROJECT=$PROJECT
SEAL_OPTS=()
# Waits until the daemon PID (logging to LOG) serves its view; exits the
# script, with the log, when it dies or takes more than 10 s.
wait_serving() { # log pid what
  for _ in $(seq 200); do
    grep -q "serving the sealed view" "$1" && return 0
    kill -0 "$2" 2>/dev/null || { cat "$1" >&2; exit 1; }
    sleep 0.05
  done
  echo "$3 did not become ready" >&2; cat "$1" >&2; exit 1
}
start_seal() { # [env assignments...]
  : >"$LOG"
  (cd "$SEAL_PROJECT" && exec env "$@" "$SEAL" mount "$SEAL_MP" "${SEAL_OPTS[@]}" 2>>"$LOG") &
  SEAL_PID=$!
  wait_serving "$LOG" "$SEAL_PID" "seal mount"
}
stop_seal() {
  umount "$SEAL_MP"
  wait "$SEAL_PID" || { echo "seal mount exited with $?" >&2; exit 1; }
  SEAL_PID=
}

writable() { SEAL_PROJECT=$WPROJECT; SEAL_OPTS=(--writable); }

# Mounts each variant at $TREE/NAME-view like `seal` (same project and
# options) and adds it to VIEWS.
start_variants() {
  local name log
  for name in "${VARIANT_NAMES[@]}"; do
    log="$TREE/daemon-$name.log"
    : >"$log"
    mkdir -p "$TREE/$name-view"
    (cd "$SEAL_PROJECT" && exec "${VARIANT_BIN[$name]}" mount "$TREE/$name-view" "${SEAL_OPTS[@]}" 2>>"$log") &
    VARIANT_PID[$name]=$!
    wait_serving "$log" "${VARIANT_PID[$name]}" "variant $name"
    VIEWS+=("$name=$TREE/$name-view")
  done
}
stop_variants() {
  local name
  for name in "${!VARIANT_PID[@]}"; do
    if grep -q " $TREE/$name-view " /proc/self/mountinfo; then umount "$TREE/$name-view" 2>/dev/null || umount -l "$TREE/$name-view"; fi
    wait "${VARIANT_PID[$name]}" 2>/dev/null || true
    unset "VARIANT_PID[$name]"
  done
}
read_only() { SEAL_PROJECT=$PROJECT; SEAL_OPTS=(); }

BINDFS=no
if ! command -v bindfs >/dev/null; then
  echo "bindfs not installed; trying apt-get install -y bindfs" >&2
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bindfs >/dev/null 2>&1 ||
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bindfs >/dev/null 2>&1)) || true
fi
if command -v bindfs >/dev/null; then
  BINDFS="yes ($(bindfs --version 2>&1 | head -1))"
fi

# --- the read run -------------------------------------------------------------
run_reads() {
  VIEWS=("native=$PROJECT")
  start_seal
  VIEWS+=("seal=$SEAL_MP")
  KO_LOG="$TREE/daemon-ko.log"
  : >"$KO_LOG"
  (cd "$PROJECT" && exec "$SEAL" mount "$SEAL_KO_MP" --kernel-opens 2>>"$KO_LOG") &
  SEAL_KO_PID=$!
  wait_serving "$KO_LOG" "$SEAL_KO_PID" "seal mount --kernel-opens"
  VIEWS+=("seal-ko=$SEAL_KO_MP")
  if [[ "$BINDFS" != no ]]; then
    bindfs -r "$PROJECT" "$BINDFS_MP"
    VIEWS+=("bindfs=$BINDFS_MP")
  fi
  start_variants

  "$HELPER" run "${VIEWS[@]}" --reps "$REPS"
  # The goal: at most 32 MiB besides the snapshots (memfd pages, not mapped,
  # so not in the resident set) after the walks and the bundle loads.
  echo
  echo "seal daemon after the read run: $(grep -E '^(VmRSS|VmHWM)' /proc/"$SEAL_PID"/status | tr -s ' \t' ' ' | paste -sd, -)" \
    "(goal: RSS <= 32 MiB plus live snapshots; snapshots are memfd or private tmpfs pages outside the RSS)"
  echo
  echo "walk src, just after the kernel dropped its dentries and inodes (drop_caches=2; once per view):"
  VIEWS_SRC=()
  for v in "${VIEWS[@]}"; do VIEWS_SRC+=("${v}/src"); done
  "$HELPER" walk-cold "${VIEWS_SRC[@]}"

  if [[ "$BINDFS" != no ]]; then umount "$BINDFS_MP"; fi
  stop_variants
  stop_seal
  umount "$SEAL_KO_MP"
  wait "$SEAL_KO_PID" || { echo "seal mount --kernel-opens exited with $?" >&2; exit 1; }
  SEAL_KO_PID=
}

# --- the write run ------------------------------------------------------------
run_writes() {
  echo
  echo "writes (seal mount --writable; bindfs read-write):"
  writable
  start_seal
  VIEWS=("native=$WPROJECT" "seal=$SEAL_MP")
  if [[ "$BINDFS" != no ]]; then
    bindfs "$WPROJECT" "$BINDFS_MP"
    VIEWS+=("bindfs=$BINDFS_MP")
  fi
  start_variants
  "$HELPER" write-run "${VIEWS[@]}" --reps "$REPS"
  stop_variants
  if [[ "$BINDFS" != no ]]; then umount "$BINDFS_MP"; fi
  stop_seal
  read_only
}

echo >&2
echo "kernel $(uname -r), $(nproc) CPUs; bindfs: $BINDFS; reps: $REPS" >&2
if [[ ",$RUNS," == *,reads,* ]]; then run_reads; fi
if [[ ",$RUNS," == *,writes,* ]]; then run_writes; fi

[[ "$COUNT" == 1 ]] || exit 0

# --- counting pass ------------------------------------------------------------
echo
echo "FUSE requests per workload (seal mount, SEAL_LOG=sealfs::requests=debug; one run each):"
start_seal SEAL_LOG=sealfs::requests=debug
count() { # label workload [sleep-before]
  local label=$1 work=$2 pause=${3:-0}
  sleep "$pause"
  local before after
  before=$(wc -l <"$LOG")
  "$HELPER" workload "$work" "$SEAL_MP" seal
  sleep 0.3 # let asynchronous RELEASE / FORGET arrive
  after=$(wc -l <"$LOG")
  printf '  %-34s' "$label:"
  # (A workload the kernel answers alone logs no request: grep finds none.)
  sed -n "$((before + 1)),${after}p" "$LOG" | sed 's/\x1b\[[0-9;]*m//g' |
    { grep -oE 'sealfs::requests::[a-z]*: FUSE\([ 0-9]*\) ino 0x[0-9a-f]* [A-Z_]*' || true; } | awk '{print $NF}' |
    sort | uniq -c | sort -rn | awk '{printf " %s %s", $2, $1} END { if (NR == 0) printf " none"; print ""}'
}
"$HELPER" workload walk "$SEAL_MP" # warm
count "walk src, settled" walk 1.2
count "walk src, repeated" walk
count "open+read+close 20,000 files" read-small
count "1000 opens of the 4 KiB file" open-4k
count "100 opens in the 10-file bundle" open-bundle
count "load the 2,000-file bundle" load-wide
count "100 lstat of the 10-file bundle root" lstat-bundle-root
count "1 GiB ordinary sequential read" seq-ordinary
count "1 GiB bundle sequential read" seq-bundle
stop_seal

echo
echo "FUSE requests per write workload (seal mount --writable, SEAL_LOG=sealfs::requests=debug):"
writable
start_seal SEAL_LOG=sealfs::requests=debug
"$HELPER" workload git-status "$SEAL_MP" seal # warm
count "1 GiB sequential write" write-seq
count "create+write+close 20,000 files" write-small
count "rm -r of those 20,000 files" remove-small
count "git status, settled" git-status 1.2
count "git status, repeated" git-status
count "change 1,000 tracked files" git-modify
count "git add -A && git commit" git-commit
stop_seal
read_only

strace_daemon() { # label workload [prep-workload]
  echo
  echo "daemon system calls during: $1 (strace -c -f):"
  [[ -n "${3:-}" ]] && "$HELPER" workload "$3" "$SEAL_MP" seal
  strace -c -f -p "$SEAL_PID" -o "$TREE/strace.txt" 2>/dev/null &
  local st=$!
  sleep 0.5
  "$HELPER" workload "$2" "$SEAL_MP" seal
  sleep 0.3
  kill -INT "$st"
  wait "$st" 2>/dev/null || true
  sed -n '1,16p' "$TREE/strace.txt"
}
if command -v strace >/dev/null; then
  start_seal
  strace_daemon "1000 opens of the 4 KiB file" open-4k open-4k
  strace_daemon "100 opens in the 10-file bundle" open-bundle
  strace_daemon "100 lstat of the 10-file bundle root" lstat-bundle-root
  strace_daemon "walk src, repeated" walk walk
  stop_seal
  writable
  start_seal
  strace_daemon "create+write+close 20,000 files" write-small
  "$HELPER" workload remove-small "$SEAL_MP" seal
  stop_seal
  read_only
fi
