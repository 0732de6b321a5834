//! Packet scripts: Corrective (`gentle-aggression-sigcomm13.txt` §5 and §7,
//! draft-flach-tcpm-fec-00) — negotiation, encoding boundaries (partial MSS, the
//! 16-MSS cap, the RTT/4 delay and grouping window), 0-RTT recovery of a single
//! loss, R_FAIL's fast retransmission, the R_SUCC/R_ACK congestion signal, the
//! middlebox fallback, and redundant SYNs.

use crate::script;

use bytes::Bytes;
use gentle_tcp::corrective::option::flags;
use gentle_tcp::corrective::{CorrectiveOption, ENCODING_XOR};
use gentle_tcp::wire::Segment;
use gentle_tcp::{CaState, CcAlgorithm, Config, Flags, Profile};
use script::*;

/// Peer MSS 1460 less 12 bytes of timestamps and 8 of the Corrective option.
const MSS: u32 = 1440;

fn cfg() -> Config {
    let mut c = Profile::Linux26.config();
    c.cc = CcAlgorithm::Reno;
    c.corrective = true;
    c
}

fn peer() -> PeerOpts {
    PeerOpts {
        corrective: true,
        ..PeerOpts::default()
    }
}

fn fec_of(seg: &Segment) -> Option<CorrectiveOption> {
    CorrectiveOption::from_experimental(seg.options.experimental.as_ref(), seg.flags.syn())
}

/// Bytes whose value depends on their position, so that XORs are not trivial.
fn pattern(from: usize, n: usize) -> Bytes {
    Bytes::from(
        (from..from + n)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect::<Vec<_>>(),
    )
}

/// The XOR of `data` folded on `stride`-byte blocks.
fn xor_fold(data: &[u8], stride: usize) -> Vec<u8> {
    let mut acc = vec![0u8; stride.min(data.len())];
    for (i, b) in data.iter().enumerate() {
        acc[i % stride] ^= b;
    }
    acc
}

fn encoded(start: u32) -> Exp {
    Exp::default().flags(Flags::ACK).seq(start)
}

#[track_caller]
fn expect_encoded(s: &mut Script, start: u32, len: u32, at: f64) -> Segment {
    let seg = s.expect(encoded(start).at(at));
    assert_eq!(
        fec_of(&seg),
        Some(CorrectiveOption::Data {
            flags: flags::ENCODED,
            length: Some(len)
        }),
        "option of the Corrective packet"
    );
    seg
}

// ------------------------------------------------------------------ negotiation

#[test]
fn negotiated_when_both_offer_and_then_on_every_packet() {
    let mut s = Script::syn_received(cfg(), peer());
    let synack = s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    assert_eq!(
        fec_of(&synack),
        Some(CorrectiveOption::Offer {
            encoding: ENCODING_XOR
        })
    );
    assert!(s.dut.corrective_enabled());
    // The option's 8 bytes come out of the MSS, as timestamps' 12 do.
    assert_eq!(s.dut.smss(), MSS);
    s.at(100.0);
    s.send(ack(1));
    s.write(2 * MSS as usize);
    for k in 0..2 {
        let d = s.expect(tx(1 + k * MSS, MSS).at(100.0));
        assert_eq!(
            fec_of(&d),
            Some(CorrectiveOption::Data {
                flags: 0,
                length: None
            })
        );
    }
    s.at(125.0);
    expect_encoded(&mut s, 1, 2 * MSS, 125.0);
    // A pure ACK carries it too.
    s.send(data(1, 100, 1));
    s.at(200.0);
    let a = s.expect(pure_ack(101));
    assert!(fec_of(&a).is_some(), "pure ACK without the option");
}

#[test]
fn a_peer_without_corrective_gets_plain_tcp() {
    // DUT offers as a client; the peer's SYN-ACK does not answer.
    let mut s = Script::connecting(cfg(), PeerOpts::default());
    let syn = s.expect(Exp::default().flags(Flags::SYN).at(0.0));
    assert_eq!(
        fec_of(&syn),
        Some(CorrectiveOption::Offer {
            encoding: ENCODING_XOR
        })
    );
    let mut s = Script::client(cfg(), PeerOpts::default());
    assert!(!s.dut.corrective_enabled());
    assert_eq!(s.dut.smss(), 1448);
    s.write(3 * 1448);
    for k in 0..3 {
        let d = s.expect(tx(1 + k * 1448, 1448));
        assert!(d.options.experimental.is_none());
    }
    // No Corrective packet follows.
    s.at(150.0);
    s.send(ack(1 + 3 * 1448));
    s.at(1000.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().corrective_sent, 0);

    // A peer that offers to a DUT without Corrective: no option in the SYN-ACK.
    let mut plain = Profile::Linux26.config();
    plain.corrective = false;
    let mut s = Script::syn_received(plain, peer());
    let synack = s.expect(Exp::default().flags(Flags::SYN | Flags::ACK));
    assert!(synack.options.experimental.is_none());
    assert!(!s.dut.corrective_enabled());
}

#[test]
fn corrective_needs_timestamps() {
    let p = PeerOpts {
        timestamps: false,
        ..peer()
    };
    let mut s = Script::syn_received(cfg(), p);
    let synack = s.expect(Exp::default().flags(Flags::SYN | Flags::ACK));
    assert!(synack.options.experimental.is_none());
    assert!(!s.dut.corrective_enabled());
}

#[test]
fn a_wrong_encoding_or_magic_is_not_an_offer() {
    let mut s = Script::connecting(cfg(), peer());
    s.expect(Exp::default().flags(Flags::SYN));
    s.at(100.0);
    let mut o = gentle_tcp::Options {
        mss: Some(1460),
        sack_permitted: true,
        ..Default::default()
    };
    o.experimental = Some(CorrectiveOption::Offer { encoding: 9 }.to_experimental());
    s.send(Pkt {
        flags: Flags::SYN | Flags::ACK,
        seq: Some(0),
        ack: 1,
        options: Some(o),
        ..Pkt::default()
    });
    assert!(s.dut.is_established());
    assert!(!s.dut.corrective_enabled());
}

// ------------------------------------------------------------------ encoding

#[test]
fn a_partial_segment_is_encoded_as_itself_rtt_over_4_later() {
    let mut s = Script::server(cfg(), peer());
    let body = pattern(0, 1000);
    s.write_bytes(body.clone());
    s.expect(tx(1, 1000).at(100.0));
    // SRTT 100 ms from the handshake: the Corrective packet waits 25 ms.
    assert_eq!(s.next_timeout(), Some(125.0));
    s.at(124.9);
    s.expect_quiet();
    s.at(125.0);
    let e = expect_encoded(&mut s, 1, 1000, 125.0);
    assert_eq!(&e.payload[..], &body[..]);
    s.expect_quiet();
    let c = *s.dut.counters();
    assert_eq!((c.corrective_sent, c.corrective_bytes), (1, 1000));
    // It is not data: nothing more in flight, no retransmission of it.
    assert_eq!(s.dut.snd_nxt(), 1001);
}

#[test]
fn blocks_xor_along_mss_boundaries() {
    let mut s = Script::server(cfg(), peer());
    let n = 3 * MSS as usize + 500;
    let body = pattern(11, n);
    s.write_bytes(body.clone());
    let next = s.expect_burst(1, 3, MSS, 100.0);
    s.expect(tx(next, 500).at(100.0));
    s.at(125.0);
    let e = expect_encoded(&mut s, 1, n as u32, 125.0);
    assert_eq!(e.payload.len(), MSS as usize);
    assert_eq!(&e.payload[..], &xor_fold(&body, MSS as usize)[..]);
}

#[test]
fn a_block_holds_at_most_16_mss() {
    let mut c = cfg();
    c.initial_window = 20;
    let mut s = Script::server(c, peer());
    let body = pattern(0, 20 * MSS as usize);
    s.write_bytes(body.clone());
    s.expect_burst(1, 20, MSS, 100.0);
    s.at(125.0);
    let a = expect_encoded(&mut s, 1, 16 * MSS, 125.0);
    let b = expect_encoded(&mut s, 1 + 16 * MSS, 4 * MSS, 125.0);
    let split = 16 * MSS as usize;
    assert_eq!(&a.payload[..], &xor_fold(&body[..split], MSS as usize)[..]);
    assert_eq!(&b.payload[..], &xor_fold(&body[split..], MSS as usize)[..]);
    s.expect_quiet();
}

#[test]
fn data_within_the_window_joins_the_block_and_later_data_starts_another() {
    let mut s = Script::server(cfg(), peer());
    s.write_bytes(pattern(0, 2 * MSS as usize));
    s.expect_burst(1, 2, MSS, 100.0);
    // 10 ms later, within RTT/4 of the block's first segment: it joins, and the
    // Corrective packet moves to 25 ms after it.
    s.at(110.0);
    s.write_bytes(pattern(2 * MSS as usize, MSS as usize));
    s.expect(tx(1 + 2 * MSS, MSS).at(110.0));
    assert_eq!(s.next_timeout(), Some(135.0));
    // At 130 ms the window of the first block (100 + 25) has passed: a new block.
    s.at(130.0);
    s.write_bytes(pattern(3 * MSS as usize, 100));
    s.expect(tx(1 + 3 * MSS, 100).at(130.0));
    s.at(135.0);
    expect_encoded(&mut s, 1, 3 * MSS, 135.0);
    s.expect_quiet();
    s.at(155.0);
    expect_encoded(&mut s, 1 + 3 * MSS, 100, 155.0);
}

#[test]
fn retransmissions_are_not_encoded_and_acked_blocks_are_skipped() {
    let mut s = Script::server(cfg(), peer());
    s.write_bytes(pattern(0, 2 * MSS as usize));
    s.expect_burst(1, 2, MSS, 100.0);
    // The ACK of everything arrives before the Corrective packet is due.
    s.at(120.0);
    s.send(ack(1 + 2 * MSS));
    s.at(200.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().corrective_sent, 0);
    // A timeout retransmission is not encoded again.
    s.write_bytes(pattern(0, MSS as usize));
    let t0 = s.now();
    s.expect(tx(1 + 2 * MSS, MSS).at(t0));
    // RTT/4 from the smoothed RTT, which the 20 ms sample lowered.
    let d = s.dut.srtt().unwrap().as_secs_f64() * 1e3 / 4.0;
    assert!(d < 25.0);
    s.at(t0 + d);
    expect_encoded(&mut s, 1 + 2 * MSS, MSS, t0 + d);
    let rto = s.rto_ms();
    s.at(t0 + rto);
    s.expect(tx(1 + 2 * MSS, MSS).at(t0 + rto));
    s.at(t0 + rto + 100.0);
    s.expect_quiet();
    assert_eq!(s.dut.counters().corrective_sent, 1);
}

/// The peer acknowledges the data of the last segment but not its FIN (Corrective
/// rebuilt the bytes; a flag cannot be rebuilt): the retransmission is the FIN
/// alone, from snd.una (Linux `tcp_retransmit_skb` trims what was acknowledged,
/// `tcp_trim_head`), not the acknowledged bytes again.
#[test]
fn a_segment_acknowledged_but_for_its_fin_is_resent_as_the_fin_alone() {
    let mut s = Script::server(cfg(), peer());
    // Written and closed at once: the FIN rides on the last data segment.
    assert!(s.dut.write(pattern(0, 2 * MSS as usize)));
    s.dut.close();
    s.flush();
    s.expect(tx(1, MSS).at(100.0));
    s.expect(tx(1 + MSS, MSS).flags(Flags::ACK | Flags::FIN).at(100.0));
    s.at(120.0);
    s.send(ack(1 + 2 * MSS));
    s.skip_all(); // the Corrective packet, if it went before the ACK
    let mut fin = None;
    for _ in 0..4 {
        let Some(t) = s.next_timeout() else { break };
        s.at(t);
        while s.pending() > 0 && fin.is_none() {
            let seg = s.expect(Exp::default());
            if seg.flags.fin() {
                fin = Some(seg);
            }
        }
        if fin.is_some() {
            break;
        }
    }
    let fin = fin.expect("the FIN is retransmitted");
    assert_eq!(s.rel_seq(&fin), 1 + 2 * MSS, "from snd.una");
    assert!(fin.payload.is_empty(), "no acknowledged byte is sent again");
    s.send(ack(2 + 2 * MSS));
    assert_eq!(s.dut.counters().retrans_segs, 1);
}

// ------------------------------------------------------------------ receiving

/// DUT as receiver: the peer sends `n` segments of `body` except those in `lost`,
/// then the Corrective packet for all of them.
fn receive_with_losses(n: u32, lost: &[u32]) -> (Script, Bytes) {
    let mut s = Script::server(cfg(), peer());
    let body = pattern(5, (n * MSS) as usize);
    for k in 0..n {
        if lost.contains(&k) {
            continue;
        }
        let a = (k * MSS) as usize;
        s.send(data(1 + k * MSS, MSS, 1).payload(body.slice(a..a + MSS as usize)));
    }
    s.skip_all();
    let x = Bytes::from(xor_fold(&body, MSS as usize));
    s.send(
        data(1, MSS, 1)
            .payload(x)
            .fec(flags::ENCODED, Some(n * MSS))
            .flags(Flags::ACK),
    );
    (s, body)
}

#[test]
fn a_lost_segment_in_the_middle_is_rebuilt_without_a_retransmission() {
    let (mut s, body) = receive_with_losses(4, &[1]);
    // The hole is filled at once: an immediate ACK of everything, with R_SUCC.
    let a = s.expect(pure_ack(1 + 4 * MSS).no_sack());
    assert_eq!(fec_of(&a).map(|o| o.flags()), Some(flags::R_SUCC));
    assert_eq!(s.read_bytes(), body.to_vec());
    let c = *s.dut.counters();
    assert_eq!((c.corrective_recv, c.corrective_recovered), (1, 1));
}

#[test]
fn a_lost_tail_segment_is_rebuilt() {
    let (mut s, body) = receive_with_losses(4, &[3]);
    assert_eq!(s.read_bytes(), body.to_vec());
    s.at(s.now() + 50.0);
    let a = s.expect(pure_ack(1 + 4 * MSS));
    assert!(fec_of(&a).unwrap().has(flags::R_SUCC));
}

#[test]
fn nothing_missing_means_the_corrective_packet_is_dropped() {
    let (mut s, body) = receive_with_losses(4, &[]);
    assert_eq!(s.read_bytes(), body.to_vec());
    let c = *s.dut.counters();
    assert_eq!((c.corrective_unneeded, c.corrective_recovered), (1, 0));
    // An old-looking segment that is really a Corrective packet draws neither an
    // ACK nor a DSACK.
    s.at(s.now() + 50.0);
    s.expect_quiet();
    assert_eq!(c.dsack_old_sent, 0);
    // (Quick-ACK mode at the start of the connection: every segment is acknowledged.)
    s.send(data(1 + 4 * MSS, MSS, 1));
    let a = s.expect(pure_ack(1 + 5 * MSS));
    assert!(!fec_of(&a).unwrap().has(flags::R_SUCC));
}

#[test]
fn r_succ_stays_on_until_r_ack_arrives() {
    let (mut s, _) = receive_with_losses(4, &[2]);
    s.skip_all();
    // The peer's next packets without R_ACK: the DUT keeps signalling (each is
    // acknowledged at once in quick-ACK mode).
    for k in 4..6 {
        s.send(data(1 + k * MSS, MSS, 1));
        let a = s.expect(pure_ack(1 + (k + 1) * MSS));
        assert!(fec_of(&a).unwrap().has(flags::R_SUCC));
    }
    // R_ACK: the sender reduced cwnd. R_SUCC stops.
    s.send(data(1 + 6 * MSS, MSS, 1).fec(flags::R_ACK, None));
    let a = s.expect(pure_ack(1 + 7 * MSS));
    assert_eq!(fec_of(&a).map(|o| o.flags()), Some(0));
}

#[test]
fn two_losses_send_r_fail_with_the_lost_range() {
    let (mut s, _) = receive_with_losses(6, &[1, 3]);
    // An explicit duplicate ACK at once: everything from the ACK to the end of the
    // encoded range is reported lost (relative to the ACK number).
    let a = s.expect(pure_ack(1 + MSS));
    assert_eq!(
        fec_of(&a),
        Some(CorrectiveOption::Data {
            flags: flags::R_FAIL,
            length: Some(5 * MSS)
        })
    );
    s.expect_quiet();
    assert_eq!(s.dut.counters().corrective_failed, 1);
    assert_eq!(s.read_bytes().len(), MSS as usize);
}

#[test]
fn more_than_one_mss_missing_in_one_run_fails() {
    let (mut s, _) = receive_with_losses(6, &[2, 3]);
    let a = s.expect(pure_ack(1 + 2 * MSS));
    assert_eq!(
        fec_of(&a),
        Some(CorrectiveOption::Data {
            flags: flags::R_FAIL,
            length: Some(4 * MSS)
        })
    );
}

#[test]
fn history_rebuilds_from_bytes_the_application_already_read() {
    // Segments 1..3 arrive and are read; segment 4 is lost; the Corrective packet
    // covers 1..4, so the rebuild needs the history.
    let mut s = Script::server(cfg(), peer());
    let body = pattern(9, 4 * MSS as usize);
    for k in 0..3u32 {
        let a = (k * MSS) as usize;
        s.send(data(1 + k * MSS, MSS, 1).payload(body.slice(a..a + MSS as usize)));
    }
    assert_eq!(s.read_bytes().len(), 3 * MSS as usize);
    s.skip_all();
    s.send(
        data(1, MSS, 1)
            .payload(Bytes::from(xor_fold(&body, MSS as usize)))
            .fec(flags::ENCODED, Some(4 * MSS)),
    );
    assert_eq!(s.read_bytes(), body[3 * MSS as usize..].to_vec());
}

#[test]
fn a_corrective_packet_beyond_the_window_is_dropped() {
    let mut s = Script::server(cfg(), peer());
    let far = 1 + (Profile::Linux26.config().recv_buffer);
    s.send(
        data(far, 100, 1)
            .payload(Bytes::from(vec![1; 100]))
            .fec(flags::ENCODED, Some(100)),
    );
    s.at(s.now() + 100.0);
    s.expect_quiet();
    let c = *s.dut.counters();
    assert_eq!((c.corrective_failed, c.corrective_recovered), (0, 0));
    assert_eq!(c.segs_dropped, 1);
}

// ------------------------------------------------------------------ sender signals

/// DUT sends 10 segments at 100 ms (and their Corrective packet at 125 ms).
fn sender(c: Config) -> Script {
    let mut s = Script::server(c, peer());
    s.write(10 * MSS as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.at(125.0);
    expect_encoded(&mut s, 1, 10 * MSS, 125.0);
    s.at(200.0);
    s
}

#[test]
fn r_fail_marks_the_range_lost_and_retransmits_at_once() {
    let mut c = cfg();
    c.fack = false;
    // Without R_FAIL, one SACKed segment is not enough to start recovery.
    let mut s = sender(c.clone());
    s.send(ack(1).sack(&[(1 + 9 * MSS, 1 + 10 * MSS)]));
    s.expect_quiet();
    assert_eq!(s.dut.ca_state(), CaState::Disorder);

    let mut s = sender(c);
    s.send(
        ack(1)
            .sack(&[(1 + 9 * MSS, 1 + 10 * MSS)])
            .fec(flags::R_FAIL, Some(10 * MSS)),
    );
    assert_eq!(s.dut.ca_state(), CaState::Recovery);
    s.expect(tx(1, MSS).at(200.0));
    assert_eq!(s.dut.counters().corrective_fail_recv, 1);
}

#[test]
fn r_succ_reduces_cwnd_once_and_r_ack_goes_on_the_next_packet() {
    let mut s = sender(cfg());
    let cwnd = s.dut.cwnd();
    s.send(ack(1 + 2 * MSS).fec(flags::R_SUCC, None));
    assert_eq!(s.dut.ca_state(), CaState::Cwr);
    assert_eq!(s.dut.ssthresh(), cwnd / 2);
    // The next packet the DUT sends carries R_ACK.
    s.write(MSS as usize);
    let d = s.expect(tx(1 + 10 * MSS, MSS));
    assert!(fec_of(&d).unwrap().has(flags::R_ACK));
    // More R_SUCC from the same episode: no second reduction, no second R_ACK.
    s.send(ack(1 + 4 * MSS).fec(flags::R_SUCC, None));
    s.send(ack(1 + 6 * MSS).fec(flags::R_SUCC, None));
    assert_eq!(s.dut.counters().corrective_cwr, 1);
    assert_eq!(s.dut.ssthresh(), cwnd / 2);
    s.write(MSS as usize);
    while s.pending() > 0 {
        let d = s.expect(Exp::default());
        assert!(!fec_of(&d).unwrap().has(flags::R_ACK));
    }
    // CWR ends once something sent after it is acknowledged: Linux holds it until
    // an ACK above high_seq (`tcp_fastretrans_alert`), not at high_seq itself.
    s.send(ack(1 + 10 * MSS));
    assert_eq!(s.dut.ca_state(), CaState::Cwr);
    s.send(ack(1 + 11 * MSS));
    assert_eq!(s.dut.ca_state(), CaState::Open);
    assert!(s.dut.cwnd() <= cwnd / 2 + 1);
}

// ------------------------------------------------------------------ middleboxes

#[test]
fn a_packet_without_the_option_is_discarded_and_corrective_turns_off() {
    let mut s = Script::server(cfg(), peer());
    let before = s.last_tsval();
    s.send(data(1, 500, 1).strip_fec().ecr(before));
    // Discarded: not acknowledged, not readable; an ACK without the option tells
    // the peer at once, and its timestamp clock has stepped past every earlier one.
    let a = s.expect(pure_ack(1));
    assert!(a.options.experimental.is_none());
    assert!(a.options.timestamps.unwrap().val > before);
    assert_eq!(s.read_bytes().len(), 0);
    assert!(!s.dut.corrective_enabled());
    assert_eq!(s.dut.counters().corrective_fallback, 1);
    // A packet without the option that the peer sent before it could know — it
    // echoes an older TSval — might be a stripped Corrective packet: discarded.
    s.send(data(1, 500, 1).strip_fec().ecr(before));
    assert_eq!(s.read_bytes().len(), 0);
    s.skip_all();
    // The peer's retransmission, sent after it saw the ACK (it echoes its TSval),
    // is accepted, and the DUT's packets no longer carry the option.
    s.send(data(1, 500, 1).strip_fec());
    assert_eq!(s.read_bytes().len(), 500);
    s.at(s.now() + 100.0);
    let a = s.expect(pure_ack(501));
    assert!(a.options.experimental.is_none());
    // A Corrective packet still in flight from the peer is never taken for data.
    s.send(
        data(501, 100, 1)
            .payload(Bytes::from(vec![0xEE; 100]))
            .fec(flags::ENCODED, Some(100)),
    );
    assert_eq!(s.read_bytes().len(), 0);
    // New data from the DUT is no longer encoded.
    s.write(1000);
    s.skip_all();
    s.at(s.now() + 200.0);
    assert_eq!(s.dut.counters().corrective_sent, 0);
}

#[test]
fn the_handshakes_last_ack_without_the_option_falls_back_safely() {
    // The SYN-ACK offered Corrective, but the peer's ACK and first data arrive
    // without the option (a middlebox stripped it): discarded, Corrective off, and
    // the connection is still in SYN-RECEIVED. Data the peer sent before it could
    // know must not be taken: it may be a stripped Corrective packet.
    let mut s = Script::syn_received(cfg(), peer());
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.at(100.0);
    let synack_ts = s.last_tsval();
    s.send(data(1, 500, 1).strip_fec().ecr(synack_ts));
    assert!(!s.dut.corrective_enabled());
    assert!(!s.dut.is_established());
    s.send(data(1, 500, 1).strip_fec().ecr(synack_ts));
    assert_eq!(s.read_bytes().len(), 0, "pre-fallback data taken");
    // The peer retransmits after the DUT's next packet reached it: accepted.
    s.at(1000.0);
    s.skip_all();
    s.send(data(1, 500, 1).strip_fec());
    assert!(s.dut.is_established());
    assert_eq!(s.read_bytes().len(), 500);
}

// ------------------------------------------------------------------ redundant SYN

#[test]
fn redundant_syn_sends_every_syn_twice() {
    let mut c = Profile::Linux26.config();
    c.redundant_syn = true;
    let mut s = Script::connecting(c.clone(), PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN).seq(0).at(0.0));
    s.expect(Exp::default().flags(Flags::SYN).seq(0).at(0.0));
    s.expect_quiet();
    // The retransmission after the 1 s initial RTO is doubled too.
    s.at(1000.0);
    s.expect(Exp::default().flags(Flags::SYN).seq(0).at(1000.0));
    s.expect(Exp::default().flags(Flags::SYN).seq(0).at(1000.0));
    s.expect_quiet();
    assert_eq!(s.dut.counters().syn_retrans, 1);

    let mut s = Script::syn_received(c, PeerOpts::default());
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.expect(Exp::default().flags(Flags::SYN | Flags::ACK).at(0.0));
    s.expect_quiet();
}
