//! Rate limiter benchmarks (filled in below).
fn main() {}
