//! Quantities as humans write them: "200ms", "1.5s", "5Mbit/s", "28.8kbit/s",
//! "40B", "16KiB", "7.5KB", "100pkt". SI prefixes are powers of 1000, binary
//! prefixes (Ki, Mi, Gi) powers of 1024.

use std::time::Duration;

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map_or(s.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    let num: f64 = s[..end].replace('_', "").parse().ok()?;
    Some((num, s[end..].trim()))
}

/// "200ms", "1.5s", "40us", "100ns", "2min".
pub fn duration(s: &str) -> Result<Duration, String> {
    let (n, unit) =
        split_number(s).ok_or("expected a number followed by a unit, like \"200ms\"")?;
    let ns = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" => return Err("missing time unit (ns, us, ms, s, min)".into()),
        u => {
            return Err(format!(
                "unknown time unit `{u}` (expected ns, us, ms, s or min)"
            ));
        }
    };
    Ok(Duration::from_nanos((n * ns).round() as u64))
}

/// "5Mbit/s", "28.8kbit/s", "1Gbit/s", "100bit/s", "1MB/s" → bits per second.
pub fn rate(s: &str) -> Result<u64, String> {
    let (n, unit) = split_number(s).ok_or("expected a rate like \"5Mbit/s\"")?;
    let mult = match unit {
        "bit/s" | "bps" => 1.0,
        "kbit/s" | "kbps" => 1e3,
        "Mbit/s" | "Mbps" => 1e6,
        "Gbit/s" | "Gbps" => 1e9,
        "B/s" => 8.0,
        "kB/s" | "KB/s" => 8e3,
        "MB/s" => 8e6,
        "" => return Err("missing rate unit (bit/s, kbit/s, Mbit/s, Gbit/s)".into()),
        u => {
            return Err(format!(
                "unknown rate unit `{u}` (expected bit/s, kbit/s, Mbit/s or Gbit/s)"
            ));
        }
    };
    let v = (n * mult).round();
    if v < 1.0 {
        return Err("rate must be positive".into());
    }
    Ok(v as u64)
}

/// "40B", "16KiB", "7.5KB", "1MiB", "1.5MB" → bytes.
pub fn bytes(s: &str) -> Result<u64, String> {
    let (n, unit) = split_number(s).ok_or("expected a size like \"16KiB\"")?;
    let mult = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "" => return Err("missing size unit (B, KB, KiB, MB, MiB)".into()),
        u => {
            return Err(format!(
                "unknown size unit `{u}` (expected B, KB, KiB, MB, MiB, GB or GiB)"
            ));
        }
    };
    Ok((n * mult).round() as u64)
}

/// Formats nanoseconds as milliseconds with sensible precision.
pub fn fmt_ms(ns: f64) -> String {
    let ms = ns / 1e6;
    if ms.abs() >= 100.0 {
        format!("{ms:.0}")
    } else if ms.abs() >= 10.0 {
        format!("{ms:.1}")
    } else {
        format!("{ms:.2}")
    }
}

/// `x` for printing with `decimals` decimals, with a value that would print as
/// "-0.0" turned into 0 (tables never show a negative zero).
pub fn no_neg_zero(x: f64, decimals: i32) -> f64 {
    if x.abs() < 0.5 * 10f64.powi(-decimals) {
        0.0
    } else {
        x
    }
}

/// `text` wrapped at `width` columns (at spaces), every line after the first
/// indented by `indent` spaces.
pub fn wrap(text: &str, width: usize, indent: usize) -> String {
    // The text's own leading spaces are kept.
    let lead = text.len() - text.trim_start().len();
    let mut out = text[..lead].to_string();
    let mut col = lead;
    let mut first = true;
    for word in text.split_whitespace() {
        if first {
            first = false;
            out.push_str(word);
            col += word.chars().count();
            continue;
        }
        let w = word.chars().count();
        if col > 0 && col + 1 + w > width {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            col = indent;
        } else if col > 0 {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += w;
    }
    out
}
