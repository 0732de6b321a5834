//! The queue keys of a `[[link]]`: `red` (`fast-start-and-sessions.txt` §4.3),
//! `priority_drop` (§3.3) and `scheduling` (§5), and their errors, which point at
//! the offending place in the file.

use gentle_lab::scenario::{Scenario, ScenarioError};
use gentle_sim::link::{QueueDiscipline, QueueLimit, RedParams, Scheduling};

fn text(link_extra: &str) -> String {
    format!(
        r#"name = "q"
trials = 2
[[link]]
a = "server"
b = "client"
rate = "1.5Mbit/s"
delay = "50ms"
{link_extra}
[[workload]]
client = "client"
server = "server"
request = "40B"
response = "20KB"
[[variant]]
profile = "plain"
"#
    )
}

fn parse(link_extra: &str) -> Scenario {
    Scenario::parse("s.toml", &text(link_extra)).unwrap_or_else(|e| panic!("{e}"))
}

/// The error of the scenario, which must be at the first occurrence of `at`
/// within the link's extra keys and say `message`.
fn error(link_extra: &str, at: &str, message: &str) -> ScenarioError {
    let t = text(link_extra);
    let e = Scenario::parse("s.toml", &t).expect_err("bad input");
    let from = t.find(link_extra).expect("extra in text");
    let off = from
        + link_extra
            .find(at)
            .unwrap_or_else(|| panic!("`{at}` not in input"));
    let line = t[..off].matches('\n').count() + 1;
    let col = off - t[..off].rfind('\n').map_or(0, |i| i + 1) + 1;
    assert_eq!((e.line, e.column), (line, col), "{e}\n(expected at `{at}`)");
    assert!(e.message.contains(message), "{e}");
    e
}

#[test]
fn the_papers_red_router_and_an_acks_first_uplink() {
    let s = parse(
        r#"queue = "50pkt"
red = { w_q = 0.02, min_th = "15%", max_th = "60%", max_p = 0.1, ecn = true }
[link.b_to_a]
scheduling = "acks-first"
priority_drop = true
red = false"#,
    );
    let l = &s.links[0];
    let down = &l.a_to_b.spec;
    assert_eq!(
        down.queue,
        QueueDiscipline::Red {
            limit: QueueLimit::Packets(50),
            red: RedParams {
                w_q: 0.02,
                min_th: 7.5,
                max_th: 30.0,
                max_p: 0.1,
                gentle: false,
                ecn: true,
                ..RedParams::default()
            }
        }
    );
    assert!(!down.priority_drop);
    assert_eq!(down.scheduling, Scheduling::Fifo);
    let up = &l.b_to_a.spec;
    assert_eq!(up.queue, QueueDiscipline::DropTail(QueueLimit::Packets(50)));
    assert!(up.priority_drop);
    assert_eq!(up.scheduling, Scheduling::AcksFirst);
}

#[test]
fn red_defaults_and_fractional_thresholds() {
    let s = parse("queue = \"100pkt\"\nred = true");
    let red = s.links[0].a_to_b.spec.queue.red().copied();
    assert_eq!(red, Some(RedParams::default()));
    assert_eq!(
        (RedParams::default().w_q, RedParams::default().max_p),
        (0.002, 0.1)
    );
    let s = parse("queue = \"100pkt\"\nred = { min_th = 2.5, max_th = 7.5, gentle = true }");
    let red = s.links[0]
        .b_to_a
        .spec
        .queue
        .red()
        .copied()
        .expect("both directions");
    assert_eq!((red.min_th, red.max_th, red.gentle), (2.5, 7.5, true));
}

#[test]
fn bad_queue_keys_are_refused_at_their_place() {
    let e = error(
        "queue = \"50pkt\"\nred = { w_g = 0.02 }",
        "w_g",
        "unknown key `w_g` in [[link]] #1.red",
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `w_q`?"));
    error(
        "queue = \"50pkt\"\nred = { min_th = 30, max_th = 30 }",
        "30 }",
        "min_th (30) must be below max_th (30)",
    );
    error(
        "queue = \"50pkt\"\nred = { min_th = \"60%\", max_th = \"15%\" }",
        "\"15%\"",
        "must be below max_th",
    );
    error(
        "queue = \"50pkt\"\nred = { w_q = 0 }",
        "0 }",
        "`w_q` in [[link]] #1.red: 0 is out of range",
    );
    error(
        "queue = \"50pkt\"\nred = { w_q = 1.5 }",
        "1.5",
        "1.5 is out of range",
    );
    error(
        "queue = \"50pkt\"\nred = { max_p = 0 }",
        "0 }",
        "`max_p` in [[link]] #1.red: 0 is out of range",
    );
    error(
        "queue = \"50pkt\"\nred = { min_th = -1 }",
        "-1",
        "-1 is out of range",
    );
    error(
        "queue = \"50pkt\"\nred = { min_th = \"15 percent\" }",
        "\"15 percent\"",
        "bad share `15 percent`",
    );
    error(
        "queue = \"64KiB\"\nred = { min_th = \"15%\" }",
        "\"15%\"",
        "a share needs a queue limit in packets",
    );
    error("red = true", "true", "RED needs a limited queue");
    error(
        "queue = \"unlimited\"\nred = { ecn = true }",
        "{ ecn",
        "RED needs a limited queue",
    );
    error("red = 3", "3", "`red` in [[link]] #1: wrong type");
    error(
        "priority_drop = \"yes\"",
        "\"yes\"",
        "`priority_drop` in [[link]] #1: wrong type",
    );
    let e = error(
        "scheduling = \"acks_first\"",
        "\"acks_first\"",
        "unknown scheduling \"acks_first\"",
    );
    assert_eq!(e.help.as_deref(), Some("did you mean `acks-first`?"));
    // Per direction, with the direction's name.
    error(
        "queue = \"50pkt\"\n[link.a_to_b]\nscheduling = \"lifo\"",
        "\"lifo\"",
        "`scheduling` in [[link]] #1.a_to_b",
    );
}

#[test]
fn queue_keys_that_could_never_act_are_refused() {
    error(
        "queue = \"unlimited\"\npriority_drop = true",
        "true",
        "an unlimited queue is never full",
    );
    error(
        "queue = \"50pkt\"\nred = { max_th = 100 }",
        "100",
        "max_th (100) is above the queue limit of 50 packets",
    );
}

/// A scenario whose workload has the keys `extra`; the error must be on the line of
/// the first occurrence of `at` in them and say `message`.
fn workload_error(extra: &str, at: &str, message: &str) {
    let t = format!(
        r#"name = "w"
[[link]]
a = "server"
b = "client"
rate = "1.5Mbit/s"
delay = "50ms"
queue = "50pkt"
[[workload]]
client = "client"
server = "server"
{extra}
[[variant]]
profile = "plain"
"#
    );
    let e = Scenario::parse("w.toml", &t).expect_err("bad input");
    let off = t.find(extra).unwrap() + extra.find(at).expect("`at` in input");
    // On the line of `at` (at its key or its value).
    let line = t[..off].matches('\n').count() + 1;
    assert_eq!(e.line, line, "{e}");
    assert!(e.column >= 1, "{e}");
    assert!(e.message.contains(message), "{e}");
}

#[test]
fn workload_keys_that_would_be_ignored_are_refused() {
    let onoff = "kind = \"onoff\"\nburst = \"30KB\"\nbursts = 2\n";
    workload_error(
        &format!("{onoff}warmup = 2"),
        "warmup",
        "warmup = 2 leaves none of the 2 exchanges to record",
    );
    workload_error(
        "kind = \"bulk\"\nbytes = \"1MB\"\nwarmup = 1",
        "warmup",
        "a `bulk` workload has one record",
    );
    workload_error(
        "kind = \"bulk\"\nbytes = \"1MB\"\nperiod = \"40s\"",
        "period",
        "need one persistent connection",
    );
    workload_error(
        "response = \"10KB\"\nexchanges = 3\nperiod = \"40s\"",
        "period",
        "need one persistent connection",
    );
    workload_error(
        &format!("{onoff}period_jitter = \"1s\""),
        "period_jitter",
        "a jitter of no period",
    );
    workload_error(
        &format!("{onoff}idle = \"20s\"\nperiod = \"40s\""),
        "idle",
        "there is no idle time to give",
    );
    workload_error(
        &format!("{onoff}switches = {{ accelerated_open = \"on\" }}"),
        "accelerated_open",
        "the variant sets it",
    );
    workload_error(
        &format!("{onoff}switches = {{ fast_strat = \"on\" }}"),
        "fast_strat",
        "unknown key `fast_strat`",
    );
    workload_error(
        "response = \"10KB\"\ncount = 0",
        "count = 0",
        "a measured workload needs at least one copy",
    );
}
