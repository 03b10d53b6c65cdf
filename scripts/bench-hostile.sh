#!/usr/bin/env bash
# Hostile trees (issue 13): does verification cost grow linearly with the
# tree, whatever its shape? Prints one table per shape with the time at each
# size and the ratio to the previous size (sizes double, so linear means
# about 2x; the old cubic walk showed 8x), old binary next to the new one.
#
#   scripts/bench-hostile.sh                 # all shapes, REPS=3 medians
#   SHAPES="chain wide" scripts/bench-hostile.sh
#   SHAPES=fair scripts/bench-hostile.sh     # reads of an approved skill while a
#                                            # hostile tree is listed (FUSE mount)
#   SEAL_OLD=/path/to/old/seal scripts/...   # the binary to compare with
#                                            # (default: the main checkout's)
#
# Columns:
#   verify   `seal verify --quiet` (the CLI: discovery, has-a-trackable-file
#            for unrecorded roots, a full hash of recorded ones)
#   why      `seal why ROOT`: one full verification of that root, the call the
#            mount made at every open and listing (verify_key)
#   stop     the core's verdict-only verification (verify_key_with with
#            AfterProof::Stop, examples/hostile_bench.rs), what the mount needs
# Both binaries are debug builds (the main checkout only has a debug build);
# ratios, not absolute times, are the point. Times are CPU seconds (user +
# system, all threads) unless METRIC=wall; a process start costs ~0.01 s, so
# ratios between the smallest sizes are noise. A run longer than TIMEOUT
# seconds (default 60) is cut and shown as ">T"; larger sizes of that column
# are then skipped. Trees live under BENCH_DIR (default /dev/shm when it
# exists: building 100,000 files on a busy disk takes minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

REPS=${REPS:-3}
TIMEOUT=${TIMEOUT:-60}
METRIC=${METRIC:-cpu}
OLD=${SEAL_OLD:-/work/main/target/debug/seal}
SHAPES=${SHAPES:-"chain pinned-chain wide long-names bundle fair"}
FAIR_MIB=${FAIR_MIB:-100}
FAIR_SECONDS=${FAIR_SECONDS:-10}
if [[ -z "${BENCH_DIR:-}" ]]; then
  if [[ -d /dev/shm ]]; then BENCH_DIR=/dev/shm/sealfs-hostile; else BENCH_DIR=/tmp/sealfs-hostile; fi
fi
TARGET=${CARGO_TARGET_DIR:-target}

echo "metric: $METRIC seconds, median of $REPS" >&2
echo "building seal and examples/hostile_bench (debug)..." >&2
cargo build --quiet --bin seal --example hostile_bench
NEW="$TARGET/debug/seal"
DRV="$TARGET/debug/examples/hostile_bench"
[[ -x "$OLD" ]] || { echo "bench-hostile: no old binary at $OLD; old columns skipped" >&2; OLD=""; }
mkdir -p "$BENCH_DIR"
P="$BENCH_DIR/p"
trap 'umount -l "$BENCH_DIR/m" 2>/dev/null || true; rm -rf "$P"' EXIT

# Sets T to the median of REPS runs of "$@" (output discarded) in seconds of
# METRIC: cpu (user + system of the command and its threads, the default: on
# a shared machine wall time mostly measures the neighbours) or wall; ">T" if
# a run hit the timeout. RC is the last exit code.
timed() {
  local times=() tf
  tf=$(mktemp)
  for ((i = 0; i < REPS; i++)); do
    set +e
    { TIMEFORMAT="%R %U %S"; time timeout "$TIMEOUT" "$@" >/dev/null 2>&1; } 2>"$tf"
    RC=$?
    set -e
    if ((RC == 124)); then T=">$TIMEOUT"; rm -f "$tf"; return; fi
    times+=("$(awk -v m="$METRIC" '{ printf "%.4f", (m == "wall") ? $1 : $2 + $3 }' "$tf")")
  done
  rm -f "$tf"
  T=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}

# One table cell: a time and its ratio to the previous size in that column.
# Columns remember their previous value in PREV[col]; a timed-out column
# stays skipped ("-") for larger sizes.
declare -A PREV SKIP
cell() {
  local col=$1 value=$2 ratio="" mark=${3:-}
  if [[ "$value" == ">"* ]]; then SKIP[$col]=1; fi
  local prev=${PREV[$col]:-}
  if [[ -n "$prev" && "$prev" != ">"* && "$value" != ">"* && "$value" != "-" ]]; then
    ratio=$(awk -v a="$value" -v b="$prev" 'BEGIN { if (b > 0) printf "%.1fx", a / b }')
  fi
  PREV[$col]=$value
  printf ' %s%s | %s |' "$value" "$mark" "$ratio"
}
skip() { [[ -n "${SKIP[$1]:-}" || ( "$1" == old* && -z "$OLD" ) ]]; }
# `seal` with an exit code to expect; a different one is marked "!N".
bin_cell() {
  local col=$1 want=$2; shift 2
  if skip "$col"; then printf ' - | |'; return; fi
  timed "$@"
  local mark=""
  if [[ "$T" != ">"* && "$RC" != "$want" ]]; then mark=" !$RC"; fi
  cell "$col" "$T" "$mark"
}
core_cell() {
  local col=$1 key=$2
  local out wall cpu state finish bytes
  out=$("$DRV" core "$P" "$key" stop "$REPS")
  read -r wall cpu state finish bytes <<<"$out"
  local t=$cpu
  [[ "$METRIC" == wall ]] && t=$wall
  cell "$col" "$t" " ($state, ${bytes} B read)"
}
reset() { PREV=(); SKIP=(); }
pin() { echo y | "$NEW" -C "$P" pin >/dev/null 2>&1; }

# One table of a pinned tree at growing sizes: BUILD SIZE makes the tree, then
# each row times `seal verify` (old and new binary) and the core's
# verdict-only verification of KEY.
pinned_table() {
  local title=$1 column=$2 key=$3 build=$4 size
  shift 4
  reset
  echo
  echo "### $title"
  echo "| $column | old verify | x | new verify | x | new stop | x |"
  echo "|---|---|---|---|---|---|---|"
  for size in "$@"; do
    "$build" "$size"
    pin
    printf '| %s |' "$size"
    bin_cell oldv 0 "$OLD" -C "$P" verify --quiet
    bin_cell newv 0 "$NEW" -C "$P" verify --quiet
    core_cell stop "$key"
    echo
  done
}
chain_of_1() { "$DRV" chain "$P" "$1" 1; }
chain_of_255() { "$DRV" chain "$P" "$1" 255; }
one_wide_dir() { "$DRV" wide "$P" "$1"; }

for shape in $SHAPES; do
  reset
  case $shape in
  chain)
    echo
    echo "### Unpinned directory chain under .claude/skills/evil (block), file at the bottom"
    echo "| depth | old verify | x | new verify | x | old why | x | new why | x | new stop | x |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for d in 100 200 400 800 1600 3200 6400 12800; do
      "$DRV" chain "$P" "$d" 1
      printf '| %s |' "$d"
      bin_cell oldv 1 "$OLD" -C "$P" verify --quiet
      bin_cell newv 1 "$NEW" -C "$P" verify --quiet
      bin_cell oldw 0 "$OLD" -C "$P" why "$P/.claude/skills/evil"
      bin_cell neww 0 "$NEW" -C "$P" why "$P/.claude/skills/evil"
      core_cell stop ./.claude/skills/evil
      echo
    done
    ;;
  pinned-chain)
    pinned_table "The same chain, pinned (a full hash of a recorded deep bundle)" \
      depth ./.claude/skills/evil chain_of_1 100 200 400 800 1600 3200 6400 12800
    ;;
  wide)
    pinned_table "One directory of N files, pinned" \
      entries ./.claude/skills/wide one_wide_dir 10000 20000 40000 80000
    ;;
  long-names)
    pinned_table "Chain of 255-byte names, pinned (paths pass PATH_MAX at depth 16; !N: exit code N, not 0)" \
      depth ./.claude/skills/evil chain_of_255 10 20 40 80 160 320 640
    ;;
  bundle)
    echo
    echo "### A bundle of N files (100 per directory), pinned; then a 20 GB sparse file added"
    echo "| files | old verify | x | new verify | x | old why | x | new why | x | new stop | x | stop, 20 GB added | x |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for n in 25000 50000 100000; do
      "$DRV" bundle "$P" "$n"
      pin
      printf '| %s |' "$n"
      bin_cell oldv 0 "$OLD" -C "$P" verify --quiet
      bin_cell newv 0 "$NEW" -C "$P" verify --quiet
      bin_cell oldw 0 "$OLD" -C "$P" why "$P/.claude/skills/big"
      bin_cell neww 0 "$NEW" -C "$P" why "$P/.claude/skills/big"
      core_cell stop ./.claude/skills/big
      truncate -s 20G "$P/.claude/skills/big/d0000/huge.bin"
      core_cell huge ./.claude/skills/big
      echo
    done
    ;;
  fair)
    # Needs a FUSE mount (root or fusermount3). Release build: the bound is
    # about the product, not the unoptimised build.
    cargo build --quiet --release --bin seal --example hostile_bench
    REL_SEAL="$TARGET/release/seal"
    REL_DRV="$TARGET/release/examples/hostile_bench"
    "$REL_DRV" chain "$P" 3000 1
    mv "$P/.claude/skills/evil" "$P/.claude/evil.aside"
    mkdir -p "$P/.claude/skills/good" "$P/.claude/skills/heavy"
    for i in 0 1 2 3 4 5 6 7 8; do
      printf 'approved file %s\n%.0s' $(seq 1 60 | sed "s/.*/$i/") >"$P/.claude/skills/good/f$i.md"
    done
    printf 'good\n' >"$P/.claude/skills/good/SKILL.md"
    head -c $((FAIR_MIB * 1048576)) /dev/urandom >"$P/.claude/skills/heavy/blob.bin"
    printf 'heavy\n' >"$P/.claude/skills/heavy/SKILL.md"
    pin
    mv "$P/.claude/evil.aside" "$P/.claude/skills/evil"
    M="$BENCH_DIR/m"
    mkdir -p "$M"
    "$REL_SEAL" -C "$P" mount "$M" 2>"$BENCH_DIR/mount.log" &
    MOUNT_PID=$!
    for _ in $(seq 100); do grep -q " $M fuse.seal " /proc/mounts && break; sleep 0.1; done
    grep -q " $M fuse.seal " /proc/mounts || { echo "bench-hostile: the mount did not come up" >&2; cat "$BENCH_DIR/mount.log" >&2; exit 1; }
    echo
    echo "### Reads of an approved 10-file skill while six processes list .claude/skills"
    echo "Each lister first renames a same-bytes SKILL.md into a pinned ${FAIR_MIB} MiB bundle (so every"
    echo "listing hashes it in full) next to an unpinned chain 3,000 directories deep. Stated bound: a"
    echo "read of the approved skill takes at most 50 ms (release build, ${FAIR_SECONDS} s per row)."
    echo "| load | reads | p50 ms | p99 ms | max ms | p99 x alone | listings | within 50 ms |"
    echo "|---|---|---|---|---|---|---|---|"
    ALONE_P99=""
    for load in alone listers; do
      STOP="$BENCH_DIR/stop"; rm -f "$STOP" "$BENCH_DIR"/listed-*
      LISTERS=()
      if [[ $load == listers ]]; then
        for i in 1 2 3 4 5 6; do
          (
            while [[ ! -e $STOP ]]; do
              printf 'heavy\n' >"$P/.claude/heavy-$i.tmp"
              mv "$P/.claude/heavy-$i.tmp" "$P/.claude/skills/heavy/SKILL.md"
              ls -l "$M/.claude/skills" >/dev/null 2>&1 || true
              echo >>"$BENCH_DIR/listed-$i"
            done
          ) &
          LISTERS+=($!)
        done
        sleep 1
      fi
      read -r n p50 p99 max < <("$REL_DRV" reads "$M/.claude/skills/good" "$FAIR_SECONDS")
      touch "$STOP"
      for l in "${LISTERS[@]}"; do wait "$l" || true; done
      listed=$( (cat "$BENCH_DIR"/listed-* 2>/dev/null || true) | wc -l)
      [[ -z "$ALONE_P99" ]] && ALONE_P99=$p99
      ratio=$(awk -v a="$p99" -v b="$ALONE_P99" 'BEGIN { if (b > 0) printf "%.1fx", a / b }')
      within=$(awk -v m="$max" 'BEGIN { print (m <= 50) ? "yes" : "NO" }')
      echo "| $load | $n | $p50 | $p99 | $max | $ratio | $listed | $within |"
    done
    umount "$M"
    wait "$MOUNT_PID" || true
    ;;
  *) echo "bench-hostile: unknown shape $shape" >&2; exit 2 ;;
  esac
done
