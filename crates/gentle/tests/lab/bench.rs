//! `gentle bench --instructions`: callgrind's counts of the simulation alone, per
//! data packet of the bulk transfer and per short trial. Valgrind must be installed
//! (the CI script installs it); without it the command fails, and so does this test.

use std::process::Command;

#[test]
fn instructions_are_counted_per_packet_and_per_trial_and_stay_flat() {
    let out = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["bench", "--instructions", "--json"])
        .output()
        .expect("gentle runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gentle bench --instructions failed (is valgrind installed?):\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let ok = &v["Ok"];
    let bulk = &ok["bulk"];
    // The bulk transfer sends 200 MB in segments of 1448 bytes.
    let packets = bulk["data_packets"].as_u64().expect("packets");
    assert!(
        (138_000..140_000).contains(&packets),
        "{packets} data packets"
    );
    let per_packet = bulk["per_unit"].as_f64().expect("per packet");
    // A simulated packet costs something, and far less than a millisecond of CPU.
    assert!(
        (500.0..20_000.0).contains(&per_packet),
        "{per_packet} per data packet"
    );
    let short: Vec<f64> = ok["short"]
        .as_array()
        .expect("short counts")
        .iter()
        .map(|c| c["per_unit"].as_f64().expect("per trial"))
        .collect();
    assert_eq!(short.len(), 2);
    // Flat: ten times the trials cost ten times the instructions, within 2%.
    let ratio = short[1] / short[0];
    assert!((0.98..1.02).contains(&ratio), "per trial {short:?}");
}
