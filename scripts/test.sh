#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, every test, the loom models.
# Usage: scripts/test.sh            (from anywhere inside the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
step() { printf '\n==> %s\n' "$*"; }
# Runs a test command, keeping its output for the closing count.
tests() { "$@" 2>&1 | tee -a "$log"; }

step "redis-server (the global-limit tests start their own on a free loopback port)"
if ! command -v redis-server >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server
fi
redis-server --version

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings
# The library alone, without and with its feature (tests turn `tower` on for everything).
cargo clippy -p sluicegate --lib --no-default-features -- -D warnings
cargo clippy -p sluicegate --lib --features tower -- -D warnings

step "cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test (unit, integration, property, stress and doc tests)"
tests cargo test --workspace

step "keyed memory bound: 10M distinct keys (release: too slow in debug)"
tests cargo test -p sluicegate --release --test keyed_memory -- --include-ignored

step "loom models (release mode, bounded preemptions)"
# Our own cfg name, not `loom`: tokio reads `--cfg loom` itself. A target dir of their own,
# since the cfg changes every crate's build.
tests env RUSTFLAGS="--cfg sluicegate_loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
  CARGO_TARGET_DIR=target/loom \
  cargo test -p sluicegate --release --test 'loom_*' -- --test-threads=2

step "summary"
awk '/^test result:/ { p += $4; f += $6 } END { printf "sluicegate: %d passed, %d failed\n", p, f }' "$log"
