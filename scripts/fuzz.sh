#!/usr/bin/env bash
# Fuzzes the lockfile parser and the pattern and path rules for MINUTES
# minutes (default 5) with the proptest harness in tests/fuzz_parser.rs (there
# is no nightly toolchain for cargo-fuzz here). Not part of CI.
#
#   scripts/fuzz.sh          # 5 minutes
#   scripts/fuzz.sh 30       # 30 minutes
#   FUZZ_CASES=500 scripts/fuzz.sh 1   # smaller batches
#
# The four targets (arbitrary and mutated bytes, structured near-valid JSON,
# patterns, paths) run side by side on every core; each gets an equal share
# of MINUTES x cores. A failure prints the shrunk input and exits non-zero;
# add it to tests/lockfile_rules.rs as a named regression test.
set -euo pipefail
cd "$(dirname "$0")/.."

MINUTES=${1:-5}
[[ "$MINUTES" =~ ^[0-9]+$ && "$MINUTES" -gt 0 ]] || { echo "usage: $0 [MINUTES]" >&2; exit 2; }
TARGETS=4
THREADS=$(nproc)
((THREADS > TARGETS)) && THREADS=$TARGETS
PER_TARGET=$((MINUTES * 60 * THREADS / TARGETS))

echo "building the fuzz harness (release)..." >&2
cargo test --release --test fuzz_parser --no-run --quiet
echo "fuzzing for ${MINUTES} min: ${TARGETS} targets, ${THREADS} at a time, ${PER_TARGET} s each" >&2
start=$(date +%s)
FUZZ_SECONDS=$PER_TARGET FUZZ_CASES=${FUZZ_CASES:-2000} \
  cargo test --release --quiet --test fuzz_parser -- --ignored --nocapture --test-threads="$THREADS" 2>&1 |
  grep -v '^$'
status=${PIPESTATUS[0]}
echo "fuzz: $(( $(date +%s) - start )) s, exit $status" >&2
exit "$status"
