#!/usr/bin/env bash
# POSIX conformance of the writable view (issue 8): runs pjdfstest as root
#   (a) in a fresh directory on the native disk, and
#   (b) in an ordinary (not sealed, not an agent surface) directory of a
#       `seal mount --writable` view of a small sealed project,
# then compares them file by file. Not part of CI (it takes minutes and needs
# a pjdfstest you built yourself); the per-operation FUSE tests are.
#
#   sudo scripts/posix.sh PJDFSTEST_DIR
#
# PJDFSTEST_DIR is a directory where pjdfstest is ALREADY BUILT: the
# `pjdfstest` binary next to its `tests/` directory. This repository carries
# neither its code, nor a binary, nor steps that build it: build it by hand
# from the pjd/pjdfstest sources, following the README there (outside this
# repository).
#
# Environment:
#   SEAL=PATH              the seal binary (default: cargo build --release)
#   POSIX_VIEW_CMD="CMD"   the command that serves the view, split on
#                          whitespace; it runs in the project directory with
#                          the mountpoint appended, in the foreground, until
#                          unmounted. Default:
#                          "$SEAL mount --writable --allow-other --audit-log OUT/view-audit.jsonl"
#                          (--allow-other because pjdfstest switches to other
#                          uids). If this seal has no `mount --writable`, the
#                          read-only `seal mount` is used instead, loudly:
#                          every change then fails with EROFS.
#   POSIX_WORK=DIR         where the scratch directories go (default /var/tmp;
#                          must be the native disk, not tmpfs)
#   POSIX_OUT=DIR          where logs and results are kept (default target/posix)
#   POSIX_TESTS="a b"      what to run under PJDFSTEST_DIR/tests, directories
#                          or files, e.g. "chmod rename/00.t" (default: all)
#   POSIX_TIMEOUT=SECONDS  limit for each half's prove run (default 7200)
#
# Kept in POSIX_OUT: native.log and view.log (prove -rv output), *.stderr (the
# tests' stderr), native.tsv and view.tsv (one line per test file: file,
# pass / fail / not run, failing tests and problems; a file after a test that
# said "Bail out!" is not run, and not run is not a pass), view-daemon.log
# (the view command's output), view-audit.jsonl.
#
# Known exceptions: a test file that passes natively may fail in the view only
# if docs/SECURITY.md lists it, with its reason, on a line of exactly this form
# (the path as under PJDFSTEST_DIR):
#   - pjdfstest: tests/DIR/NN.t — reason
#
# Exit status: 0 when every test file that passes natively passes in the view
# (or is a listed exception) and the project's seal is intact afterwards; 1
# otherwise; 2 for a usage or set-up error (not root, no pjdfstest, the view
# did not come up, a run did not finish).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
  exit 2
}
die() {
  echo "posix: $*" >&2
  exit 2
}

[[ $# == 1 && $1 != -h && $1 != --help ]] || usage
PJD=$(cd "$1" 2>/dev/null && pwd) || die "$1: no such directory"
[[ -x "$PJD/pjdfstest" && -f "$PJD/tests/misc.sh" ]] ||
  die "$PJD has no built pjdfstest (expected $PJD/pjdfstest and $PJD/tests/misc.sh); build it by hand from the pjd/pjdfstest sources"
[[ $(id -u) == 0 ]] || die "run as root (pjdfstest needs it, and so do FUSE mounts for other uids)"
command -v prove >/dev/null || die "prove (perl's TAP harness) is not installed"
[[ -c /dev/fuse ]] || die "/dev/fuse is missing"

TIMEOUT=${POSIX_TIMEOUT:-7200}
OUT=${POSIX_OUT:-$REPO/target/posix}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK_PARENT=${POSIX_WORK:-/var/tmp}
TEST_PATHS=("$PJD/tests")
if [[ -n "${POSIX_TESTS:-}" ]]; then
  TEST_PATHS=()
  for d in $POSIX_TESTS; do
    [[ -e "$PJD/tests/$d" ]] || die "no $PJD/tests/$d"
    TEST_PATHS+=("$PJD/tests/$d")
  done
fi

if [[ -z "${SEAL:-}" ]]; then
  echo "posix: building seal (release)..." >&2
  (cd "$REPO" && cargo build --release --quiet --bin seal)
  SEAL=${CARGO_TARGET_DIR:-$REPO/target}/release/seal
fi
[[ -x "$SEAL" ]] || die "SEAL=$SEAL is not executable"
SEAL=$(cd "$(dirname "$SEAL")" && pwd)/$(basename "$SEAL")

VIEW_NOTE=""
if [[ -n "${POSIX_VIEW_CMD:-}" ]]; then
  read -ra VIEW_CMD <<<"$POSIX_VIEW_CMD"
elif "$SEAL" mount --help 2>&1 | grep -q -- '--writable'; then
  VIEW_CMD=("$SEAL" mount --writable --allow-other --audit-log "$OUT/view-audit.jsonl")
else
  VIEW_CMD=("$SEAL" mount --allow-other --audit-log "$OUT/view-audit.jsonl")
  VIEW_NOTE="this seal has no 'mount --writable': the view is READ-ONLY, so every change fails with EROFS"
fi

# --- scratch space, cleaned up on every exit path ------------------------------
WORK=
VIEW=
VIEW_PID=
mounted() { awk -v mp="$1" '$5 == mp { found = 1 } END { exit !found }' /proc/self/mountinfo; }
MAIN_PID=$BASHPID
cleanup() {
  local rc=$?
  # Subshells (command and process substitutions) may run this trap too when
  # set -e ends them; only the main shell owns the mount and the scratch space.
  [[ $BASHPID == "$MAIN_PID" ]] || exit "$rc"
  set +e
  cd /
  if [[ -n "$SUITE_PID" ]]; then
    kill -TERM -- "-$SUITE_PID" 2>/dev/null
    sleep 1
    kill -KILL -- "-$SUITE_PID" 2>/dev/null
    wait "$SUITE_PID" 2>/dev/null
  fi
  if [[ -n "$VIEW" ]] && mounted "$VIEW"; then
    umount "$VIEW" 2>/dev/null || umount -l "$VIEW"
  fi
  if [[ -n "$VIEW_PID" ]]; then
    for _ in $(seq 50); do kill -0 "$VIEW_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$VIEW_PID" 2>/dev/null; then
      echo "posix: the view command did not exit after the unmount; terminating it" >&2
      kill -TERM "$VIEW_PID"
      sleep 1
      kill -KILL "$VIEW_PID" 2>/dev/null
    fi
    wait "$VIEW_PID" 2>/dev/null
  fi
  # --one-file-system: never follow into a view that failed to go away.
  [[ -n "$WORK" ]] && rm -rf --one-file-system "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$WORK_PARENT"
WORK=$(mktemp -d "$WORK_PARENT/sealfs-posix.XXXXXX")
[[ "$WORK" != *[[:space:]]* ]] || die "POSIX_WORK must not contain white space (mountinfo escapes it)"
case $(stat -f -c %T "$WORK") in
tmpfs | ramfs | overlayfs) echo "posix: WARNING: $WORK is on $(stat -f -c %T "$WORK"), not the native disk" >&2 ;;
esac

# Runs the suite with DIR as the working directory: prove -rv's output to
# OUT/LABEL.log, the tests' stderr apart to OUT/LABEL.stderr (prove's stdout is
# block-buffered, so stderr mixed into it could split the lines parsed below).
# `timeout` makes prove and every test it starts one process group (SUITE_PID),
# which it kills on time-out and cleanup kills on any early exit, so nothing
# is left running in a directory about to be unmounted or removed. The suite
# runs in the background so that `wait` lets INT/TERM reach the traps at once.
#
# pjdfstest plans some checks only for some file system types, which its conf
# reads from `df -PT .` (rename/22.t, ctime on rename: EXT4, UFS, ZFS). The
# view serves the semantics of the file system under the project, so its half
# is run as that type (AS_TYPE): a `df` first on PATH reports it for the view,
# and both halves plan the same tests.
SUITE_PID=
declare -A FSTYPE # label -> the file system type pjdfstest's conf derives (df -PT)
run_suite() { # label dir [AS_TYPE]
  local label=$1 dir=$2 as_type=${3:-} start=$SECONDS path=$PATH
  if [[ -n "$as_type" ]]; then
    local shim="$WORK/shim-$label"
    mkdir -p "$shim"
    printf '#!/bin/sh\n%s "$@" | awk -v t=%q '"'"'NR > 1 && $2 == "fuse.seal" { $2 = t } { print }'"'"'\n' \
      "$(command -v df)" "$as_type" >"$shim/df"
    chmod +x "$shim/df"
    path="$shim:$PATH"
  fi
  FSTYPE[$label]=$(cd "$dir" && PATH=$path df -PT . | awk 'END { print toupper($2) }')
  echo "posix: $label: running pjdfstest in $dir (fs type as pjdfstest sees it: ${FSTYPE[$label]})" >&2
  (cd "$dir" && umask 022 && PATH=$path exec timeout -k 10 "$TIMEOUT" prove -rv "${TEST_PATHS[@]}") >"$OUT/$label.log" 2>"$OUT/$label.stderr" &
  SUITE_PID=$!
  wait "$SUITE_PID" || true
  SUITE_PID=
  echo "posix: $label: finished in $((SECONDS - start)) s" >&2
}

# (a) native.
mkdir "$WORK/native"
run_suite native "$WORK/native"

# (b) the view: a small sealed project (a skill and an instruction file, both
# pinned) and the suite in its ordinary directory work/.
PROJECT="$WORK/project"
VIEW="$WORK/view"
mkdir -p "$PROJECT/.claude/skills/probe" "$PROJECT/work" "$VIEW"
printf -- '---\nname: probe\n---\nA pinned skill.\n' >"$PROJECT/.claude/skills/probe/SKILL.md"
printf '# Project rules\n' >"$PROJECT/CLAUDE.md"
(cd "$PROJECT" && echo y | "$SEAL" init >/dev/null 2>&1) || die "seal init failed in $PROJECT"
(cd "$PROJECT" && "$SEAL" verify --quiet) || die "the fresh project does not verify"
why=$("$SEAL" why -C "$PROJECT" work/pjdfstest_x 2>&1) || true
grep -q '^class: *ordinary' <<<"$why" || die "work/ of the project is not an ordinary path: $why"
LOCK_SUM=$(sha256sum <"$PROJECT/seal.json")

[[ -z "$VIEW_NOTE" ]] || echo "posix: WARNING: $VIEW_NOTE" >&2
echo "posix: view command: ${VIEW_CMD[*]} $VIEW" >&2
: >"$OUT/view-daemon.log"
rm -f "$OUT/view-audit.jsonl"
(cd "$PROJECT" && exec "${VIEW_CMD[@]}" "$VIEW") >>"$OUT/view-daemon.log" 2>&1 &
VIEW_PID=$!
for _ in $(seq 200); do
  mounted "$VIEW" && break
  kill -0 "$VIEW_PID" 2>/dev/null || {
    cat "$OUT/view-daemon.log" >&2
    die "the view command exited before mounting"
  }
  sleep 0.05
done
mounted "$VIEW" || die "the view did not appear at $VIEW within 10 s"
[[ -d "$VIEW/work" ]] || die "the view has no work/ directory"
run_suite view "$VIEW/work" "$(df -PT "$PROJECT" | awk 'END { print $2 }')"
cd /
umount "$VIEW" || die "umount $VIEW failed"
VIEW_STATUS=0
wait "$VIEW_PID" || VIEW_STATUS=$?
VIEW_PID=

# The suite touched only work/: the lockfile and every bundle must be intact.
SEAL_BROKEN=()
[[ "$(sha256sum <"$PROJECT/seal.json")" == "$LOCK_SUM" ]] || SEAL_BROKEN+=("seal.json changed")
(cd "$PROJECT" && "$SEAL" verify --quiet) >/dev/null 2>&1 || SEAL_BROKEN+=("seal verify fails")

# --- per-file results ----------------------------------------------------------
# Prints the lines of stdin that start with PJD/tests/, without that prefix.
relative() { awk -v p="$PJD/tests/" 'index($0, p) == 1 { print substr($0, length(p) + 1) }'; }
# The test files prove -r runs: every *.t under the given paths.
FILES=$(find "${TEST_PATHS[@]}" -name '*.t' -type f | relative | LC_ALL=C sort -u)

# Reads prove's "Test Summary Report" (TAP::Formatter::Base): a header line
# per problem file, "(Wstat: W Tests: N Failed: F)", then "Failed tests:"
# ranges (wrapped onto lines indented by 16 spaces), "TODO passed:" (not a
# failure), "Non-zero exit/wait status:", "Parse errors:" (e.g. a bad plan,
# wrapped likewise). Prints "file<TAB>details" for every failed file, and a
# last line "#<TAB>result<TAB>tests run<TAB>tests failed".
summary_of() { # log
  awk -v prefix="$PJD/tests/" '
    function flush() {
      if (cur != "" && (failed[cur] > 0 || problem[cur] != ""))
        printf "%s\t%d of %d failed%s%s\n", cur, failed[cur], run[cur],
          (ranges[cur] != "" ? ": tests " ranges[cur] : ""), problem[cur]
    }
    /^Test Summary Report$/ { insum = 1; next }
    /^Files=[0-9]+, Tests=[0-9]+,/ {
      flush(); cur = ""; insum = 0
      sub(/^Files=[0-9]+, Tests=/, ""); tests = $0 + 0; next
    }
    /^Result: / { result = $2; next }
    !insum { next }
    match($0, /\(Wstat: .* Tests: [0-9]+ Failed: [0-9]+\)$/) {
      flush()
      cur = substr($0, 1, RSTART - 1); sub(/ +$/, "", cur)
      if (index(cur, prefix) == 1) cur = substr(cur, length(prefix) + 1)
      h = substr($0, RSTART)
      sub(/^.* Tests: /, "", h); run[cur] = h + 0
      sub(/^[0-9]+ Failed: /, "", h); failed[cur] = h + 0; nfailed += h + 0
      w = substr($0, RSTART); sub(/^\(Wstat: /, "", w); sub(/ Tests: .*/, "", w)
      # An exit is reported on its own line below; a signal only here.
      if (w != "0" && w !~ /exited/) problem[cur] = problem[cur] "; wait status " w
      field = ""; next
    }
    /^  Failed tests?: / { sub(/^  Failed tests?: +/, ""); ranges[cur] = $0; field = "failed"; next }
    /^  TODO passed: / { field = "todo"; next }
    /^  Non-zero exit status: / { problem[cur] = problem[cur] "; exit status " $NF; field = ""; next }
    /^  Non-zero wait status: / { field = ""; next } # already in the header
    /^  Parse errors: / { sub(/^  Parse errors: /, ""); problem[cur] = problem[cur] "; " $0; field = "parse"; next }
    /^                / {
      line = $0; sub(/^ +/, "", line)
      if (field == "failed") ranges[cur] = ranges[cur] ", " line
      else if (field == "parse") problem[cur] = problem[cur] "; " line
      next
    }
    END {
      flush()
      printf "#\t%s\t%d\t%d\n", (result == "" ? "INCOMPLETE" : result), tests, nfailed
    }
  ' "$1"
}

# Writes OUT/LABEL.tsv (file, pass/fail/not run, details); prints the totals:
# prove's result, tests passed/run, files passed/all.
tabulate() { # label
  local label=$1 summary tail result tests nfailed files_run
  summary=$(summary_of "$OUT/$label.log")
  tail=$(tail -1 <<<"$summary")
  IFS=$'\t' read -r _ result tests nfailed <<<"$tail"
  # A file prove never got to (a run cut short by the timeout) is "not run".
  files_run=$({ grep -E '\.t \.+ ?$' "$OUT/$label.log" || true; } | sed -E 's/ \.+ ?$//' | relative | LC_ALL=C sort -u)
  LC_ALL=C join -t $'\t' -a 1 -e '' -o 0,2.2 <(echo "$FILES") <(head -n -1 <<<"$summary" | LC_ALL=C sort -t $'\t' -k1,1) |
    while IFS=$'\t' read -r file details; do
      if [[ -n "$details" ]]; then
        printf '%s\tfail\t%s\n' "$file" "$details"
      elif [[ "$result" != INCOMPLETE ]] && grep -qxF "$file" <<<"$files_run"; then
        printf '%s\tpass\t\n' "$file"
      else
        printf '%s\tnot run\t\n' "$file"
      fi
    done >"$OUT/$label.tsv"
  echo "$result $((tests - nfailed))/$tests $(grep -c $'\tpass\t' "$OUT/$label.tsv" || true)/$(wc -l <"$OUT/$label.tsv")"
}
read -r native_result native_tests native_files < <(tabulate native)
read -r view_result view_tests view_files < <(tabulate view)
[[ -n "$native_files" && -n "$view_files" ]] || die "could not tabulate the results (see $OUT)"

# --- report --------------------------------------------------------------------
declare -A NATIVE VIEWED # test file -> pass / fail / not run
while IFS=$'\t' read -r file stat _; do NATIVE[$file]=$stat; done <"$OUT/native.tsv"
while IFS=$'\t' read -r file stat _; do VIEWED[$file]=$stat; done <"$OUT/view.tsv"
echo
echo "pjdfstest: $PJD ($(cd "$PJD" && git describe --always --dirty 2>/dev/null || echo 'not a git checkout'))"
echo "kernel $(uname -r); view command: ${VIEW_CMD[*]}"
# The view's half runs as the type of the file system under the project (see
# run_suite), so both plan the same tests.
echo "fs type as pjdfstest sees it: native ${FSTYPE[native]}, view ${FSTYPE[view]} (the view is fuse.seal, run as the type under the project)"
[[ -z "$VIEW_NOTE" ]] || echo "NOTE: $VIEW_NOTE"
echo
printf '%-22s %-16s %-16s\n' "" native view
printf '%-22s %-16s %-16s\n' "test files passed" "$native_files" "$view_files"
printf '%-22s %-16s %-16s\n' "tests passed" "$native_tests" "$view_tests"
printf '%-22s %-16s %-16s\n' "prove result" "$native_result" "$view_result"
echo
printf '%-22s %-16s %-16s\n' "files passed, by dir" native view
for dir in $(cut -d/ -f1 <<<"$FILES" | uniq); do
  n=0 v=0 t=0
  while IFS=$'\t' read -r file nstat; do
    t=$((t + 1))
    if [[ "$nstat" == pass ]]; then n=$((n + 1)); fi
    if [[ "${VIEWED[$file]}" == pass ]]; then v=$((v + 1)); fi
  done < <(awk -F'\t' -v d="$dir/" 'index($1, d) == 1 { print $1 "\t" $2 }' "$OUT/native.tsv")
  printf '  %-20s %-16s %-16s\n' "$dir" "$n/$t" "$v/$t"
done

# Exceptions: "- pjdfstest: tests/DIR/NN.t — reason" in docs/SECURITY.md.
EXCEPTIONS=$(sed -nE 's|^- pjdfstest: tests/([^ ]+\.t)( .*)?$|\1|p' "$REPO/docs/SECURITY.md" | LC_ALL=C sort -u)
# One line per file on the terminal; view.tsv keeps every test number.
short() { if [[ ${#1} -gt 150 ]]; then echo "${1:0:150}... (all in view.tsv)"; else echo "$1"; fi; }
regressions=0 excused=0
echo
echo "test files that pass natively but fail in the view:"
while IFS=$'\t' read -r file vstat details; do
  [[ "${NATIVE[$file]}" == pass && "$vstat" != pass ]] || continue
  if grep -qxF "$file" <<<"$EXCEPTIONS"; then
    excused=$((excused + 1))
    printf '  %-20s %s (listed exception in docs/SECURITY.md)\n' "$file" "$(short "${details:-$vstat}")"
  else
    regressions=$((regressions + 1))
    printf '  %-20s %s\n' "$file" "$(short "${details:-$vstat}")"
  fi
done <"$OUT/view.tsv"
[[ $((regressions + excused)) -gt 0 ]] || echo "  none"
natfail=$(awk -F'\t' '$2 != "pass" { printf "  %s %s %s\n", $1, $2, $3 }' "$OUT/native.tsv")
[[ -z "$natfail" ]] || printf '\ntest files that do not pass natively (not held against the view):\n%s\n' "$natfail"
stale=$(while read -r file; do
  if [[ -n "$file" && "${NATIVE[$file]:-}" == pass && "${VIEWED[$file]:-}" == pass ]]; then echo "  $file"; fi
done <<<"$EXCEPTIONS")
[[ -z "$stale" ]] || printf '\nlisted exceptions that pass in the view now (drop them from docs/SECURITY.md):\n%s\n' "$stale"

for label in native view; do
  # A test that says "Bail out!" stops prove: the files after it are "not run".
  if grep -q '^Bailout called' "$OUT/$label.log"; then
    printf '\n%s: prove stopped early: %s\n' "$label" "$(grep -m1 '^Bailout called' "$OUT/$label.log")"
  fi
done

echo
echo "view command exit status after umount: $VIEW_STATUS"
echo "seal.json unchanged and seal verify passes afterwards: $([[ ${#SEAL_BROKEN[@]} == 0 ]] && echo yes || echo "NO (${SEAL_BROKEN[*]})")"
if [[ -f "$OUT/view-audit.jsonl" ]]; then
  echo "audit log: $(wc -l <"$OUT/view-audit.jsonl") lines, $(grep -c '"deny-write"' "$OUT/view-audit.jsonl" || true) deny-write"
fi
echo "logs and per-file results: $OUT/{native,view}.{log,stderr,tsv}, $OUT/view-daemon.log"

if [[ "$native_result" == INCOMPLETE || "$view_result" == INCOMPLETE ]]; then
  echo "posix: a run did not finish (timeout after ${TIMEOUT}s, or prove failed); see the logs" >&2
  exit 2
fi
if [[ $regressions -gt 0 || ${#SEAL_BROKEN[@]} -gt 0 ]]; then
  echo "RESULT: FAIL ($regressions unlisted test file(s) regress in the view$([[ ${#SEAL_BROKEN[@]} == 0 ]] || echo "; the seal broke: ${SEAL_BROKEN[*]}"))"
  exit 1
fi
echo "RESULT: PASS (every test file that passes natively passes in the view$([[ $excused == 0 ]] || echo ", $excused listed exception(s)"))"
