use std::net::IpAddr;

use http::{HeaderMap, HeaderValue};
use proptest::prelude::*;

use super::*;

/// Trusts 10.0.0.0/8 and fd00::/64, reading `header`.
fn gate(header: &str) -> ClientAddress {
    let text = format!(
        "[client_address]\ntrusted_proxies = [\"10.0.0.0/8\", \"fd00::/64\"]\nheader = \"{header}\"\n\
         [[pools]]\nname = \"a\"\nupstream = \"http://127.0.0.1:1\"\nmax_concurrency = 1\n\
         [[routes]]\npool = \"a\"\n"
    );
    ClientAddress::of(&crate::config::parse(&text, "t").unwrap().client_address)
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Headers of `name`, one line each.
fn lines(name: &'static str, values: &[&str]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for v in values {
        h.append(name, HeaderValue::from_str(v).unwrap());
    }
    h
}

fn xff(values: &[&str]) -> HeaderMap {
    lines("x-forwarded-for", values)
}

const PROXY: &str = "10.0.0.3";

fn client_of(headers: &HeaderMap) -> IpAddr {
    gate("x-forwarded-for").client(headers, ip(PROXY))
}

#[test]
fn an_untrusted_peer_is_the_client_whatever_it_sends() {
    let g = gate("x-forwarded-for");
    let h = xff(&["203.0.113.7"]);
    assert_eq!(g.client(&h, ip("198.51.100.1")), ip("198.51.100.1"));
    // Off (no trusted proxies): the peer, even one in what would be trusted.
    let off = ClientAddress::default();
    assert!(!off.is_on());
    assert_eq!(off.client(&h, ip(PROXY)), ip(PROXY));
}

#[test]
fn behind_trusted_proxies_the_first_untrusted_address_from_the_right_is_the_client() {
    assert_eq!(client_of(&xff(&["203.0.113.7"])), ip("203.0.113.7"));
    assert_eq!(
        client_of(&xff(&["203.0.113.7, 10.1.1.1, 10.2.2.2"])),
        ip("203.0.113.7")
    );
    // What the client wrote left of its own address is never read.
    assert_eq!(
        client_of(&xff(&["1.1.1.1, 2.2.2.2, 203.0.113.7, 10.2.2.2"])),
        ip("203.0.113.7")
    );
    // Nor is a trusted-looking address it wrote: reading stops at its own.
    assert_eq!(
        client_of(&xff(&["10.9.9.9, 203.0.113.7"])),
        ip("203.0.113.7")
    );
    // No header: the proxy itself (a health check, an internal caller).
    assert_eq!(client_of(&HeaderMap::new()), ip(PROXY));
    // Every address trusted: the leftmost, as nginx's recursive mode.
    assert_eq!(client_of(&xff(&["10.0.0.5, 10.0.0.2"])), ip("10.0.0.5"));
}

#[test]
fn several_lines_are_one_list_in_order() {
    assert_eq!(
        client_of(&xff(&["1.1.1.1", "203.0.113.7, 10.0.0.2"])),
        ip("203.0.113.7")
    );
    assert_eq!(
        client_of(&xff(&["6.6.6.6, 203.0.113.7", "10.0.0.2"])),
        ip("203.0.113.7")
    );
    assert_eq!(
        client_of(&xff(&["6.6.6.6", "203.0.113.7"])),
        ip("203.0.113.7")
    );
}

#[test]
fn an_entry_that_is_no_address_ends_the_walk_at_the_last_address_vouched_for() {
    // Written by the peer itself: the peer is the client.
    assert_eq!(client_of(&xff(&["203.0.113.7, garbage"])), ip(PROXY));
    assert_eq!(client_of(&xff(&["unknown"])), ip(PROXY));
    // Behind a trusted hop: that hop.
    assert_eq!(
        client_of(&xff(&["203.0.113.7, unknown, 10.0.0.2"])),
        ip("10.0.0.2")
    );
    assert_eq!(
        client_of(&xff(&["203.0.113.7, 1.2.3.4.5, 10.0.0.2"])),
        ip("10.0.0.2")
    );
    // Empty elements are skipped (RFC 9110 §5.6.1).
    assert_eq!(
        client_of(&xff(&[" , 203.0.113.7,, ,10.0.0.2, "])),
        ip("203.0.113.7")
    );
}

#[test]
fn ports_brackets_and_mapped_addresses_are_read() {
    for (entry, want) in [
        ("203.0.113.7:4711", "203.0.113.7"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("2001:db8::1", "2001:db8::1"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("[::ffff:203.0.113.7]:80", "203.0.113.7"),
    ] {
        assert_eq!(
            client_of(&xff(&[&format!("{entry}, 10.0.0.2")])),
            ip(want),
            "{entry}"
        );
    }
    // A trusted IPv6 proxy in brackets is walked past.
    assert_eq!(
        client_of(&xff(&["203.0.113.7, [fd00::5]:8080"])),
        ip("203.0.113.7")
    );
}

#[test]
fn what_is_no_address_is_refused() {
    for text in [
        "",
        "unknown",
        "_hidden",
        "example.com",
        "010.0.0.1",
        "1.2.3",
        "1.2.3.4.5",
        "1.2.3.4:",
        "1.2.3.4:123456",
        "1.2.3.4:x",
        "[1.2.3.4]",
        "[::1",
        "::1]",
        "[::1]x",
        "[::1]:",
        "fe80::1%eth0",
        "[fe80::1%25eth0]",
        " 1.2.3.4",
        "1.2.3.4 ",
        "\"1.2.3.4\"",
        "1.2.3.4:80:80",
    ] {
        assert_eq!(address(text.as_bytes()), None, "{text:?}");
    }
    let long = format!("{}1", "0:".repeat(40));
    assert_eq!(address(long.as_bytes()), None);
    assert_eq!(address(b"\xff\xfe"), None);
}

#[test]
fn forwarded_is_read_by_its_for_parameters() {
    let g = gate("forwarded");
    let fwd = |values: &[&str]| g.client(&lines("forwarded", values), ip(PROXY));
    assert_eq!(fwd(&["for=203.0.113.7"]), ip("203.0.113.7"));
    assert_eq!(
        fwd(&["for=6.6.6.6, for=203.0.113.7;proto=https, by=10.0.0.9;For=10.0.0.2;host=x"]),
        ip("203.0.113.7")
    );
    assert_eq!(
        fwd(&["for=\"[2001:db8:cafe::17]:4711\", for=10.0.0.2"]),
        ip("2001:db8:cafe::17")
    );
    assert_eq!(fwd(&["for=\"203.0.113.7:80\""]), ip("203.0.113.7"));
    assert_eq!(fwd(&["for=6.6.6.6", "for=203.0.113.7"]), ip("203.0.113.7"));
    // A proxy that hid the client, or wrote no `for=`, or an element that does not parse:
    // the walk stops at the address before it.
    for hidden in [
        "for=unknown",
        "for=_hidden",
        "for=\"_x:_y\"",
        "proto=https",
        "for=203.0.113.7;for=6.6.6.6",
        "for",
        "for=\"203.0.113.7",
        "for=\"203.0.\\113.7\"",
        "for=\"a,b\"",
    ] {
        assert_eq!(
            fwd(&[&format!("for=6.6.6.6, {hidden}, for=10.0.0.2")]),
            ip("10.0.0.2"),
            "{hidden}"
        );
        assert_eq!(fwd(&[hidden]), ip(PROXY), "{hidden}");
    }
    // X-Forwarded-For is not read when `forwarded` is.
    assert_eq!(g.client(&xff(&["203.0.113.7"]), ip(PROXY)), ip(PROXY));
}

#[test]
fn x_real_ip_is_one_address_on_one_line() {
    let g = gate("x-real-ip");
    let real = |values: &[&str]| g.client(&lines("x-real-ip", values), ip(PROXY));
    assert_eq!(real(&["203.0.113.7"]), ip("203.0.113.7"));
    assert_eq!(real(&[" [2001:db8::1]:80 "]), ip("2001:db8::1"));
    assert_eq!(real(&["6.6.6.6", "203.0.113.7"]), ip(PROXY));
    assert_eq!(real(&["203.0.113.7, 6.6.6.6"]), ip(PROXY));
    assert_eq!(real(&["garbage"]), ip(PROXY));
    assert_eq!(
        g.client(&lines("x-real-ip", &["203.0.113.7"]), ip("198.51.100.1")),
        ip("198.51.100.1")
    );
}

/// Thousands of entries, all trusted (a caller inside the proxies' network): the walk reads
/// [`MAX_HOPS`] of them and no more, and the client is the last it read.
#[test]
fn a_list_of_thousands_is_read_only_up_to_the_hop_bound() {
    let entries: Vec<String> = (0..20_000)
        .map(|i| format!("10.0.{}.{}", i / 250, i % 250))
        .collect();
    let h = xff(&[&entries.join(", ")]);
    assert!(h.get("x-forwarded-for").unwrap().len() > 200_000);
    let want = &entries[entries.len() - MAX_HOPS];
    assert_eq!(client_of(&h), ip(want));
    // And so with a line each (at most 100 reach the gate: hyper's cap).
    let h = xff(&entries[..100]
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert_eq!(client_of(&h), ip(&entries[100 - MAX_HOPS]));
    // Commas alone count too.
    let h = xff(&[&format!("203.0.113.7{}", ",".repeat(100_000))]);
    assert_eq!(client_of(&h), ip(PROXY));
}

/// A header value as a client may send it: visible ASCII, spaces, tabs and any byte from
/// 0x80 on.
fn any_value() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        prop_oneof![
            4 => proptest::sample::select(b"0123456789abcdef.:[], ;=\"_fForunkwn".to_vec()),
            1 => 0x20u8..0x7f,
            1 => 0x80u8..=0xff,
        ],
        0..200,
    )
}

proptest! {
    /// Whatever a client sends before the address the trusted proxy appends, in as many
    /// lines as it likes, the client is that address: it cannot choose its key.
    #[test]
    fn what_a_client_sends_never_moves_its_key(
        sent in proptest::collection::vec(any_value(), 0..4),
        last in 1u8..=223,
        header in proptest::sample::select(vec!["x-forwarded-for", "forwarded"]),
        same_line in any::<bool>(),
    ) {
        let g = gate(header);
        let name = if header == "forwarded" { header::FORWARDED } else { X_FORWARDED_FOR };
        // A client address outside the trusted networks.
        let real = IpAddr::from([last, 0, 113, 7]);
        prop_assume!(last != 10);
        let appended = if header == "forwarded" { format!("for={real}") } else { real.to_string() };
        let mut h = HeaderMap::new();
        let values: Vec<HeaderValue> = sent.iter().filter_map(|v| HeaderValue::from_bytes(v).ok()).collect();
        match (same_line, values.split_last()) {
            // The proxy extends the client's last line.
            (true, Some((last_line, before))) => {
                for v in before {
                    h.append(name.clone(), v.clone());
                }
                let mut joined = last_line.as_bytes().to_vec();
                joined.extend_from_slice(b", ");
                joined.extend_from_slice(appended.as_bytes());
                h.append(name.clone(), HeaderValue::from_bytes(&joined).unwrap());
            }
            // Or adds a line of its own.
            _ => {
                for v in values {
                    h.append(name.clone(), v);
                }
                h.append(name.clone(), HeaderValue::from_str(&appended).unwrap());
            }
        }
        prop_assert_eq!(g.client(&h, ip(PROXY)), real);
    }

    /// From a peer that is no trusted proxy, no header is read at all.
    #[test]
    fn an_untrusted_peer_is_always_its_own_client(
        sent in proptest::collection::vec(any_value(), 0..4),
        header in proptest::sample::select(vec!["x-forwarded-for", "forwarded", "x-real-ip"]),
        peer in any::<[u8; 4]>(),
    ) {
        let g = gate(header);
        let peer = IpAddr::from(peer);
        prop_assume!(!g.trusts(peer));
        let mut h = HeaderMap::new();
        for v in sent.iter().filter_map(|v| HeaderValue::from_bytes(v).ok()) {
            h.append(header, v);
        }
        prop_assert_eq!(g.client(&h, peer), peer);
    }

    /// Any bytes at all: an address or none, never a panic; and what comes back is what the
    /// text says, so that it is written back the same.
    #[test]
    fn the_address_reader_takes_any_bytes(text in any_value()) {
        if let Some(a) = address(&text) {
            let s = std::str::from_utf8(&text).unwrap();
            let canonical = a.to_string();
            let plain = s.trim_start_matches('[').split(']').next().unwrap();
            let plain = if a.is_ipv4() && plain.contains('.') && !plain.contains("::") {
                plain.split(':').next().unwrap()
            } else {
                plain
            };
            prop_assert_eq!(plain.parse::<IpAddr>().unwrap().to_canonical().to_string(), canonical);
        }
    }
}
