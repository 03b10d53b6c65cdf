#!/usr/bin/env bash
# Benchmarks reading every file of a real repository through the view (issue
# 25's row: at most 1.3x native), natively and under `seal run`, side by side
# in one interleaved run. Prints a ratio table (this machine is shared and
# noisy: compare the columns of one run, not runs) and the FUSE requests of
# one read under `seal run`.
#
#   scripts/bench-repo.sh DIR          # DIR: an extracted repository (fetch it
#                                      # yourself; it is copied, never written)
#   ROUNDS=7 scripts/bench-repo.sh DIR # rounds per mode (default 5), medians
#   SEAL=path/to/seal scripts/...      # a seal binary instead of building one
#
# The copy (without DIR's .git and seal.json) gets a fresh `git init`, one commit and
# `seal init` (answered `y`), so every agent extension in it is pinned.
# "Read" is `cat` of every file outside .git, through `find` and `xargs`;
# each run reads twice: "first" in a view the kernel has not seen yet (the
# native page cache is warm, as the view's disk is), "again" in the same
# view. The modes: natively; `seal run` (writable, the mode agents get);
# `seal run --read-only`; and `seal run --read-only --kernel-opens`, the
# opt-in mode in which the kernel opens files itself.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
. scripts/bench-lib.sh
rounds=${ROUNDS:-5}
[ $# = 1 ] && [ -d "$1" ] || { echo "usage: scripts/bench-repo.sh DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "bench-repo: run as root (seal run serves FUSE and builds namespaces)" >&2
  exit 2
fi
if [ -z "${SEAL:-}" ]; then
  cargo build --release --quiet --bin seal
  SEAL=$repo/target/release/seal
fi

dir=$(mktemp -d /tmp/sealfs-bench-repo.XXXXXX)
trap 'rm -rf "$dir"' EXIT
project=$dir/project
mkdir -p "$project"
tar -C "$src" --exclude=./.git --exclude=./seal.json -cf - . | tar -C "$project" -xf -
git -C "$project" init -q
git -C "$project" add -A
git -C "$project" -c user.email=bench@example.invalid -c user.name=bench \
  -c commit.gpgsign=false commit -qm "bench: the repository"
(cd "$project" && echo y | "$SEAL" init >/dev/null 2>&1) || {
  echo "bench-repo: seal init failed in the copy of $src" >&2
  exit 2
}
(cd "$project" && "$SEAL" verify >/dev/null) || {
  echo "bench-repo: the copy does not verify" >&2
  exit 2
}
files=$(cd "$project" && find . -path ./.git -prune -o -type f -print | wc -l)
bytes=$(cd "$project" && du -sb --exclude=.git . | cut -f1)

# Reads every file twice; prints "first SECONDS" and "again SECONDS".
cat > "$dir/read.sh" <<'EOF'
for pass in first again; do
  [ -z "${SEAL_BENCH_MARK:-}" ] || echo "@@step $pass" >&2
  start=$EPOCHREALTIME
  find . -path ./.git -prune -o -type f -print0 | xargs -0 cat > /dev/null
  end=$EPOCHREALTIME
  echo "$pass $(python3 -c "print($end - $start)")"
done
EOF

modes=(native run ro kernel-opens)
results=$dir/results
: > "$results"
measure() { # MODE
  local out
  case $1 in
    native) out=$(cd "$project" && bash "$dir/read.sh") ;;
    run) out=$(cd "$project" && "$SEAL" run -- bash "$dir/read.sh" 2>/dev/null) ;;
    ro) out=$(cd "$project" && "$SEAL" run --read-only -- bash "$dir/read.sh" 2>/dev/null) ;;
    kernel-opens) out=$(cd "$project" && "$SEAL" run --read-only --kernel-opens -- bash "$dir/read.sh" 2>/dev/null) ;;
  esac
  printf '%s\n' "$out" | sed "s/^/$1 /" >> "$results"
}
echo "== $rounds rounds of: ${modes[*]} (order alternating), $files files" >&2
interleave "$rounds" measure "${modes[@]}"

count=$dir/requests.log
(cd "$project" && SEAL_LOG=sealfs::requests=debug SEAL_BENCH_MARK=1 "$SEAL" run -- bash "$dir/read.sh" \
  >/dev/null 2>"$count") || true

python3 - "$results" "$(basename "$src")" "$files" "$bytes" "$(git -C "$repo" rev-parse --short HEAD)" <<'PY'
import collections, statistics, sys
results, name, files, size, commit = sys.argv[1:]
times = collections.defaultdict(list)
for line in open(results):
    mode, step, secs = line.split()
    times[(mode, step)].append(float(secs))
med = {k: statistics.median(v) for k, v in times.items()}
modes = [("native", "native"), ("run", "seal run"), ("ro", "run --read-only"),
         ("kernel-opens", "run --read-only --kernel-opens")]
print(f"reading every file of {name} ({files} files, {int(size) / 1e6:.0f} MB), commit {commit}, "
      "medians (ms) and ratio to native")
print(f"{'mode':<34}{'first':>10}{'again':>10}{'first ×':>10}{'again ×':>10}")
for mode, label in modes:
    first, again = med[(mode, "first")], med[(mode, "again")]
    ratio = lambda s, v: f"{v / med[('native', s)]:>10.2f}"
    print(f"{label:<34}{first * 1000:>10.1f}{again * 1000:>10.1f}{ratio('first', first)}{ratio('again', again)}")
PY
python3 scripts/bench-requests.py "$count" "of one seal run,"
