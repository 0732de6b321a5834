//! Each kernel run set against a simulation on that run's own kernel clock.
//!
//! The kernel fires TCP's timers on jiffies, through its timer wheel: a probe due
//! 416 ms on runs up to 32 ms late at `HZ` 250, by where `jiffies` stood when it was
//! armed. `/proc/timer_list` places jiffies on the monotonic clock
//! ([`gentle_real::jiffies`]), and the forwarder timed the client's SYN on that
//! clock; the simulation timed the same SYN on its own. So each kernel run
//! gets a simulation of its trial whose timers run on the same jiffies
//! (`timer_hz`, `timer_phase_us`, `timer_jiffies`: [`gentle_tcp::timer_wheel`]), and
//! the two must agree on what was retransmitted and why, and on the server-side time
//! within one jiffy (the kernel's up to its forwarder's stalls later).

use gentle_real::jiffies::JiffiesMap;
use gentle_tcp::config::SwitchValue;
use serde::Serialize;
use std::sync::Arc;

use super::{Side, simulate, within};
use crate::scenario::{Scenario, Variant};

/// How the kernel runs compare with simulations on their own kernel clocks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Clocked {
    /// The kernel's `HZ`.
    pub hz: u32,
    /// Kernel runs with the same repairs and a server-side time within one jiffy
    /// of their clocked simulation's, of all kernel runs with a time.
    pub agree: (u32, u32),
    /// Each kernel run that does not, with its simulation beside it.
    pub misses: Vec<String>,
}

/// The variant `v` with its timers on the jiffies of a kernel run whose client
/// sent its SYN at monotonic time `kernel_anchor`, the simulation's at
/// `sim_anchor`. (Not the response's first segment: after a lost SYN-ACK, the
/// client's SYN timer and the server's SYN-ACK timer race, the clock decides
/// which fires first, and so when the response starts.)
fn on_clock(v: &Variant, hz: u32, map: JiffiesMap, sim_anchor: u64, kernel_anchor: u64) -> Variant {
    // The monotonic time of the simulation's time 0.
    let zero = kernel_anchor.saturating_sub(sim_anchor);
    let (jiffies, into) = map.at(zero);
    let mut v = v.clone();
    let set = |c: &mut gentle_tcp::Config| {
        for (name, x) in [
            ("timer_hz", i64::from(hz)),
            ("timer_phase_us", (into / 1000) as i64),
            ("timer_jiffies", (jiffies % 32_768) as i64),
        ] {
            c.set_switch(name, SwitchValue::Int(x))
                .expect("within the switch's range");
        }
    };
    set(Arc::make_mut(&mut v.config));
    for c in v.workload_configs.iter_mut().flatten() {
        set(c);
    }
    v
}

/// Simulates every kernel run of `kernel` (per trial) on its own clock and compares.
pub fn compare(
    scn: &Scenario,
    v: &Variant,
    sim: &[Side],
    kernel: &[Vec<Side>],
    hz: u32,
    map: JiffiesMap,
) -> Clocked {
    let tick_ms = 1000.0 / f64::from(hz);
    let mut agree = (0, 0);
    let mut misses = Vec::new();
    for (t, (s, runs)) in sim.iter().zip(kernel).enumerate() {
        for (i, k) in runs.iter().enumerate() {
            let (Some(sa), Some(ka), Some(kt)) = (s.syn_ns, k.syn_ns, k.server_ms) else {
                continue;
            };
            let c = simulate(scn, &on_clock(v, hz, map, sa, ka), t as u64);
            agree.1 += 1;
            let same = c.causes() == k.causes();
            let near = c
                .server_ms
                .is_some_and(|ct| within(ct, &[(kt, k.stall_ms)], tick_ms));
            if same && near {
                agree.0 += 1;
            } else {
                misses.push(format!(
                    "trial {t} run {}: clocked sim {} {} ms — kernel {} {kt:.1} ms (its forwarder up to {:.2} ms late, stalled {:.1} ms)",
                    i + 1,
                    c.causes(),
                    c.server_ms.map_or("-".into(), |x| format!("{x:.1}")),
                    k.causes(),
                    k.forwarder_late_ms.unwrap_or(f64::NAN),
                    k.stall_ms,
                ));
            }
        }
    }
    Clocked { hz, agree, misses }
}
