//! Agreement with Wireshark's TCP analysis on Zeek's captures of odd real flows
//! (`$GENTLE_CAPTURES/zeek-tcp`: the captures, and for each the frames Wireshark
//! 4.0 flags, in `tshark/<capture>.csv`). Not in the repository, so ignored by
//! default: `cargo test --profile ci -p gentle-analyze --test analysis wireshark --
//! --ignored` runs them, and CI does where the captures are.
//!
//! Wireshark calls a frame a retransmission when it repeats sequence space already
//! seen (a resent SYN, a frame captured twice, a resend of acknowledged data alike).
//! gentle tells those apart: `syn-retransmission`, `capture-copy`, `retransmission`.
//! The frames either flags are compared, Wireshark's against the union of gentle's
//! three; `GENTLE_WIRESHARK_MISSES=1` lists the disagreements.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use gentle_analyze::{Options, PacketTags, Tag, analyze};

fn corpus() -> PathBuf {
    let dir = std::env::var_os("GENTLE_CAPTURES")
        .expect("GENTLE_CAPTURES names the directory that holds zeek-tcp/");
    PathBuf::from(dir).join("zeek-tcp")
}

/// Wireshark's retransmission frames of `capture`, from its CSV (first line a
/// comment, then a header).
fn wireshark(capture: &str) -> BTreeSet<u64> {
    let path = corpus().join("tshark").join(format!("{capture}.csv"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().skip(1);
    let head: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
    let (frame, retrans) = (col("frame"), col("retransmission"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[retrans] == "1")
        .map(|f| f[frame].parse().expect("a frame number"))
        .collect()
}

/// gentle's frames that repeat sequence space, by record number; `None` if it
/// refused the capture.
fn gentle(capture: &str) -> Option<BTreeSet<u64>> {
    let path = corpus().join("captures").join(capture);
    let f = fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeSet::new();
    let repeats = [
        Tag::Retransmission,
        Tag::SynRetransmission,
        Tag::CaptureCopy,
    ];
    analyze(f, Options::default(), &mut |p: &PacketTags| {
        if repeats.iter().any(|&t| p.tags.has(t)) {
            out.insert(p.record);
        }
    })
    .ok()?;
    Some(out)
}

#[test]
#[ignore = "needs Zeek's zeek-tcp captures: GENTLE_CAPTURES=DIR, then -- --ignored"]
fn repeated_frames_agree_with_wireshark_on_real_captures() {
    let mut captures: Vec<String> = fs::read_dir(corpus().join("captures"))
        .expect("zeek-tcp/captures")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    captures.sort();
    assert!(captures.len() >= 30, "only {} captures", captures.len());
    let (mut agree, mut union, mut refused) = (0usize, 0usize, Vec::new());
    for c in &captures {
        let ws = wireshark(c);
        let Some(g) = gentle(c) else {
            refused.push(c.clone());
            continue;
        };
        agree += ws.intersection(&g).count();
        union += ws.union(&g).count();
        if std::env::var_os("GENTLE_WIRESHARK_MISSES").is_some() {
            for f in ws.symmetric_difference(&g) {
                let who = if ws.contains(f) {
                    "wireshark"
                } else {
                    "gentle"
                };
                eprintln!("miss {c} frame {f}: only {who}");
            }
        }
    }
    let pct = 100.0 * agree as f64 / union.max(1) as f64;
    eprintln!(
        "Wireshark agreement on repeated frames: {pct:.1}% ({agree} of {union}) over {} captures; refused: {refused:?}",
        captures.len()
    );
    assert!(union > 150, "{union} frames flagged in all");
    assert!(pct >= 97.0, "agreement {pct:.1}% (floor 97%)");
}
