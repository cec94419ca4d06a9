//! The config parser on any text: never a panic, and an error's location is inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Err(e) = sluicegate_gate::config::parse(text, "fuzz.toml") {
        if let Some((line, col)) = e.at {
            let lines = text.split('\n').count();
            assert!(line >= 1 && line <= lines, "line {line} of {lines}: {e}");
            let width = text.split('\n').nth(line - 1).map_or(0, |l| l.chars().count());
            assert!(col >= 1 && col <= width + 1, "column {col} of {width}: {e}");
        }
        assert!(!e.message.is_empty());
    }
});
