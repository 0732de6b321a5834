//! Per-packet delay variation on a link (`jitter`): RTT samples vary, so timeouts and
//! spurious retransmissions happen as on real paths; without `reorder` packets keep their
//! order; bad parameters are refused with their place.

use serde_json::Value;

use crate::common;

const PATH: &str = r#"trials = 3000
seed = 3
[[link]]
a = "server"
b = "client"
rate = "10Mbit/s"
delay = "50ms"
loss = { model = "bernoulli", p = 0.01 }
"#;

const REST: &str = r#"
[[workload]]
client = "client"
server = "server"
request = "40B"
response = { dist = "lognormal", median = "7.5KB", sigma = 1.0 }
[[variant]]
profile = "linux-3.10"
"#;

/// Runs the path with `jitter` (a TOML value, or nothing) and returns the variant's
/// JSON summary, or the command's stderr and exit status when it fails.
fn run(jitter: Option<&str>) -> Result<Value, (i32, String)> {
    let j = jitter.map_or(String::new(), |j| format!("jitter = {j}\n"));
    let text = format!("name = \"j\"\n{PATH}{j}{REST}");
    Ok(common::run_json("jitter", &text)?["variants"][0].clone())
}

#[test]
fn delay_variation_brings_timeouts_and_spurious_retransmissions_a_fixed_delay_has_not() {
    let flat = run(None).unwrap();
    let var = run(Some(
        r#"{ mean = "30ms", dist = "pareto", shape = 1.3, correlation = 0.8 }"#,
    ))
    .unwrap();
    let c = |v: &Value, k: &str| v["counters"][k].as_u64().unwrap();
    assert!(
        c(&var, "TCPTimeouts") > c(&flat, "TCPTimeouts") + 5,
        "timeouts: fixed {} varying {}",
        c(&flat, "TCPTimeouts"),
        c(&var, "TCPTimeouts")
    );
    // Retransmissions the receiver already had (DSACKs): late ACKs fired timers.
    assert!(
        c(&var, "TCPDSACKRecv") > 2 * c(&flat, "TCPDSACKRecv"),
        "spurious retransmissions: fixed {} varying {}",
        c(&flat, "TCPDSACKRecv"),
        c(&var, "TCPDSACKRecv")
    );
    // Without `reorder`, no packet overtakes another: nothing is reordered by the
    // link, and the receiver never sees a hole the network did not make.
    assert_eq!(var["links"]["reordered"], 0);
    let free = run(Some(
        r#"{ mean = "20ms", correlation = 0.0, reorder = true }"#,
    ))
    .unwrap();
    assert!(
        free["links"]["reordered"].as_u64().unwrap() > 100,
        "{}",
        free["links"]
    );
    assert!(c(&free, "TCPDSACKRecv") > c(&var, "TCPDSACKRecv"));
}

#[test]
fn bad_delay_variation_is_refused_with_its_place() {
    for (j, needle) in [
        (r#"{ mean = "5ms", dist = "pareto", shape = 1 }"#, "shape"),
        (r#"{ mean = "5ms", correlation = 1.0 }"#, "correlation"),
        (
            r#"{ mean = "5ms", dist = "gamma" }"#,
            "unknown distribution",
        ),
        (r#"{ dist = "exponential" }"#, "mean"),
        (r#"{ mean = "5ms", wobble = 2 }"#, "wobble"),
    ] {
        let (code, err) = run(Some(j)).unwrap_err();
        assert_eq!(code, 2, "{j}: {err}");
        assert!(err.contains("s.toml:10:"), "{j}: {err}");
        assert!(err.contains(needle), "{j}: {err}");
    }
}

/// Counters of 200 trials whose response's last segment is lost once (a timeout in
/// Open), over a path of `one_way` delay (a duration in TOML).
fn tail_timeouts(one_way: &str) -> Value {
    let text = format!(
        r#"name = "t"
trials = 200
seed = 1
[[link]]
a = "server"
b = "client"
rate = "100Mbit/s"
delay = "{one_way}"
a_to_b = {{ loss = {{ model = "tail-drop", n = 1 }} }}
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "6KB"
[[variant]]
profile = "linux-3.10"
tlp = "off"
er = "off"
"#
    );
    let doc = common::run_json("rto-over-rtt", &text).unwrap_or_else(|(_, e)| panic!("{e}"));
    doc["variants"][0]["counters"].clone()
}

/// `gentle-aggression-sigcomm13.txt` Figure 2 compares each loss episode's first RTO
/// with the RTT: the counters say how many exceeded 6 and 200 smoothed RTTs. Linux's
/// RTO is at least SRTT + 200 ms, so a 10 ms RTT waits over 6 RTTs (not 200), a 1 ms
/// RTT over 200, and a 200 ms RTT under 6.
#[test]
fn first_timeouts_are_counted_against_six_and_two_hundred_smoothed_rtts() {
    let c = |v: &Value, k: &str| v[k].as_u64().unwrap();
    for (one_way, over6, over200) in [
        ("5ms", true, false),
        ("0.4ms", true, true),
        ("100ms", false, false),
    ] {
        let v = tail_timeouts(one_way);
        let first = c(&v, "TimeoutsOpen");
        assert!(first >= 150, "{one_way}: {first} timeouts in Open");
        let expect = |over: bool| if over { first } else { 0 };
        assert_eq!(c(&v, "TimeoutsRtoOver6Srtt"), expect(over6), "{one_way}");
        assert_eq!(
            c(&v, "TimeoutsRtoOver200Srtt"),
            expect(over200),
            "{one_way}"
        );
    }
}
