#!/usr/bin/env bash
# Runs the whole test suite: unit tests, CLI tests through the real binary, and
# the FUSE / namespace tests (these need root and /dev/fuse; with CI=true they
# fail instead of skipping when either is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
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
