//! Config edges an operator meets outside the usual file: a config from a pipe
//! (`--config /dev/stdin`, `--config <(…)`), an empty file, a file that never ends.

mod support;

use std::io::Write;

use support::{gate_from_file, rewrite, write_config};

const TEXT: &str = "[[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\n\
                    max_concurrency = 1\n\n[[routes]]\npool = \"a\"\n";

/// Runs `sluicegate check --config <config>`, `stdin` written to its standard input, and
/// answers its exit code and all it said.
fn check(config: &str, stdin: &str) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sluicegate"))
        .args(["check", "--config", config])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

/// A pipe reads once: the gate read the config twice (to catch a writer at work) and took
/// the drained second read for a file that changed, so `envsubst < gate.tmpl | sluicegate
/// serve --config /dev/stdin` exited 64 telling the operator to rename a file.
#[test]
fn a_config_piped_to_dev_stdin_is_taken() {
    let (code, said) = check("/dev/stdin", TEXT);
    assert_eq!(code, Some(0), "{said}");
    // A broken one piped in is still refused for what is wrong with it.
    let (code, said) = check("/dev/stdin", "[[pools]]\nname = \"a\"\n");
    assert_eq!(code, Some(64), "{said}");
    assert!(!said.contains("changed while it was read"), "{said}");
}

/// An empty file is what a reader most often sees of a file being rewritten in place
/// (truncated, not yet written): said as that, not as a config without pools.
#[test]
fn an_empty_config_file_is_said_to_be_empty() {
    for text in ["", "\n  \n"] {
        let path = write_config("empty.toml", text);
        let (code, said) = check(path.to_str().unwrap(), "");
        assert_eq!(code, Some(64), "{said}");
        assert!(said.contains("is empty"), "{said}");
        assert!(said.contains("rename"), "{said}");
        assert!(!said.contains("no pools"), "{said}");
    }
}

/// A file of `len` bytes (all NUL) at `path`, sparse: it takes no disk, and is larger than
/// any config the gate reads.
fn sparse(path: &std::path::Path, len: u64) {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
}

/// The largest config the gate reads, as its refusal names it.
const PAST_THE_BOUND: u64 = (64 << 20) + 1;

/// Trial 34, finding 3: a config that never ends (`/dev/zero`, a runaway generator, a log
/// named by mistake) was read whole into memory — `check` and `serve` grew until the
/// allocation failed. Past 64 MiB it is refused, saying so.
#[test]
fn a_config_past_64_mib_is_refused_by_check_saying_so() {
    let path = write_config("big.toml", "");
    sparse(&path, PAST_THE_BOUND);
    let (code, said) = check(path.to_str().unwrap(), "");
    assert_eq!(code, Some(64), "{said}");
    assert!(said.contains(path.to_str().unwrap()), "{said}");
    assert!(said.contains("64 MiB"), "{said}");
    assert!(said.contains("/dev/zero"), "{said}");
    // A device that never ends, read only to the bound.
    let (code, said) = check("/dev/zero", "");
    assert_eq!(code, Some(64), "{said}");
    assert!(said.contains("64 MiB"), "{said}");
}

/// Trial 34, finding 3, on reload: a config symlinked to `/dev/zero` took a running gate to
/// 14.5 GB, and the read that never ended held every later reload. Past 64 MiB the reload is
/// refused at once, and the next reload of a good file goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_of_a_config_past_64_mib_is_refused_and_the_next_reload_works() {
    let path = write_config("reload-big.toml", TEXT);
    let gate = gate_from_file(&path).await;
    let big = path.with_file_name("big.toml");
    sparse(&big, PAST_THE_BOUND);
    std::fs::rename(&big, &path).unwrap();
    let refused = gate
        .reload()
        .await
        .expect_err("a config past 64 MiB was taken");
    let said = refused.to_string();
    assert!(said.contains("64 MiB"), "{said}");
    assert!(!said.contains("for over 10 s"), "{said}");
    rewrite(
        &path,
        &TEXT.replace("max_concurrency = 1", "max_concurrency = 2"),
    );
    gate.reload().await.expect("the reload after the big file");
}

/// `[bypass] header` is removed from every request before it is forwarded (so that no
/// client learns of it upstream), whatever its value. Naming a header the request needs —
/// `authorization` ("requests with the ops token skip the limits"), `cookie`, `host`,
/// `content-length` — was taken by `check`, and then the gate took that header from every
/// request: every upstream login failed, or every `Host` became the upstream's own address.
/// Refused at the value, asking for a header of the bypass's own.
#[test]
fn a_bypass_header_the_request_needs_is_refused() {
    let secret = std::env::temp_dir().join(format!("sluicegate-bypass-{}", std::process::id()));
    std::fs::write(&secret, "s3cret\n").unwrap();
    let config = |name: &str| {
        format!(
            "[bypass]\nheader = \"{name}\"\nsecret_file = \"{}\"\n{TEXT}",
            secret.display()
        )
    };
    for name in [
        "authorization",
        "Cookie",
        "host",
        "content-length",
        "x-forwarded-for",
    ] {
        let (code, said) = check("/dev/stdin", &config(name));
        assert_eq!(code, Some(64), "{name}: {said}");
        assert!(
            said.contains("/dev/stdin:2:10:"),
            "{name}: not at the value: {said}"
        );
        assert!(said.contains("of its own"), "{name}: {said}");
    }
    let (code, said) = check("/dev/stdin", &config("x-bypass"));
    assert_eq!(code, Some(0), "a header of its own: {said}");
    let _ = std::fs::remove_file(&secret);
}
