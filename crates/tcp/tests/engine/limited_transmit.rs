//! Packet scripts: limited transmit (RFC 3042): each of the first two duplicate ACKs
//! lets one new segment out, if the receiver's window allows and new data is
//! waiting, without changing cwnd.

use crate::script;

use gentle_tcp::{CaState, Config, Profile};
use script::*;

const MSS: u32 = 1448;

fn sender(cfg: Config, queued: u32, window: u32) -> Script {
    // Small windows are exact without window scaling.
    let peer = PeerOpts {
        window,
        wscale: (window > 65535).then_some(7),
        ..PeerOpts::default()
    };
    let mut s = Script::server(cfg, peer);
    s.write((queued * MSS) as usize);
    s.expect_burst(1, 10, MSS, 100.0);
    s.expect_quiet();
    s
}

#[test]
fn first_two_dupacks_each_send_one_new_segment() {
    for profile in [Profile::Plain, Profile::Rfc, Profile::Linux26] {
        let mut s = sender(profile.config(), 20, 1 << 20);
        s.at(200.0);
        let sack = profile != Profile::Plain;
        let dup = |k: u32| {
            if sack {
                ack(1).sack(&[(seg(MSS, 2), seg(MSS, 2 + k))])
            } else {
                ack(1)
            }
        };
        s.send(dup(1));
        s.expect(tx(seg(MSS, 11), MSS).at(200.0));
        s.expect_quiet();
        assert_eq!(s.dut.cwnd(), 10, "{profile:?}: cwnd unchanged");
        s.at(201.0);
        s.send(dup(2));
        s.expect(tx(seg(MSS, 12), MSS).at(201.0));
        s.expect_quiet();
        s.at(202.0);
        s.send(dup(3));
        s.expect(tx(1, MSS).at(202.0));
        assert_eq!(s.dut.ca_state(), CaState::Recovery, "{profile:?}");
    }
}

#[test]
fn nothing_is_sent_on_early_dupacks_when_disabled() {
    let mut cfg = Profile::Rfc.config();
    cfg.limited_transmit = false;
    let mut s = sender(cfg, 20, 1 << 20);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 5))]));
    s.expect(tx(1, MSS));
}

#[test]
fn nothing_is_sent_without_new_data_or_receive_window() {
    // No new data queued.
    let mut s = sender(Profile::Rfc.config(), 10, 1 << 20);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();

    // The receiver's window ends at segment 10.
    let mut s = sender(Profile::Rfc.config(), 20, 10 * MSS);
    s.at(200.0);
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 3))]));
    s.send(ack(1).sack(&[(seg(MSS, 2), seg(MSS, 4))]));
    s.expect_quiet();
}
