//! The reproductions of `prr-imc11.txt` §4.1 (Figures 2 and 3) and §4.3 property 3
//! (banking), checked against what the paper states, from the event trace of the
//! built-in experiments `prr-fig2`, `prr-fig3` and `prr-fig4`.

use gentle_lab::catalogue;
use gentle_lab::runner;
use gentle_lab::scenario::Scenario;
use gentle_lab::tsg::{self, Facts};

fn facts(name: &str) -> Vec<Facts> {
    let e = catalogue::find(name).expect("built in");
    let scn = Scenario::parse(name, e.toml).expect("valid");
    let flows = runner::observed_flows(&scn, scn.seed, 0);
    let later = tsg::later_write_ms(&scn);
    flows.iter().map(|f| tsg::facts(f, later)).collect()
}

fn by<'a>(all: &'a [Facts], variant: &str) -> &'a Facts {
    all.iter().find(|f| f.variant == variant).expect("variant")
}

/// One data packet takes 1052 bytes × 8 / 1.2 Mbit/s ≈ 7 ms on the bottleneck, so
/// ACKs return about 7 ms apart; the RTT is 100 ms.
const ACK_GAP_MS: f64 = 7.0;
const RTT_MS: f64 = 100.0;

#[test]
fn figure2_prr_linux_rfc3517() {
    let all = facts("prr-fig2");
    let (prr, linux, rfc) = (by(&all, "PRR"), by(&all, "Linux"), by(&all, "RFC 3517"));
    for f in [prr, linux, rfc] {
        assert_eq!(f.retransmissions_ms.len(), 4, "{f:?}");
    }
    // PRR retransmits on alternate ACKs ...
    assert!(
        prr.acks_between_retransmissions.iter().all(|&n| n == 2),
        "{prr:?}"
    );
    // ... leaves recovery with cwnd = ssthresh = 10 ...
    assert_eq!(
        (prr.cwnd_at_exit, prr.ssthresh_at_exit),
        (Some(10), Some(10))
    );
    // ... and sends the 10 segments written at 500 ms in one flight, acknowledged
    // within an RTT plus their serialisation.
    assert_eq!(prr.later_flights, 1);
    assert!(prr.later_acked_ms.unwrap() - 500.0 < RTT_MS + 11.0 * ACK_GAP_MS);

    // Linux leaves recovery with cwnd = pipe + 1 (pipe was 1) and needs about four
    // round trips of slow start for the same 10 segments.
    assert!(linux.cwnd_at_exit.unwrap() <= 2, "{linux:?}");
    assert!(linux.later_flights >= 4, "{linux:?}");
    assert!(
        linux.later_acked_ms.unwrap() - 500.0 > 3.0 * RTT_MS,
        "{linux:?}"
    );

    // RFC 3517 is silent for about half the ACKs of the round trip before its
    // second retransmission.
    let gap = rfc.retransmissions_ms[1] - rfc.retransmissions_ms[0];
    assert!(rfc.acks_between_retransmissions[0] >= 6, "{rfc:?}");
    assert!(gap > 0.4 * RTT_MS, "RFC 3517's silence lasted {gap} ms");
    assert!(prr.retransmissions_ms[1] - prr.retransmissions_ms[0] < 3.0 * ACK_GAP_MS);
}

#[test]
fn figure3_heavy_losses() {
    let all = facts("prr-fig3");
    let (prr, rfc) = (by(&all, "PRR"), by(&all, "RFC 3517"));
    assert_eq!(prr.retransmissions_ms.len(), 10, "{prr:?}");
    // Proportional part first: alternate ACKs.
    assert_eq!(&prr.acks_between_retransmissions[..3], &[2, 2, 2]);
    // Once pipe is below ssthresh, the slow-start part sends two per ACK: pairs
    // with no ACK between them.
    let pairs = prr.acks_between_retransmissions[3..]
        .iter()
        .filter(|&&n| n == 0)
        .count();
    assert!(pairs >= 3, "{prr:?}");
    let most_at_once = |f: &Facts| {
        let mut best = 1;
        let mut run = 1;
        for &n in &f.acks_between_retransmissions {
            run = if n == 0 { run + 1 } else { 1 };
            best = best.max(run);
        }
        best
    };
    // PRR never sends more than two at once; RFC 3517 bursts.
    assert_eq!(most_at_once(prr), 2, "{prr:?}");
    assert!(most_at_once(rfc) >= 4, "{rfc:?}");
    assert_eq!(prr.cwnd_at_exit, Some(10));
}

#[test]
fn figure4_banking_during_a_stall() {
    let all = facts("prr-fig4");
    let (prr, linux, rfc) = (by(&all, "PRR"), by(&all, "Linux"), by(&all, "RFC 3517"));
    // The write lands mid-recovery in all three.
    for f in [prr, linux, rfc] {
        assert!(f.recovery_start_ms.unwrap() < 160.0 && f.recovery_end_ms.unwrap() > 160.0);
    }
    // PRR spends the banked opportunities at once: more than one segment in its
    // first flight, so fewer flights than segments.
    assert!(prr.later_flights < 10, "{prr:?}");
    // RFC 3517 sends nothing until pipe falls below cwnd: one per ACK.
    assert_eq!(rfc.later_flights, 10, "{rfc:?}");
    // Linux's cwnd followed pipe down during the stall; PRR's did not.
    assert_eq!(prr.cwnd_at_exit, Some(10));
    assert!(linux.cwnd_at_exit.unwrap() < 10);
    assert!(prr.later_acked_ms.unwrap() < linux.later_acked_ms.unwrap());
}
