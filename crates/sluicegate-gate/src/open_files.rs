//! Open files: how many a config's load may hold, a warning when the limit is lower, and
//! what to say when accept or connect fail for want of one.
//!
//! Every client connection is a file (two while it is served: the gate watches a duplicate
//! of the socket), and so is every upstream connection. The soft limit is often 1024 (a
//! shell's default, systemd's for services) where the hard limit allows far more: the gate
//! and the demo raise it at start ([`crate::server::raise_open_files_limit`]).

use std::io;

use crate::config::Config;

/// Whether `e` says this process (`EMFILE`) or the whole system (`ENFILE`) has no open
/// file left.
pub fn exhausted(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// This process's soft limit on open files, when it can be read.
pub fn soft_limit() -> Option<u64> {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
        .ok()
        .map(|(soft, _)| soft)
}

/// What to add to the log line of error `e`: when it is out of open files, why and what to
/// do (empty otherwise), so that `Too many open files` never stands alone.
pub fn hint(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EMFILE) => format!(
            " (out of open files: this process may open {}, and each connection takes one; \
             raise the limit before starting it: `ulimit -n N` in its shell, up to the hard \
             limit `ulimit -Hn`, or `LimitNOFILE=N` under systemd)",
            soft_limit().map_or_else(|| "no more".into(), |n| n.to_string())
        ),
        Some(libc::ENFILE) => " (the system is out of open files: raise `fs.file-max` \
                               (sysctl) or close other programs' files)"
            .into(),
        _ => String::new(),
    }
}

/// Open files the pools of `config` may hold at once: three per request a pool may run
/// (the client's socket, its duplicate and the upstream connection) and two per request
/// it may queue, plus 64 for listeners, the admin API and the runtime. An adaptive pool
/// counts its `max` when the config sets one (its algorithm's own ceiling can be a million:
/// no estimate); idle keep-alive clients are not counted.
pub fn needed_by(config: &Config) -> u64 {
    let per_pool = config.pools.iter().map(|p| {
        let running = p
            .max_concurrency
            .or_else(|| p.adaptive.as_ref().and_then(|a| a.max))
            .unwrap_or(0);
        3 * running as u64 + 2 * p.max_queue as u64
    });
    per_pool.fold(64, u64::saturating_add)
}

/// Warns when this process's soft limit on open files is below `needed`, the estimate for
/// `load` (what will hold them, in words): beyond the limit, accepts and connects fail.
/// Returns whether it warned.
pub fn warn_if_low(needed: u64, load: &str) -> bool {
    let Some(soft) = soft_limit() else {
        return false;
    };
    if soft >= needed {
        return false;
    }
    tracing::warn!(
        "{load} may hold about {needed} open files at once, and this process may open {soft}: \
         past that, connections fail with `Too many open files`; raise the limit before \
         starting it (`ulimit -n {needed}`, up to the hard limit `ulimit -Hn`; \
         `LimitNOFILE={needed}` under systemd)"
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_files_is_told_with_its_fix_and_other_errors_are_not() {
        let emfile = io::Error::from_raw_os_error(libc::EMFILE);
        assert!(exhausted(&emfile));
        assert!(hint(&emfile).contains("ulimit -n"), "{}", hint(&emfile));
        let enfile = io::Error::from_raw_os_error(libc::ENFILE);
        assert!(exhausted(&enfile));
        assert!(hint(&enfile).contains("fs.file-max"));
        let refused = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert!(!exhausted(&refused));
        assert_eq!(hint(&refused), "");
        assert!(!exhausted(&io::Error::other("no os error")));
    }

    #[test]
    fn a_configs_need_counts_running_and_queued_requests() {
        let text = "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\n\
                    max_concurrency = 100\nmax_queue = 50\n\
                    [[pools]]\nname = \"b\"\nupstream = \"http://127.0.0.1:2\"\nmax_queue = 0\n\
                    [pools.adaptive]\nmax = 10\n\
                    [[pools]]\nname = \"c\"\nupstream = \"http://127.0.0.1:3\"\nmax_queue = 7\n\
                    [pools.adaptive]\n\
                    [[routes]]\npool = \"a\"\n";
        let config = crate::config::parse(text, "t").unwrap();
        assert_eq!(needed_by(&config), 64 + 300 + 100 + 30 + 14);
    }

    /// Under a log capture of its own: a warning written on a thread without a subscriber
    /// while another test's capture is being set up can leave tracing's cached interest
    /// in the call site at "never", and that test (gate.rs's reload warning) sees nothing.
    #[test]
    fn no_warning_under_the_limit() {
        let (log, _guard) = crate::server::tests::capture();
        assert!(!warn_if_low(1, "nothing"));
        assert!(log.lines().is_empty());
        assert!(warn_if_low(u64::MAX, "everything"));
        let lines = log.lines();
        assert!(
            lines.len() == 1 && lines[0].contains("everything may hold about"),
            "{lines:#?}"
        );
    }
}
