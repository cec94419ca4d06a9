//! Keyed rate limiters: one limit per client, with bounded memory.
