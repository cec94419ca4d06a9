//! What a global limit decides when Redis cannot answer within the budget.

/// What a global limit decides while Redis is unreachable or slower than the store's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Fall back to this instance's share of the limit, kept in memory: the limit divided by
    /// the number of instances the limit was built with. The default: the resource stays
    /// protected and traffic still flows.
    Local,
    /// Allow every request (fail open).
    Allow,
    /// Deny every request (fail closed).
    Deny,
}

// Written by hand: the default is a choice, not whichever variant comes first.
#[allow(clippy::derivable_impls)]
impl Default for FailurePolicy {
    fn default() -> Self {
        FailurePolicy::Local
    }
}

/// Who made a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Redis, in one script call.
    Redis,
    /// Tokens this instance had leased from Redis beforehand (hybrid mode).
    Lease,
    /// The failure policy, because Redis did not answer in time.
    Fallback(FailurePolicy),
}

/// The two builder settings every global limit has: its failure policy and how many
/// instances share it (for the `Local` fallback's share). Expects fields `policy` and
/// `instances`.
macro_rules! failure_settings {
    () => {
        /// What to decide while Redis cannot answer within the store's budget (default
        /// [`FailurePolicy::Local`](crate::FailurePolicy::Local)).
        pub fn on_failure(mut self, policy: crate::FailurePolicy) -> Self {
            self.policy = policy;
            self
        }

        /// How many instances share the limit: the
        /// [`Local`](crate::FailurePolicy::Local) fallback allows `1 / instances` of it
        /// (default 1).
        pub fn instances(mut self, instances: u32) -> Self {
            self.instances = instances.max(1);
            self
        }
    };
}
pub(crate) use failure_settings;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_policy_is_local() {
        assert_eq!(FailurePolicy::default(), FailurePolicy::Local);
    }
}
