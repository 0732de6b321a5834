//! `gentle packetdrill`: the project's own scripts (tests/packetdrill/) pass on
//! `linux-6`; a wrong expectation fails with its line and both packets; what the
//! engine does not model is SKIPPED with the reason; a bad script exits 2 with
//! file:line:column.

use std::path::{Path, PathBuf};
use std::process::Command;

use gentle_lab::packetdrill::{Outcome, run_script, run_source};
use gentle_tcp::Profile;

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/packetdrill")
}

fn linux6(src: &str) -> Outcome {
    run_source(Path::new("t.pkt"), src, &Profile::Linux6.config(), true)
}

/// A server connection after its handshake: the prologue of the tests below.
const SERVER: &str = "`sysctl -q net.ipv4.tcp_timestamps=0`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
  +.1 < . 1:1(0) ack 1 win 512
   +0 accept(3, ..., ...) = 4
";

#[test]
fn own_scripts_pass_on_linux_6() {
    let mut n = 0;
    for e in std::fs::read_dir(scripts_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "pkt") {
            // PSH checked, as packetdrill checks it.
            let o = run_script(&p, &Profile::Linux6.config(), false);
            assert_eq!(o, Outcome::Pass, "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 16, "only {n} scripts");
}

#[test]
fn a_wrong_sequence_number_fails_with_line_and_both_packets() {
    let src = format!(
        "{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:1001(1000) ack 1\n   +0 > P. 2001:3001(1000) ack 1\n"
    );
    let Outcome::Fail(f) = linux6(&src) else {
        panic!("{:?}", linux6(&src))
    };
    assert_eq!(f.line, 11);
    assert!(f.msg.contains("tcp_seq: expected: 2001"), "{}", f.msg);
    assert!(f.msg.contains("actual: 1001"), "{}", f.msg);
    assert_eq!(
        f.expected.as_deref(),
        Some("0.100000 P. 2001:3001(1000) ack 1")
    );
    let actual = f.actual.unwrap();
    assert!(
        // The second segment of a TSO packet of two (Linux 4.9+ pushes it).
        actual.starts_with("0.100000 P. 1001:2001(1000) ack 1 win "),
        "{actual}"
    );
    assert_eq!(f.time_us, 100_000);
}

#[test]
fn a_late_packet_fails_on_its_time() {
    // The first RTO is 300 ms after the send, not 200.
    let src = format!(
        "{SERVER}`sysctl -q net.ipv4.tcp_early_retrans=0`\n   +0 write(4, ..., 1000) = 1000\n   +0 > P. 1:1001(1000) ack 1\n  +.2 > P. 1:1001(1000) ack 1\n"
    );
    let Outcome::Fail(f) = linux6(&src) else {
        panic!("{:?}", linux6(&src))
    };
    assert_eq!(f.line, 12);
    assert!(
        f.msg
            .contains("expected outbound packet at 0.300000 sec but happened at 0.400000"),
        "{}",
        f.msg
    );
    // 20 ms late after a step of 280 ms: within packetdrill's default tolerance,
    // 12.5% of the step (35 ms), not within 4 ms.
    let src = |pct: &str| {
        format!(
            "{pct}{SERVER}`sysctl -q net.ipv4.tcp_early_retrans=0`\n   +0 write(4, ..., 1000) = 1000\n   +0 > P. 1:1001(1000) ack 1\n +.28 > P. 1:1001(1000) ack 1\n"
        )
    };
    assert_eq!(linux6(&src("")), Outcome::Pass);
    assert!(matches!(
        linux6(&src("--tolerance_percent=0\n")),
        Outcome::Fail(_)
    ));
}

#[test]
fn a_wrong_return_value_and_a_failed_assert_fail() {
    let src = format!("{SERVER}   +0 write(4, ..., 1000) = 999\n");
    let Outcome::Fail(f) = linux6(&src) else {
        panic!()
    };
    assert!(
        f.msg.contains("expected result 999 but got 1000"),
        "{}",
        f.msg
    );
    let src = format!("{SERVER}   +0 %{{ assert tcpi_snd_cwnd == 3, tcpi_snd_cwnd }}%\n");
    let Outcome::Fail(f) = linux6(&src) else {
        panic!()
    };
    assert!(f.msg.contains("tcpi_snd_cwnd = 10"), "{}", f.msg);
}

#[test]
fn what_the_engine_does_not_model_is_skipped_with_the_reason() {
    let o = linux6(
        "`sysctl -q net.ipv4.tcp_congestion_control=bbr`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n",
    );
    assert_eq!(
        o,
        Outcome::Skip(
            1,
            "sysctl tcp_congestion_control=bbr: only reno and cubic are modelled".into()
        )
    );
    let o = linux6(&format!("{SERVER}   +0 sendfile(4, 5, ..., 1000) = 1000\n"));
    assert_eq!(
        o,
        Outcome::Skip(9, "syscall sendfile() not modelled".into())
    );
    let o = linux6(&format!(
        "{SERVER}   +0 setsockopt(4, SOL_TCP, TCP_CORK, [1], 4) = 0\n"
    ));
    assert!(
        matches!(&o, Outcome::Skip(9, r) if r.contains("TCP_CORK")),
        "{o:?}"
    );
    let o = linux6(&format!(
        "{SERVER}   +0 %{{ assert tcpi_delivered == 1 }}%\n"
    ));
    assert!(
        matches!(&o, Outcome::Skip(9, r) if r.contains("tcpi_delivered")),
        "{o:?}"
    );
}

#[test]
fn cli_exit_codes_and_bad_script_position() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pkt");
    std::fs::write(
        &bad,
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S. 0:5(0) ack 1\n",
    )
    .unwrap();
    let run = |args: &[&Path]| {
        Command::new(env!("CARGO_BIN_EXE_gentle"))
            .arg("packetdrill")
            .args(args)
            .output()
            .unwrap()
    };
    let o = run(&[&bad]);
    assert_eq!(o.status.code(), Some(2));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("bad.pkt:2:9: inconsistent TCP sequence numbers"),
        "{out}"
    );

    let fail = dir.path().join("fail.pkt");
    std::fs::write(
        &fail,
        format!("{SERVER}   +0 write(4, ..., 10) = 10\n   +0 > P. 1:2(1) ack 1\n"),
    )
    .unwrap();
    let o = run(&[&fail]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("fail.pkt:10: error handling packet: live packet payload"),
        "{out}"
    );

    let good = scripts_dir().join("slow-start.pkt");
    let o = Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(["packetdrill", "--json"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], 1);
}

#[test]
fn an_outbound_packet_no_line_expects_fails_as_unexpected() {
    // The engine sends 3000 bytes, as Linux 6 at this RTT: a TSO packet of two
    // segments, then one. The script expects the first segment alone and then an
    // ACK of all: the rest of the TSO packet is unexpected (packetdrill reads a
    // packet of 2000 bytes where the line has 1000).
    let src = format!(
        "{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:1001(1000) ack 1\n  +.1 < . 1:1(0) ack 3001 win 512\n"
    );
    let Outcome::Fail(f) = linux6(&src) else {
        panic!("{:?}", linux6(&src))
    };
    assert!(f.msg.contains("unexpected outbound packet"), "{}", f.msg);
    assert!(f.actual.unwrap().contains("1001:2001(1000)"));
    // The same at the end of a script: the packet goes on past the last line.
    let src = format!("{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:1001(1000) ack 1\n");
    assert!(matches!(linux6(&src), Outcome::Fail(f) if f.msg.contains("unexpected")));
    // A line that ends where the TSO packet ends passes: what follows at the same
    // instant is another packet, which no line reads (as packetdrill).
    let src = format!("{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:2001(2000) ack 1\n");
    assert_eq!(linux6(&src), Outcome::Pass);
    // As packetdrill, nothing sent after the last `>` line's packet is checked
    // (the ACK of the data that arrives last).
    let src = format!(
        "{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:3001(3000) ack 1\n  +.1 < . 1:1001(1000) ack 3001 win 512\n"
    );
    assert_eq!(linux6(&src), Outcome::Pass);
    // Expecting all of it passes.
    let src = format!("{SERVER}   +0 write(4, ..., 3000) = 3000\n   +0 > P. 1:3001(3000) ack 1\n");
    assert_eq!(linux6(&src), Outcome::Pass);
}

#[test]
fn the_final_fin_and_an_ack_of_unsent_data_follow_the_era() {
    // Linux 3.x let the final FIN go whatever cwnd and discarded an ACK of unsent
    // data silently; Linux 6.18 holds the FIN for cwnd (its probe sends it) and
    // answers the ACK. The scripts of tests/packetdrill/ show 6.18; these, 3.10.
    let linux310 =
        |src: &str| run_source(Path::new("t.pkt"), src, &Profile::Linux310.config(), true);
    let fin = format!(
        "{SERVER}   +0 write(4, ..., 10000) = 10000\n   +0 > P. 1:10001(10000) ack 1\n +.01 shutdown(4, SHUT_WR) = 0\n   +0 > F. 10001:10001(0) ack 1\n"
    );
    assert_eq!(linux310(&fin), Outcome::Pass);
    let Outcome::Fail(f) = linux6(&fin) else {
        panic!("{:?}", linux6(&fin))
    };
    assert!(f.msg.contains("0.110000"), "{f:?}");
    let unsent = format!(
        "{SERVER} +.01 < P. 1:501(500) ack 5001 win 512\n +.01 < P. 1:301(300) ack 1 win 512\n   +0 > . 1:1(0) ack 301\n"
    );
    assert_eq!(linux310(&unsent), Outcome::Pass);
    let Outcome::Fail(f) = linux6(&unsent) else {
        panic!("{:?}", linux6(&unsent))
    };
    // Linux 6.18's answer to the bad segment, an ACK of nothing new, is what the
    // next `>` line takes.
    assert!(f.msg.contains("tcp_ack_seq: expected: 301"), "{f:?}");
    assert!(
        f.actual
            .as_deref()
            .is_some_and(|a| a.starts_with("0.110000 . 1:1(0) ack 1 ")),
        "{f:?}"
    );
}

#[test]
fn ts_vals_are_checked_with_a_tick_and_a_reset_keeps_timestamps() {
    // The FIN goes 1.1 s after the SYN-ACK: its TS val is 1100 ticks of 1 ms on.
    let script = |fin_val: u32, tick: bool| {
        format!(
            "{}\
                0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
               +0 bind(3, ..., ...) = 0\n\
               +0 listen(3, 1) = 0\n\
               +0 < S 0:0(0) win 20000 <mss 1000,sackOK,TS val 100 ecr 0>\n\
               +0 > S. 0:0(0) ack 1 <mss 1460,sackOK,TS val 100 ecr 100>\n\
              +.1 < . 1:1(0) ack 1 win 20000 <nop,nop,TS val 200 ecr 100>\n\
               +0 accept(3, ..., ...) = 4\n\
               +1 close(4) = 0\n\
               +0 > F. 1:1(0) ack 1 <nop,nop,TS val {fin_val} ecr 200>\n",
            if tick {
                "--tcp_ts_tick_usecs=1000\n"
            } else {
                ""
            }
        )
    };
    assert_eq!(linux6(&script(1200, true)), Outcome::Pass);
    // The tolerance is 12.5% of the 1.1 s since the script began (137 ms).
    assert_eq!(linux6(&script(1330, true)), Outcome::Pass);
    let Outcome::Fail(f) = linux6(&script(1340, true)) else {
        panic!("{:?}", linux6(&script(1340, true)))
    };
    assert!(
        f.msg.contains("bad outbound TCP timestamp value"),
        "{}",
        f.msg
    );
    // With --tolerance_percent=0, 4 ms.
    let strict = format!("--tolerance_percent=0\n{}", script(1210, true));
    assert!(matches!(linux6(&strict), Outcome::Fail(_)));
    // Without the option packetdrill leaves TS vals unchecked.
    assert_eq!(linux6(&script(1340, false)), Outcome::Pass);
    // Closing with unread data resets the connection (RFC 2525 §2.17); Linux's
    // reset carries the timestamps option (`tcp_send_active_reset`).
    let reset = "--tcp_ts_tick_usecs=1000
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:0(0) win 20000 <mss 1000,sackOK,TS val 100 ecr 0>
   +0 > S. 0:0(0) ack 1 <mss 1460,sackOK,TS val 100 ecr 100>
  +.1 < . 1:1(0) ack 1 win 20000 <nop,nop,TS val 200 ecr 100>
   +0 accept(3, ..., ...) = 4
   +0 < . 1:1001(1000) ack 1 win 20000 <nop,nop,TS val 201 ecr 100>
   +0 > . 1:1(0) ack 1001 <nop,nop,TS val 200 ecr 201>
   +1 close(4) = 0
   +0 > R. 1:1(0) ack 1001 <nop,nop,TS val 1200 ecr 201>
";
    assert_eq!(linux6(reset), Outcome::Pass);
}

#[test]
fn a_blocking_read_returns_when_data_arrives_and_is_timed() {
    // `…END`: the read blocks from 0.1 s until the data arrives 100 ms later, while
    // the script goes on; it returns then, at its expected end.
    let script = |end: &str| {
        format!(
            "{SERVER}   +0{end} read(4, ..., 1000) = 1000\n  +.1 < P. 1:1001(1000) ack 1 win 512\n   +0 > . 1:1(0) ack 1001\n"
        )
    };
    assert_eq!(linux6(&script("...0.100")), Outcome::Pass);
    let Outcome::Fail(f) = linux6(&script("...0.300")) else {
        panic!("{:?}", linux6(&script("...0.300")))
    };
    assert!(
        f.msg
            .contains("expected system call return at 0.400000 sec"),
        "{}",
        f.msg
    );
    // Without an end time a blocking read with nothing to read is not modelled.
    assert!(matches!(linux6(&script("")), Outcome::Skip(..)));
}

#[test]
fn python_blocks_keep_their_variables() {
    // `%{ NAME = value }%` sets a variable later blocks read (the suites' CUBIC
    // scripts set TCP_INFINITE_SSTHRESH so).
    let script = |want: &str| {
        format!("{SERVER}   +0 %{{ HALF = 5 }}%\n   +0 %{{ assert tcpi_snd_cwnd == {want} }}%\n")
    };
    assert_eq!(linux6(&script("HALF * 2")), Outcome::Pass);
    assert!(matches!(linux6(&script("HALF")), Outcome::Fail(_)));
    assert!(matches!(linux6(&script("OTHER")), Outcome::Skip(..)));
}
