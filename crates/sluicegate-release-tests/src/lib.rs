//! The library's tests that run optimised, in `tests/`: the loom models of the limiters'
//! races (`loom_*.rs`, built with `RUSTFLAGS="--cfg sluicegate_loom"`) and the 10-million-key
//! memory bound (`keyed_memory.rs`). A crate of their own so that their release builds
//! compile `sluicegate` alone, not its dev-dependencies; `scripts/test.sh` runs them:
//!
//! ```text
//! cargo test -p sluicegate-release-tests --release --test keyed_memory -- --include-ignored
//! RUSTFLAGS="--cfg sluicegate_loom" CARGO_TARGET_DIR=target/loom \
//!   cargo test -p sluicegate-release-tests --release --test 'loom_*'
//! ```
