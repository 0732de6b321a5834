//! `gentle plot tsg INPUT`: the time-sequence graph of a `gentle run --trace` file or
//! of one flow of a packet capture (pcap or pcapng, read by `gentle-analyze`), zoomed
//! to the recoveries unless asked otherwise.

use std::path::{Path, PathBuf};

use super::{self as tsg, Flow, ViewRequest};
use crate::{plot, staging};

/// The arguments of `gentle plot`.
pub struct Args {
    pub kind: String,
    pub input: PathBuf,
    pub out: PathBuf,
    pub force: bool,
    /// `--time A..B`, ms.
    pub time: Option<String>,
    /// `--seq A..B`, bytes.
    pub seq: Option<String>,
    pub whole: bool,
    /// `--flow N` of a capture.
    pub flow: Option<u32>,
}

/// Runs `gentle plot`: returns the exit status (2 for bad input, with nothing
/// written).
pub fn command(a: &Args) -> u8 {
    match run(a) {
        Ok(()) => 0,
        Err((code, msg)) => {
            eprintln!("{msg}");
            code
        }
    }
}

type Failed = (u8, String);

/// The view the flags ask for; a bad range is an error naming its flag.
fn request(a: &Args) -> Result<ViewRequest, Failed> {
    let time_ms = match &a.time {
        Some(t) => Some(tsg::parse_range("--time", t, "ms").map_err(|e| (2, e))?),
        None => None,
    };
    let seq = match &a.seq {
        Some(s) => {
            let (lo, hi) = tsg::parse_range("--seq", s, "bytes").map_err(|e| (2, e))?;
            Some((lo as u64, hi.ceil() as u64))
        }
        None => None,
    };
    Ok(ViewRequest {
        time_ms,
        seq,
        whole: a.whole,
    })
}

/// The flows of the input: a capture's flow, or a trace's flows.
fn flows(a: &Args) -> Result<Vec<Flow>, Failed> {
    let input = &a.input;
    if input.is_dir() {
        return Err((
            2,
            format!(
                "error: {}: is a directory; expected a trace or a capture",
                input.display()
            ),
        ));
    }
    if tsg::is_capture(input) {
        return tsg::flow_from_capture(input, a.flow)
            .map(|f| vec![f])
            .map_err(|e| (2, e));
    }
    if a.flow.is_some() {
        return Err((
            2,
            format!(
                "error: --flow: {} is a trace, not a capture; --flow picks a capture's flow",
                input.display()
            ),
        ));
    }
    let text = std::fs::read_to_string(input)
        .map_err(|e| (2, format!("error: cannot read {}: {e}", input.display())))?;
    let flows = tsg::flows_from_file(input, &text).map_err(|e| (2, format!("error: {e}")))?;
    if flows.iter().all(|f| f.sends.is_empty()) {
        return Err((
            2,
            format!(
                "error: {}: the trace holds no data segments to draw",
                input.display()
            ),
        ));
    }
    Ok(flows)
}

/// Refuses a `--time` or `--seq` range that misses every flow.
fn check_overlap(flows: &[Flow], req: &ViewRequest) -> Result<(), Failed> {
    let t = flows.iter().flat_map(|f| f.sends.iter().map(|s| s.t_ms));
    let (t_lo, t_hi) = t.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if let Some((a, b)) = req.time_ms
        && (b < t_lo || a > t_hi)
    {
        return Err((
            2,
            format!(
                "error: --time {a}..{b}: no data was sent then; the flow's data went out from {t_lo:.3} to {t_hi:.3} ms"
            ),
        ));
    }
    let top = flows.iter().map(Flow::max_seq).max().unwrap_or(0);
    if let Some((a, _)) = req.seq
        && a >= top
    {
        return Err((
            2,
            format!("error: --seq {a}..: above the highest sequence sent ({top} bytes)"),
        ));
    }
    Ok(())
}

fn title(input: &Path, flows: &[Flow], capture: bool) -> String {
    let mut scenarios: Vec<&str> = flows.iter().map(|f| f.scenario.as_str()).collect();
    scenarios.dedup();
    if capture {
        format!(
            "{} — time-sequence graph of the server's data",
            input.file_name().map_or_else(
                || input.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            )
        )
    } else if scenarios.len() > 1 {
        format!(
            "{} scenarios ({}) — time-sequence graphs",
            scenarios.len(),
            scenarios.join(", ")
        )
    } else {
        format!("{} — time-sequence graph", flows[0].scenario)
    }
}

fn run(a: &Args) -> Result<(), Failed> {
    if a.kind != "tsg" {
        return Err((
            2,
            format!("error: unknown plot `{}`; expected `tsg`", a.kind),
        ));
    }
    let req = request(a)?;
    let flows = flows(a)?;
    check_overlap(&flows, &req)?;
    let mut staged =
        staging::Staged::adding(&a.out, a.force).map_err(|e| (2, format!("error: {e}")))?;
    let p = staged.path("tsg.png");
    staged.path("tsg.svg");
    if !a.force
        && let Some(c) = staged.clashes().first()
    {
        return Err((
            2,
            format!(
                "error: {} already exists; add --force to replace it",
                c.display()
            ),
        ));
    }
    let capture = tsg::is_capture(&a.input);
    plot::tsg(&p, &title(&a.input, &flows, capture), &flows, &req)
        .map_err(|e| (1, format!("error: drawing: {e}")))?;
    let all: Vec<&Flow> = flows.iter().collect();
    let v = tsg::view(&all, &req);
    let how = if req.time_ms.is_some() || req.seq.is_some() {
        "as asked"
    } else if req.whole
        || !flows
            .iter()
            .any(|f| f.sends.iter().any(|s| s.retransmission))
    {
        "the whole flow"
    } else {
        "around the retransmissions; --whole draws the whole flow"
    };
    if capture {
        eprintln!("drew {}", flows[0].variant);
    }
    eprintln!(
        "drew {:.3}..{:.3} ms, bytes {}..{} ({how})",
        v.t_ms.0, v.t_ms.1, v.seq.0, v.seq.1
    );
    let files = staged
        .commit()
        .map_err(|e| (1, format!("error: writing: {e}")))?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}
