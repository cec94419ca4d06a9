//! Runnable examples of sluicegate's tower middleware with axum, hyper and reqwest; the
//! library target is empty.
//!
//! - `cargo run -p sluicegate-http-examples --example axum_shared_limit`: two axum routes
//!   sharing one concurrency limit, a rate limit per client IP in front.
//! - `cargo run -p sluicegate-http-examples --example runaway_client`: a runaway client kept
//!   to 4 in flight by the client layer; the kill switch; a bypassed health request.
//! - `cargo run -p sluicegate-http-examples --example reqwest_client`: the same limiter in
//!   front of reqwest.
