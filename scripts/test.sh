#!/usr/bin/env bash
# The whole test suite, as CI runs it: toolchain, minimum Rust, formatting, lints, docs, every
# test, the loom models, packaging.
# Usage: scripts/test.sh            (from anywhere inside the repository)
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
# The tests' temporary files (gate configs, scenario output, a browser profile: a few dozen
# directories a run) go to a directory of the suite's own, removed when it ends.
TMPDIR=$(mktemp -d -t sluicegate-suite.XXXXXX)
export TMPDIR
trap 'rm -f "$log"; rm -rf "$TMPDIR"' EXIT
started=$SECONDS
# Each step's name and how long it took, for the closing summary (where the suite's ~20 minutes
# go on a clean clone: mostly building).
timings=()
step_name=
step_started=$SECONDS
step() {
  [[ -n $step_name ]] && timings+=("$(printf '%5d s  %s' $((SECONDS - step_started)) "$step_name")")
  step_name=$*
  step_started=$SECONDS
  printf '\n==> %s\n' "$*"
}
# Runs a test command, keeping its output for the closing summary. A failing one does not
# stop the suite: the other test steps still run, and the summary names every failing test
# and exits non-zero.
failed_steps=()
tests() {
  if ! "$@" 2>&1 | tee -a "$log"; then
    failed_steps+=("$*")
  fi
}

step "toolchain: rustfmt and clippy"
missing=()
cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
if ((${#missing[@]})); then
  if command -v rustup >/dev/null 2>&1; then
    # A minimal rustup profile leaves them out.
    rustup component add "${missing[@]}"
  else
    echo "scripts/test.sh needs ${missing[*]} and found no rustup to add it. Either:" >&2
    echo "  Debian/Ubuntu's Rust:  sudo apt-get install rustfmt rust-clippy" >&2
    echo "  or Rust from rustup:   rustup component add rustfmt clippy" >&2
    exit 1
  fi
fi
cargo fmt --version && cargo clippy --version

step "minimum Rust: no locked package needs a newer one"
scripts/check-msrv

# Installs Debian packages with apt-get, or says what is missing and how to get it.
apt_install() {
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; }; then
    echo "scripts/test.sh needs the Debian packages $* and could not install them" >&2
    echo "(apt-get failed; not root?): install them with  sudo apt-get install $*" >&2
    exit 1
  fi
}

step "redis-server (the global-limit tests start their own, each on a loopback port it holds)"
command -v redis-server >/dev/null || apt_install redis-server
redis-server --version

step "chromium and chromedriver (the dashboard's browser test)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  apt_install chromium chromium-driver
fi
chromium --version 2>/dev/null | head -1

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings
# The library alone, without and with its feature (tests turn `tower` on for everything).
cargo clippy -p sluicegate --lib --no-default-features -- -D warnings
cargo clippy -p sluicegate --lib --features tower -- -D warnings
cargo clippy -p sluicegate-redis --lib -- -D warnings
cargo clippy -p sluicegate-redis --lib --no-default-features -- -D warnings

step "cargo doc (warnings are errors), with every feature as docs.rs builds it, and without"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features --quiet
RUSTDOCFLAGS="-D warnings" cargo doc -p sluicegate --no-deps --no-default-features --quiet
RUSTDOCFLAGS="-D warnings" cargo doc -p sluicegate-redis --no-deps --no-default-features --quiet
# docs.rs itself uses nightly with `--cfg docsrs` (the feature badges); run that too where a
# nightly toolchain is installed.
if command -v rustup >/dev/null 2>&1 && rustup run nightly rustc --version >/dev/null 2>&1; then
  RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo +nightly doc -p sluicegate --no-deps \
    --all-features --quiet
else
  echo "(no nightly toolchain: the docs.rs build with --cfg docsrs is skipped)"
fi

step "cargo test (unit, integration, property, stress and doc tests)"
tests cargo test --workspace --no-fail-fast

step "the dashboard in headless Chromium (screenshot: target/dashboard.png)"
tests cargo test -p sluicegate-gate --no-fail-fast --test dashboard_browser -- --include-ignored

step "keyed memory bound: 10M distinct keys (release: too slow in debug)"
tests cargo test -p sluicegate-release-tests --release --no-fail-fast --test keyed_memory -- --include-ignored

step "loom models (release mode, bounded preemptions)"
# Our own cfg name, not `loom`: tokio reads `--cfg loom` itself. A target dir of their own,
# since the cfg changes every crate's build.
tests env RUSTFLAGS="--cfg sluicegate_loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
  CARGO_TARGET_DIR=target/loom \
  cargo test -p sluicegate-release-tests --release --no-fail-fast --test 'loom_*' -- --test-threads=2

step "cargo package: each publishable crate builds from its archive"
scripts/check-package || failed_steps+=("scripts/check-package")

step "summary"
printf '%s\n' "${timings[@]}"
awk '/^test result:/ { p += $4; f += $6 } END { printf "sluicegate: %d passed, %d failed\n", p, f }' "$log"
echo "($(((SECONDS - started) / 60)) min $(((SECONDS - started) % 60)) s)"
if ((${#failed_steps[@]})); then
  echo "FAILED test steps:" >&2
  printf '  %s\n' "${failed_steps[@]}" >&2
  # Each failing test by name (libtest prints `test NAME ... FAILED`), with the binary it
  # ran in; a step that failed without a failing test (a build error) shows above.
  awk '/^     Running / { bin = $2 } /^   Doc-tests / { bin = "doc-tests " $2 } / \.\.\. FAILED$/ { sub(/^test /, ""); sub(/ \.\.\. FAILED$/, ""); printf "  FAILED: %s (%s)\n", $0, bin }' "$log" >&2
  exit 1
fi
