#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, lints, every test, the loom models.
# Usage: scripts/test.sh            (from anywhere inside the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test (unit, integration, property, stress and doc tests)"
cargo test --workspace

step "keyed memory bound: 10M distinct keys (release: too slow in debug)"
cargo test -p sluicegate --release --test keyed_memory -- --include-ignored

step "loom models (release mode, bounded preemptions)"
# Our own cfg name, not `loom`: tokio reads `--cfg loom` itself. A target dir of their own: it changes every crate's build.
RUSTFLAGS="--cfg sluicegate_loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
  CARGO_TARGET_DIR=target/loom \
  cargo test -p sluicegate --release --test 'loom_*' -- --test-threads=2

step "all passed"
