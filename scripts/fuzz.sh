#!/usr/bin/env bash
# Runs each of the gate's fuzz targets (config parser, config values, routing and key
# extractors) for a bounded time. Needs a nightly toolchain; installs cargo-fuzz if missing.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# Not part of scripts/test.sh: findings land in crates/sluicegate-gate/fuzz/artifacts.
set -euo pipefail
cd "$(dirname "$0")/../crates/sluicegate-gate/fuzz"
seconds="${1:-60}"

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal

for target in config values keys; do
  printf '\n==> fuzz %s for %ss\n' "$target" "$seconds"
  mkdir -p "corpus/$target"
  # Seeds: the annotated example config, and a few values.
  [ "$target" = config ] && cp ../examples/gate.toml corpus/config/example.toml
  [ "$target" = values ] && for v in 250ms 10s 2m 50/s 600/m client_ip header:x-api-key 10.0.0.0/8 http://127.0.0.1:9000; do
    printf '%s' "$v" > "corpus/values/seed-$(printf '%s' "$v" | tr -c 'a-z0-9' _)"
  done
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=4096
done
printf '\nall fuzz targets ran %ss without a finding\n' "$seconds"
