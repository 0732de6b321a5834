//! Packet scripts: TCP fast start (`fast-start-and-sessions.txt` §3.4, §7.1) — the
//! restart window after an idle period, the marked range, pacing of the first
//! round trip, the fine-grained reset timer and its slow start without penalty, and
//! the partial-ACK abort without SACK.

use crate::script;

use gentle_tcp::{CaState, CcAlgorithm, Config, Flags, Profile};
use script::*;

const MSS: u32 = 1448;
const IW: u32 = 2;
/// The RTT of every exchange in these scripts.
const RTT: f64 = 100.0;

fn fs_cfg() -> Config {
    let mut cfg = Profile::Plain.config();
    cfg.cc = CcAlgorithm::Reno;
    cfg.initial_window = IW;
    cfg.fast_start = true;
    cfg.fast_start_tick = None;
    cfg.delayed_ack = None;
    cfg
}

/// A sender that moved `n` segments in slow start, every segment acknowledged one
/// RTT after it left, and is idle at the end. Returns it and the next segment number.
fn warmed_up(cfg: Config, peer: PeerOpts, n: u32) -> (Script, u32) {
    let mut s = Script::server(cfg, peer);
    s.write((n * MSS) as usize);
    let mut next = 1; // next segment number to acknowledge
    while next <= n {
        let now = s.now();
        let mut sent = Vec::new();
        while s.pending() > 0 {
            sent.push(s.expect(script::Exp::default()));
        }
        s.at(now + RTT);
        for _ in &sent {
            next += 1;
            s.send(ack(seg(MSS, next)));
        }
        if sent.is_empty() {
            break;
        }
    }
    s.skip_all();
    assert!(s.dut.all_acked(), "warm-up left data unacknowledged");
    (s, n + 1)
}

/// After 20 s idle the application writes 40 segments; returns when (ms).
fn resume(s: &mut Script) -> f64 {
    let t0 = s.now() + 20_000.0;
    s.at(t0);
    s.write((40 * MSS) as usize);
    t0
}

/// [`resume`], then the paced round without an ACK, its segments unchecked.
fn resumed_round(s: &mut Script) -> f64 {
    let t0 = resume(s);
    s.at(t0 + RTT - 1.0);
    s.skip_all();
    t0
}

/// The segments sent so far and not checked: (time ms, relative seq, marked).
fn sent(s: &mut Script) -> Vec<(f64, u32, bool)> {
    let mut v = Vec::new();
    while s.pending() > 0 {
        let seg = s.expect(script::Exp::default());
        v.push((0.0, s.rel_seq(&seg), seg.flags.contains(Flags::FAST_START)));
    }
    v
}

#[test]
fn restart_is_half_the_slow_start_window_with_the_restart_segments_unmarked() {
    let (mut s, k) = warmed_up(fs_cfg(), PeerOpts::default(), 20);
    let old = s.dut.cwnd();
    let ssthresh = s.dut.ssthresh();
    assert!(old < ssthresh, "still in slow start");
    let fs_cwnd = old / 2;
    s.at(s.now() + 20_000.0);
    s.write((40 * MSS) as usize);
    s.at(s.now() + RTT - 1.0); // the whole paced round, no ACK yet
    let v = sent(&mut s);
    assert_eq!(s.dut.cwnd(), fs_cwnd);
    assert_eq!(s.dut.ssthresh(), ssthresh, "ssthresh kept");
    assert_eq!(
        v.len() as u32,
        fs_cwnd,
        "one fast-start window, then the ACK clock"
    );
    for (i, (_, seq, marked)) in v.iter().enumerate() {
        assert_eq!(*seq, seg(MSS, k + i as u32));
        // §7.1: data in (snd.nxt + restart window, snd.nxt + cwnd) is marked.
        assert_eq!(*marked, i as u32 >= IW, "segment {i} of the fast start");
    }
    assert_eq!(s.dut.counters().fast_start, 1);
    assert_eq!(s.dut.counters().fast_start_segs as u32, fs_cwnd - IW);
}

#[test]
fn restart_after_congestion_avoidance_is_one_segment_less() {
    // An ECN mark ends slow start: ssthresh = cwnd / 2, and cwnd drains to it.
    let mut cfg = fs_cfg();
    cfg.ecn = true;
    cfg.recovery = gentle_tcp::RecoveryAlgorithm::Prr;
    let peer = PeerOpts {
        ecn: true,
        ..PeerOpts::default()
    };
    let (mut s, k) = warmed_up(cfg, peer, 20);
    s.write((30 * MSS) as usize);
    s.skip_all();
    s.at(s.now() + RTT);
    s.send(ack(seg(MSS, k + 1)).flags(Flags::ACK | Flags::ECE));
    let mut next = k + 1;
    while !s.dut.all_acked() {
        s.skip_all();
        s.at(s.now() + 1.0);
        next += 1;
        s.send(ack(seg(MSS, next).min(s.dut.snd_nxt() as u32)));
    }
    assert_eq!(s.dut.ca_state(), CaState::Open);
    let old = s.dut.cwnd();
    assert!(old >= s.dut.ssthresh(), "in congestion avoidance");
    s.at(s.now() + 20_000.0);
    s.write((40 * MSS) as usize);
    assert_eq!(s.dut.cwnd(), old - 1);
}

#[test]
fn bursts_of_maxburst_are_spaced_by_maxburst_srtt_over_cwnd() {
    let (mut s, k) = warmed_up(fs_cfg(), PeerOpts::default(), 20);
    let fs_cwnd = s.dut.cwnd() / 2;
    let srtt = s.dut.srtt().unwrap().as_secs_f64() * 1e3;
    let t0 = resume(&mut s);
    let spacing = 4.0 * srtt / fs_cwnd as f64; // maxburst 4 (§3.4.3)
    s.at(t0 + RTT - 1.0);
    let mut i = 0;
    while s.pending() > 0 {
        let burst = (i / 4) as f64;
        s.expect(tx(seg(MSS, k + i), MSS).at(t0 + burst * spacing));
        i += 1;
    }
    assert_eq!(i, fs_cwnd);
}

#[test]
fn the_reset_timer_restarts_in_slow_start_without_penalty() {
    let (mut s, k) = warmed_up(fs_cfg(), PeerOpts::default(), 20);
    let ssthresh = s.dut.ssthresh();
    let rto = s.rto_ms();
    let t0 = resumed_round(&mut s);
    // Only the two unmarked restart segments arrive; every marked one is lost.
    s.at(t0 + RTT);
    s.send(ack(seg(MSS, k + 1)));
    s.send(ack(seg(MSS, k + 2)));
    s.skip_all();
    // The reset timer fires well before the retransmission timer would.
    let fired = s.next_timeout().unwrap();
    assert!(fired < t0 + RTT + rto, "reset at {fired} ms, RTO {rto} ms");
    s.at(fired);
    assert_eq!(s.dut.counters().fast_start_resets, 1);
    assert_eq!(s.dut.counters().timeouts, 0, "not a timeout");
    assert_eq!(s.dut.cwnd(), IW, "the restart window");
    assert_eq!(s.dut.ssthresh(), ssthresh, "ssthresh restored");
    assert_eq!(s.rto_ms(), rto, "no back-off");
    assert_eq!(s.dut.ca_state(), CaState::Loss);
    // Slow start from the first lost segment, unmarked.
    for j in 0..IW {
        let r = s.expect(tx(seg(MSS, k + 2 + j), MSS).at(fired));
        assert!(!r.flags.contains(Flags::FAST_START));
    }
    s.expect_quiet();
}

#[test]
fn a_sacked_segment_is_not_resent_after_a_reset() {
    let mut cfg = fs_cfg();
    cfg.sack = true;
    let (mut s, k) = warmed_up(cfg, PeerOpts::default(), 20);
    let t0 = resumed_round(&mut s);
    s.at(t0 + RTT);
    // Segment k+2 (the first marked one) is lost; k+3 arrives and is SACKed.
    s.send(ack(seg(MSS, k + 2)));
    s.send(ack(seg(MSS, k + 2)).sack(&[(seg(MSS, k + 3), seg(MSS, k + 4))]));
    s.skip_all();
    assert!(s.dut.sack_enabled());
    let fired = s.next_timeout().unwrap();
    s.at(fired);
    assert_eq!(s.dut.counters().fast_start_resets, 1);
    s.expect(tx(seg(MSS, k + 2), MSS).at(fired));
    s.expect(tx(seg(MSS, k + 4), MSS).at(fired));
    s.expect_quiet();
}

#[test]
fn a_partial_ack_in_fast_recovery_aborts_fast_start_without_sack() {
    let peer = PeerOpts {
        sack: false,
        ..PeerOpts::default()
    };
    let mut cfg = fs_cfg();
    cfg.limited_transmit = false;
    let (mut s, k) = warmed_up(cfg, peer, 20);
    let ssthresh = s.dut.ssthresh();
    let t0 = resumed_round(&mut s);
    // k+2 and k+4 lost: three duplicates of k+2, then the partial ACK at k+4.
    s.at(t0 + RTT);
    s.send(ack(seg(MSS, k + 2)));
    s.skip_all(); // new data the ACK let out
    for _ in 0..3 {
        s.send(ack(seg(MSS, k + 2)));
    }
    s.expect(tx(seg(MSS, k + 2), MSS).at(t0 + RTT));
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.skip_all();
    s.at(t0 + 2.0 * RTT);
    s.send(ack(seg(MSS, k + 4)));
    assert_eq!(s.dut.counters().fast_start_aborts, 1);
    assert_eq!(s.dut.ca_state(), CaState::Loss);
    assert_eq!(s.dut.cwnd(), IW);
    assert_eq!(s.dut.ssthresh(), ssthresh, "ssthresh restored, not halved");
    s.expect(tx(seg(MSS, k + 4), MSS).at(t0 + 2.0 * RTT));
}

#[test]
fn without_the_abort_newreno_stays_in_recovery() {
    let peer = PeerOpts {
        sack: false,
        ..PeerOpts::default()
    };
    let mut cfg = fs_cfg();
    cfg.limited_transmit = false;
    cfg.fast_start_partial_abort = false;
    let (mut s, k) = warmed_up(cfg, peer, 20);
    let t0 = resumed_round(&mut s);
    s.at(t0 + RTT);
    for _ in 0..4 {
        s.send(ack(seg(MSS, k + 2)));
    }
    s.skip_all();
    s.at(t0 + 2.0 * RTT);
    s.send(ack(seg(MSS, k + 4)));
    assert_eq!(s.dut.counters().fast_start_aborts, 0);
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.expect(tx(seg(MSS, k + 4), MSS).at(t0 + 2.0 * RTT));
}

#[test]
fn without_fast_start_the_restart_is_slow_start_from_the_initial_window() {
    let mut cfg = fs_cfg();
    cfg.fast_start = false;
    let (mut s, k) = warmed_up(cfg, PeerOpts::default(), 20);
    s.at(s.now() + 20_000.0);
    s.write((40 * MSS) as usize);
    let t = s.now();
    for j in 0..IW {
        let d = s.expect(tx(seg(MSS, k + j), MSS).at(t));
        assert!(!d.flags.contains(Flags::FAST_START));
    }
    s.expect_quiet();
    assert_eq!(s.dut.cwnd(), IW);
}

#[test]
fn a_new_connection_fast_starts_from_the_cached_path_state() {
    let mut s = Script::server(fs_cfg(), PeerOpts::default());
    let m = gentle_tcp::PathMetrics {
        cwnd: 20,
        ssthresh: 1000,
        srtt: std::time::Duration::from_millis(100),
        rttvar: std::time::Duration::from_millis(10),
    };
    s.dut.use_path_metrics(m);
    s.write((40 * MSS) as usize);
    s.at(s.now() + RTT - 1.0);
    let v = sent(&mut s);
    assert_eq!(s.dut.counters().fast_start, 1);
    assert_eq!(v.len(), 10, "half the cached slow-start window");
    assert_eq!(v.iter().filter(|x| x.2).count(), 10 - IW as usize);
}

#[test]
fn without_fast_start_cached_state_only_seeds_the_rtt() {
    let mut cfg = fs_cfg();
    cfg.fast_start = false;
    let mut s = Script::server(cfg, PeerOpts::default());
    s.dut.use_path_metrics(gentle_tcp::PathMetrics {
        cwnd: 20,
        ssthresh: 1000,
        srtt: std::time::Duration::from_millis(100),
        rttvar: std::time::Duration::from_millis(10),
    });
    s.write((40 * MSS) as usize);
    let t = s.now();
    s.expect_burst(1, IW, MSS, t);
    s.expect_quiet();
}

#[test]
fn the_reset_timer_stands_in_for_the_retransmission_timer() {
    // The RTT grew since the cached estimate: nothing is acknowledged before the
    // reset timer, which resets without penalty — no timeout, no back-off.
    let mut cfg = fs_cfg();
    cfg.rto_min = std::time::Duration::from_millis(1); // an RTO due before the reset
    let (mut s, k) = warmed_up(cfg, PeerOpts::default(), 20);
    let rto = s.rto_ms();
    let t0 = resume(&mut s);
    s.at(t0 + 3.0 * RTT);
    assert_eq!(
        s.dut.counters().timeouts,
        0,
        "the RTO waited for the reset timer"
    );
    assert_eq!(s.dut.counters().fast_start_resets, 1);
    assert_eq!(s.rto_ms(), rto, "no back-off");
    let _ = k;
}

#[test]
fn with_the_head_rule_an_unacknowledged_first_segment_does_not_reset() {
    // §3.4.4: reset only when the earliest unacknowledged packet is a fast-start
    // one; §7.1 (the default): whenever one is outstanding.
    for head in [false, true] {
        let mut cfg = fs_cfg();
        cfg.fast_start_reset_head = head;
        let (mut s, _) = warmed_up(cfg, PeerOpts::default(), 20);
        resume(&mut s);
        // Nothing is acknowledged: the first, unmarked, segment heads the queue.
        let fired = s.next_timeout().unwrap();
        s.at(fired + 50.0);
        let resets = s.dut.counters().fast_start_resets;
        assert_eq!(resets, u64::from(!head), "head rule {head}");
    }
}
