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
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest not found; running cargo test instead" >&2
  exec cargo test --all-targets --no-fail-fast "$@"
fi
mount_tests=(--test mount --test mount_clients --test mount_handles --test mount_toctou
  --test mount_workflows --test mount_write --test mount_stress --test mount_conventions
  --test mount_surfaces)
status=0
# Where the kernel serves FUSE over io_uring, the view's requests come from
# its rings (src/mount/ring.rs): the suite runs on the classic loop, which
# serves every other kernel, then the mount tests again on the rings, with
# tests/mount_resources.rs but one of its timing bounds, which the rings do
# not always meet yet (docs/ARCHITECTURE.md).
if [ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ]; then
  SEAL_TEST_NO_RINGS=1 cargo nextest run --all-targets --no-fail-fast "$@" || status=1
  echo "== transport: io_uring rings" >&2
  cargo nextest run --no-fail-fast "${mount_tests[@]}" --test mount_resources \
    -E 'not test(=verifying_a_big_bundle_never_stalls_ordinary_requests)' "$@" || status=1
else
  cargo nextest run --all-targets --no-fail-fast "$@" || status=1
fi
# Then the mount tests again in every other mode of the view, as gocryptfs
# runs its suite per flag: every open verified in full
# (--rehash-every-open), reads served by the daemon (no FUSE passthrough,
# as where the kernel refuses it), and the kernel opening files itself
# (--kernel-opens, which read-only mounts take; writable ones stay in the
# default mode). Tests of a fast path a mode turns off say so and pass over
# it (support::mount_mode_has); where the kernel opens files itself, a
# change reaches it within 100 ms rather than at the next open
# (support::Mounted::after_change).
# SEAL_TEST_MODES=default skips these three runs (about four minutes).
if [ "${SEAL_TEST_MODES:-all}" != "default" ]; then
  echo "== mode: --rehash-every-open" >&2
  SEAL_TEST_MOUNT_MODE=--rehash-every-open cargo nextest run --no-fail-fast "${mount_tests[@]}" "$@" || status=1
  echo "== mode: no passthrough" >&2
  SEAL_TEST_NO_PASSTHROUGH=1 cargo nextest run --no-fail-fast "${mount_tests[@]}" "$@" || status=1
  echo "== mode: --kernel-opens" >&2
  SEAL_TEST_MOUNT_MODE=--kernel-opens cargo nextest run --no-fail-fast "${mount_tests[@]}" "$@" || status=1
fi
exit $status
