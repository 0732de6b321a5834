//! Shell commands of scripts: `sysctl -q net.ipv4.tcp_…=…` lines (and the suites'
//! `defaults.sh`, read line by line) mapped onto engine switches. A sysctl whose
//! value needs behaviour the engine does not model is an [`Unmodelled`] reason,
//! for the script to be reported SKIPPED; settings that cannot change what a
//! single connection over a `pfifo` tun device does are accepted.

use std::path::Path;

use gentle_tcp::{CcAlgorithm, Config};

/// Why a script cannot run on the engine.
pub type Unmodelled = String;

/// How `net.ipv4.tcp_ecn` asks for ECN (Linux `Documentation/networking/ip-sysctl`):
/// 0 never, 1 on both opens, 2 only when the peer asks (the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMode {
    /// `tcp_ecn=0`.
    Off,
    /// `tcp_ecn=1`.
    On,
    /// `tcp_ecn=2`: used on passive opens that the peer asks for.
    Passive,
}

/// The engine configuration a script's commands build up.
#[derive(Clone, Debug)]
pub struct Sysctls {
    /// Switches for new connections.
    pub cfg: Config,
    /// `tcp_ecn`.
    pub ecn: EcnMode,
    /// What the suites' `set_sysctls.py` saved, for its restore script
    /// (`/tmp/sysctl_restore_${PPID}.sh`) to put back.
    saved: Option<(Config, EcnMode)>,
}

/// The shell's `$((a*b))` arithmetic of products, as `defaults.sh` uses it.
fn arith(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find("$((") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find("))") else {
            break;
        };
        let inner = &rest[i + 3..i + j];
        let p: Option<u64> = inner
            .split('*')
            .map(|x| x.trim().parse::<u64>().ok())
            .product();
        match p {
            Some(p) => out.push_str(&p.to_string()),
            None => out.push_str(&rest[i..i + j + 2]),
        }
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    out
}

fn int(name: &str, v: &str) -> Result<i64, Unmodelled> {
    v.trim()
        .parse()
        .map_err(|_| format!("sysctl {name}={v}: not a number"))
}

impl Sysctls {
    /// Starts from a profile's switches; `tcp_ecn` is 2 as in Linux.
    pub fn new(cfg: Config) -> Self {
        Sysctls {
            cfg,
            ecn: EcnMode::Passive,
            saved: None,
        }
    }

    /// Applies `net.ipv4.NAME=VALUE`.
    pub fn set(&mut self, name: &str, v: &str) -> Result<(), Unmodelled> {
        let c = &mut self.cfg;
        let on = || int(name, v).map(|i| i != 0);
        let skip = |why: &str| Err(format!("sysctl {name}={v}: {why}"));
        match name {
            "tcp_timestamps" => c.timestamps = on()?,
            "tcp_sack" => {
                c.sack = on()?;
                if !c.sack {
                    c.fack = false;
                }
            }
            "tcp_dsack" => c.dsack = on()?,
            "tcp_fack" => c.fack = on()? && c.sack,
            "tcp_window_scaling" => c.window_scale = on()?,
            "tcp_frto" => c.frto = on()?,
            "tcp_slow_start_after_idle" => c.slow_start_after_idle = on()?,
            "tcp_reordering" => match int(name, v)? {
                n @ 1..=1000 => c.dupthresh = n as u32,
                _ => return skip("out of the engine's range"),
            },
            "tcp_recovery" => {
                let r = int(name, v)?;
                if r & !1 != 0 {
                    return skip("RACK_STATIC_REO_WND / RACK_NO_DUPTHRESH not modelled");
                }
                c.rack = r & 1 == 1;
            }
            // Linux 4.11+: 0 no TLP, 3 and 4 TLP; 1 and 2 (Early Retransmit) are gone
            // since RACK took its place (4.14), so they leave ER as the profile has it.
            "tcp_early_retrans" => c.tlp = int(name, v)? >= 3,
            "tcp_congestion_control" => match v.trim() {
                "reno" => c.cc = CcAlgorithm::Reno,
                "cubic" => c.cc = CcAlgorithm::Cubic,
                _ => return skip("only reno and cubic are modelled"),
            },
            "tcp_ecn" => {
                self.ecn = match int(name, v)? {
                    0 => EcnMode::Off,
                    1 => EcnMode::On,
                    2 => EcnMode::Passive,
                    _ => return skip("not modelled"),
                }
            }
            // The largest receive buffer sets the window scale Linux offers
            // (`tcp_select_initial_window`).
            "tcp_rmem" => {
                let max = v
                    .split_whitespace()
                    .nth(2)
                    .ok_or("tcp_rmem needs three values")?;
                let max = int(name, max)?.clamp(536, 1 << 30);
                c.recv_buffer = max as u32;
            }
            "tcp_min_rtt_wlen" if int(name, v)? == 300 => {}
            "tcp_notsent_lowat" if int(name, v)? >= i32::MAX as i64 => {}
            "tcp_mtu_probing" | "tcp_autocorking" | "tcp_thin_linear_timeouts"
                if int(name, v)? == 0 => {}
            // Send buffers (the engine's never fills), SYN retry counts, TSO
            // deferral and pacing ratios (no qdisc paces a pfifo tun), Fast Open
            // and SYN cookies (no Fast Open option and no SYN flood in scope), the
            // AccECN option (off unless negotiated) and metrics.
            "tcp_wmem"
            | "tcp_syn_retries"
            | "tcp_synack_retries"
            | "tcp_tso_win_divisor"
            | "tcp_pacing_ss_ratio"
            | "tcp_pacing_ca_ratio"
            | "tcp_fastopen"
            | "tcp_fastopen_key"
            | "tcp_syncookies"
            | "tcp_ecn_option"
            | "tcp_ecn_fallback"
            | "tcp_no_metrics_save"
            | "tcp_tso_rtt_log" => {}
            "tcp_min_tso_segs" => c.min_tso_segs = int(name, v)?.clamp(1, 127) as u32,
            _ => return skip("not modelled"),
        }
        Ok(())
    }

    /// Runs one back-quoted command of `script` (its directory resolves relative
    /// paths such as `../common/defaults.sh`).
    pub fn command(&mut self, cmd: &str, script: &Path) -> Result<(), Unmodelled> {
        let joined = cmd.replace("\\\n", " ");
        for line in joined.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.line(line, script)?;
        }
        Ok(())
    }

    fn line(&mut self, line: &str, script: &Path) -> Result<(), Unmodelled> {
        let words = shell_words(line);
        let first = words.first().map(String::as_str).unwrap_or("");
        if first.ends_with("defaults.sh") {
            let dir = script.parent().unwrap_or(Path::new("."));
            let path = dir.join(first);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("command `{line}`: cannot read {}: {e}", path.display()))?;
            return self.command(&text, &path);
        }
        if first.starts_with("/tmp/sysctl_restore_") && first.ends_with(".sh") {
            if let Some((cfg, ecn)) = self.saved.take() {
                (self.cfg, self.ecn) = (cfg, ecn);
            }
            return Ok(());
        }
        if first.ends_with("set_sysctls.py") {
            if self.saved.is_none() {
                self.saved = Some((self.cfg.clone(), self.ecn));
            }
            for w in &words[1..] {
                let (k, v) = w
                    .split_once('=')
                    .ok_or(format!("command `{line}` not modelled"))?;
                let Some(name) = k.strip_prefix("/proc/sys/net/ipv4/") else {
                    return Err(format!("sysctl {k}: not modelled"));
                };
                self.set(name, &arith(v))?;
            }
            return Ok(());
        }
        match first {
            "sysctl" => {
                for w in words.iter().skip(1).filter(|w| !w.starts_with('-')) {
                    let Some((k, v)) = w.split_once('=') else {
                        return Err(format!("command `{line}`: reading a sysctl not modelled"));
                    };
                    let Some(name) = k.strip_prefix("net.ipv4.") else {
                        return Err(format!("sysctl {k}: not modelled"));
                    };
                    self.set(name, &arith(v))?;
                }
                Ok(())
            }
            // The engine keeps no route metrics between scripts.
            "ip" if words.get(1).map(String::as_str) == Some("tcp_metrics") => Ok(()),
            // CUBIC's HyStart detects by ACK train (1) and by delay (2); the engine's
            // `hystart` does both, the module's default.
            "echo"
                if line.split_once('>').is_some_and(|(_, to)| {
                    to.trim() == "/sys/module/tcp_cubic/parameters/hystart_detect"
                }) =>
            {
                match words.get(1).map(String::as_str) {
                    Some("3") => Ok(()),
                    _ => Err(format!(
                        "command `{line}`: HyStart with one detection alone not modelled"
                    )),
                }
            }
            // A FIFO leaves packets as TCP sent them, as the engine does; one of
            // no room (`limit 0`) drops them all, which the engine does not model.
            "tc" if line.contains("pfifo") && !line.contains("fq") && !line.contains("limit 0") => {
                Ok(())
            }
            _ => Err(format!("command `{line}` not modelled")),
        }
    }
}

/// Splits a shell line into words, honouring quotes and stopping at redirections.
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '>' | '|' | ';') => break,
            (None, '#') if cur.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gentle_tcp::Profile;

    #[test]
    fn sysctls_map_to_switches() {
        let mut s = Sysctls::new(Profile::Linux6.config());
        let p = Path::new("x.pkt");
        s.command(
            "sysctl -q net.ipv4.tcp_sack=0 net.ipv4.tcp_early_retrans=0\n\
             sysctl -q net.ipv4.tcp_rmem=\"4096 540000 $((15*1024*1024))\"",
            p,
        )
        .unwrap();
        assert!(!s.cfg.sack && !s.cfg.tlp);
        assert_eq!(s.cfg.recv_buffer, 15 * 1024 * 1024);
        let e = s.command("sysctl -q net.ipv4.tcp_congestion_control=bbr", p);
        assert!(e.unwrap_err().contains("tcp_congestion_control=bbr"));
        assert!(s.command("ethtool -K tun0 tso off", p).is_err());
        s.command("tc qdisc replace dev tun0 root pfifo", p)
            .unwrap();
        assert!(
            s.command("tc qdisc add dev tun0 root pfifo limit 0", p)
                .is_err()
        );
        s.command(
            "echo 3 > /sys/module/tcp_cubic/parameters/hystart_detect",
            p,
        )
        .unwrap();
        let e = s.command(
            "echo 2 > /sys/module/tcp_cubic/parameters/hystart_detect",
            p,
        );
        assert!(e.unwrap_err().contains("one detection alone"));
        // A line continued with a backslash is one command.
        s.cfg.slow_start_after_idle = false;
        s.command(
            "../common/set_sysctls.py /proc/sys/net/ipv4/tcp_slow_start_after_idle=1 \\\n\t\t\t/proc/sys/net/ipv4/tcp_min_tso_segs=10",
            p,
        )
        .unwrap();
        assert!(s.cfg.slow_start_after_idle);
        assert_eq!(s.cfg.min_tso_segs, 10);
        // Its restore script puts back what it changed.
        s.command("`/tmp/sysctl_restore_${PPID}.sh`".trim_matches('`'), p)
            .unwrap();
        assert!(!s.cfg.slow_start_after_idle);
        assert_eq!(s.cfg.min_tso_segs, 2);
    }
}
