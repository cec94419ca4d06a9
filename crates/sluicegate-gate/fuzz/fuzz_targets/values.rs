//! The humane values (durations, rates, key sources, addresses, networks, upstream URLs) on
//! any text: never a panic; what parses prints back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluicegate_gate::config::{Cidr, Dur, KeySource, ListenAddr, Rate, UpstreamUrl};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    if let Ok(d) = s.parse::<Dur>() {
        assert_eq!(d.to_string().parse::<Dur>(), Ok(d));
    }
    if let Ok(r) = s.parse::<Rate>() {
        assert_eq!(r.to_string().parse::<Rate>(), Ok(r));
        let _ = r.quota(Some(3));
    }
    if let Ok(k) = s.parse::<KeySource>() {
        assert_eq!(k.to_string().parse::<KeySource>(), Ok(k));
    }
    let _ = s.parse::<ListenAddr>();
    let _ = s.parse::<Cidr>();
    if let Ok(u) = s.parse::<UpstreamUrl>() {
        assert_eq!(u.to_string().parse::<UpstreamUrl>(), Ok(u));
    }
});
