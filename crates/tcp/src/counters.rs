//! Per-connection event counters, named after Linux's TCP MIB (`/proc/net/netstat`,
//! `include/uapi/linux/snmp.h`) where one exists, summed per run by the simulator.

use serde::{Deserialize, Serialize};

macro_rules! counters {
    ($( $(#[$doc:meta])* $field:ident => $name:literal, )*) => {
        /// Counters of one connection (or a sum of many).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct Counters {
            $( $(#[$doc])* #[serde(rename = $name)] pub $field: u64, )*
        }

        impl Counters {
            /// Names in declaration order, as they appear in reports.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// `(name, value)` pairs in declaration order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
                [$(($name, self.$field)),*].into_iter()
            }

            /// Payload bytes of Corrective packets over all other payload sent, %
            /// (`None` when nothing was sent).
            pub fn corrective_overhead_pct(&self) -> Option<f64> {
                (self.bytes_sent > 0)
                    .then(|| 100.0 * self.corrective_bytes as f64 / self.bytes_sent as f64)
            }

            /// Payload bytes of Proactive copies over all other payload sent, %
            /// (`None` when nothing was sent).
            pub fn proactive_overhead_pct(&self) -> Option<f64> {
                (self.bytes_sent > 0)
                    .then(|| 100.0 * self.proactive_bytes as f64 / self.bytes_sent as f64)
            }

            /// Reductions undone, of every kind.
            pub fn undos(&self) -> u64 {
                self.full_undo + self.partial_undo + self.dsack_undo + self.loss_undo
            }

            /// Adds every counter of `other` to `self`.
            pub fn add(&mut self, other: &Counters) {
                $( self.$field += other.$field; )*
            }
        }
    };
}

counters! {
    /// Segments sent as Linux counts `TCP_MIB_OUTSEGS`: those that send sequence
    /// space for the first time (new data, the first SYN, a FIN) or carry none (ACKs,
    /// resets), and every SYN-ACK (`tcp_make_synack`); retransmissions are not
    /// (`tcp_transmit_skb` counts a segment only if `after(end_seq, snd_nxt) ||
    /// seq == end_seq`). The papers' "retransmission rate" is `RetransSegs` over
    /// this (`prr-imc11.txt` §2: "the Linux TCP SNMP statistics").
    segs_out => "OutSegs",
    /// Data segments sent, retransmissions included (Linux `tcpi_data_segs_out`).
    data_segs_out => "DataSegsOut",
    /// Segments received.
    segs_in => "InSegs",
    /// Payload bytes sent, including retransmissions.
    bytes_sent => "BytesSent",
    /// Payload bytes retransmitted.
    bytes_retrans => "BytesRetrans",
    /// All retransmitted segments, SYNs and SYN-ACKs included (Linux's
    /// `TCP_MIB_RETRANSSEGS`).
    retrans_segs => "RetransSegs",
    /// Retransmissions sent in Recovery (fast retransmits).
    fast_retrans => "TCPFastRetrans",
    /// Holes below the highest SACK resent in Recovery before being marked lost
    /// (Linux `TCPForwardRetrans`); also counted in TCPFastRetrans.
    forward_retrans => "TCPForwardRetrans",
    /// Retransmissions sent in Loss after the first one (slow-start retransmissions).
    slow_start_retrans => "TCPSlowStartRetrans",
    /// Retransmission timeouts of established connections.
    timeouts => "TCPTimeouts",
    /// Timeouts that fired in Open.
    timeouts_open => "TimeoutsOpen",
    /// Timeouts that fired in Disorder.
    timeouts_disorder => "TimeoutsDisorder",
    /// Timeouts that fired in CWR.
    timeouts_cwr => "TimeoutsCWR",
    /// Timeouts that fired in Recovery.
    timeouts_recovery => "TimeoutsRecovery",
    /// Timeouts that fired in Loss (exponential back-off).
    timeouts_loss => "TimeoutsLoss",
    /// Timeouts that began a loss episode (not in Loss) with an RTO, as its timer was
    /// last armed, of more than six smoothed RTTs (`gentle-aggression-sigcomm13.txt`
    /// §2, Figure 2: "the median RTO is six times larger than the RTT").
    rto_over_6_srtt => "TimeoutsRtoOver6Srtt",
    /// ... of more than 200 smoothed RTTs (Figure 2: "the 99th percentile RTO is a
    /// whopping 200 times larger than the actual RTT").
    rto_over_200_srtt => "TimeoutsRtoOver200Srtt",
    /// Loss probes that resent a segment and, as Linux 3.10's did, are not in
    /// `RetransSegs` (`TlpFlavour::probe_counts_as_retransmission`).
    probe_retrans_uncounted => "LossProbesUncounted",
    /// SYN or SYN-ACK retransmissions (also in `RetransSegs`).
    syn_retrans => "TCPSynRetrans",
    /// Expiries of the handshake's timer, a SYN-ACK's last one too (Linux counts a
    /// SYN-ACK's in `TCPTimeouts`, with the timeouts in Open).
    syn_timeouts => "SynTimeouts",
    /// Fast-recovery episodes entered.
    recovery_episodes => "RecoveryEpisodes",
    /// Fast recoveries that ended (the recovery point acknowledged) with cwnd below
    /// ssthresh, so that slow start follows (`prr-imc11.txt` Table 10, "Slow-start
    /// after FR"; Linux 2.6's `tcp_complete_cwr` leaves min(cwnd, ssthresh)).
    recovery_exit_slow_start => "RecoveryExitSlowStart",
    /// Microseconds spent in fast recovery or timeout recovery, Recovery or Loss
    /// (`prr-imc11.txt` §5.4, "network recovery time").
    recovery_time_us => "RecoveryTimeUs",
    /// RTT samples taken (one per ACK that gave one, RFC 6298 §3 and RFC 7323 §4).
    rtt_samples => "RTTSamples",
    /// Their sum, µs: `RTTSampleUs / RTTSamples` is the mean RTT the senders saw
    /// (`prr-imc11.txt` Table 10's "average RTT").
    rtt_sample_us => "RTTSampleUs",
    /// Microseconds data was queued or unacknowledged, up to the last time the
    /// sender fell idle (`tcpi_busy_time`; `prr-imc11.txt` §5.4, "network transmit
    /// time").
    busy_time_us => "BusyTimeUs",
    /// Payload bytes sent in Recovery, new data and retransmissions
    /// (`prr-imc11.txt` Table 10, "% Bytes Sent in FR").
    bytes_sent_recovery => "BytesSentRecovery",
    /// Recovery entered on duplicate ACKs / SACKs without FACK.
    sack_recovery => "TCPSackRecovery",
    /// Recovery entered on duplicate ACKs without SACK.
    reno_recovery => "TCPRenoRecovery",
    /// Recovery entered because the head had been outstanding longer than the RTO
    /// (FACK's `tcp_head_timedout`).
    head_timeout_recovery => "FACKHeadTimeoutRecovery",
    /// RACK reorder-timer expiries that marked segments lost (RFC 8985 §6.3).
    rack_reo_timeouts => "RACKReorderTimeouts",
    /// HyStart left slow start on an ACK train.
    hystart_train => "TCPHystartTrainDetect",
    /// HyStart left slow start on a delay increase.
    hystart_delay => "TCPHystartDelayDetect",
    /// Recovery entered by Early Retransmit (RFC 5827).
    early_retrans => "EarlyRetrans",
    /// ... of which after the delay of `er = delayed`.
    early_retrans_delayed => "EarlyRetransDelayed",
    /// Retransmissions found lost again (Linux lost-retransmit detection).
    lost_retransmit => "TCPLostRetransmit",
    /// DSACKs received.
    dsack_recv => "TCPDSACKRecv",
    /// Fast-recovery episodes with at least one retransmission a DSACK showed
    /// unnecessary, during the episode or after it (until the next episode):
    /// `prr-imc11.txt` Table 3's "DSACKs/FR", "fast-recoveries causing DSACKs"
    /// (§2.1). Not a Linux MIB counter.
    recoveries_dsacked => "RecoveriesDsacked",
    /// DSACKs sent for data below the cumulative ACK.
    dsack_old_sent => "TCPDSACKOldSent",
    /// DSACKs sent for out-of-order duplicates.
    dsack_ofo_sent => "TCPDSACKOfoSent",
    /// Recovery undone at its end by timestamps (all retransmissions spurious).
    full_undo => "TCPFullUndo",
    /// Recovery undone by timestamps on a partial ACK.
    partial_undo => "TCPPartialUndo",
    /// Reductions undone because DSACKs covered every retransmission.
    dsack_undo => "TCPDSACKUndo",
    /// Loss state undone (spurious RTO shown by timestamps or DSACK).
    loss_undo => "TCPLossUndo",
    /// Spurious RTOs detected by F-RTO.
    spurious_rtos => "TCPSpuriousRTOs",
    /// Reordering detected from SACKs.
    sack_reorder => "TCPSACKReorder",
    /// Reordering detected without SACK (cumulative ACK of never-retransmitted data).
    reno_reorder => "TCPRenoReorder",
    /// Delayed ACKs sent by the timer.
    delayed_acks => "DelayedACKs",
    /// Tail loss probes sent (Linux `TCPLossProbes`).
    loss_probes => "TCPLossProbes",
    /// ... of which new data.
    loss_probes_new => "LossProbesNewData",
    /// ... of which a retransmission of the last segment.
    loss_probes_retrans => "LossProbesRetrans",
    /// Probe episodes that repaired a loss and reduced cwnd (`TCPLossProbeRecovery`).
    loss_probe_recovery => "TCPLossProbeRecovery",
    /// Retransmission probes of the episodes that repaired a loss (each probe of an
    /// episode counted in `TCPLossProbeRecovery`).
    loss_probes_repaired => "LossProbesRepaired",
    /// Retransmission probes of the episodes shown unnecessary (a probe duplicate ACK
    /// or a DSACK). A retransmission probe whose episode is never judged (the RTO,
    /// fast recovery or the connection's end came first) is in neither count.
    loss_probes_unnecessary => "LossProbesUnnecessary",
    /// Corrective packets sent (`gentle-aggression-sigcomm13.txt` §5).
    corrective_sent => "CorrectiveSent",
    /// Payload bytes of the Corrective packets sent (the overhead).
    corrective_bytes => "CorrectiveBytes",
    /// Corrective packets received.
    corrective_recv => "CorrectiveRecv",
    /// ... that rebuilt missing data (0-RTT recoveries).
    corrective_recovered => "CorrectiveRecovered",
    /// ... that found every encoded byte already received.
    corrective_unneeded => "CorrectiveUnneeded",
    /// ... that could not rebuild the missing data (an R_FAIL was sent).
    corrective_failed => "CorrectiveFailed",
    /// R_FAIL reports received that marked data lost.
    corrective_fail_recv => "CorrectiveFailRecv",
    /// cwnd reductions on R_SUCC.
    corrective_cwr => "CorrectiveCWR",
    /// Connections that turned Corrective off after a packet without the option (§7).
    corrective_fallback => "CorrectiveFallback",
    /// Proactive copies sent (`gentle-aggression-sigcomm13.txt` §6).
    proactive_copies => "ProactiveCopies",
    /// Payload bytes of those copies: Proactive's overhead.
    proactive_bytes => "ProactiveBytes",
    /// Copies whose data arrived before their original did: the original was lost
    /// (or late), and the copy delivered it.
    proactive_repairs => "ProactiveRepairs",
    /// Packets the receiver's filter dropped without an ACK: copies of data already
    /// received, and originals whose copy came first.
    proactive_discarded => "ProactiveDiscarded",
    /// Connections that turned Proactive off: originals kept arriving without their
    /// copies (a middlebox dropping packets with reserved bits set, §7).
    proactive_fallback => "ProactiveFallback",
    /// Data segments that arrived with CE, a router's congestion mark (RFC 3168 §5).
    ecn_ce_received => "EcnCeRecv",
    /// ACKs with ECE that started a congestion-window reduction (RFC 3168 §6.1.2: at
    /// most once per window).
    ecn_reductions => "EcnReductions",
    /// Segments sent with CWR (RFC 3168 §6.1.2).
    ecn_cwr_sent => "EcnCwrSent",
    /// Fast start phases begun after an idle period or from cached path state
    /// (`fast-start-and-sessions.txt` §3.4.1).
    fast_start => "FastStart",
    /// Fast start segments sent, marked low priority (§3.3, §7.1).
    fast_start_segs => "FastStartSegs",
    /// Failed fast starts reset to slow start without penalty, by the reset timer
    /// (§3.4.4 "Fine-grained reset timer", "Slow start without penalty") ...
    fast_start_resets => "FastStartResets",
    /// ... or by a partial ACK in fast recovery without SACK (§3.4.4 "Recovery from
    /// multiple losses").
    fast_start_aborts => "FastStartAborts",
    /// Connections that joined a TCP session (`fast-start-and-sessions.txt` §7.3,
    /// `session_addconn`).
    session_joins => "SessionJoins",
    /// Segments a connection sent on its session's grants: its share of the
    /// session's sending (§6.2's scheduler), connection by connection.
    session_segs => "SessionSegs",
    /// Losses a TCP session detected and repaired from duplicate and later ACKs
    /// (§6.1, §7.3), counted once per lost segment ...
    session_loss_detected => "SessionLossDetected",
    /// ... of which the later ACKs of other connections helped detect (§6.3:
    /// "integrated loss recovery").
    session_later_ack_recoveries => "SessionLaterAckRecoveries",
    /// Halvings of a session's window (once per window of data, §6.1).
    session_reductions => "SessionReductions",
    /// Session retransmission timeouts (§7.3); each is also a `TCPTimeouts` of every
    /// member with data outstanding.
    session_timeouts => "SessionTimeouts",
    /// Persist-timer probes sent (zero-window probes and window-limited data).
    window_probes => "TCPWinProbe",
    /// Pure ACKs sent.
    acks_sent => "AcksSent",
    /// Duplicate data segments received.
    dup_data_recv => "DupDataRecv",
    /// Out-of-order segments queued.
    ofo_queue => "TCPOFOQueue",
    /// Segments discarded as unacceptable (outside the window, bad ACK, ...).
    segs_dropped => "SegsDropped",
    /// Connections reset (RST sent or received).
    resets => "Resets",
    /// Connections aborted after too many retransmissions.
    aborts => "TCPAbortOnTimeout",
}

impl Counters {
    /// Retransmissions of data and FINs: `RetransSegs` without the handshake's
    /// (`TCPSynRetrans`). A connection a frontend keeps open for many requests
    /// retransmits only these.
    pub fn data_retrans_segs(&self) -> u64 {
        self.retrans_segs.saturating_sub(self.syn_retrans)
    }

    /// Every segment sent again, as a capture shows them: `RetransSegs` with the
    /// loss probes Linux 3.10 left out of it.
    pub fn retransmissions_sent(&self) -> u64 {
        self.retrans_segs + self.probe_retrans_uncounted
    }
}
