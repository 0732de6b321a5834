//! Where the kernel's jiffies stand on the monotonic clock, read from
//! `/proc/timer_list` (root only): its `now at N nsecs` and `jiffies: J` lines, and
//! the tick's own hrtimer (`tick_nohz_handler` or `tick_sched_timer`), whose expiry
//! shows where in the tick period the ticks fall. With them, a trial's events, timed
//! on the monotonic clock, can be placed on the kernel's timer clock — what the
//! simulation needs to fire TCP's timers where the kernel's timer wheel does.

/// The map from the monotonic clock to `jiffies`: `jiffies = ⌊(t − phase)/tick⌋ +
/// offset` for a monotonic time `t` in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JiffiesMap {
    /// The tick period, ns (`TICK_NSEC`).
    pub tick_ns: u64,
    /// Where the ticks fall: at monotonic times equal to this modulo the tick.
    pub phase_ns: u64,
    /// `jiffies` less the ticks counted from monotonic time `phase_ns`.
    pub offset: i64,
}

impl JiffiesMap {
    /// `jiffies` at monotonic time `t_ns`, and how far into that jiffy `t_ns` falls.
    pub fn at(&self, t_ns: u64) -> (u64, u64) {
        let since = t_ns.saturating_sub(self.phase_ns);
        let j = (since / self.tick_ns) as i64 + self.offset;
        (j.max(0) as u64, since % self.tick_ns)
    }
}

/// Reads the map at `hz` ticks per second: the offset agreed by two of three reads
/// (a tick may fall between the two lines of one read). `None` without root, or if
/// `/proc/timer_list` does not say.
pub fn read(hz: u32) -> Option<JiffiesMap> {
    let tick_ns = 1_000_000_000 / u64::from(hz.max(1));
    let mut seen: Vec<JiffiesMap> = Vec::new();
    for _ in 0..3 {
        let text = std::fs::read_to_string("/proc/timer_list").ok()?;
        let m = parse(&text, tick_ns)?;
        if seen.contains(&m) {
            return Some(m);
        }
        seen.push(m);
    }
    None
}

/// The map from one read of `/proc/timer_list`.
pub fn parse(text: &str, tick_ns: u64) -> Option<JiffiesMap> {
    let now: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("now at "))?
        .strip_suffix(" nsecs")?
        .parse()
        .ok()?;
    let jiffies: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("jiffies: "))?
        .trim()
        .parse()
        .ok()?;
    let phase_ns = tick_phase(text).map_or(0, |e| e % tick_ns);
    let ticks = (now.saturating_sub(phase_ns) / tick_ns) as i64;
    Some(JiffiesMap {
        tick_ns,
        phase_ns,
        offset: jiffies - ticks,
    })
}

/// The expiry of the tick's hrtimer: the line after the one naming it, `# expires
/// at A-B nsecs`.
fn tick_phase(text: &str) -> Option<u64> {
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if l.contains("tick_nohz_handler") || l.contains("tick_sched_timer") {
            let e = lines.next()?.trim().strip_prefix("# expires at ")?;
            return e.split('-').next()?.parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "Timer List Version: v0.10
HRTIMER_MAX_CLOCK_BASES: 8
now at 64089713099969 nsecs

cpu: 0
 clock 0:
  .base:       0000000076e3a723
active timers:
 #0: <00000000a603f126>, tick_nohz_handler, S:01
 # expires at 64089716000000-64089716000000 nsecs [in 2900031 to 2900031 nsecs]
 #1: <00000000b1dda4ad>, timerfd_tmrproc, S:01
  .last_jiffies   : 4310914415
jiffies: 4310914664
";

    #[test]
    fn the_sample_places_jiffies_on_the_monotonic_clock() {
        let m = parse(SAMPLE, 4_000_000).unwrap();
        assert_eq!(m.phase_ns, 0);
        // 64089713099969 ns is in the 16022428th tick since 0, jiffies 4310914664.
        assert_eq!(m.offset, 4_310_914_664 - 16_022_428);
        assert_eq!(m.at(64_089_713_099_969), (4_310_914_664, 1_099_969));
        // The next tick, at 64089716 ms, makes it one more.
        assert_eq!(m.at(64_089_716_000_000), (4_310_914_665, 0));
    }

    #[test]
    fn ticks_off_the_period_shift_the_phase() {
        let text = SAMPLE.replace(
            "64089716000000-64089716000000",
            "64089716001000-64089716001000",
        );
        let m = parse(&text, 4_000_000).unwrap();
        assert_eq!(m.phase_ns, 1000);
        assert_eq!(m.at(64_089_716_001_000).1, 0);
    }

    #[test]
    fn a_text_without_the_lines_says_nothing() {
        assert_eq!(parse("cpu: 0\n", 4_000_000), None);
    }
}
