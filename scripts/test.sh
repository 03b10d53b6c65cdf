#!/usr/bin/env bash
# Runs the whole test suite: unit tests, CLI tests through the real binary, and
# the FUSE / namespace tests (these need root and /dev/fuse; with CI=true they
# fail instead of skipping when either is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if cargo nextest --version >/dev/null 2>&1; then
  exec cargo nextest run --all-targets --no-fail-fast "$@"
else
  echo "cargo-nextest not found; running cargo test instead" >&2
  exec cargo test --all-targets --no-fail-fast "$@"
fi
