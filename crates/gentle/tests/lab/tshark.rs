//! gentle's pcaps read by Wireshark's TCP analysis (tshark): the duplicate ACKs of
//! `examples/fast-retransmit.toml` are duplicate ACKs to it and the repair is a fast
//! retransmission, for SACK and for NewReno. tshark is required: `.ci/run` installs
//! it, and this test fails rather than skipping when it is missing.

use crate::common;

use crate::common::root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Frames of `pcap` matching the display filter.
fn count(pcap: &Path, filter: &str) -> usize {
    let o = Command::new("tshark")
        .args(["-r", pcap.to_str().unwrap(), "-Y", filter])
        .output()
        .expect("tshark is required for this test (apt-get install tshark)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().count()
}

#[test]
fn tshark_sees_duplicate_acks_and_a_fast_retransmission() {
    let scratch = common::scratch("tshark");
    let out = scratch.join("out");
    let example = root().join("examples/fast-retransmit.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["run", example.to_str().unwrap(), "--pcap", "0", "--out"])
        .arg(&out)
        .output()
        .expect("gentle runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pcaps: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    pcaps.sort();
    assert_eq!(pcaps.len(), 2, "one pcap per variant: {pcaps:?}");
    for p in &pcaps {
        let dup = count(p, "tcp.analysis.duplicate_ack");
        let fast = count(p, "tcp.analysis.fast_retransmission");
        let updates = count(p, "tcp.analysis.window_update");
        let ooo = count(p, "tcp.analysis.out_of_order");
        assert!(dup >= 3, "{}: {dup} duplicate ACKs", p.display());
        assert_eq!(fast, 1, "{}: fast retransmissions", p.display());
        assert_eq!(updates, 0, "{}: window updates", p.display());
        assert_eq!(ooo, 0, "{}: out-of-order segments", p.display());
    }
    let _ = std::fs::remove_dir_all(&out);
}
