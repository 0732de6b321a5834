//! A variant as the host kernel runs it: the congestion control pinned on every
//! socket and the namespace's TCP sysctls, derived from the variant's switches
//! where the kernel has a knob for them, then overridden by its `kernel` table.
//!
//! Mechanisms the kernel does not have (Corrective, Proactive, fast start,
//! sessions) refuse the variant; switches whose kernel behaviour is fixed (FACK,
//! which Linux removed in 4.15; the PRR flavour; Early Retransmit, replaced by RACK
//! in 4.11) are listed as differences in the report, since the kernel runs them its
//! own way.

use gentle_real::sysctl::KernelConfig;
use gentle_tcp::config::{EarlyRetransmit, RecoveryAlgorithm, SessionMode, TlpFlavour};
use gentle_tcp::{CcAlgorithm, Config, ReceiverPolicy};

use crate::scenario::Variant;

/// How a variant runs on the kernel.
#[derive(Clone, Debug)]
pub struct KernelVariant {
    pub name: String,
    pub kernel: KernelConfig,
    /// Where the kernel differs from the variant's switches.
    pub differences: Vec<String>,
}

fn b(x: bool) -> String {
    (x as u8).to_string()
}

/// The kernel configuration of `v`, or why the kernel cannot run it.
pub fn kernel_variant(v: &Variant) -> Result<KernelVariant, String> {
    let c = &v.config;
    let lacks = |what: &str| Err(format!("variant `{}`: the kernel has no {what}", v.name));
    if c.corrective {
        return lacks("Corrective (gentle-aggression-sigcomm13.txt §5)");
    }
    if c.proactive || c.proactive_syn_ack {
        return lacks("Proactive (gentle-aggression-sigcomm13.txt §6)");
    }
    if c.redundant_syn {
        return lacks("redundant SYN");
    }
    if c.fast_start {
        return lacks("fast start (fast-start-and-sessions.txt §3)");
    }
    if c.session != SessionMode::Off || c.temporal_sharing {
        return lacks("TCP sessions (fast-start-and-sessions.txt §6)");
    }
    if c.accelerated_open {
        return lacks("accelerated open");
    }
    let mut sysctls: Vec<(String, String)> = vec![
        ("tcp_sack".into(), b(c.sack)),
        ("tcp_dsack".into(), b(c.dsack)),
        ("tcp_timestamps".into(), b(c.timestamps)),
        ("tcp_window_scaling".into(), b(c.window_scale)),
        ("tcp_frto".into(), if c.frto { "2" } else { "0" }.into()),
        ("tcp_recovery".into(), b(c.rack)),
        // 3: TLP on (Early Retransmit's settings 1 and 2 are gone since 4.11).
        (
            "tcp_early_retrans".into(),
            if c.tlp { "3" } else { "0" }.into(),
        ),
        ("tcp_ecn".into(), if c.ecn { "1" } else { "2" }.into()),
        (
            "tcp_slow_start_after_idle".into(),
            b(c.slow_start_after_idle),
        ),
        ("tcp_no_metrics_save".into(), "1".into()),
    ];
    if gentle_real::sysctl::read("net/ipv4/tcp_rto_min_us").is_ok() {
        sysctls.push(("tcp_rto_min_us".into(), c.rto_min.as_micros().to_string()));
    }
    let mut cc = match c.cc {
        CcAlgorithm::Reno => "reno",
        CcAlgorithm::Cubic => "cubic",
    }
    .to_string();
    let mut d = differences(c);
    if let Some(k) = &v.kernel {
        if let Some(x) = &k.cc {
            cc = x.clone();
            d.retain(|s| !s.starts_with("HyStart"));
        }
        for (key, val) in &k.sysctls {
            match sysctls.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = val.clone(),
                None => sysctls.push((key.clone(), val.clone())),
            }
        }
    }
    Ok(KernelVariant {
        name: v.name.clone(),
        kernel: KernelConfig { cc, sysctls },
        differences: d,
    })
}

/// The switches the kernel runs its own way.
fn differences(c: &Config) -> Vec<String> {
    let mut d = Vec::new();
    if c.fack && c.sack && !c.rack {
        d.push("FACK: the kernel has none since 4.15".to_string());
    }
    if c.recovery != RecoveryAlgorithm::PrrRfc9937 {
        d.push(format!(
            "recovery: the kernel runs PRR (RFC 9937), not {}",
            c.recovery.name()
        ));
    }
    if c.er != EarlyRetransmit::Off {
        d.push("Early Retransmit: replaced by RACK in 4.11".to_string());
    }
    if c.tlp && c.tlp_flavour != TlpFlavour::Linux6 {
        d.push(format!(
            "probe timeout: the kernel's (linux-6), not {}",
            c.tlp_flavour.name()
        ));
    }
    if c.cc == CcAlgorithm::Cubic && !c.hystart {
        d.push("HyStart: the kernel's CUBIC always runs it".to_string());
    }
    if c.initial_window != 10 {
        d.push(format!(
            "initial window: the kernel's 10, not {}",
            c.initial_window
        ));
    }
    if c.mss != 1460 {
        d.push(format!(
            "MSS: from the MTU (1448 with timestamps), not {}",
            c.mss
        ));
    }
    if c.receiver != ReceiverPolicy::Linux
        || c.delayed_ack != Some(std::time::Duration::from_millis(40))
    {
        d.push("receiver: the kernel's delayed ACKs".to_string());
    }
    if !c.undo {
        d.push("undo: the kernel always undoes spurious reductions".to_string());
    }
    if c.dupthresh != 3 {
        d.push(format!("dupthresh: the kernel's 3, not {}", c.dupthresh));
    }
    if c.tso != 1 {
        d.push("TSO: the TUN sends wire-sized segments".to_string());
    }
    if !c.abc {
        d.push("byte counting: the kernel always counts bytes".to_string());
    }
    d
}
