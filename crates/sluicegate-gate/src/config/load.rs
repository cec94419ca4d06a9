//! Reading a config: TOML syntax and types first, then the rules that tie fields together.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use sluicegate::concurrency::ConcurrencyLimiter;

use super::model::{Config, MAX_WORKERS, QueueOrder, Scope};

/// A config that cannot be used, with where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<flags>` for the quick form).
    pub file: String,
    /// 1-based line and column, when the error has a place in the file.
    pub at: Option<(usize, usize)>,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, col)) => write!(f, "{}:{line}:{col}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reads and checks the config file at `path`.
///
/// # Errors
///
/// A [`ConfigError`] when the file cannot be read or the config cannot be used.
pub fn read(path: &Path) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: file.clone(),
        at: None,
        message: format!("cannot read the config: {e}"),
    })?;
    parse(&text, &file)
}

/// Parses and checks config `text`; `file` names it in errors.
///
/// # Errors
///
/// A [`ConfigError`] located at the offending value.
pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
    let error = |span: Option<Range<usize>>, message: String| ConfigError {
        file: file.to_owned(),
        at: span.filter(|s| s.end > 0).map(|s| line_col(text, s.start)),
        message,
    };
    let config: Config =
        toml::from_str(text).map_err(|e| error(e.span(), e.message().trim().to_owned()))?;
    check(&config).map_err(|(span, message)| error(span, message))?;
    Ok(config)
}

/// Checks a config built in code (the quick form) by the rules a file must follow.
///
/// # Errors
///
/// A [`ConfigError`] naming `file`, without a location.
pub fn validate(config: &Config, file: &str) -> Result<(), ConfigError> {
    check(config).map_err(|(_, message)| ConfigError {
        file: file.to_owned(),
        at: None,
        message,
    })
}

/// What a config that works may still get wrong, one line each, for `serve`, `check` and
/// reloads to log as warnings: a `[store]` without `instances` while a global pool falls
/// back to `local` (each gate would then take the whole limit while Redis is down).
pub fn warnings(config: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(store) = config.store.as_ref().filter(|s| s.instances.is_none()) {
        let local: Vec<String> = config
            .pools
            .iter()
            .filter(|p| {
                p.scope == super::Scope::Global
                    && p.on_redis_failure.unwrap_or(store.on_redis_failure)
                        == super::OnFailure::Local
            })
            .map(|p| format!("`{}`", p.name.get_ref()))
            .collect();
        if !local.is_empty() {
            out.push(format!(
                "`[store] instances` is not set: while redis is down, the `local` policy of the global pools {} gives this gate the whole of each limit, as if it were the only gate; set `instances` to the number of gates sharing the store",
                local.join(", ")
            ));
        }
    }
    out
}

/// A rule broken: where (a byte span, when known) and why.
type Broken = (Option<Range<usize>>, String);

/// The rules no single field can check on its own, and those on values the quick form's
/// flags set (a file's are refused where they are read: `model.rs`).
fn check(config: &Config) -> Result<(), Broken> {
    if config.workers == Some(0) {
        return Err((
            None,
            "`workers = 0`: write at least 1, or leave it out for one per CPU".into(),
        ));
    }
    if let Some(n) = config.workers.filter(|&n| n > MAX_WORKERS) {
        return Err((
            None,
            format!(
                "`workers = {n}`: at most {MAX_WORKERS} (each is a thread with its own \
                 connections; one per CPU is what the gate is built for: leave it out for that)"
            ),
        ));
    }
    if *config.max_header_bytes.get_ref() < 8192 {
        return Err((
            Some(config.max_header_bytes.span()),
            "`max_header_bytes` must be at least 8192".into(),
        ));
    }
    if let Some(addr) = &config.admin.listen
        && let Some(proxy) = config
            .listen
            .iter()
            .find(|l| l.clashes_with(*addr.get_ref()))
    {
        return Err((
            Some(addr.span()),
            format!(
                "`[admin] listen = \"{}\"` takes the port of the proxy's `{}` in `listen`: the admin API could not be bound (address in use); give it a port of its own",
                addr.get_ref(),
                proxy.0
            ),
        ));
    }
    if let Some(addr) = &config.admin.listen
        && !addr.get_ref().ip().is_loopback()
        && config.admin.token_file.is_none()
    {
        return Err((
            Some(addr.span()),
            "the admin API listens beyond loopback only with a token: set `[admin] token_file` (`--admin-token-file` in the quick form), or listen on 127.0.0.1".into(),
        ));
    }
    match (&config.bypass.header, &config.bypass.secret_file) {
        (Some(h), None) => {
            return Err((
                Some(h.span()),
                "`[bypass] header` needs `secret_file`, the file holding the secret value".into(),
            ));
        }
        (Some(h), Some(_)) if http::HeaderName::from_bytes(h.get_ref().as_bytes()).is_err() => {
            return Err((
                Some(h.span()),
                format!("invalid header name `{}`", h.get_ref()),
            ));
        }
        (None, Some(f)) => {
            return Err((
                Some(f.span()),
                "`[bypass] secret_file` needs `header`, the header that carries the secret".into(),
            ));
        }
        _ => {}
    }
    check_store(config)?;
    check_pools(config)?;
    check_routes(config)
}

fn check_store(config: &Config) -> Result<(), Broken> {
    let Some(store) = &config.store else {
        return Ok(());
    };
    let url = store.redis.get_ref();
    if !["redis://", "rediss://", "redis+unix://", "unix://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
    {
        return Err((
            Some(store.redis.span()),
            format!(
                "invalid redis URL `{}`: write `redis://HOST:PORT`, like `redis://127.0.0.1:6379`",
                store.redis_shown()
            ),
        ));
    }
    if store.budget.0.is_zero() {
        return Err((
            Some(store.redis.span()),
            "`[store] budget` must be longer than 0, like `20ms`".into(),
        ));
    }
    if let Some(n) = &store.instances
        && *n.get_ref() == 0
    {
        return Err((
            Some(n.span()),
            "`instances` counts the gates sharing the store: at least 1".into(),
        ));
    }
    let prefix = store.prefix.get_ref();
    if prefix.is_empty() || prefix.contains(['{', '}']) {
        return Err((
            Some(store.prefix.span()),
            format!("`prefix = \"{prefix}\"`: write a non-empty prefix without `{{` or `}}`"),
        ));
    }
    Ok(())
}

/// The rules for a pool's `scope`, `mode` and `on_redis_failure`.
fn check_scope(config: &Config, pool: &super::model::Pool) -> Result<(), String> {
    let name = pool.name.get_ref();
    if pool.scope == Scope::Local {
        if pool.mode.is_some() {
            return Err(format!(
                "pool `{name}`: `mode` is for global rates: add `scope = \"global\"` or remove `mode`"
            ));
        }
        if pool.on_redis_failure.is_some() {
            return Err(format!(
                "pool `{name}`: `on_redis_failure` is for global pools: add `scope = \"global\"` or remove it"
            ));
        }
        return Ok(());
    }
    if config.store.is_none() {
        return Err(format!(
            "pool `{name}` has `scope = \"global\"` but there is no store: add `[store]` with `redis = \"redis://127.0.0.1:6379\"` (and `instances = N`, the number of gates sharing it)"
        ));
    }
    if pool.adaptive.is_some() {
        return Err(format!(
            "pool `{name}`: an adaptive limit follows this gate's own latency and cannot be global: use `max_concurrency` with `scope = \"global\"`, or `scope = \"local\"`"
        ));
    }
    if pool.queue_order == QueueOrder::Lifo {
        return Err(format!(
            "pool `{name}`: a global pool queues in arrival order: remove `queue_order = \"lifo\"`"
        ));
    }
    if pool.mode.is_some() && pool.rate.is_none() {
        return Err(format!(
            "pool `{name}`: `mode` applies to the pool's `rate`: set `rate` or remove `mode`"
        ));
    }
    Ok(())
}

fn check_pools(config: &Config) -> Result<(), Broken> {
    if config.pools.is_empty() {
        return Err((
            None,
            "no pools: add a `[[pools]]` table with a `name`, an `upstream` and `max_concurrency`"
                .into(),
        ));
    }
    for (i, pool) in config.pools.iter().enumerate() {
        let name = pool.name.get_ref();
        let at = Some(pool.name.span());
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err((
                at,
                format!("pool name `{name}`: use letters, digits, `_` and `-` only"),
            ));
        }
        if config.pools[..i].iter().any(|p| p.name.get_ref() == name) {
            return Err((
                at,
                format!("a second pool named `{name}`: pool names must differ"),
            ));
        }
        match (pool.max_concurrency, &pool.adaptive) {
            (None, None) => {
                return Err((
                    at,
                    format!(
                        "pool `{name}` has no limit: set `max_concurrency = N`, or add `[pools.adaptive]`"
                    ),
                ));
            }
            (Some(_), Some(_)) => {
                return Err((
                    at,
                    format!(
                        "pool `{name}` has both `max_concurrency` and `[pools.adaptive]`: keep one"
                    ),
                ));
            }
            (Some(n), None) if n > ConcurrencyLimiter::MAX_PERMITS => {
                return Err((
                    at,
                    format!(
                        "pool `{name}`: `max_concurrency` is at most {}",
                        ConcurrencyLimiter::MAX_PERMITS
                    ),
                ));
            }
            (None, Some(a)) => {
                let bounds = [a.initial, a.min, a.max];
                if bounds
                    .iter()
                    .flatten()
                    .any(|&n| n == 0 || n > ConcurrencyLimiter::MAX_PERMITS)
                {
                    return Err((
                        at,
                        format!(
                            "pool `{name}`: adaptive `initial`, `min` and `max` must be between 1 and {}",
                            ConcurrencyLimiter::MAX_PERMITS
                        ),
                    ));
                }
                if a.algorithm == super::model::Algorithm::Vegas && a.min.is_some() {
                    return Err((
                        at,
                        format!("pool `{name}`: vegas has a fixed floor of 1: remove `min`"),
                    ));
                }
                if let (Some(lo), Some(hi)) = (a.min, a.max)
                    && lo > hi
                {
                    return Err((
                        at,
                        format!("pool `{name}`: adaptive `min` ({lo}) is above `max` ({hi})"),
                    ));
                }
            }
            _ => {}
        }
        check_scope(config, pool).map_err(|message| (at.clone(), message))?;
        if pool.queue_timeout.0.is_zero() {
            return Err((
                at,
                format!(
                    "pool `{name}`: `queue_timeout` must be longer than 0 (for no waiting at all, write `max_queue = 0`)"
                ),
            ));
        }
        if pool.upstream_timeout.0.is_zero() {
            return Err((
                at,
                format!("pool `{name}`: `upstream_timeout` must be longer than 0"),
            ));
        }
        if pool.burst == Some(0)
            || pool
                .per_key_rate
                .as_ref()
                .is_some_and(|k| k.burst == Some(0))
        {
            return Err((
                at,
                format!(
                    "pool `{name}`: `burst` must be at least 1 (for no traffic at all, write `rate = \"0/s\"`)"
                ),
            ));
        }
        if let Some(k) = &pool.per_key_rate
            && *k.max_keys.get_ref() == 0
        {
            return Err((
                Some(k.max_keys.span()),
                "`max_keys` must be at least 1".into(),
            ));
        }
    }
    Ok(())
}

fn check_routes(config: &Config) -> Result<(), Broken> {
    if config.routes.is_empty() {
        let first = config.pools[0].name.get_ref();
        return Err((
            None,
            format!(
                "no routes: add `[[routes]]` with `pool = \"{first}\"` (and `host`, `path_prefix` or `methods` to narrow it)"
            ),
        ));
    }
    for route in &config.routes {
        let pool = route.pool.get_ref();
        if !config.pools.iter().any(|p| p.name.get_ref() == pool) {
            let names: Vec<_> = config
                .pools
                .iter()
                .map(|p| format!("`{}`", p.name.get_ref()))
                .collect();
            return Err((
                Some(route.pool.span()),
                format!(
                    "route to unknown pool `{pool}`: write one of {}",
                    names.join(", ")
                ),
            ));
        }
        if !route.path_prefix.starts_with('/') {
            return Err((
                Some(route.pool.span()),
                format!(
                    "route `path_prefix = \"{}\"` must start with `/`",
                    route.path_prefix
                ),
            ));
        }
        match crate::path::normalise(&route.path_prefix) {
            Ok(normal) if normal == route.path_prefix => {}
            Ok(normal) => {
                return Err((
                    Some(route.pool.span()),
                    format!(
                        "route `path_prefix = \"{}\"` is not in normal form and would match nothing (paths are matched once `%XX` of letters, digits and `-._~` are decoded, `//` merged and `.`/`..` resolved): write `\"{normal}\"`",
                        route.path_prefix
                    ),
                ));
            }
            Err(_) => {
                return Err((
                    Some(route.pool.span()),
                    format!(
                        "route `path_prefix = \"{}\"` climbs above `/` with `..`",
                        route.path_prefix
                    ),
                ));
            }
        }
        if let Some(m) = route
            .methods
            .iter()
            .find(|m| http::Method::from_bytes(m.as_bytes()).is_err())
        {
            return Err((
                Some(route.pool.span()),
                format!("route method `{m}` is not an HTTP method, write one like `GET`"),
            ));
        }
    }
    Ok(())
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = 4\n\n[[routes]]\npool = \"api\"\n";

    #[test]
    fn a_minimal_config_gets_its_defaults() {
        let c = parse(MINIMAL, "gate.toml").unwrap();
        assert_eq!(c.pools[0].max_queue, 1024);
        assert_eq!(c.pools[0].queue_timeout.to_string(), "10s");
        assert!(c.pools[0].predictive);
        assert_eq!(c.routes[0].path_prefix, "/");
        assert_eq!(*c.max_header_bytes.get_ref(), 16384);
    }

    #[test]
    fn a_bad_value_is_located_with_a_hint() {
        let text = MINIMAL.replace(
            "max_concurrency = 4",
            "max_concurrency = 4\nqueue_timeout = \"10\"",
        );
        let e = parse(&text, "gate.toml").unwrap_err();
        assert_eq!(e.at, Some((5, 17)), "{e}");
        assert!(
            e.to_string()
                .starts_with("gate.toml:5:17: duration `10` has no unit"),
            "{e}"
        );
    }

    /// Defect pinned: these refusals named the file but not the line and column of what
    /// was wrong (`g.toml: \`listen\` is empty`), or the pool's name instead of the value;
    /// and a duration or a rate written as a number said "expected a string".
    #[test]
    fn every_refusal_is_located_at_its_value() {
        let pool_field = |field: &str| {
            MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{field}"),
            )
        };
        let cases = [
            (
                format!("listen = []\n{MINIMAL}"),
                (1, 10),
                "`listen` is empty",
            ),
            (format!("workers = 0\n{MINIMAL}"), (1, 11), "at least 1"),
            (
                format!("workers = 5000\n{MINIMAL}"),
                (1, 11),
                "at most 1024",
            ),
            (
                format!("header_read_timeout = \"0s\"\n{MINIMAL}"),
                (1, 23),
                "longer than 0",
            ),
            (
                format!("client_body_timeout = \"0s\"\n{MINIMAL}"),
                (1, 23),
                "longer than 0",
            ),
            (
                format!("send_timeout = \"0s\"\n{MINIMAL}"),
                (1, 16),
                "longer than 0",
            ),
            (
                format!("[bypass]\nsecret_file = \"/s\"\n{MINIMAL}"),
                (2, 15),
                "needs `header`",
            ),
            (
                pool_field("queue_timeout = \"0s\""),
                (5, 17),
                "write `max_queue = 0`",
            ),
            (
                pool_field("upstream_timeout = \"0s\""),
                (5, 20),
                "longer than 0",
            ),
            (
                pool_field("queue_timeout = 10"),
                (5, 17),
                "a duration with its unit, like \"10s\"",
            ),
            (pool_field("rate = 5"), (5, 8), "a rate, like \"50/s\""),
        ];
        for (text, at, says) in cases {
            let e = parse(&text, "g.toml").unwrap_err();
            assert_eq!(e.at, Some(at), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
    }

    #[test]
    fn a_route_to_an_unknown_pool_names_the_pools() {
        let text = MINIMAL.replace("pool = \"api\"", "pool = \"apo\"");
        let e = parse(&text, "g.toml").unwrap_err();
        assert_eq!(e.at, Some((7, 8)));
        assert!(e.message.contains("write one of `api`"), "{e}");
    }

    /// Defect pinned: `workers = 100000` passed `check`, and `serve` started threads until the
    /// process ran out of file descriptors.
    #[test]
    fn workers_are_between_one_and_the_most_a_machine_makes_sense_of() {
        for (n, ok) in [
            (0, false),
            (1, true),
            (MAX_WORKERS, true),
            (MAX_WORKERS + 1, false),
        ] {
            let text = format!("workers = {n}\n{MINIMAL}");
            assert_eq!(parse(&text, "g.toml").is_ok(), ok, "workers = {n}");
        }
        let e = parse(&format!("workers = 100000\n{MINIMAL}"), "g.toml").unwrap_err();
        assert!(e.message.contains("at most 1024"), "{e}");
    }

    #[test]
    fn an_unknown_field_is_refused() {
        let text = MINIMAL.replace("max_concurrency", "max_concurency");
        let e = parse(&text, "g.toml").unwrap_err();
        assert_eq!(e.at.map(|a| a.0), Some(4), "{e}");
        assert!(e.message.contains("unknown field"), "{e}");
    }

    #[test]
    fn a_pool_without_a_limit_is_refused() {
        let text = MINIMAL.replace("max_concurrency = 4\n", "");
        let e = parse(&text, "g.toml").unwrap_err();
        assert!(e.message.contains("has no limit"), "{e}");
        assert_eq!(e.at, Some((2, 8)));
    }

    #[test]
    fn a_global_pool_without_a_store_says_what_to_add() {
        let text = MINIMAL.replace(
            "max_concurrency = 4",
            "max_concurrency = 4\nscope = \"global\"",
        );
        let e = parse(&text, "g.toml").unwrap_err();
        assert_eq!(e.at, Some((2, 8)), "{e}");
        assert!(e.message.contains("add `[store]` with `redis = "), "{e}");
    }

    #[test]
    fn a_store_is_checked_and_located() {
        let with_store = |store: &str| format!("[store]\n{store}\n{MINIMAL}");
        let ok = parse(&with_store("redis = \"redis://127.0.0.1:6379\""), "g.toml").unwrap();
        let store = ok.store.unwrap();
        assert_eq!(store.budget.to_string(), "20ms");
        assert_eq!(store.instances(), 1);
        assert_eq!(store.on_redis_failure, super::super::OnFailure::Local);
        let e = parse(&with_store("redis = \"http://x:1\""), "g.toml").unwrap_err();
        assert_eq!(e.at, Some((2, 9)), "{e}");
        assert!(e.message.contains("redis://HOST:PORT"), "{e}");
        let e = parse(
            &with_store("redis = \"redis://x\"\ninstances = 0"),
            "g.toml",
        )
        .unwrap_err();
        assert_eq!(e.at, Some((3, 13)), "{e}");
        let e = parse(
            &with_store("redis = \"redis://x\"\nbudgett = \"1s\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown field"), "{e}");
        let e = parse(
            &with_store("redis = \"redis://x\"\non_redis_failure = \"maybe\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("local"), "{e}");
    }

    /// Review 3, lesser note: `instances` defaulting to 1 with the `local` policy let every
    /// gate take the whole limit during an outage, without a word.
    #[test]
    fn a_store_without_instances_is_warned_of_where_a_pool_falls_back_to_local() {
        let global = MINIMAL.replace(
            "max_concurrency = 4",
            "max_concurrency = 4\nscope = \"global\"",
        );
        let with_store = |store: &str| {
            parse(
                &format!("[store]\nredis = \"redis://x\"\n{store}\n{global}"),
                "g.toml",
            )
            .unwrap()
        };
        let w = warnings(&with_store(""));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("`[store] instances` is not set"), "{w:?}");
        assert!(warnings(&with_store("instances = 1")).is_empty());
        assert!(warnings(&with_store("on_redis_failure = \"deny\"")).is_empty());
        assert!(warnings(&parse(MINIMAL, "g.toml").unwrap()).is_empty());
    }

    #[test]
    fn global_only_settings_on_a_local_pool_are_refused() {
        for (add, says) in [
            ("mode = \"hybrid\"", "`mode` is for global rates"),
            (
                "on_redis_failure = \"deny\"",
                "`on_redis_failure` is for global pools",
            ),
        ] {
            let text = MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{add}"),
            );
            let e = parse(&text, "g.toml").unwrap_err();
            assert!(e.message.contains(says), "{e}");
        }
        let global = format!(
            "[store]\nredis = \"redis://x\"\n{}",
            MINIMAL.replace(
                "max_concurrency = 4",
                "scope = \"global\"\n[pools.adaptive]"
            )
        );
        let e = parse(&global, "g.toml").unwrap_err();
        assert!(e.message.contains("cannot be global"), "{e}");
    }

    /// Pins review 4's finding 7: `check` said `ok` to a `listen` address given twice and to
    /// an `[admin] listen` equal to a proxy address, which `serve` then refused with "address
    /// already in use", sending the operator to look for another process.
    #[test]
    fn addresses_that_would_clash_at_bind_are_refused_at_their_value() {
        for (top, at, says) in [
            (
                "listen = [\"127.0.0.1:18080\", \"127.0.0.1:18080\"]",
                (1, 10),
                "`listen` has `127.0.0.1:18080` twice",
            ),
            (
                "listen = [\"0.0.0.0:18080\", \"127.0.0.1:18080\"]",
                (1, 10),
                "`0.0.0.0:18080` and `127.0.0.1:18080` in `listen` take the same port",
            ),
            (
                "listen = [\"127.0.0.1:18080\"]\n[admin]\nlisten = \"127.0.0.1:18080\"",
                (3, 10),
                "`[admin] listen = \"127.0.0.1:18080\"` takes the port of the proxy's `127.0.0.1:18080`",
            ),
            (
                "listen = [\"[::]:18080\"]\n[admin]\nlisten = \"127.0.0.1:18080\"",
                (3, 10),
                "takes the port of the proxy's `[::]:18080`",
            ),
        ] {
            let e = parse(&format!("{top}\n{MINIMAL}"), "g.toml").unwrap_err();
            assert_eq!(e.at, Some(at), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        // Different ports, different families, or port 0 (a fresh port each) bind fine.
        for top in [
            "listen = [\"127.0.0.1:18080\", \"127.0.0.1:18081\"]",
            "listen = [\"0.0.0.0:18080\", \"[::1]:18080\"]",
            "listen = [\"127.0.0.1:0\", \"127.0.0.1:0\"]\n[admin]\nlisten = \"127.0.0.1:0\"",
            "listen = [\"127.0.0.1:18080\"]\n[admin]\nlisten = \"127.0.0.2:18080\"",
        ] {
            parse(&format!("{top}\n{MINIMAL}"), "g.toml").unwrap();
        }
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncé\nx", 6), (2, 3));
        assert_eq!(line_col("", 5), (1, 1));
    }
}
