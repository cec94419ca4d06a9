//! Config edges an operator meets outside the usual file: a config from a pipe
//! (`--config /dev/stdin`, `--config <(…)`), an empty file.

mod support;

use std::io::Write;

use support::write_config;

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
