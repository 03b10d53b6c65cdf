#!/usr/bin/env bash
# Runs the whole test suite: unit tests, CLI tests through the real binary, and
# the FUSE / namespace tests (these need root and /dev/fuse; with CI=true they
# fail instead of skipping when either is missing), the container tests
# (bubblewrap) and the pre-commit hook test (pre-commit).
set -euo pipefail
cd "$(dirname "$0")/.."
# Tools the FUSE, container and hook tests run. Without one, its tests print
# SKIPPED (and fail under CI=true, which .ci/run gives them).
missing=()
command -v fusermount3 >/dev/null || missing+=("fusermount3 (package fuse3)")
command -v bwrap >/dev/null || missing+=("bwrap (package bubblewrap)")
command -v setpriv >/dev/null || missing+=("setpriv (package util-linux)")
command -v pre-commit >/dev/null || missing+=("pre-commit (pip install pre-commit)")
command -v git >/dev/null || missing+=("git")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'scripts/test.sh: missing: %s\n' "${missing[@]}" >&2
  if [ "${CI:-}" = true ]; then
    echo "scripts/test.sh: CI must run every test; install the above" >&2
    exit 1
  fi
  echo "scripts/test.sh: the tests that need them will print SKIPPED" >&2
fi
# The `seal` the integration tests run is the one with the tests' hooks
# (seal-gate's test-hooks feature): link it, in case a plain `cargo build`
# replaced it at target/debug/seal.
cargo build --all-targets --quiet
if cargo nextest --version >/dev/null 2>&1; then
  exec cargo nextest run --all-targets --no-fail-fast "$@"
else
  echo "cargo-nextest not found; running cargo test instead" >&2
  exec cargo test --all-targets --no-fail-fast "$@"
fi
