//! Reading a config: TOML syntax and types first, then the rules that tie fields together.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use super::model::bounds::{
    self, ADAPTIVE_INITIAL, ADAPTIVE_MAX, ADAPTIVE_MIN, BURST, CLIENT_BODY_BUFFER_SIZE,
    CLIENT_MAX_BODY_SIZE, INSTANCES, MAX_BUFFERED_BYTES, MAX_CONCURRENCY, MAX_HEADER_BYTES,
    MAX_KEYS, MAX_QUEUE, RESPONSE_BUFFER_SIZE, WORKERS,
};
use sluicegate_redis::GlobalGcra;

use super::model::{Config, PerKeyRate, QueueOrder, Scope};
use super::values::Rate;
use super::wire::UpstreamUrl;
use crate::state::Host;

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

/// Reads and checks the config file at `path`, and that the token and secret files it
/// names (relative paths taken from the file's directory) can be read. A regular file is
/// read twice and refused when the two reads differ (a writer part-way through it); a pipe
/// or device (`--config /dev/stdin`, `--config <(…)`) reads once, so it is read once.
///
/// # Errors
///
/// A [`ConfigError`] when the file cannot be read or the config cannot be used; for a
/// token or secret file that cannot be read or is empty, located at its setting.
pub fn read(path: &Path) -> Result<Config, ConfigError> {
    // A path that cannot be looked at fails its read below, with the read's error.
    let regular = std::fs::metadata(path).map_or(true, |m| m.is_file());
    read_with(path, regular, |p| {
        read_bounded(
            p,
            CONFIG_BOUND,
            "a config (one of 5000 pools and routes is under 2 MB)",
            "Name the config file itself",
        )
    })
}

/// The most of a config file the gate reads. The largest realistic config, a few thousand
/// pools and routes, is a megabyte or two (2000 of each, every setting written: 0.7 MB;
/// 5000: 1.7 MB); a file that goes on past this is something else — a device or pipe that
/// never ends, a log named by mistake — and reading it whole would take the host's memory
/// (trial 34: 14.5 GB on a reload).
const CONFIG_BOUND: u64 = 64 << 20;

/// The most of a `token_file` or `secret_file` the gate reads: a token is tens of bytes.
const SECRET_BOUND: u64 = 64 << 10;

/// The bytes of the file at `path`, read whole if it holds at most `bound` of them. A read
/// never takes more than `bound + 1` bytes, so a file that never ends (`/dev/zero`, a pipe a
/// runaway program writes) ends the read there, and a reload waiting on it (`gate.rs`) soon
/// goes on. `of` (what the file holds) and `instead` (what to do) go in the refusal.
///
/// # Errors
///
/// The file's own read errors; [`ErrorKind::FileTooLarge`](std::io::ErrorKind::FileTooLarge)
/// past `bound`.
fn read_bounded(path: &Path, bound: u64, of: &str, instead: &str) -> std::io::Result<Vec<u8>> {
    read_bounded_until(path, bound, Instant::now() + READ_DEADLINE, of, instead)
}

/// The longest a read of the config, token or secret file goes on, and (`gate.rs`) the
/// longest a reload waits for one: local files take milliseconds, a network mount's hiccup
/// seconds. A pipe nobody writes or a mount that hangs blocks the read itself, which cannot
/// be stopped (it keeps one blocking thread until it ends), so the reload is refused instead of
/// waiting for good; a pipe that writes slowly without end is stopped at its next write past it.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);

/// [`read_bounded`], ending with [`ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut) at
/// the first bytes that come after `deadline`: a pipe that writes a little at a time without
/// end would otherwise hold the read (and every reload after it) until it reached the bound.
fn read_bounded_until(
    path: &Path,
    bound: u64,
    deadline: Instant,
    of: &str,
    instead: &str,
) -> std::io::Result<Vec<u8>> {
    // In parts of a megabyte, joined at the end: a file that never ends costs the bound once,
    // not the doublings of one growing buffer (which the gate's allocator keeps: 230 MB after
    // a reload of `/dev/zero` read with `read_to_end`).
    let part_len = usize::try_from(bound + 1).map_or(1 << 20, |b| b.min(1 << 20));
    let mut file = Until {
        inner: std::fs::File::open(path)?,
        deadline,
        of,
        instead,
    }
    .take(bound + 1);
    let mut parts = Vec::new();
    loop {
        let mut part = Vec::with_capacity(part_len);
        (&mut file).take(part_len as u64).read_to_end(&mut part)?;
        let full = part.len() == part_len;
        parts.push(part);
        if !full {
            break;
        }
    }
    if parts.iter().map(|p| p.len() as u64).sum::<u64>() > bound {
        let size = match bound {
            b if b >= 1 << 20 => format!("{} MiB", b >> 20),
            b => format!("{} KiB", b >> 10),
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "it goes on past {size}, the most the gate reads of {of}: is it a device or a \
                 pipe that never ends (`/dev/zero`, a program writing without end), or a log \
                 named by mistake? {instead}"
            ),
        ));
    }
    Ok(parts.concat())
}

/// A file read that ends once its deadline has passed, looked at as each read returns
/// bytes: a read that ends by itself (the file's end) is never refused for its time.
struct Until<'a> {
    inner: std::fs::File,
    deadline: Instant,
    of: &'a str,
    instead: &'a str,
}

impl Read for Until<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 && Instant::now() >= self.deadline {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "it still goes on after {} s, longer than the gate reads {}: is it a pipe \
                     or device that writes without end? {}",
                    READ_DEADLINE.as_secs(),
                    self.of,
                    self.instead
                ),
            ));
        }
        Ok(n)
    }
}

/// The secret in `path` (a `token_file` or `secret_file`), trimmed, read within 64 KiB:
/// `what` names the setting in the errors (`"the admin token_file"`).
///
/// # Errors
///
/// A file that cannot be read, goes on past the bound, or holds only white space: said with
/// `what` and the path.
pub fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    let bytes = read_bounded(
        path,
        SECRET_BOUND,
        "a token or secret file",
        "Write only the token or secret in it",
    )
    .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        format!(
            "cannot read {what} {}: it is not UTF-8 text",
            path.display()
        )
    })?;
    match text.trim() {
        "" => Err(format!(
            "{what} {} is empty: write the token or secret in it (white space around it is \
             left out)",
            path.display()
        )),
        secret => Ok(secret.to_owned()),
    }
}

/// [`read`], with the file's bytes read by `read_bytes` (a test's seam: a file that changes
/// between two reads). `twice`: read it a second time to compare (a regular file).
fn read_with(
    path: &Path,
    twice: bool,
    mut read_bytes: impl FnMut(&Path) -> std::io::Result<Vec<u8>>,
) -> Result<Config, ConfigError> {
    let file = path.display().to_string();
    let cannot = |e: std::io::Error| ConfigError {
        file: file.clone(),
        at: None,
        message: format!("cannot read the config: {e}"),
    };
    // Read twice: a writer part-way through the file (truncated, then written in parts) can
    // leave a part that is a config of its own. Two reads that differ catch a writer at
    // work; one that paused between its writes looks like a finished file, which is why the
    // message (and docs/gate.md) say to replace the file whole.
    let bytes = read_bytes(path).map_err(cannot)?;
    if twice && read_bytes(path).map_err(cannot)? != bytes {
        return Err(ConfigError {
            file,
            at: None,
            message: "the file changed while it was read (two reads differ): it may be \
                      half written. Write the new config to a file next to it and rename \
                      that over it (`mv`, an atomic replace), then reload (a file replaced \
                      that way just as it was read: reload again)"
                .into(),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| not_utf8(&file, e))?;
    // An empty file is what a reader most often catches of a file rewritten in place
    // (truncated, not yet written): said as that, not as a config without pools.
    if text.trim().is_empty() {
        return Err(ConfigError {
            file,
            at: None,
            message: "the config is empty: if it is being written, write the new config to \
                      a file next to it and rename that over it (`mv`, an atomic replace), \
                      then reload"
                .into(),
        });
    }
    let mut config = parse(&text, &file)?;
    // A relative path in the file is relative to the file, wherever the gate is started
    // from (a service manager starts it in `/`).
    let dir = path.parent().unwrap_or(Path::new(""));
    let store = config.store.as_mut();
    let (ca, cert, key) = match store {
        Some(s) => (
            s.tls_ca_file.as_mut(),
            s.tls_cert_file.as_mut(),
            s.tls_key_file.as_mut(),
        ),
        None => (None, None, None),
    };
    for f in [
        config.admin.token_file.as_mut(),
        config.bypass.secret_file.as_mut(),
        ca,
        cert,
        key,
    ]
    .into_iter()
    .flatten()
    {
        if f.get_ref().is_relative() {
            *f.get_mut() = dir.join(f.get_ref());
        }
    }
    // The files it names, located at their setting: serve and check would refuse them
    // a moment later with no place in the file.
    for (f, what) in [
        (config.admin.token_file.as_ref(), "the admin token_file"),
        (config.bypass.secret_file.as_ref(), "the bypass secret_file"),
    ] {
        let Some(f) = f else { continue };
        let Err(why) = read_secret(f.get_ref(), what) else {
            continue;
        };
        return Err(ConfigError {
            file,
            at: Some(line_col(&text, f.span().start)),
            message: why,
        });
    }
    Ok(config)
}

/// A config whose bytes are not UTF-8, located at the first bad byte (what comes before it
/// is text, read as any config is: lines and characters).
fn not_utf8(file: &str, e: std::string::FromUtf8Error) -> ConfigError {
    let at = e.utf8_error().valid_up_to();
    let bytes = e.as_bytes();
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    ConfigError {
        file: file.to_owned(),
        at: Some(line_col(before, at)),
        message: format!(
            "the config is not UTF-8 text: byte 0x{:02X} here is not UTF-8 (a file saved as \
             Latin-1 or another code page?): save it as UTF-8",
            bytes[at]
        ),
    }
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
    let config: Config = toml::from_str(text).map_err(|e| {
        let mut message = e.message().trim().to_owned();
        // toml says only "duplicate key": name it, from the text the error points at.
        if message == "duplicate key"
            && let Some(key) = e.span().and_then(|s| text.get(s)).map(str::trim)
        {
            message = format!("duplicate key `{key}`: each key may be set once in a table");
        }
        // A number beyond 128 bits, which toml refuses before any setting sees it: said as
        // the setting says any number too large, from the key written before it.
        if message == "integer number overflowed"
            && let Some(bounds) = e
                .span()
                .and_then(|s| key_before(text, s.start))
                .and_then(|key| bounds::ALL.iter().find(|b| b.key == key))
        {
            message = bounds.too_large();
        }
        // A value that is text written without its quotes, as on the command line
        // (`listen = 127.0.0.1:8080`, `grace_period = 1.5s`): toml reads it as a number or a
        // time gone wrong ("invalid float, expected nothing"), which says nothing of quotes.
        if UNQUOTED.iter().any(|m| message.starts_with(m))
            && let Some((key, quoted)) = e.span().and_then(|s| unquoted_value(text, s.start))
        {
            message = format!("{message}: `{key}` takes text, in quotes: write `{key} = {quoted}`");
        }
        error(e.span(), message)
    })?;
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
/// reloads to log as warnings: a pool no route names, a pool that starts shut (a limit or a
/// rate of 0), a `burst` beside a rate of 0 (which
/// lets nothing through, burst or not), a route an earlier one shadows, a
/// route method that is not a standard one (`GTE`), a `[store]` without `instances` while a global pool falls back to `local` (each gate
/// would then take the whole limit while Redis is down).
pub fn warnings(config: &Config) -> Vec<String> {
    let mut out = Vec::new();
    let named: std::collections::HashSet<&str> = config
        .routes
        .iter()
        .map(|r| r.pool.get_ref().as_str())
        .collect();
    for p in &config.pools {
        let name = p.name.get_ref();
        if !named.contains(name.as_str()) {
            out.push(format!(
                "pool `{name}` is named by no route: no request reaches it"
            ));
        }
    }
    out.extend(config.pools.iter().flat_map(starts_shut));
    out.extend(config.pools.iter().flat_map(burst_of_nothing));
    out.extend(shadowed(&config.routes));
    out.extend(client_address_warnings(config));
    for m in config.routes.iter().flat_map(|r| &r.methods) {
        let upper = m.get_ref().to_ascii_uppercase();
        if !STANDARD_METHODS.contains(&upper.as_str()) {
            out.push(format!(
                "route method `{}` is not a standard HTTP method (GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE, PATCH): a route on it only matches clients that send exactly that; is it a typo?",
                m.get_ref()
            ));
        }
    }
    if let Some(store) = config.store.as_ref().filter(|s| s.instances.is_none()) {
        let local: Vec<String> = config
            .pools
            .iter()
            .filter(|p| {
                (p.scope == super::Scope::Global
                    || p.per_key_rate.as_ref().is_some_and(PerKeyRate::is_global))
                    && p.on_redis_failure.unwrap_or(store.on_redis_failure)
                        == super::OnFailure::Local
            })
            .map(|p| format!("`{}`", p.name.get_ref()))
            .collect();
        if !local.is_empty() {
            out.push(format!(
                "`[store] instances` is not set: while redis is down, the `local` policy of the global pools {} gives this gate the whole of each limit (each client's whole `per_key_rate`, when it is global), as if it were the only gate; set `instances` to the number of gates sharing the store",
                local.join(", ")
            ));
        }
    }
    out
}

/// A pool that lets nothing through from its start: `max_concurrency = 0` (every request
/// `503`) or a rate of 0 (`429`). Legal, and the kill switch when set at run time, but in a
/// file, or as `--max-concurrency 0` on the command line, more often a slip; `serve` and
/// `check` said nothing and every request was turned away. A rate of 0 beside a `burst` is
/// left to [`burst_of_nothing`], which says the same and more.
fn starts_shut(pool: &super::model::Pool) -> Vec<String> {
    let name = pool.name.get_ref();
    let open_again = format!(
        "until a limit above 0 is set (`PUT /pools/{name}/limits` on the admin API) or the gate is given one (in the file, then a reload; or on the command line)"
    );
    let mut out = Vec::new();
    if pool.max_concurrency == Some(0) {
        out.push(format!(
            "pool `{name}` starts shut: `max_concurrency = 0` (`--max-concurrency 0`) turns every request away with 503 {open_again}"
        ));
    }
    for (table, rate) in rates(pool) {
        if let Some((rate, None)) = rate
            && rate.count == 0
        {
            let flag = if table.is_empty() {
                format!(" (`--rate {rate}`)")
            } else {
                String::new()
            };
            out.push(format!(
                "pool `{name}` starts shut: `{table}rate = \"{rate}\"`{flag} turns every request away with 429 {open_again}"
            ));
        }
    }
    out
}

/// A `burst` beside a rate of 0 (`0/s`): the rate lets no request through, and the burst
/// does nothing (the library ignores it). Warned of, not refused: `PUT /pools/NAME/limits`
/// with `rate: "0/s"` on a pool whose file has a burst must still shut it.
fn burst_of_nothing(pool: &super::model::Pool) -> Vec<String> {
    rates(pool)
        .into_iter()
        .filter_map(|(table, rate)| match rate? {
            (rate, Some(burst)) if rate.count == 0 => Some(format!(
                "pool `{}`: `{table}burst = {burst}` does nothing: `rate = \"{rate}\"` lets no request through, burst or not; remove `burst` (or give the rate a count)",
                pool.name.get_ref()
            )),
            _ => None,
        })
        .collect()
}

/// A rate with its burst, if the pool has it, and the table it is written in.
type RateIn = (&'static str, Option<(Rate, Option<u32>)>);

/// A pool's two rates, each with its burst and the table it is written in (the pool's own,
/// then `[pools.per_key_rate]`), for the warnings that read them.
fn rates(pool: &super::model::Pool) -> [RateIn; 2] {
    let per_key = pool.per_key_rate.as_ref().map(|k| (k.rate, k.burst));
    [
        ("", pool.rate.map(|r| (r, pool.burst))),
        ("[pools.per_key_rate] ", per_key),
    ]
}

/// A rule broken: where (a byte span, when known) and why.
type Broken = (Option<Range<usize>>, String);

/// Whether `upstream` names the address `listen` binds: the same port, and the same host
/// (a wildcard listen address takes the loopback names too).
fn loops_back(upstream: &UpstreamUrl, listen: std::net::SocketAddr) -> bool {
    if upstream.authority.port_u16().unwrap_or(80) != listen.port() {
        return false;
    }
    let host = upstream
        .authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let wildcard = listen.ip().is_unspecified();
    match host.parse::<std::net::IpAddr>() {
        // IPv4 written as IPv6 (`[::ffff:127.0.0.1]`) reaches the same socket.
        Ok(ip) => {
            let ip = ip.to_canonical();
            ip == listen.ip() || (wildcard && (ip.is_loopback() || ip.is_unspecified()))
        }
        Err(_) => host.eq_ignore_ascii_case("localhost") && (wildcard || listen.ip().is_loopback()),
    }
}

/// The rules no single field can check on its own, and those on values the quick form's
/// flags set (a file's are refused where they are read: `model.rs`).
fn check(config: &Config) -> Result<(), Broken> {
    if let Some(n) = config.workers {
        WORKERS.check_usize(n).map_err(|m| (None, m))?;
    }
    let header_bytes = &config.max_header_bytes;
    MAX_HEADER_BYTES
        .check_usize(*header_bytes.get_ref())
        .map_err(|m| (Some(header_bytes.span()), m))?;
    CLIENT_BODY_BUFFER_SIZE
        .check_usize(config.client_body_buffer_size)
        .map_err(|m| (None, m))?;
    RESPONSE_BUFFER_SIZE
        .check_usize(config.response_buffer_size)
        .map_err(|m| (None, m))?;
    MAX_BUFFERED_BYTES
        .check_usize(config.max_buffered_bytes)
        .map_err(|m| (None, m))?;
    if let Some(n) = config.client_max_body_size {
        CLIENT_MAX_BODY_SIZE
            .check(i128::from(n))
            .map_err(|m| (None, m))?;
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
    for p in &config.pools {
        if let Some(own) = config.listen.iter().find(|l| loops_back(&p.upstream, l.0)) {
            return Err((
                Some(p.name.span()),
                format!(
                    "pool `{}`: its upstream `{}` is the gate's own `listen` address `{}`: every \
                     request would come back to the gate; give the service's address",
                    p.name.get_ref(),
                    p.upstream,
                    own.0
                ),
            ));
        }
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
        (Some(h), Some(_))
            if NEEDED_HEADERS.contains(&h.get_ref().to_ascii_lowercase().as_str()) =>
        {
            return Err((
                Some(h.span()),
                format!(
                    "`[bypass] header = \"{}\"`: the gate removes the bypass header from every request before forwarding it, so the upstream would never get this one; give the bypass a header of its own, like `x-sluicegate-bypass`",
                    h.get_ref()
                ),
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
    check_client_address(&config.client_address)?;
    check_store(config)?;
    check_pools(config)?;
    check_routes(config)
}

/// `[client_address] header` is read only from `trusted_proxies`: without them it would
/// never be read, which is not what its writer meant.
fn check_client_address(c: &super::ClientAddress) -> Result<(), Broken> {
    match &c.header {
        Some(h) if c.trusted_proxies.is_empty() => Err((
            Some(h.span()),
            format!(
                "`[client_address] header = \"{}\"` needs `trusted_proxies`, the networks of the proxies that write it: the gate reads the header only on connections from them (a client sends whatever it likes in it); list them, like `trusted_proxies = [\"10.0.0.0/8\"]`, or remove `header` to count clients by the connection's address",
                h.get_ref().name()
            ),
        )),
        _ => Ok(()),
    }
}

/// What `[client_address]` and the per-client keys may get wrong and still work: a trusted
/// network that takes every address in (every client then names its own address), a
/// per-client key on a header a client writes itself.
fn client_address_warnings(config: &Config) -> Vec<String> {
    let c = &config.client_address;
    let mut out: Vec<String> = c
        .trusted_proxies
        .iter()
        .filter(|n| n.0.prefix_len() == 0)
        .map(|n| {
            format!(
                "`[client_address] trusted_proxies` has `{}`, every address: every client is then a trusted proxy and may name any address in `{}`, as a fresh per-client key for each request; list only your proxies' networks",
                n.0,
                c.header().name()
            )
        })
        .collect();
    for p in &config.pools {
        if let Some(k) = &p.per_key_rate
            && let super::KeySource::Header(h) = &k.key
            && ["x-forwarded-for", "forwarded", "x-real-ip"].contains(&h.as_str())
        {
            out.push(format!(
                "pool `{}`: `[pools.per_key_rate] key = \"header:{h}\"` counts the header as the client wrote it: a client that sends a new `{h}` with each request is a new key each time; count `client_ip`, with the proxies in front listed in `[client_address] trusted_proxies` (the client is then read from `{h}` from the right, past them)",
                p.name.get_ref()
            ));
        }
    }
    out
}

fn check_store(config: &Config) -> Result<(), Broken> {
    let Some(store) = &config.store else {
        return Ok(());
    };
    let url = store.redis.get_ref();
    let tls = url.starts_with("rediss://") || url.starts_with("valkeys://");
    if !tls
        && !["redis://", "redis+unix://", "unix://"]
            .iter()
            .any(|scheme| url.starts_with(scheme))
    {
        return Err((
            Some(store.redis.span()),
            format!(
                "invalid redis URL `{}`: write `redis://HOST:PORT`, like `redis://127.0.0.1:6379` (`rediss://HOST:PORT` for TLS)",
                store.redis_shown()
            ),
        ));
    }
    // tls115: the files are for TLS; a plain URL with them would silently not use them.
    for (key, file) in [
        ("tls_ca_file", &store.tls_ca_file),
        ("tls_cert_file", &store.tls_cert_file),
        ("tls_key_file", &store.tls_key_file),
    ] {
        if let Some(file) = file
            && !tls
        {
            return Err((
                Some(file.span()),
                format!(
                    "`{key}` is for TLS, and `redis = \"{}\"` is plain: write `rediss://HOST:PORT` with the port where Redis serves TLS, or remove `{key}`",
                    store.redis_shown()
                ),
            ));
        }
    }
    match (&store.tls_cert_file, &store.tls_key_file) {
        (Some(cert), None) => {
            return Err((
                Some(cert.span()),
                "`tls_cert_file` needs `tls_key_file`, the file of its private key".into(),
            ));
        }
        (None, Some(key)) => {
            return Err((
                Some(key.span()),
                "`tls_key_file` needs `tls_cert_file`, the client certificate it is the key of"
                    .into(),
            ));
        }
        _ => {}
    }
    if let Some(n) = &store.instances {
        INSTANCES
            .check(i128::from(*n.get_ref()))
            .map_err(|m| (Some(n.span()), m))?;
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
        let per_key_global = pool
            .per_key_rate
            .as_ref()
            .is_some_and(PerKeyRate::is_global);
        if pool.on_redis_failure.is_some() && !per_key_global {
            return Err(format!(
                "pool `{name}`: `on_redis_failure` is for limits kept in the store: add `scope = \"global\"` (to the pool, or to its `[pools.per_key_rate]`) or remove it"
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

/// The rules for a `[pools.per_key_rate] scope = "global"`: a store to keep it in, and a
/// `burst × interval` the scripts hold.
fn check_per_key_scope(config: &Config, pool: &super::model::Pool) -> Result<(), Broken> {
    let Some(k) = pool.per_key_rate.as_ref().filter(|k| k.is_global()) else {
        return Ok(());
    };
    let name = pool.name.get_ref();
    let at = Some(k.scope.span());
    if config.store.is_none() {
        return Err((
            at,
            format!(
                "pool `{name}`: `[pools.per_key_rate] scope = \"global\"` keeps each client's rate in the store, and there is none: add `[store]` with `redis = \"redis://127.0.0.1:6379\"` (and `instances = N`, the number of gates sharing it), or remove `scope` to count each client in each gate"
            ),
        ));
    }
    check_global_horizon(name, k.rate, k.burst)
        .map_err(|m| (at, m.replacen("`burst", "`[pools.per_key_rate] burst", 1)))
}

fn check_pools(config: &Config) -> Result<(), Broken> {
    if config.pools.is_empty() {
        return Err((
            None,
            "no pools: add a `[[pools]]` table with a `name`, an `upstream` and `max_concurrency`"
                .into(),
        ));
    }
    // Names seen so far: a set, not a scan of the earlier pools (thousands of pools).
    let mut seen = std::collections::HashSet::new();
    for pool in &config.pools {
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
        if !seen.insert(name.as_str()) {
            return Err((
                at,
                format!("a second pool named `{name}`: pool names must differ"),
            ));
        }
        // The bounds of values the quick form's flags set (a file's are checked as read).
        let in_pool = |m: String| (at.clone(), format!("pool `{name}`: {m}"));
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
            (Some(n), None) => MAX_CONCURRENCY.check_usize(n).map_err(in_pool)?,
            (None, Some(a)) => {
                for (bounds, n) in [
                    (ADAPTIVE_INITIAL, a.initial),
                    (ADAPTIVE_MIN, a.min),
                    (ADAPTIVE_MAX, a.max),
                ] {
                    if let Some(n) = n {
                        bounds.check_usize(n).map_err(in_pool)?;
                    }
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
                if let Some(init) = a.initial
                    && (a.max.is_some_and(|hi| init > hi) || a.min.is_some_and(|lo| init < lo))
                {
                    return Err((
                        at,
                        format!(
                            "pool `{name}`: adaptive `initial` ({init}) is outside `min`..`max`: the limit starts between its bounds"
                        ),
                    ));
                }
            }
        }
        check_scope(config, pool).map_err(|message| (at.clone(), message))?;
        check_per_key_scope(config, pool)?;
        if pool.scope == Scope::Global
            && let Some(rate) = pool.rate
        {
            check_global_horizon(name, rate, pool.burst).map_err(|m| (at.clone(), m))?;
        }
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
        let per_key_burst = pool.per_key_rate.as_ref().and_then(|k| k.burst);
        for burst in [pool.burst, per_key_burst].into_iter().flatten() {
            BURST.check(burst.into()).map_err(in_pool)?;
        }
        if pool.burst.is_some() && pool.rate.is_none() {
            return Err((
                at,
                format!(
                    "pool `{name}`: `burst` is the burst of the pool's `rate`, and there is none: set `rate` or remove `burst` (a per-client burst goes in `[pools.per_key_rate]`)"
                ),
            ));
        }
        MAX_QUEUE.check_usize(pool.max_queue).map_err(in_pool)?;
        if let Some(k) = &pool.per_key_rate {
            MAX_KEYS
                .check_usize(*k.max_keys.get_ref())
                .map_err(|m| (Some(k.max_keys.span()), m))?;
        }
    }
    Ok(())
}

/// A global rate's `burst × interval` (how long a full burst takes to refill) within what
/// the Redis scripts hold, [`GlobalGcra::MAX_HORIZON_NS`] (about 52 days): the build would
/// refuse it later with no place in the file, and a reload after preparing other pools.
fn check_global_horizon(name: &str, rate: Rate, burst: Option<u32>) -> Result<(), String> {
    let quota = rate.quota(burst);
    let Some(t) = quota.emission_interval() else {
        return Ok(());
    };
    // As the Redis builder counts it.
    let t_ns = u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1);
    let horizon = t_ns.saturating_mul(u64::from(quota.burst()));
    if horizon <= GlobalGcra::MAX_HORIZON_NS {
        return Ok(());
    }
    // `rate` is at most one an hour, so at least 1250.
    let largest = GlobalGcra::MAX_HORIZON_NS / t_ns;
    let shorter = if rate.period > std::time::Duration::from_secs(1) {
        "a rate over a shorter period (`N/m` or `N/s`)"
    } else {
        "a higher count"
    };
    #[allow(clippy::cast_precision_loss)] // Days, for people.
    let days = horizon as f64 / 86_400e9;
    Err(format!(
        "pool `{name}`: `burst = {}` at `rate = \"{rate}\"` takes {days:.0} days to refill, and redis holds a global rate for at most 52 days (2^52 ns): write `burst = {largest}` or less, or {shorter}",
        quota.burst()
    ))
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
    let pools: std::collections::HashSet<&str> = config
        .pools
        .iter()
        .map(|p| p.name.get_ref().as_str())
        .collect();
    for route in &config.routes {
        let pool = route.pool.get_ref();
        if !pools.contains(pool.as_str()) {
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
        super::prefix::check(route.path_prefix.get_ref())
            .map_err(|why| (Some(route.path_prefix.span()), why))?;
        if let Some(m) = route
            .methods
            .iter()
            .find(|m| http::Method::from_bytes(m.get_ref().as_bytes()).is_err())
        {
            return Err((
                Some(m.span()),
                format!(
                    "route method `{}` is not an HTTP method, write one like `GET`",
                    m.get_ref()
                ),
            ));
        }
        if let Some(h) = &route.host {
            check_host(h.get_ref()).map_err(|why| (Some(h.span()), why))?;
        }
    }
    Ok(())
}

/// Request headers the framing, the routing or the upstream's own reading of a request
/// needs: `[bypass] header` (removed from every request) may not be one of them.
const NEEDED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "content-type",
    "content-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "authorization",
    "proxy-authorization",
    "cookie",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "user-agent",
    "accept",
    "origin",
    "referer",
];

/// A route's `host` as clients send it in `Host`: an IPv6 address in brackets, a name in
/// ASCII.
fn check_host(host: &str) -> Result<(), String> {
    if !host.starts_with('[') && host.parse::<std::net::Ipv6Addr>().is_ok() {
        return Err(format!(
            "route `host = \"{host}\"` is an IPv6 address: write it in brackets, `\"[{host}]\"`, as clients send it in `Host`"
        ));
    }
    // As a request's `Host` is matched: without one trailing dot (`state::host_name`).
    if host.strip_suffix('.').unwrap_or(host).is_empty() {
        return Err(format!(
            "route `host = \"{host}\"` names no host: write a name, like `\"api.example.com\"`, or leave `host` out to match any"
        ));
    }
    if !host.is_ascii() {
        return Err(format!(
            "route `host = \"{host}\"`: clients send a name in ASCII, its punycode form (`xn--…`): write that form"
        ));
    }
    // nginx's `server_name` patterns (`*.example.com`, `.example.com` for a name and its
    // subdomains, `_` for the default server): a route compares the host whole, so one
    // written so takes no request a client sends, and the requests meant for it go to a
    // later route, past its limits.
    if host.contains('*') || host.starts_with('.') || host == "_" {
        return Err(format!(
            "route `host = \"{host}\"` is a pattern, but a route's `host` matches one name, whole (no wildcards, no leading dot for subdomains): write a route for each name, like `\"api.example.com\"`, or leave `host` out to match any"
        ));
    }
    // Held to the request `Host` check: a host it refuses (`400`) is a route no request
    // reaches.
    if !crate::proxy::valid_host(host.as_bytes()) {
        return Err(format!(
            "route `host = \"{host}\"` is a host no request can name (a `Host` naming it is refused `400`): write a name (`api.example.com`), an IPv4 address or an IPv6 address in brackets (`[::1]`), without a zone"
        ));
    }
    // A request's `Host` is routed decoded (`%61pi.example` is `api.example`, RFC 3986
    // §6.2.2.2), so a route written encoded would compare as another name.
    if host.contains('%') {
        return Err(format!(
            "route `host = \"{host}\"` is percent-encoded: requests' hosts are decoded before they are routed, write the name decoded (a name beyond ASCII in its punycode form, `xn--…`)"
        ));
    }
    // Routing compares the host without its port, so a port would match any port.
    let port = match host.strip_prefix('[') {
        Some(literal) => literal
            .split_once(']')
            .is_some_and(|(_, rest)| !rest.is_empty()),
        None => host.contains(':'),
    };
    if port {
        let name = match host.strip_prefix('[') {
            Some(literal) => format!("[{}]", literal.split_once(']').map_or("", |(a, _)| a)),
            None => host.split(':').next().unwrap_or("").to_owned(),
        };
        return Err(format!(
            "route `host = \"{host}\"` has a port: routes match a host on any port (the gate routes on the name, not the port), write `\"{name}\"`"
        ));
    }
    Ok(())
}

/// A warning for each route an earlier one shadows.
///
/// With thousands of routes the pairs are millions (review 22, finding 3: 961 ms of a
/// 2000-route reload), so each route's host and methods are read once ([`Seen`]), and a
/// route is compared only with the earlier routes without a `host` and those with its host,
/// where [`covers`] decides.
fn shadowed(routes: &[super::model::Route]) -> Vec<String> {
    let seen: Vec<Seen<'_>> = routes.iter().map(Seen::of).collect();
    let mut hostless: Vec<usize> = Vec::new();
    let mut by_host: HashMap<&Host<String>, Vec<usize>> = HashMap::new();
    let mut out = Vec::new();
    for (i, later) in seen.iter().enumerate() {
        // The earliest route that covers it: of those without a host, and of its host's.
        let first = |earlier: &[usize]| earlier.iter().copied().find(|&j| covers(&seen[j], later));
        let shadow = match later.host.as_ref().and_then(|h| by_host.get(h)) {
            Some(same) => match (first(&hostless), first(same)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            None => first(&hostless),
        };
        if let Some(j) = shadow {
            out.push(format!(
                "route {} (pool `{}`) is never reached: route {} (pool `{}`) before it takes every request it would match",
                i + 1,
                later.route.pool.get_ref(),
                j + 1,
                routes[j].pool.get_ref()
            ));
        }
        match &later.host {
            Some(h) => by_host.entry(h).or_default().push(i),
            None => hostless.push(i),
        }
    }
    out
}

/// A route as the shadow check compares it: its host as routing compares hosts
/// ([`state::route_host`](crate::state::route_host): `example.com.` is `example.com`,
/// `[0::1]` is `[::1]`) and its methods upper-cased, each read once.
struct Seen<'a> {
    route: &'a super::model::Route,
    host: Option<Host<String>>,
    methods: Vec<String>,
}

impl<'a> Seen<'a> {
    fn of(route: &'a super::model::Route) -> Seen<'a> {
        let methods = route
            .methods
            .iter()
            .map(|m| m.get_ref().to_ascii_uppercase())
            .collect();
        Seen {
            route,
            host: route
                .host
                .as_ref()
                .map(|h| crate::state::route_host(h.get_ref())),
            methods,
        }
    }
}

/// Whether every request `later` matches is matched by `earlier` first: any host or the
/// same, any method or a superset, and a prefix of its prefix.
fn covers(earlier: &Seen<'_>, later: &Seen<'_>) -> bool {
    let (em, lm) = (&earlier.methods, &later.methods);
    earlier
        .host
        .as_ref()
        .is_none_or(|h| later.host.as_ref() == Some(h))
        && (em.is_empty() || (!lm.is_empty() && lm.iter().all(|m| em.contains(m))))
        && later
            .route
            .path_prefix
            .get_ref()
            .starts_with(earlier.route.path_prefix.get_ref().as_str())
}

/// The methods of RFC 9110 §9 and PATCH (RFC 5789).
const STANDARD_METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH",
];

/// toml's words for a bare value it tried to read as a number, date or time.
const UNQUOTED: [&str; 4] = [
    "invalid float",
    "invalid time",
    "invalid exponent",
    "invalid date",
];

/// For the `key = value` on the line of byte `at` of `text`, where `value` is bare text
/// that toml could not read as a number: the key as written (dotted, `admin.listen`: the
/// advice is to write that line, and its last part alone names another setting), and the
/// value as it should be written, in quotes (each element of a list). `None` for a
/// whole-number setting, whose value must not be quoted, a line that is no `key = value`,
/// and a value this one line cannot show whole: an inline table (`admin = { listen = … }`)
/// or a list that goes on to the next line.
fn unquoted_value(text: &str, at: usize) -> Option<(&str, String)> {
    let start = text.get(..at)?.rfind('\n').map_or(0, |i| i + 1);
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let (key, value) = text[start..end].split_once('=')?;
    let key = key.trim();
    let last = key.rsplit('.').next()?;
    let value = value.split('#').next()?.trim();
    let plain =
        |k: &str| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let partial = value.starts_with('{') || (value.starts_with('[') && !value.ends_with(']'));
    if !key.split('.').all(plain)
        || value.is_empty()
        || partial
        || bounds::ALL.iter().any(|b| b.key == last)
    {
        return None;
    }
    let quote = |v: &str| format!("\"{}\"", v.trim().trim_matches('"'));
    let quoted = match value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        Some(list) => format!(
            "[{}]",
            list.split(',').map(quote).collect::<Vec<_>>().join(", ")
        ),
        None => quote(value),
    };
    Some((key, quoted))
}

/// The key of the `key = value` whose value starts at byte `at` of `text` (its last part,
/// unquoted: `b` for `a."b" = 1`).
fn key_before(text: &str, at: usize) -> Option<&str> {
    let line = text.get(..at)?.rsplit('\n').next()?;
    let key = line.trim_end().strip_suffix('=')?.trim_end();
    key.rsplit('.').next().map(|k| k.trim().trim_matches('"'))
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
    use sluicegate::concurrency::ConcurrencyLimiter;

    use super::*;

    const MINIMAL: &str = "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9000\"\nmax_concurrency = 4\n\n[[routes]]\npool = \"api\"\n";

    /// Asserts that [`MINIMAL`] with `line` added to its route is refused at `at` (its line
    /// and column), saying `says`.
    fn assert_route_refused(line: &str, at: (usize, usize), says: &str) {
        let refused = parse(&format!("{MINIMAL}{line}\n"), "g.toml").expect_err(line);
        assert_eq!(refused.at, Some(at), "{line}: {refused}");
        assert!(refused.message.contains(says), "{line}: {refused}");
    }

    /// Newcomer 57: `listen = 127.0.0.1:8080` (the address as `--listen` takes it) was
    /// refused as "invalid float, expected nothing", without a word of quotes.
    #[test]
    fn a_bare_text_value_is_told_to_go_in_quotes() {
        let refused = |line: &str| parse(&format!("{line}\n{MINIMAL}"), "g.toml").expect_err(line);
        let e = refused("listen = 127.0.0.1:8080");
        assert!(
            e.message
                .ends_with(": `listen` takes text, in quotes: write `listen = \"127.0.0.1:8080\"`"),
            "{e}"
        );
        assert_eq!(e.at, Some((1, 15)), "{e}");
        let e = refused("listen = [127.0.0.1:8080, 127.0.0.1:8081] # two");
        assert!(
            e.message
                .contains("write `listen = [\"127.0.0.1:8080\", \"127.0.0.1:8081\"]`"),
            "{e}"
        );
        let e = refused("grace_period = 1.5s");
        assert!(e.message.contains("write `grace_period = \"1.5s\"`"), "{e}");
        let e = refused("send_timeout = 1:30");
        assert!(e.message.contains("write `send_timeout = \"1:30\"`"), "{e}");
        // Review 59: a dotted key is repeated whole (`listen = …` alone is the proxy's own
        // address), and a value the line does not hold whole gets no advice.
        let e = refused("admin.listen = 127.0.0.1:9901");
        assert!(
            e.message.ends_with(
                "`admin.listen` takes text, in quotes: write `admin.listen = \"127.0.0.1:9901\"`"
            ),
            "{e}"
        );
        for line in [
            "admin = { listen = 127.0.0.1:9901 }",
            "listen = [127.0.0.1:8080,\n  127.0.0.1:8081]",
        ] {
            let e = refused(line);
            assert!(!e.message.contains("quotes"), "{line}: {e}");
        }
        // A whole-number setting is never told to quote its value.
        let e = refused("workers = 1.2.3");
        assert!(!e.message.contains("quotes"), "{e}");
        assert!(parse(&format!("listen = \"127.0.0.1:8080\"\n{MINIMAL}"), "g.toml").is_ok());
    }

    /// Review 2026-12-04-control-races, case 5: a file read while its writer is part-way
    /// through (truncated, the first part written) can be a valid config of its own, here
    /// the pools without the route that uses the second one. The text changes between two
    /// reads: refused, saying to write beside and rename.
    #[test]
    fn a_file_that_changes_while_it_is_read_is_refused() {
        let whole = format!(
            "{MINIMAL}\n[[pools]]\nname = \"b\"\nupstream = \"http://127.0.0.1:9001\"\n\
             max_concurrency = 2\n\n[[routes]]\npath_prefix = \"/b/\"\npool = \"b\"\n"
        );
        let part = MINIMAL.to_owned();
        parse(&part, "part.toml").expect("the part is a config of its own");
        let mut reads = vec![part, whole.clone()].into_iter();
        let path = Path::new("/nowhere/gate.toml");
        let refused = read_with(path, true, |_| {
            Ok(reads.next().unwrap_or_else(|| whole.clone()).into_bytes())
        })
        .expect_err("a file that changed between two reads was taken");
        let said = refused.to_string();
        assert!(said.contains("changed while it was read"), "{said}");
        assert!(said.contains("rename"), "{said}");
        // A file that stays the same is read as before.
        let config = read_with(path, true, |_| Ok(whole.clone().into_bytes())).unwrap();
        assert_eq!(config.pools.len(), 2);
    }

    /// A newcomer's trial: `check` said `ok` for a pool whose upstream was the gate itself.
    #[test]
    fn an_upstream_that_is_the_gate_itself_is_refused() {
        for (listen, upstream, loops) in [
            ("127.0.0.1:8080", "http://127.0.0.1:8080", true),
            ("0.0.0.0:8080", "http://localhost:8080", true),
            ("[::]:8080", "http://[::1]:8080", true),
            ("127.0.0.1:80", "http://localhost", true),
            // IPv4 written as IPv6 (trial34): the same socket.
            ("127.0.0.1:8080", "http://[::ffff:127.0.0.1]:8080", true),
            ("0.0.0.0:8080", "http://[::ffff:127.0.0.1]:8080", true),
            ("127.0.0.1:8080", "http://127.0.0.1:9000", false),
            ("127.0.0.2:8080", "http://127.0.0.1:8080", false),
        ] {
            let text = MINIMAL.replace("http://127.0.0.1:9000", upstream);
            let r = parse(&format!("listen = [\"{listen}\"]\n{text}"), "g.toml");
            match r {
                Err(e) if loops => {
                    assert!(
                        e.to_string().contains("is the gate's own `listen` address"),
                        "{e}"
                    );
                }
                Ok(_) if !loops => {}
                other => panic!("{listen} / {upstream}: {other:?}"),
            }
        }
    }

    /// A newcomer's two slips: one address without a list, as `[admin] listen` and
    /// `--listen` take it (now read as a list of one), and `[pools]` for `[[pools]]` (said
    /// "invalid type: map, expected a sequence").
    #[test]
    fn one_listen_address_is_a_list_of_one_and_a_single_pools_table_says_what_to_write() {
        let c = parse(&format!("listen = \"127.0.0.1:8080\"\n{MINIMAL}"), "g.toml").unwrap();
        assert_eq!(c.listen.len(), 1);
        assert_eq!(c.listen[0].0.to_string(), "127.0.0.1:8080");
        let e = parse("listen = \"nowhere\"\n", "g.toml").unwrap_err();
        assert_eq!(e.at, Some((1, 10)), "{e}");
        for key in ["pools", "routes"] {
            let text = MINIMAL.replace(&format!("[[{key}]]"), &format!("[{key}]"));
            let e = parse(&text, "g.toml").unwrap_err().to_string();
            assert!(
                e.contains(&format!("write `[[{key}]]` (two brackets)")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_minimal_config_gets_its_defaults() {
        let c = parse(MINIMAL, "gate.toml").unwrap();
        assert_eq!(c.pools[0].max_queue, 1024);
        assert_eq!(c.pools[0].queue_timeout.to_string(), "10s");
        assert!(c.pools[0].predictive);
        assert_eq!(c.routes[0].path_prefix.get_ref(), "/");
        assert_eq!(*c.max_header_bytes.get_ref(), 16384);
        assert_eq!(
            c.pools[0].tunnel_idle_timeout.0,
            std::time::Duration::from_secs(60)
        );
        assert_eq!(c.client_body_buffer_size, 64 * 1024);
        assert_eq!(c.response_buffer_size, 256 * 1024);
        assert_eq!(c.max_buffered_bytes, 256 << 20);
    }

    /// `response_buffer_size` (0 to 16 MiB) and `max_buffered_bytes` (0 to 1 TiB): `0`
    /// taken, past the top refused in the gate's words at the value, nginx's units refused
    /// with the bytes to write.
    #[test]
    fn the_answer_buffer_and_the_cap_have_bounds() {
        let read = |k: &str, v: &str| parse(&format!("{k} = {v}\n{MINIMAL}"), "g.toml");
        let c = read("response_buffer_size", "0").unwrap();
        assert_eq!(c.response_buffer_size, 0);
        let c = read("max_buffered_bytes", "0").unwrap();
        assert_eq!(c.max_buffered_bytes, 0);
        let c = read("max_buffered_bytes", "1099511627776").unwrap();
        assert_eq!(c.max_buffered_bytes, 1 << 40);
        for (k, v, says) in [
            (
                "response_buffer_size",
                "16777217",
                "`response_buffer_size` must be at most 16777216, not 16777217",
            ),
            (
                "response_buffer_size",
                "\"256k\"",
                "write `response_buffer_size = 262144` for \"256k\"",
            ),
            (
                "max_buffered_bytes",
                "1099511627777",
                "`max_buffered_bytes` must be at most 1099511627776, not 1099511627777",
            ),
            (
                "max_buffered_bytes",
                "-1",
                "`max_buffered_bytes` must be at least 0, not -1",
            ),
        ] {
            let e = read(k, v).unwrap_err();
            assert!(e.message.contains(says), "{k} = {v}: {e}");
            assert_eq!(e.at, Some((1, k.len() + 4)), "{k} = {v}: {e}");
        }
    }

    /// trial117's leftover: `max_header_bytes = "32k"`, nginx's way, said "expected a whole
    /// number, like 8"; it says the bytes to write, at the value, as
    /// `client_body_buffer_size` does, and a number stays taken with its place kept.
    #[test]
    fn header_bytes_in_nginx_s_units_say_the_bytes_to_write() {
        let read = |v: &str| parse(&format!("max_header_bytes = {v}\n{MINIMAL}"), "g.toml");
        let e = read("\"32k\"").unwrap_err();
        assert_eq!(e.at, Some((1, 20)), "{e}");
        assert!(
            e.message
                .contains("write `max_header_bytes = 32768` for \"32k\""),
            "{e}"
        );
        let c = read("32768").unwrap();
        assert_eq!(*c.max_header_bytes.get_ref(), 32768);
        assert_eq!(c.max_header_bytes.span(), 19..24);
    }

    /// `client_body_buffer_size`: 64 KiB when left out, `0` taken (nothing read ahead),
    /// refused past 16 MiB and below 0 in the gate's words, at the value.
    #[test]
    fn the_client_body_buffer_has_a_default_and_bounds() {
        let read = |v: &str| {
            parse(
                &format!("client_body_buffer_size = {v}\n{MINIMAL}"),
                "g.toml",
            )
        };
        assert_eq!(read("0").unwrap().client_body_buffer_size, 0);
        assert_eq!(read("16777216").unwrap().client_body_buffer_size, 1 << 24);
        let e = read("16777217").unwrap_err();
        assert_eq!(e.at, Some((1, 27)), "{e}");
        assert!(
            e.message
                .starts_with("`client_body_buffer_size` must be at most 16777216, not 16777217"),
            "{e}"
        );
        let e = read("-1").unwrap_err();
        assert!(
            e.message
                .starts_with("`client_body_buffer_size` must be at least 0, not -1"),
            "{e}"
        );
        // trial117: nginx's sizes, which an operator of nginx's setting writes, said
        // "expected a whole number, like 8"; they say the number of bytes to write.
        for (v, says) in [
            (
                "\"64k\"",
                "write `client_body_buffer_size = 65536` for \"64k\"",
            ),
            (
                "\"1M\"",
                "write `client_body_buffer_size = 1048576` for \"1M\"",
            ),
            (
                "\"131072\"",
                "write `client_body_buffer_size = 131072` for \"131072\"",
            ),
            (
                "\"lots\"",
                "takes a whole number of bytes, like 65536, not \"lots\"",
            ),
            ("8.5", "expected a whole number of bytes"),
        ] {
            let e = read(v).unwrap_err();
            assert!(e.message.contains(says), "{v}: {e}");
            assert_eq!(e.at, Some((1, 27)), "{v}: {e}");
        }
    }

    /// `client_max_body_size`: none when left out (every body taken, as before the setting),
    /// 1 byte to 1 TiB whole; `0`, nginx's way to write no bound, is refused with the way to
    /// write it here, and nginx's sizes with the bytes to write, at the value.
    #[test]
    fn the_largest_body_is_none_by_default_and_has_bounds() {
        let read = |v: &str| parse(&format!("client_max_body_size = {v}\n{MINIMAL}"), "g.toml");
        assert_eq!(parse(MINIMAL, "g.toml").unwrap().client_max_body_size, None);
        assert_eq!(read("1").unwrap().client_max_body_size, Some(1));
        assert_eq!(
            read("1099511627776").unwrap().client_max_body_size,
            Some(1 << 40)
        );
        for (v, says) in [
            (
                "0",
                "`client_max_body_size` must be at least 1, not 0 (for no bound, nginx's `0`, leave the setting out)",
            ),
            (
                "\"0\"",
                "`client_max_body_size` must be at least 1, not \"0\" (for no bound, nginx's `0`, leave the setting out)",
            ),
            (
                "1099511627777",
                "`client_max_body_size` must be at most 1099511627776, not 1099511627777 (1 TiB)",
            ),
            (
                "\"10m\"",
                "write `client_max_body_size = 10485760` for \"10m\"",
            ),
            (
                "\"1g\"",
                "write `client_max_body_size = 1073741824` for \"1g\"",
            ),
            (
                "99999999999999999999999999999999999999999",
                "`client_max_body_size` must be at most 1099511627776 (1 TiB)",
            ),
        ] {
            let e = read(v).unwrap_err();
            assert!(e.message.contains(says), "{v}: {e}");
            assert_eq!(e.at, Some((1, 24)), "{v}: {e}");
        }
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
                pool_field("tunnel_idle_timeout = \"0s\""),
                (5, 23),
                "`tunnel_idle_timeout` must be longer than 0",
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

    /// Defect pinned: a number beyond 64 bits (`max_concurrency = 99999999999999999999`)
    /// was refused in serde's words, "invalid value: integer `…` as i128, expected usize",
    /// one beyond 32 bits for a 32-bit setting as "expected u32", and a negative one as
    /// "expected usize"; a `max_queue` too large was located at the pool's name. Every
    /// whole-number setting now says its range in the gate's words, at the value.
    #[test]
    fn a_whole_number_out_of_range_is_refused_in_the_gates_words_at_the_value() {
        let huge = "99999999999999999999";
        let pool_field = |field: &str| {
            MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{field}"),
            )
        };
        let adaptive = |field: &str| {
            MINIMAL.replace("max_concurrency = 4", &format!("[pools.adaptive]\n{field}"))
        };
        let permits = ConcurrencyLimiter::MAX_PERMITS;
        let cases = [
            (
                format!("workers = {huge}\n{MINIMAL}"),
                (1, 11),
                "`workers` must be at most 1024".to_owned(),
            ),
            (
                format!("workers = -2\n{MINIMAL}"),
                (1, 11),
                "`workers` must be at least 1, not -2".to_owned(),
            ),
            (
                format!("max_header_bytes = {huge}\n{MINIMAL}"),
                (1, 20),
                "`max_header_bytes` must be at most 1048576".to_owned(),
            ),
            (
                // Beyond what TOML reads at all (128 bits).
                format!("response_buffer_size = 1{:0>42}\n{MINIMAL}", 0),
                (1, 24),
                "`response_buffer_size` must be at most 16777216".to_owned(),
            ),
            (
                // Beyond what TOML reads at all (128 bits).
                format!("max_buffered_bytes = 1{:0>42}\n{MINIMAL}", 0),
                (1, 22),
                "`max_buffered_bytes` must be at most 1099511627776".to_owned(),
            ),
            (
                format!("[store]\nredis = \"redis://x\"\ninstances = {huge}\n{MINIMAL}"),
                (3, 13),
                "`instances` must be at most 4294967295".to_owned(),
            ),
            (
                MINIMAL.replace("max_concurrency = 4", &format!("max_concurrency = {huge}")),
                (4, 19),
                format!("`max_concurrency` must be at most {permits}, not {huge}"),
            ),
            (
                pool_field(&format!("max_queue = {huge}")),
                (5, 13),
                "`max_queue` must be at most 1048576".to_owned(),
            ),
            (
                pool_field("max_queue = -1"),
                (5, 13),
                "`max_queue` must be at least 0, not -1".to_owned(),
            ),
            (
                // Beyond what TOML reads at all (128 bits).
                pool_field("max_queue = 1000000000000000000000000000000000000000000"),
                (5, 13),
                "`max_queue` must be at most 1048576".to_owned(),
            ),
            (
                pool_field("rate = \"5/s\"\nburst = 5000000000"),
                (6, 9),
                "`burst` must be at most 4294967295, not 5000000000".to_owned(),
            ),
            (
                adaptive(&format!("initial = {huge}")),
                (5, 11),
                format!("`initial` must be at most {permits}"),
            ),
            (
                adaptive(&format!("min = {huge}")),
                (5, 7),
                format!("`min` must be at most {permits}"),
            ),
            (
                adaptive("max = -5"),
                (5, 7),
                "`max` must be at least 1, not -5".to_owned(),
            ),
            (
                pool_field(&format!(
                    "[pools.per_key_rate]\nrate = \"5/s\"\nburst = {huge}"
                )),
                (7, 9),
                "`burst` must be at most 4294967295".to_owned(),
            ),
            (
                pool_field(&format!(
                    "[pools.per_key_rate]\nrate = \"5/s\"\nmax_keys = {huge}"
                )),
                (7, 12),
                "`max_keys` must be at most 10000000".to_owned(),
            ),
        ];
        for (text, at, says) in cases {
            let e = parse(&text, "g.toml").unwrap_err();
            assert!(e.message.contains(&says), "{says}: {e}");
            assert_eq!(e.at, Some(at), "{e}");
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
        for (n, ok) in [(0, false), (1, true), (1024, true), (1025, false)] {
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

    /// A global rate whose `burst × interval` is longer than the Redis scripts hold (2^52
    /// ns, about 52 days) passed the config check and failed only at the build, with no
    /// place in the file (`check` said `pool `g`: global rate: ...`; a reload built the
    /// pools before it first).
    #[test]
    fn a_global_rate_beyond_what_redis_holds_is_refused_at_the_pool_naming_the_largest_burst() {
        let global = |rate: &str, burst: &str| {
            let pool = MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\nscope = \"global\"\nrate = \"{rate}\"\n{burst}"),
            );
            parse(
                &format!("[store]\nredis = \"redis://x\"\ninstances = 1\n{pool}"),
                "g.toml",
            )
        };
        let e = global("1/h", "burst = 2000").unwrap_err();
        assert_eq!(e.at, Some((5, 8)), "{e}");
        assert!(e.to_string().starts_with("g.toml:5:8: pool `api`"), "{e}");
        // 2^52 ns / 3600 s = 1250.9: 1250 passes, 1251 does not.
        assert!(e.message.contains("`burst = 1250`"), "{e}");
        assert!(e.message.contains("shorter period"), "{e}");
        global("1/h", "burst = 1250").unwrap();
        assert!(global("1/h", "burst = 1251").is_err());
        // Hybrid mode keeps the same state in redis.
        assert!(global("1/h", "burst = 2000\nmode = \"hybrid\"").is_err());
        // No burst: the count's, always one period; a denial of all has no interval.
        global("1/h", "").unwrap();
        global("0/h", "burst = 2000").unwrap();
        global("100000/s", "burst = 4000000000").unwrap();
        // The same rate in a local pool: the library holds 2^62 ns.
        let local = MINIMAL.replace(
            "max_concurrency = 4",
            "max_concurrency = 4\nrate = \"1/h\"\nburst = 2000",
        );
        parse(&local, "g.toml").unwrap();
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
        // tls115: `rediss://` is built in (redis111 refused it here, the client being built
        // without TLS); its files are for TLS only, and a client certificate needs its key.
        parse(&with_store("redis = \"rediss://u:pw@x:6380\""), "g.toml").unwrap();
        let tls = with_store("redis = \"rediss://x:6380\"\ntls_ca_file = \"ca.crt\"");
        let store = parse(&tls, "g.toml").unwrap().store.unwrap();
        assert_eq!(
            store.tls_ca_file.unwrap().get_ref().to_str(),
            Some("ca.crt")
        );
        let e = parse(
            &with_store("redis = \"redis://u:pw@x:6379\"\ntls_ca_file = \"ca.crt\""),
            "g.toml",
        )
        .unwrap_err();
        assert_eq!(e.at, Some((3, 15)), "{e}");
        assert!(e.message.contains("is for TLS"), "{e}");
        assert!(!e.message.contains("pw"), "{e}");
        let e = parse(
            &with_store("redis = \"rediss://x:6380\"\ntls_cert_file = \"c.crt\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("needs `tls_key_file`"), "{e}");
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

    /// keyed119: a per-client rate may be global in a local pool. It needs a store (said at
    /// its `scope`), takes the pool's `on_redis_failure`, is held to what the scripts hold,
    /// and a store without `instances` is warned of for it too.
    #[test]
    fn a_global_per_key_rate_needs_a_store_and_takes_the_pools_failure_policy() {
        let per_key = |pool: &str, per_key: &str| {
            MINIMAL.replace(
                "max_concurrency = 4\n",
                &format!("max_concurrency = 4\n{pool}\n[pools.per_key_rate]\n{per_key}\n"),
            )
        };
        let global = "rate = \"5/s\"\nscope = \"global\"";
        let e = parse(&per_key("", global), "g.toml").unwrap_err();
        assert_eq!(e.at, Some((8, 9)), "at the scope's value: {e}");
        assert!(
            e.message.contains("and there is none: add `[store]`"),
            "{e}"
        );
        let store = "[store]\nredis = \"redis://x\"\n";
        let config = parse(
            &format!("{store}{}", per_key("on_redis_failure = \"deny\"", global)),
            "g.toml",
        )
        .unwrap();
        assert!(config.pools[0].per_key_rate.as_ref().unwrap().is_global());
        assert!(warnings(&config).is_empty(), "deny: no share to warn of");
        let w = warnings(&parse(&format!("{store}{}", per_key("", global)), "g.toml").unwrap());
        assert!(w[0].contains("`[store] instances` is not set"), "{w:?}");
        assert!(w[0].contains("`api`"), "{w:?}");
        // A local one has no failure policy, and needs no store.
        let e = parse(
            &per_key("on_redis_failure = \"deny\"", "rate = \"5/s\""),
            "g.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("to its `[pools.per_key_rate]`"), "{e}");
        parse(&per_key("", "rate = \"5/s\"\nscope = \"local\""), "g.toml").unwrap();
        // 2^52 ns / 3600 s = 1250.9, as for the pool's rate.
        let e = parse(
            &format!(
                "{store}instances = 1\n{}",
                per_key("", "rate = \"1/h\"\nburst = 2000\nscope = \"global\"")
            ),
            "g.toml",
        )
        .unwrap_err();
        assert!(
            e.message.contains("`[pools.per_key_rate] burst = 2000`"),
            "{e}"
        );
        assert!(e.message.contains("write `burst = 1250`"), "{e}");
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
                "`on_redis_failure` is for limits kept in the store",
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

    /// Review 22, finding 8: a route `host` that the request `Host` check refuses (a zone,
    /// not an address in brackets, text after the bracket, a space) was taken, and every
    /// request naming it got `400`: a dead route nobody was told of. And a port, which
    /// routing ignores (the route took every port), is refused saying so.
    #[test]
    fn a_route_host_no_request_can_name_is_refused() {
        for (host, says) in [
            ("[fe80::1%eth0]", "no request can name"),
            ("[fe80::1%25eth0]", "no request can name"),
            ("[zz]", "no request can name"),
            ("[::1]x", "no request can name"),
            ("a b", "no request can name"),
            ("a/b", "no request can name"),
            ("api.example:8080", "any port"),
            ("[::1]:8080", "any port"),
            ("%61pi.example", "percent-encoded"),
        ] {
            assert_route_refused(&format!("host = \"{host}\""), (8, 8), says);
        }
        // What requests name still works: names, IPv4, IPv6 and IPvFuture literals,
        // sub-delims, a trailing dot.
        for host in [
            "api.example",
            "API.example.",
            "127.0.0.1",
            "[::1]",
            "[v1.x]",
            "a-b_c~d",
        ] {
            parse(&format!("{MINIMAL}host = \"{host}\"\n"), "g.toml")
                .unwrap_or_else(|e| panic!("{host}: {e}"));
        }
    }

    /// Pins review 4's finding 9: mistakes `check` passed (a `burst` with no `rate`, an
    /// adaptive `initial` above `max`, `host = "::1"` that `strip_port` turned into `:`, a
    /// non-ASCII host, absurd sizes and durations), and errors located at the wrong place
    /// (`budget` at `redis`, route fields at `pool`) or not naming what was wrong
    /// ("duplicate key").
    #[test]
    fn review_4_config_mistakes_are_refused_where_they_are_written() {
        let pool = |add: &str| {
            MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{add}"),
            )
        };
        let route = |add: &str| format!("{MINIMAL}{add}\n");
        let cases = [
            (
                pool("burst = 5"),
                Some((2, 8)),
                "set `rate` or remove `burst`",
            ),
            (
                MINIMAL.replace(
                    "max_concurrency = 4",
                    "[pools.adaptive]\ninitial = 500\nmax = 10",
                ),
                Some((2, 8)),
                "`initial` (500) is outside `min`..`max`",
            ),
            (
                route("host = \"::1\""),
                Some((8, 8)),
                "write it in brackets, `\"[::1]\"`",
            ),
            (route("host = \"bücher.example\""), Some((8, 8)), "punycode"),
            (route("host = \".\""), Some((8, 8)), "names no host"),
            (route("host = \"\""), Some((8, 8)), "names no host"),
            (
                route("path_prefix = \"pay\""),
                Some((8, 15)),
                "must start with `/`",
            ),
            (
                route("path_prefix = \"/a/../pay\""),
                Some((8, 15)),
                "write `\"/pay\"`",
            ),
            (
                route("methods = [\"GET\", \"G T\"]"),
                Some((8, 19)),
                "`G T` is not an HTTP method",
            ),
            (
                format!("max_header_bytes = 18446744073709551615\n{MINIMAL}"),
                Some((1, 20)),
                "at most 1048576",
            ),
            (
                pool("max_queue = 4000000000"),
                Some((5, 13)),
                "`max_queue` must be at most 1048576",
            ),
            (
                pool("[pools.per_key_rate]\nrate = \"5/s\"\nmax_keys = 100000000000"),
                Some((7, 12)),
                "`max_keys` must be at most 10000000",
            ),
            (
                pool("queue_timeout = \"5000000000000h\""),
                Some((5, 17)),
                "more than a day",
            ),
            (
                pool("tunnel_idle_timeout = \"25h\""),
                Some((5, 23)),
                "write at most `24h`",
            ),
            (
                format!("grace_period = \"25h\"\n{MINIMAL}"),
                Some((1, 16)),
                "write at most `24h`",
            ),
            (
                format!("[store]\nredis = \"redis://x\"\nbudget = \"0ms\"\n{MINIMAL}"),
                Some((3, 10)),
                "`[store] budget` must be longer than 0",
            ),
            (
                pool("max_concurrency = 5"),
                None,
                "duplicate key `max_concurrency`",
            ),
        ];
        for (text, at, says) in cases {
            let e = parse(&text, "g.toml").unwrap_err();
            assert!(e.message.contains(says), "{says}: {e}");
            if at.is_some() {
                assert_eq!(e.at, at, "{e}");
            }
        }
        assert!(parse(&format!("grace_period = \"24h\"\n{MINIMAL}"), "g.toml").is_ok());
    }

    /// `[admin] max_connections`: 64 when left out (with or without `[admin]`), refused
    /// where it is written outside 1..=4096.
    #[test]
    fn admin_max_connections_has_a_default_and_bounds() {
        let admin = |add: &str| format!("[admin]\nlisten = \"127.0.0.1:0\"\n{add}\n{MINIMAL}");
        assert_eq!(parse(MINIMAL, "g.toml").unwrap().admin.max_connections, 64);
        assert_eq!(
            parse(&admin(""), "g.toml").unwrap().admin.max_connections,
            64
        );
        let c = parse(&admin("max_connections = 4096"), "g.toml").unwrap();
        assert_eq!(c.admin.max_connections, 4096);
        for (value, says) in [
            ("0", "`max_connections` must be at least 1, not 0"),
            ("-3", "`max_connections` must be at least 1, not -3"),
            ("4097", "`max_connections` must be at most 4096, not 4097"),
            (
                "99999999999999999999999999999999999999999",
                "`max_connections` must be at most 4096",
            ),
            ("\"many\"", "expected a whole number"),
        ] {
            let e = parse(&admin(&format!("max_connections = {value}")), "g.toml").unwrap_err();
            assert!(e.message.contains(says), "{value}: {e}");
            assert_eq!(e.at, Some((3, 19)), "{value}: {e}");
        }
    }

    /// Newcomer 57: a pool that starts shut (`max_concurrency = 0`, a rate of `0/s`) was
    /// served and checked without a word, and every request was turned away.
    #[test]
    fn a_pool_that_starts_shut_is_warned_of() {
        let pool = |extra: &str| {
            format!(
                "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\n{extra}\n[[routes]]\npool = \"api\"\n"
            )
        };
        let said = |extra: &str| warnings(&parse(&pool(extra), "g.toml").unwrap());
        let w = said("max_concurrency = 0");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("pool `api` starts shut: `max_concurrency = 0` (`--max-concurrency 0`) turns every request away with 503 until a limit above 0 is set (`PUT /pools/api/limits` on the admin API) or the gate is given one"),
            "{w:?}"
        );
        let w = said("max_concurrency = 4\nrate = \"0/s\"");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("`rate = \"0/s\"` (`--rate 0/s`) turns every request away with 429"),
            "{w:?}"
        );
        let w =
            said("max_concurrency = 4\n[pools.per_key_rate]\nrate = \"0/m\"\nkey = \"client_ip\"");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("`[pools.per_key_rate] rate = \"0/m\"`"),
            "{w:?}"
        );
        // A rate of 0 with a burst is said once, by the burst's warning.
        let w = said("max_concurrency = 4\nrate = \"0/s\"\nburst = 5");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("does nothing"), "{w:?}");
        assert!(said("max_concurrency = 1\nrate = \"1/h\"").is_empty());
    }

    /// A method that is a valid token but no standard one (`GTE`) is most likely a typo:
    /// warned of, not refused (an extension method is legal HTTP).
    #[test]
    fn a_non_standard_method_is_warned_of() {
        let c = parse(
            &format!("{MINIMAL}methods = [\"get\", \"GTE\"]\n"),
            "g.toml",
        )
        .unwrap();
        let w = warnings(&c);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("route method `GTE` is not a standard HTTP method"),
            "{w:?}"
        );
    }

    /// An adaptive pool with no queue (review 28, finding 2) was warned of while its limit
    /// could not learn the demand without callers that wait; the limit now learns it from the
    /// callers turned away, and the warning would send an operator who wants fast failures to
    /// a queue for nothing.
    #[test]
    fn an_adaptive_pool_without_a_queue_is_not_warned_of() {
        for queue in [0, 1] {
            let toml = format!(
                "[[pools]]\nname = \"api\"\nupstream = \"http://127.0.0.1:9\"\nmax_queue = {queue}\n[pools.adaptive]\n[[routes]]\npool = \"api\"\n"
            );
            let w = warnings(&parse(&toml, "a.toml").unwrap());
            assert!(w.is_empty(), "{w:?}");
        }
    }

    /// A newcomer's trial: a relative `token_file` was looked for in the directory the gate
    /// was started from (`/` under a service manager), not beside the config.
    #[test]
    fn a_relative_token_or_secret_file_is_found_beside_the_config() {
        let dir = std::env::temp_dir().join(format!("sg-relative-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tok"), "t0ken\n").unwrap();
        std::fs::write(dir.join("sec"), "s3cret\n").unwrap();
        let path = dir.join("gate.toml");
        std::fs::write(
            &path,
            format!(
                "[admin]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"tok\"\n\
                 [bypass]\nheader = \"x-b\"\nsecret_file = \"sec\"\n{MINIMAL}"
            ),
        )
        .unwrap();
        // The test runs in the crate's directory, where neither file is.
        let c = read(&path).unwrap();
        assert_eq!(c.admin.token_file.unwrap().into_inner(), dir.join("tok"));
        assert_eq!(c.bypass.secret_file.unwrap().into_inner(), dir.join("sec"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Pins the last point of review 4's finding 9: an unreadable token or secret file was
    /// refused without the `LINE:COL` of its setting that `check` promises.
    #[test]
    fn an_unreadable_token_or_secret_file_is_located_at_its_setting() {
        let dir = std::env::temp_dir().join(format!("sluicegate-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty");
        std::fs::write(&empty, "\n").unwrap();
        for (top, at, says) in [
            (
                "[admin]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"/nonexistent/tok\"".to_owned(),
                (3, 14),
                "cannot read the admin token_file /nonexistent/tok",
            ),
            (
                format!(
                    "[bypass]\nheader = \"x-b\"\nsecret_file = \"{}\"",
                    empty.display()
                ),
                (3, 15),
                // Newcomer 57: it said only "is empty", not what to put there.
                "is empty: write the token or secret in it",
            ),
        ] {
            let path = dir.join("g.toml");
            std::fs::write(&path, format!("{top}\n{MINIMAL}")).unwrap();
            let e = read(&path).unwrap_err();
            assert_eq!(e.at, Some(at), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file read in parts comes back whole, byte for byte, up to its bound exactly; one
    /// byte more is refused.
    #[test]
    fn a_bounded_read_takes_a_file_of_many_parts_whole_up_to_its_bound() {
        let dir = std::env::temp_dir().join(format!("sluicegate-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        let len = (3 << 20) + 17;
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read_bounded(&path, CONFIG_BOUND, "", "").unwrap(), bytes);
        assert_eq!(read_bounded(&path, len as u64, "", "").unwrap(), bytes);
        let e = read_bounded(&path, len as u64 - 1, "", "").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trial 34's leftover: a pipe that writes without end but slowly (a byte a second never
    /// reaches the 64 MiB bound) held the read, and every reload after it, for good. A read
    /// still getting bytes past its deadline now ends there. The deadline here has passed
    /// before the first bytes come; the writer never stops on its own.
    #[test]
    fn a_read_still_getting_bytes_past_its_deadline_ends_there() {
        let dir = std::env::temp_dir().join(format!("sluicegate-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pipe = dir.join("g.toml");
        let made = std::process::Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap();
        assert!(made.success());
        let writer = std::thread::spawn({
            let pipe = pipe.clone();
            move || {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().write(true).open(pipe).unwrap();
                // Ends when the reader has gone (a broken pipe), never by itself.
                while f.write_all(b"# slowly\n").is_ok() {}
            }
        });
        let e = read_bounded_until(
            &pipe,
            CONFIG_BOUND,
            Instant::now(),
            "a config",
            "Name the file",
        )
        .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("writes without end"), "{e}");
        writer.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trial 34, finding 3: a `token_file` or `secret_file` on `/dev/zero` (or any file
    /// that never ends) was read whole into memory. Past 64 KiB it is refused at its setting,
    /// saying so.
    #[test]
    fn a_token_or_secret_file_past_64_kib_is_refused_at_its_setting() {
        let dir = std::env::temp_dir().join(format!("sluicegate-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len((64 << 10) + 1).unwrap();
        // Just at the bound is a token, read whole.
        let at_bound = dir.join("at-bound");
        std::fs::write(&at_bound, "t".repeat(64 << 10)).unwrap();
        for (top, at) in [
            (
                format!(
                    "[admin]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"{}\"",
                    big.display()
                ),
                (3, 14),
            ),
            (
                format!(
                    "[bypass]\nheader = \"x-b\"\nsecret_file = \"{}\"",
                    big.display()
                ),
                (3, 15),
            ),
        ] {
            let path = dir.join("g.toml");
            std::fs::write(&path, format!("{top}\n{MINIMAL}")).unwrap();
            let e = read(&path).unwrap_err();
            assert_eq!(e.at, Some(at), "{e}");
            assert!(e.message.contains(&big.display().to_string()), "{e}");
            assert!(e.message.contains("64 KiB"), "{e}");
            let top = top.replace(&*big.to_string_lossy(), &at_bound.to_string_lossy());
            std::fs::write(&path, format!("{top}\n{MINIMAL}")).unwrap();
            read(&path).unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trial 34, finding 4: a written adaptive bound that an algorithm's default bound
    /// contradicted was clamped onto it without a word — gradient2 with `max = 10` was held
    /// at 10 (its default floor of 20 cut to the ceiling: a fixed limit), aimd's `min = 500`
    /// cut to its default ceiling of 200, vegas' `initial = 5000` started at 1000 and
    /// gradient2's `initial = 1` at 20. The written bound now moves the default one: the
    /// bounds in force keep what is written, with room to adapt.
    #[tokio::test]
    async fn a_written_adaptive_bound_moves_the_default_bound_it_contradicts() {
        for (written, in_force) in [
            ("algorithm = \"gradient2\"\nmax = 10", (10, 1, 10)),
            ("algorithm = \"aimd\"\nmin = 500", (500, 500, 5000)),
            ("algorithm = \"vegas\"\ninitial = 5000", (5000, 1, 5000)),
            ("algorithm = \"gradient2\"\ninitial = 1", (1, 1, 200)),
            // Nothing contradicted: the defaults as they are.
            ("algorithm = \"gradient2\"\nmax = 50", (20, 20, 50)),
            ("algorithm = \"aimd\"\nmin = 100", (100, 100, 200)),
        ] {
            let text = format!(
                "[[pools]]\nname = \"p\"\nupstream = \"http://127.0.0.1:1\"\n\
                 [pools.adaptive]\n{written}\n[[routes]]\npool = \"p\"\n"
            );
            let pool = parse(&text, "t").unwrap().pools.remove(0);
            let b = crate::pool::Limit::build(&pool, None)
                .unwrap()
                .bounds()
                .unwrap();
            assert_eq!((b.initial, b.min, b.max), in_force, "{written}");
        }
    }

    /// Trial 34, finding 6: `check` passed a `path_prefix` no request path can start with —
    /// a raw non-ASCII character, a space, a `?` or a `#` — and the route was dead. Each is
    /// refused at the prefix with the form to write (percent-encoded, as clients send it).
    #[test]
    fn a_path_prefix_no_request_path_can_hold_is_refused_with_the_form_to_write() {
        for (prefix, says) in [
            ("/é", "write `\"/%C3%A9\"`"),
            ("/a b", "write `\"/a%20b\"`"),
            ("/a\\tb", "write `\"/a%09b\"`"),
            ("/q?x", "write `\"/q\"`, or `\"/q%3Fx\"`"),
            ("/a#b", "write `\"/a\"`, or `\"/a%23b\"`"),
            // Normalised too: what is written is what a request's normal path holds.
            ("//é/./x", "write `\"/%C3%A9/x\"`"),
        ] {
            let line = format!("path_prefix = \"{prefix}\"");
            assert_route_refused(&line, (8, 15), "would match nothing");
            assert_route_refused(&line, (8, 15), says);
        }
        // What a request path can hold still passes, `%XX` of other bytes included.
        for prefix in ["/%C3%A9", "/a%20b/", "/~user", "/a;b=c", "/x%2Fy"] {
            let text = format!("{MINIMAL}path_prefix = \"{prefix}\"\n");
            parse(&text, "g.toml").unwrap();
        }
    }

    /// Trial 34, smaller edges: a config with a byte that is not UTF-8 was refused as
    /// `cannot read the config: stream did not contain valid UTF-8`, with no line or column,
    /// unlike every other config error. It is located at the first bad byte.
    #[test]
    fn a_byte_that_is_not_utf8_is_located_at_its_line_and_column() {
        let dir = std::env::temp_dir().join(format!("sluicegate-utf8-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g.toml");
        // Latin-1 `é` (0xE9) after a UTF-8 `é`: columns count characters, as elsewhere.
        let mut bytes = MINIMAL
            .replace("\"api\"\nupstream", "\"é\"\nupstream")
            .into_bytes();
        let at = bytes.iter().position(|&b| b == b'\n').unwrap() + 1 + "name = \"é".len();
        bytes.insert(at, 0xE9);
        std::fs::write(&path, &bytes).unwrap();
        let e = read(&path).unwrap_err();
        assert_eq!(e.at, Some((2, 10)), "{e}");
        assert!(e.message.contains("UTF-8"), "{e}");
        assert!(e.message.contains("0xE9"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Trial 34, smaller edges: `rate = "0/s"` with `burst = 5` was taken without a word,
    /// though a rate of 0 lets nothing through whatever the burst (the library ignores it).
    /// `0/s` stays (the documented way to let no request through a rate) and the burst is
    /// warned of, for the pool's rate and a per-key rate alike — a warning, not an error, so
    /// that `PUT /pools/NAME/limits` with `rate: "0/s"` on a pool whose file has a burst
    /// still shuts it at once.
    #[test]
    fn a_burst_beside_a_rate_of_zero_is_warned_of() {
        for (add, says) in [
            (
                "rate = \"0/s\"\nburst = 5",
                "pool `api`: `burst = 5` does nothing",
            ),
            (
                "[pools.per_key_rate]\nrate = \"0/m\"\nburst = 3",
                "pool `api`: `[pools.per_key_rate] burst = 3` does nothing",
            ),
        ] {
            let text = MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{add}"),
            );
            let said = warnings(&parse(&text, "g.toml").unwrap());
            assert!(
                said.iter()
                    .any(|w| w.contains(says) && w.contains("lets no request through")),
                "{said:?}"
            );
        }
        // A burst beside a rate above 0: nothing to say. A rate of 0 alone: no word of a
        // burst, only that the pool starts shut (`a_pool_that_starts_shut_is_warned_of`).
        for (add, shut) in [
            ("rate = \"0/s\"", true),
            ("rate = \"5/s\"\nburst = 5", false),
        ] {
            let text = MINIMAL.replace(
                "max_concurrency = 4",
                &format!("max_concurrency = 4\n{add}"),
            );
            let said = warnings(&parse(&text, "g.toml").unwrap());
            assert_eq!(said.len(), usize::from(shut), "{add}: {said:?}");
            assert!(
                said.iter().all(|w| w.contains("starts shut")),
                "{add}: {said:?}"
            );
        }
    }

    /// Pins a point of review 4's finding 9: a pool no route names and a route shadowed by
    /// an earlier catch-all passed `check` without a word.
    #[test]
    fn an_unreachable_pool_or_route_is_warned_of() {
        let text = MINIMAL.replace(
            "[[routes]]",
            "[[pools]]\nname = \"spare\"\nupstream = \"http://127.0.0.1:9001\"\nmax_concurrency = 1\n\n[[pools]]\nname = \"pay\"\nupstream = \"http://127.0.0.1:9002\"\nmax_concurrency = 1\n\n[[routes]]\npath_prefix = \"/pa\"\nmethods = [\"GET\", \"POST\"]\npool = \"api\"\n\n[[routes]]\npath_prefix = \"/pay\"\nmethods = [\"post\"]\npool = \"pay\"\n\n[[routes]]\nhost = \"x.example\"\npool = \"pay\"\n\n[[routes]]",
        );
        let w = warnings(&parse(&text, "g.toml").unwrap());
        assert_eq!(
            w,
            [
                "pool `spare` is named by no route: no request reaches it",
                "route 2 (pool `pay`) is never reached: route 1 (pool `api`) before it takes every request it would match",
            ],
        );
    }

    /// Defect pinned (gate22 item 3): the shadowing warning compared route hosts as
    /// lower-case text, while routes match an IPv6 literal as an address (host21): a route
    /// for `[0::1]` after one for `[::1]` is never reached, and was not warned of. Hosts
    /// are compared as routes compare them, the same function; two addresses stay two hosts.
    #[test]
    fn a_route_shadowed_by_another_spelling_of_its_ipv6_host_is_warned_of() {
        let routes = |first: &str, second: &str| {
            format!(
                "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:9001\"\nmax_concurrency = 1\n\
                 [[pools]]\nname = \"b\"\nupstream = \"http://127.0.0.1:9002\"\nmax_concurrency = 1\n\
                 [[routes]]\nhost = \"{first}\"\npool = \"a\"\n\
                 [[routes]]\nhost = \"{second}\"\npool = \"b\"\n"
            )
        };
        let shadowed = "route 2 (pool `b`) is never reached: route 1 (pool `a`) before it takes every request it would match";
        for (first, second) in [
            ("[::1]", "[0::1]"),
            ("[::1]", "[0:0:0:0:0:0:0:1]"),
            ("[2001:DB8::1]", "[2001:db8:0::0001]"),
            ("Example.COM.", "example.com"),
        ] {
            let w = warnings(&parse(&routes(first, second), "g.toml").unwrap());
            assert_eq!(w, [shadowed], "{first} then {second}");
        }
        for (first, second) in [("[::1]", "[::2]"), ("[::1]", "localhost")] {
            let w = warnings(&parse(&routes(first, second), "g.toml").unwrap());
            assert!(w.is_empty(), "{first} then {second}: {w:?}");
        }
    }

    /// Review 22, finding 3: the shadow check compares a route only with earlier routes
    /// without a host and those of its host's bucket. Each shadowed route still names the
    /// earliest route that covers it, whether that one has a host or not.
    #[test]
    fn the_shadow_check_names_the_earliest_route_with_or_without_a_host() {
        let mut text = String::from(
            "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:9001\"\nmax_concurrency = 1\n",
        );
        for (host, prefix) in [
            (Some("a.example"), "/x"),    // 1
            (None, "/x"),                 // 2: covers every host's /x…
            (Some("A.example."), "/x/y"), // 3: route 1 first
            (Some("b.example"), "/x/z"),  // 4: route 2
            (Some("[::1]"), "/"),         // 5
            (Some("[0::1]"), "/x"),       // 6: route 2 first, then 5
            (Some("[::2]"), "/q"),        // 7: nothing
        ] {
            text.push_str("[[routes]]\npool = \"a\"\n");
            if let Some(h) = host {
                text.push_str(&format!("host = \"{h}\"\n"));
            }
            text.push_str(&format!("path_prefix = \"{prefix}\"\n"));
        }
        let said: Vec<(usize, usize)> = warnings(&parse(&text, "g.toml").unwrap())
            .iter()
            .filter_map(|w| {
                let n = |s: &str| s.split(' ').nth(1).and_then(|n| n.parse().ok());
                let (later, earlier) = w.split_once(" is never reached: ")?;
                Some((n(later)?, n(earlier)?))
            })
            .collect();
        assert_eq!(said, [(3, 1), (4, 2), (6, 2)]);
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncé\nx", 6), (2, 3));
        assert_eq!(line_col("", 5), (1, 1));
    }

    /// `[client_address]`: a header without the proxies that write it is refused at the
    /// header; a bad network or header name where it is written; the defaults read.
    #[test]
    fn client_address_is_checked_where_it_is_written() {
        let refused = |table: &str| {
            parse(&format!("[client_address]\n{table}\n{MINIMAL}"), "g.toml").expect_err(table)
        };
        let e = refused("header = \"forwarded\"");
        assert_eq!(e.at, Some((2, 10)), "{e}");
        assert!(e.message.contains("needs `trusted_proxies`"), "{e}");
        let e = refused("trusted_proxies = []\nheader = \"x-real-ip\"");
        assert_eq!(e.at, Some((3, 10)), "{e}");
        let e = refused("trusted_proxies = [\"10.0.0.0/33\"]");
        assert_eq!(e.at, Some((2, 20)), "{e}");
        assert!(e.message.contains("invalid network `10.0.0.0/33`"), "{e}");
        let e = refused("trusted_proxies = [\"10.0.0.0/8\"]\nheader = \"x-client-ip\"");
        assert_eq!(e.at, Some((3, 10)), "{e}");
        assert!(e.message.contains("x-forwarded-for"), "{e}");
        let e = refused("trusted = [\"10.0.0.0/8\"]");
        assert!(e.message.contains("trusted_proxies"), "{e}");
        let c = parse(
            &format!(
                "[client_address]\ntrusted_proxies = [\"10.0.0.0/8\", \"fd00::1\"]\n{MINIMAL}"
            ),
            "g.toml",
        )
        .unwrap();
        assert_eq!(
            c.client_address.header(),
            super::super::ClientHeader::XForwardedFor
        );
        assert_eq!(c.client_address.trusted_proxies.len(), 2);
        let c = parse(&format!("[client_address]\n{MINIMAL}"), "g.toml").unwrap();
        assert!(c.client_address.trusted_proxies.is_empty());
        assert!(warnings(&c).is_empty());
    }

    /// Warned of: a trusted network of every address, and a per-client key on a header a
    /// client writes itself (review gate110's design call).
    #[test]
    fn client_address_warns_of_what_lets_a_client_pick_its_key() {
        let c = parse(
            &format!(
                "[client_address]\ntrusted_proxies = [\"0.0.0.0/0\", \"10.0.0.0/8\"]\n{MINIMAL}"
            ),
            "g.toml",
        )
        .unwrap();
        let w = warnings(&c);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("`0.0.0.0/0`, every address"), "{w:?}");
        for header in ["x-forwarded-for", "X-Real-IP", "forwarded"] {
            let text = format!(
                "{MINIMAL}\n[pools.per_key_rate]\nrate = \"5/s\"\nkey = \"header:{header}\"\n"
            )
            .replace("[[routes]]\npool = \"api\"\n\n", "");
            let text = format!("{text}[[routes]]\npool = \"api\"\n");
            let w = warnings(&parse(&text, "g.toml").unwrap());
            assert_eq!(w.len(), 1, "{header}: {w:?}");
            assert!(w[0].contains("count `client_ip`"), "{w:?}");
        }
    }
}
