//! A link's rate drawn per trial (`rate = { median, sigma }`): a population's
//! access bandwidths, log-normal about the median. The trials' transfer times
//! spread as the rates do, about those of the fixed rate; bad parameters are refused
//! with their place.

use serde_json::Value;

use crate::common;

/// 100 kB over a lossless path of `rate` (a TOML value): transfer time is mostly
/// size over rate.
fn run(rate: &str) -> Result<Value, (i32, String)> {
    let text = format!(
        r#"name = "r"
trials = 400
seed = 3
[[link]]
a = "server"
b = "client"
rate = {rate}
delay = "10ms"
queue = "1000pkt"
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "100KB"
[[variant]]
profile = "linux-3.10"
"#
    );
    let doc = common::run_json("rates", &text)?;
    Ok(doc["variants"][0]["latency_ms"].clone())
}

#[test]
fn a_rate_drawn_per_trial_spreads_transfer_times_about_the_medians() {
    let q = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let fixed = run(r#""2Mbit/s""#).unwrap();
    // Every trial of a fixed rate takes the same time.
    assert!(q(&fixed, "p90") < 1.02 * q(&fixed, "p25"), "{fixed}");
    let drawn = run(r#"{ median = "2Mbit/s", sigma = 1.0 }"#).unwrap();
    // The median trial draws about the median rate.
    let ratio = q(&drawn, "p50") / q(&fixed, "p50");
    assert!((0.85..1.15).contains(&ratio), "{drawn} against {fixed}");
    // σ = 1: the 90th percentile's rate is e^-1.28 of the median's, the 25th's
    // e^0.67 (times dominated by size over rate, a little less spread).
    let spread = q(&drawn, "p90") / q(&drawn, "p25");
    assert!((4.0..10.0).contains(&spread), "p90 / p25 {spread}: {drawn}");
}

#[test]
fn a_bad_drawn_rate_is_refused_with_its_place() {
    for (rate, needle) in [
        (r#"{ median = "2Mbit/s", sigma = 5 }"#, "out of range"),
        (r#"{ median = "2Mbit/s" }"#, "sigma"),
        (r#"{ sigma = 1.0 }"#, "median"),
        (r#"{ median = "0bit/s", sigma = 1.0 }"#, "median"),
        (
            r#"{ median = "2Mbit/s", sigm = 1.0 }"#,
            "did you mean `sigma`",
        ),
        (r#"{ median = "fast", sigma = 1.0 }"#, "median"),
    ] {
        let (code, err) = run(rate).unwrap_err();
        assert_eq!(code, 2, "{rate}: {err}");
        assert!(err.contains("s.toml:7:"), "{rate}: {err}");
        assert!(err.contains(needle), "{rate}: {err}");
    }
}
