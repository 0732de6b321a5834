//! The labels of the TCPRS corpus that the packets show wrong, each with what the
//! packets show and why. A listed label's class replaces TCPRS's in the agreement
//! "with the packets", and so does it for the rtype 5 labels of the same flow and
//! side after it up to `through_us` (TCPRS's rtype 5 says only "the same recovery
//! as the label before"). `where_tcprs_is_wrong_the_packets_say_so` checks each:
//! TCPRS says otherwise, and gentle says what the packets show.

use super::tcprs::Class;

/// One label the packets show wrong.
pub struct Wrong {
    /// The capture, `group/name`.
    pub trace: &'static str,
    /// The frame's time in µs since the epoch, as TCPRS logs it.
    pub ts_us: u64,
    /// The absolute sequence number, as TCPRS logs it.
    pub seq: u32,
    /// The class the packets show.
    pub truth: Class,
    /// The time of the last rtype 5 label after it that belongs to the same
    /// recovery as the packets show it, if any.
    pub through_us: Option<u64>,
    /// What in the packets shows it.
    pub why: &'static str,
}

/// Every correction, by capture and time.
pub const TCPRS_WRONG: &[Wrong] = &[
    Wrong {
        trace: "composite/comp007",
        ts_us: 1_285_863_043_653_556,
        seq: 2_114_253_567,
        truth: Class::None,
        through_us: None,
        why: "a SYN-ACK 74 µs after the client's repeated SYN answers it (Linux \
         tcp_check_req), no timer: TCPRS calls it an RTO",
    },
    Wrong {
        trace: "rto/rto007",
        ts_us: 1_285_864_277_439_357,
        seq: 4_283_342_860,
        truth: Class::None,
        through_us: None,
        why: "a SYN-ACK 93 µs after the client's repeated SYN answers it, no timer: TCPRS \
         calls it an RTO",
    },
    Wrong {
        trace: "heuristics/loss-window-approximation",
        ts_us: 1_285_864_102_914_159,
        seq: 3_450_590_841,
        truth: Class::Fast,
        through_us: Some(1_285_864_102_947_931),
        why: "the client's TSval (100 Hz) puts the resend's departure at the arrival of the \
         third duplicate ACK it echoes (TSecr 731767438), 350 ms before any RTO; the \
         client's uplink queue delays it 325 ms: TCPRS calls it an RTO",
    },
    Wrong {
        trace: "heuristics/loss-window-approximation",
        ts_us: 1_285_864_160_064_502,
        seq: 3_450_621_188,
        truth: Class::Fast,
        through_us: Some(1_285_864_160_064_774),
        why: "its TSval puts its departure at the arrival of the SACK it echoes, and a \
         second resend follows it 0.3 ms later (a timeout leaves room for one): TCPRS \
         calls it an RTO",
    },
    Wrong {
        trace: "heuristics/loss-window-approximation",
        ts_us: 1_285_864_164_969_334,
        seq: 3_450_709_756,
        truth: Class::Fast,
        through_us: Some(1_285_864_164_977_730),
        why: "its TSval puts its departure at the arrival of the SACK it echoes, and a \
         second resend follows it 8 ms later: TCPRS calls it an RTO",
    },
    Wrong {
        trace: "heuristics/loss-window-approximation",
        ts_us: 1_285_864_304_563_844,
        seq: 3_450_963_914,
        truth: Class::Fast,
        through_us: Some(1_285_864_304_595_657),
        why: "it echoes the first SACK of the hole (TSecr 731969199) and its TSval puts its \
         departure at that SACK's arrival; six more resends follow within 32 ms, paced \
         by the uplink (a timeout leaves room for one): TCPRS calls it an RTO",
    },
    Wrong {
        trace: "composite/comp004",
        ts_us: 1_285_864_202_311_402,
        seq: 3_083_252_467,
        truth: Class::Fast,
        through_us: None,
        why: "63 µs after the third duplicate ACK (RFC 5681's threshold), three segments \
         SACKed, the last of 747 bytes: TCPRS counts SACKed bytes (under three MSS) \
         and calls it a byte-based early retransmit",
    },
    Wrong {
        trace: "composite/comp013",
        ts_us: 1_285_864_036_642_501,
        seq: 544_950_795,
        truth: Class::Fast,
        through_us: None,
        why: "36 µs after the third duplicate ACK, three segments SACKed (1236, 1430 and \
         212 bytes): TCPRS counts bytes and calls it an early retransmit",
    },
    Wrong {
        trace: "composite/comp024",
        ts_us: 1_285_865_455_374_659,
        seq: 1_650_980_158,
        truth: Class::Fast,
        through_us: None,
        why: "51 µs after the third duplicate ACK, three segments SACKed (the last of 116 \
         bytes): TCPRS counts bytes and calls it an early retransmit",
    },
    Wrong {
        trace: "composite/comp024",
        ts_us: 1_285_865_722_301_142,
        seq: 1_651_168_023,
        truth: Class::Fast,
        through_us: None,
        why: "61 µs after the third duplicate ACK, three segments SACKed (the last of 1084 \
         bytes): TCPRS counts bytes and calls it an early retransmit",
    },
    Wrong {
        trace: "forwardacknowledgement/fack018",
        ts_us: 1_285_864_701_530_649,
        seq: 2_359_509_695,
        truth: Class::Fast,
        through_us: Some(1_285_864_701_842_845),
        why: "58 µs after a SACK reaching past what the sender had sent when it last resent \
             this segment (700.787): its resend was lost, and Linux resends at once \
             (tcp_mark_lost_retrans); TCPRS calls it an RTO",
    },
    Wrong {
        trace: "forwardacknowledgement/fack033",
        ts_us: 1_285_863_608_817_421,
        seq: 296_326_330,
        truth: Class::Fast,
        through_us: Some(1_285_863_608_994_776),
        why: "35 µs after a SACK reaching past what the sender had sent when it first resent \
             this segment 383 ms before: the resend was lost, and Linux resends at once \
             (tcp_mark_lost_retrans); TCPRS calls it an RTO",
    },
    Wrong {
        trace: "composite/comp018",
        ts_us: 1_285_864_223_439_977,
        seq: 3_478_452_078,
        truth: Class::Fast,
        through_us: Some(1_285_864_223_470_350),
        why: "44 µs after the 19th duplicate ACK of a recovery begun 202 ms before, among \
             its ACK-clocked resends: TCPRS calls it an RTO (the RTO comes 49 ms later, at \
             223.489, 17 ms after the last ACK)",
    },
    Wrong {
        trace: "composite/comp005",
        ts_us: 1_285_863_216_669_912,
        seq: 309_369_426,
        truth: Class::Early,
        through_us: None,
        why: "50 µs after the first SACK of the hole, one segment SACKed of four out, the \
             head sent 1.24 s before: a recovery begun on one duplicate (Linux's head \
             timeout, tcp_head_timedout); TCPRS calls it an RTO without duplicate ACKs",
    },
    Wrong {
        trace: "composite/comp005",
        ts_us: 1_285_863_232_977_903,
        seq: 309_502_718,
        truth: Class::Early,
        through_us: None,
        why: "60 µs after the first SACK of the hole, one segment SACKed of four out, the \
             head sent 1.31 s before: a recovery begun on one duplicate; TCPRS calls it an \
             RTO without duplicate ACKs",
    },
    Wrong {
        trace: "composite/comp021",
        ts_us: 1_285_862_971_577_617,
        seq: 908_701_643,
        truth: Class::Early,
        through_us: None,
        why: "69 µs after an ACK past the recovery point of the timeout 6.3 s before (what \
             had been sent then): that recovery is over, and this resend begins another on \
             no duplicate (the head, sent 6.2 s before, timed out: tcp_head_timedout); \
             TCPRS keeps it in the timeout's recovery",
    },
    Wrong {
        trace: "composite/comp021",
        ts_us: 1_285_862_972_377_822,
        seq: 908_703_073,
        truth: Class::Fast,
        through_us: None,
        why: "the next resend of the recovery begun at 971.578, 48 µs after the ACK it \
             answers: TCPRS keeps it in the timeout's recovery",
    },
    Wrong {
        trace: "forwardacknowledgement/fack006",
        ts_us: 1_285_865_075_831_326,
        seq: 3_934_146_762,
        truth: Class::Timeout,
        through_us: Some(1_285_865_076_178_524),
        why: "963 ms after the last ACK, with none between: the fast recovery stalled (its \
             partial ACK left nothing SACKed above the hole) and the RTO resent the head; \
             TCPRS keeps it in the fast recovery",
    },
    Wrong {
        trace: "forwardacknowledgement/fack024",
        ts_us: 1_285_864_151_586_480,
        seq: 1_629_459_046,
        truth: Class::Timeout,
        through_us: None,
        why: "637 ms after the previous resend of the same segment, with no ACK between: an \
             RTO; TCPRS keeps it in the fast recovery",
    },
    Wrong {
        trace: "forwardacknowledgement/fack030",
        ts_us: 1_285_864_713_261_231,
        seq: 2_422_705_792,
        truth: Class::Timeout,
        through_us: Some(1_285_864_713_870_262),
        why: "the head resent a second time, 5.3 s after the first, 113 ms after the last \
             ACK and not on it (new data answered that ACK): a timer, not the recovery's \
             ACK clock; TCPRS keeps it in the fast recovery",
    },
    Wrong {
        trace: "heuristics/rto-approximation",
        ts_us: 1_285_863_787_299_670,
        seq: 819_625_272,
        truth: Class::Early,
        through_us: None,
        why: "63 µs after the first SACK of the hole, one segment SACKed of three out: a \
             recovery begun on fewer than three duplicates, what RFC 5827 calls early; \
             TCPRS's 'speculative fast retransmit'",
    },
];
