//! The signatures that `gentle analyze`'s tables give each flow and each exchange,
//! and that its report sets against response time: what the exchange's own
//! retransmissions were (any, by cause, shown unnecessary), and what its flow showed
//! (tail losses, reordering, bufferbloat, policing, a zero window, capture gaps).

use gentle_analyze::exchange::Exchange;
use gentle_analyze::{Cause, CauseCounts, FlowReport};

/// Every signature's name, in report order; a set of them is a bit per name.
pub const NAMES: [&str; 13] = [
    "retransmission",
    "fast",
    "early",
    "timeout",
    "slow-start",
    "probe",
    "spurious",
    "tail-loss",
    "reordering",
    "bufferbloat",
    "policed",
    "zero-window",
    "capture-gaps",
];

/// A set of signatures: bit `i` for [`NAMES`]`[i]`.
pub type Set = u32;

fn bit(name: &str) -> Set {
    let i = NAMES.iter().position(|n| *n == name).expect("a signature");
    1 << i
}

/// The signatures of retransmissions counted by cause: `retransmission` for any,
/// each cause seen, and `spurious`.
fn of_counts(c: &CauseCounts) -> Set {
    let mut s = 0;
    if c.total() > 0 {
        s |= bit("retransmission");
    }
    for cause in Cause::ALL {
        if c.get(cause) > 0 {
            s |= bit(cause.name());
        }
    }
    if c.spurious > 0 {
        s |= bit("spurious");
    }
    s
}

/// The signatures a flow shows as a whole.
fn of_flow_alone(f: &FlowReport) -> Set {
    let mut s = 0;
    for (on, name) in [
        (f.tail_losses > 0, "tail-loss"),
        (f.reordering_events > 0, "reordering"),
        (f.bufferbloat, "bufferbloat"),
        (f.policed_kbps.is_some(), "policed"),
        (f.zero_windows > 0, "zero-window"),
        (f.capture_gaps > 0, "capture-gaps"),
    ] {
        if on {
            s |= bit(name);
        }
    }
    s
}

/// A flow's signatures: its server's retransmissions and what the flow showed.
pub fn of_flow(f: &FlowReport) -> Set {
    of_counts(&f.retransmissions) | of_flow_alone(f)
}

/// An exchange's signatures: the server's retransmissions while it was under way,
/// and what its flow showed.
pub fn of_exchange(f: &FlowReport, e: &Exchange) -> Set {
    of_counts(&e.retransmissions) | of_flow_alone(f)
}

/// Whether `set` holds signature `i` (an index into [`NAMES`]).
pub fn has(set: Set, i: usize) -> bool {
    set & (1 << i) != 0
}

/// The names in `set`, joined with `|` (as `--tags` joins a packet's tags).
pub fn names(set: Set) -> String {
    NAMES
        .iter()
        .enumerate()
        .filter(|&(i, _)| has(set, i))
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("|")
}

/// The set of `|`-joined `names` (as [`names`] writes them); unknown names are
/// left out.
pub fn parse(names: &str) -> Set {
    names
        .split('|')
        .filter_map(|n| NAMES.iter().position(|x| *x == n))
        .fold(0, |s, i| s | 1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_give_their_causes_and_names_join_in_order() {
        let c = CauseCounts {
            timeout: 2,
            probe: 1,
            spurious: 1,
            ..CauseCounts::default()
        };
        assert_eq!(
            names(of_counts(&c)),
            "retransmission|timeout|probe|spurious"
        );
        assert_eq!(of_counts(&CauseCounts::default()), 0);
        assert_eq!(names(0), "");
        assert_eq!(parse(&names(of_counts(&c))), of_counts(&c));
        assert_eq!(parse(""), 0);
    }
}
