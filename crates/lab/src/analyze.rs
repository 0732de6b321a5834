//! `gentle analyze CAPTURE`: behavioral signatures from a pcap or pcapng file
//! (`gentle-analyze`), reported as `gentle run` reports a simulation: a text report,
//! a JSON document, the records CSV (one row per application exchange, `gentle
//! run`'s columns), the §2 figures, and with `--tags` every packet with its tags.
//! Over many captures (several, a directory, or `--parquet`): [`many`].

mod correlate;
pub mod gather;
mod inputs;
pub mod many;
pub mod signatures;
pub mod tables;
mod tags_file;
mod targets;
mod text;

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use gentle_analyze::decode::linktype;
use gentle_analyze::{Analysis, FigureData, Options, PacketTags};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Value, json};

use plotters::prelude::SeriesLabelPosition;

pub use text::{figures_text, report};

use crate::plot::{Line, LinePanel, lines};
use tags_file::TagsFile;

/// Why an analysis failed, with the exit status it maps to.
#[derive(Debug)]
pub struct Failure {
    /// 2 for bad input, 1 for a failure to write.
    pub code: u8,
    /// The message, naming the file.
    pub message: String,
}

fn bad(message: String) -> Failure {
    Failure { code: 2, message }
}

impl From<Failure> for crate::LabError {
    fn from(f: Failure) -> Self {
        let m = f.message.trim_start_matches("error: ").to_string();
        match f.code {
            2 => crate::LabError::Input(m),
            crate::interrupt::EXIT_INTERRUPTED => crate::LabError::Interrupted,
            _ => crate::LabError::Run(m),
        }
    }
}

/// Opens `path` as a capture: its reader and its size in bytes.
pub(crate) fn open_capture(
    path: &Path,
) -> Result<(gentle_analyze::CaptureReader<'static>, u64), Failure> {
    let file = std::fs::File::open(path)
        .map_err(|e| bad(format!("error: cannot read {}: {e}", path.display())))?;
    let meta = file
        .metadata()
        .map_err(|e| bad(format!("error: cannot read {}: {e}", path.display())))?;
    if meta.is_dir() {
        return Err(bad(format!(
            "error: {}: is a directory; expected a pcap or pcapng file",
            path.display()
        )));
    }
    let reader = std::io::BufReader::with_capacity(1 << 20, file);
    let r = gentle_analyze::CaptureReader::new(reader)
        .map_err(|e| bad(format!("error: {}: {e}", path.display())))?;
    Ok((r, meta.len()))
}

/// The link types of `t` gentle could not read, as `147 (USER0) in 3 records`.
fn unsupported_links(t: &gentle_analyze::Totals) -> String {
    t.unsupported_link_types
        .iter()
        .map(|&(lt, n)| format!("{} in {n} records", linktype::describe(lt)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Refuses a capture without TCP, naming why; warns of frames on link types gentle
/// does not read.
fn check_totals(path: &Path, t: &gentle_analyze::Totals) -> Result<(), Failure> {
    let links = unsupported_links(t);
    if t.tcp_packets == 0 && !links.is_empty() {
        let known: Vec<String> = linktype::SUPPORTED
            .iter()
            .map(|&l| linktype::describe(l))
            .collect();
        return Err(bad(format!(
            "error: {}: unsupported link type {links}; gentle reads link types {}",
            path.display(),
            known.join(", ")
        )));
    }
    if t.tcp_packets == 0 {
        return Err(bad(format!(
            "error: {}: no TCP packets in {} records ({} not TCP over IPv4/IPv6, {} malformed); expected a capture of TCP traffic",
            path.display(),
            t.frames,
            t.skipped,
            t.malformed
        )));
    }
    if !links.is_empty() {
        eprintln!(
            "warning: {}: skipped frames of unsupported link type {links}",
            path.display()
        );
    }
    Ok(())
}

/// Reads `path`; shows progress on a terminal. A capture cut short inside its last
/// record is analysed up to there, with a warning on stderr.
pub fn analyze_file(path: &Path, opts: Options) -> Result<Analysis, Failure> {
    analyze_file_with(path, opts, &mut |_, _| {})
}

/// Reads `path` as [`analyze_file`] does, handing every TCP packet to `on_packet` with
/// the capture's first time (ns).
pub fn analyze_file_with(
    path: &Path,
    opts: Options,
    on_packet: &mut dyn FnMut(&PacketTags, u64),
) -> Result<Analysis, Failure> {
    analyze_path(path, opts, on_packet, true)
}

/// [`analyze_file_with`], with the progress bar of a large capture on a terminal
/// when `show_bar`.
fn analyze_path(
    path: &Path,
    opts: Options,
    on_packet: &mut dyn FnMut(&PacketTags, u64),
    show_bar: bool,
) -> Result<Analysis, Failure> {
    let (mut r, size) = open_capture(path)?;
    let bar = if show_bar && size > 64 << 20 && std::io::stderr().is_terminal() {
        let b = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "analyze [{bar:20}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let mut a = gentle_analyze::Analyzer::new(opts);
    let mut t0: Option<u64> = None;
    loop {
        let f = match r.next() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                bar.finish_and_clear();
                return Err(bad(format!("error: {}: {e}", path.display())));
            }
        };
        if f.record % 4096 == 0 {
            bar.set_position(f.offset);
            if crate::interrupt::requested() {
                bar.finish_and_clear();
                return Err(Failure {
                    code: crate::interrupt::EXIT_INTERRUPTED,
                    message: "interrupted: nothing was written".into(),
                });
            }
        }
        let t = *t0.get_or_insert(f.ts_ns);
        a.frame(f.record, f.linktype, f.ts_ns, f.data, &mut |p| {
            on_packet(p, t)
        });
    }
    bar.finish_and_clear();
    if let Some(cut) = r.cut_short() {
        eprintln!(
            "warning: {}: {cut}; analysed the {} complete records before it",
            path.display(),
            cut.record - 1
        );
    }
    check_totals(path, a.totals())?;
    Ok(a.finish())
}

/// Milliseconds for the report: one decimal from 1 ms up, below that two significant
/// digits (a loopback's RTT is `0.062`, not `0.0`).
pub fn fmt_ms(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || v.abs() >= 1.0 {
        return format!("{v:.1}");
    }
    let decimals = ((-v.abs().log10()).ceil() as usize + 1).min(9);
    format!("{v:.decimals$}")
}

fn ms(x: Option<f64>) -> String {
    x.map_or("-".into(), fmt_ms)
}

/// The JSON document.
pub fn json_doc(name: &str, opts: &Options, a: &Analysis) -> Value {
    json!({
        "capture": name,
        "options": {
            "server": opts.server.map(|s| s.to_string()),
            "server_port": opts.server_port,
            "capture_point": opts.point,
        },
        "totals": a.totals,
        "flows": a.flows,
        "figures": a.figures,
    })
}

/// One row per exchange, with `gentle run`'s CSV columns: the variant is the
/// capture, the trial the flow, the workload the server.
pub fn records_csv(name: &str, a: &Analysis) -> String {
    let mut w = crate::report::RecordsCsv::new(Vec::new()).expect("in-memory writer");
    let ms = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.3}"));
    for f in &a.flows {
        for e in &f.exchanges {
            let r = &e.retransmissions;
            w.row(|col| match col {
                "variant" => name.to_string(),
                "trial" => f.id.to_string(),
                "workload" => f.server.to_string(),
                "index" => e.index.to_string(),
                "request_bytes" => e.request_bytes.to_string(),
                "response_bytes" => e.response_bytes.to_string(),
                "complete" => e.response_ms.is_some().to_string(),
                "metric_ms" | "server_ms" => ms(e.response_ms),
                "fast_retrans" => (r.fast + r.early).to_string(),
                "timeouts" => r.timeout.to_string(),
                "slow_start_retrans" => r.slow_start.to_string(),
                "syn_retrans" => if e.index == 0 {
                    f.syn_retransmissions
                } else {
                    0
                }
                .to_string(),
                "recoveries" => e.recoveries.to_string(),
                "undos" => r.spurious.to_string(),
                "retrans_segs" => r.total().to_string(),
                "bytes_sent" => (e.request_bytes + e.response_bytes).to_string(),
                "packets_dropped" => r.total().saturating_sub(r.spurious).to_string(),
                // client_ms, fin_ms, unfinished: not seen in a capture.
                _ => String::new(),
            })
            .expect("in-memory write");
        }
    }
    String::from_utf8(w.finish().expect("in-memory write")).expect("UTF-8 fields")
}

/// Figure 1's points of the exchanges with or without loss: each RTT bucket at the
/// mean RTT of its exchanges (a loopback's 0.06 ms RTTs are drawn at 0.06 ms, not at
/// the middle of a wide bucket).
pub fn figure1_points(f: &FigureData, lossy: bool) -> Vec<(f64, f64)> {
    f.latency_by_rtt
        .iter()
        .filter_map(|b| {
            let y = if lossy { b.loss_ms } else { b.no_loss_ms };
            y.map(|y| (b.rtt_mean_ms, y))
        })
        .collect()
}

/// Figure 3 draws at most this many burst lengths (one colour each).
const FIG3_LINES: usize = 6;

/// The burst lengths Figure 3 draws, and a sentence saying which and why: every
/// length whose first position lost a packet (the curve is relative to it), the
/// [`FIG3_LINES`] with the most losses if there are more.
pub fn figure3_lengths(f: &FigureData) -> (Vec<usize>, String) {
    let list = |v: &[usize]| {
        v.iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (with, without): (Vec<_>, Vec<_>) = f
        .loss_by_position
        .iter()
        .partition(|c| c.relative.first().is_some_and(|r| r.is_some()));
    let mut drawn: Vec<_> = with.iter().collect();
    drawn.sort_by_key(|c| std::cmp::Reverse(c.losses.iter().sum::<u64>()));
    drawn.truncate(FIG3_LINES);
    let mut drawn: Vec<usize> = drawn.iter().map(|c| c.burst_len).collect();
    drawn.sort_unstable();
    let mut note = if drawn.is_empty() {
        "no burst length drawn: none lost its first packet".to_string()
    } else {
        format!("burst lengths drawn: {}", list(&drawn))
    };
    if with.len() > drawn.len() {
        let _ = write!(note, " (the {FIG3_LINES} with the most losses)");
    }
    let first_lost_nothing: Vec<usize> = without.iter().map(|c| c.burst_len).collect();
    if !first_lost_nothing.is_empty() {
        let _ = write!(
            note,
            "; not {}: their first position lost nothing",
            list(&first_lost_nothing)
        );
    }
    (drawn, note)
}

/// Figure 4's points: `at_most_two` or exactly one loss per burst length, with a
/// break (a NaN) where a length is missing, so that no line joins lengths across it.
pub fn figure4_points(f: &FigureData, at_most_two: bool) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    let mut last: Option<usize> = None;
    for c in &f.losses_per_burst {
        if last.is_some_and(|l| c.burst_len > l + 1) {
            pts.push((c.burst_len as f64 - 0.5, f64::NAN));
        }
        let y = if at_most_two { c.at_most_two } else { c.one };
        pts.push((c.burst_len as f64, y));
        last = Some(c.burst_len);
    }
    pts
}

fn figure1(f: &FigureData) -> LinePanel {
    let (l0, l1) = (figure1_points(f, false), figure1_points(f, true));
    let xmax = l0.iter().chain(&l1).map(|p| p.0).fold(1.0, f64::max) * 1.15;
    let ymax = l0.iter().chain(&l1).map(|p| p.1).fold(1.0, f64::max) * 1.15;
    let line = |label: &str, colour, points| Line {
        label: label.into(),
        colour,
        points,
    };
    LinePanel {
        caption: "Figure 1: mean response time by RTT".into(),
        x_desc: "RTT (ms), the mean of each bucket's".into(),
        y_desc: "response time (ms)".into(),
        x: (0.0, xmax),
        y: (0.0, ymax),
        log_x: false,
        note: None,
        legend: SeriesLabelPosition::UpperLeft,
        lines: vec![
            line("without loss", 0, l0),
            line("with loss", 1, l1),
            line("ideal (1 RTT)", 2, vec![(0.0, 0.0), (xmax, xmax)]),
        ],
    }
}

fn figure2(f: &FigureData) -> LinePanel {
    let cdf = &f.rto_over_rtt_cdf;
    let xmax = cdf.iter().map(|p| p.0).fold(2.0, f64::max) * 1.2;
    let mut pts: Vec<(f64, f64)> = cdf.iter().map(|&(x, y)| (x.max(1.0), y)).collect();
    if let Some(&(x, _)) = pts.first() {
        pts.insert(0, (x, 0.0));
    }
    LinePanel {
        caption: "Figure 2: CDF of RTO / RTT".into(),
        x_desc: "RTO / RTT".into(),
        y_desc: "fraction of timeouts".into(),
        x: (1.0, xmax.max(2.0)),
        y: (0.0, 1.0),
        log_x: true,
        note: None,
        legend: SeriesLabelPosition::UpperLeft,
        lines: vec![Line {
            label: "RTO/RTT".into(),
            colour: 0,
            points: pts,
        }],
    }
}

fn figure3(f: &FigureData) -> LinePanel {
    let (drawn, note) = figure3_lengths(f);
    let lines: Vec<Line> = f
        .loss_by_position
        .iter()
        .filter(|c| drawn.contains(&c.burst_len))
        .enumerate()
        .map(|(i, c)| Line {
            label: format!("burst of {}", c.burst_len),
            colour: i,
            points: c
                .relative
                .iter()
                .enumerate()
                .filter_map(|(x, r)| r.map(|v| ((x + 1) as f64, v)))
                .collect(),
        })
        .collect();
    let pts = || lines.iter().flat_map(|l| l.points.iter());
    let ymax = pts().map(|p| p.1).fold(2.0, f64::max) * 1.1;
    let xmax = pts().map(|p| p.0).fold(2.0, f64::max);
    LinePanel {
        caption: "Figure 3: loss by position, relative to the first".into(),
        x_desc: "position in burst".into(),
        y_desc: "relative loss probability".into(),
        x: (1.0, xmax),
        y: (0.0, ymax),
        log_x: false,
        note: Some(note),
        legend: SeriesLabelPosition::UpperLeft,
        lines,
    }
}

fn figure4(f: &FigureData) -> LinePanel {
    let (one, two) = (figure4_points(f, false), figure4_points(f, true));
    let xmax = one.iter().map(|p| p.0).fold(2.0, f64::max);
    LinePanel {
        caption: "Figure 4: losses in lossy bursts".into(),
        x_desc: "burst length (packets)".into(),
        y_desc: "probability".into(),
        x: (0.5, xmax + 0.5),
        y: (0.0, 1.05),
        log_x: false,
        note: Some("lines join adjacent burst lengths only".into()),
        legend: SeriesLabelPosition::LowerLeft,
        lines: vec![
            Line {
                label: "exactly one".into(),
                colour: 0,
                points: one,
            },
            Line {
                label: "at most two".into(),
                colour: 1,
                points: two,
            },
        ],
    }
}

/// Draws the four §2 figures into `png` and `svg`.
pub fn plot_figures(png: &Path, svg: &Path, name: &str, a: &Analysis) -> Result<(), String> {
    let f = &a.figures;
    let panels = [figure1(f), figure2(f), figure3(f), figure4(f)];
    lines(
        (png, svg),
        &format!("gentle analyze {name}"),
        (2, 2),
        (1200, 900),
        &panels,
    )
}

/// The arguments of `gentle analyze`.
pub struct Args {
    /// Capture files and directories of them.
    pub captures: Vec<PathBuf>,
    pub opts: Options,
    pub json: bool,
    pub tags: Option<PathBuf>,
    /// Write the capture's statistics as a targets file of `gentle calibrate`.
    pub targets: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub force: bool,
    pub flows: usize,
    /// The directory of the many-capture tables.
    pub parquet: Option<PathBuf>,
    /// Worker threads of a many-capture run (all cores without).
    pub threads: Option<usize>,
    /// The response time above which an exchange is slow, ms (the median without).
    pub slow_ms: Option<f64>,
    /// Analyse the captures on a Ray cluster (the one at the address, or a new local
    /// one), through gentle's Python package.
    pub ray: Option<Option<String>>,
}

impl Args {
    /// Whether this is a many-capture run: several captures, a directory, or
    /// `--parquet`; else the report of one capture file.
    pub fn many(&self) -> bool {
        self.captures.len() != 1
            || self.parquet.is_some()
            || self.ray.is_some()
            || self.captures[0].is_dir()
    }
}

/// Runs `gentle analyze`: returns the exit status.
pub fn command(a: Args) -> u8 {
    if a.many() {
        if a.targets.is_some() {
            eprintln!(
                "error: --targets: takes the statistics of one capture file; got {}",
                if a.captures.len() > 1 {
                    format!("{} captures", a.captures.len())
                } else {
                    "a directory or --parquet".to_string()
                }
            );
            return 2;
        }
        return many::command(&a);
    }
    match command_inner(&a) {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("{}", f.message);
            f.code
        }
    }
}

fn command_inner(a: &Args) -> Result<(), Failure> {
    let capture = &a.captures[0];
    let name = capture.file_name().map_or_else(
        || capture.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    // Every output is checked before the capture is read.
    crate::checks::threads("--threads ", a.threads).map_err(|e| bad(format!("error: {e}")))?;
    if let Some(t) = &a.tags {
        crate::checks::output_file("--tags", t, a.force).map_err(|e| bad(format!("error: {e}")))?;
    }
    if let Some(t) = &a.targets {
        crate::checks::output_file("--targets", t, a.force)
            .map_err(|e| bad(format!("error: {e}")))?;
    }
    let mut staged = match &a.out {
        Some(d) => {
            Some(crate::staging::Staged::new(d, a.force).map_err(|e| bad(format!("error: {e}")))?)
        }
        None => None,
    };
    let mut tags = match &a.tags {
        Some(t) => Some(TagsFile::create(t)?),
        None => None,
    };
    // The tags are given the report's settled causes at the end, from its logs.
    let mut opts = a.opts.clone();
    opts.keep_retransmissions |= tags.is_some();
    let mut result = analyze_file_with(capture, opts, &mut |p, t0| {
        if let Some(t) = tags.as_mut() {
            t.write(p, t0);
        }
    });
    if let Some(e) = tags.as_mut().and_then(TagsFile::take_error) {
        result = Err(Failure {
            code: 1,
            message: format!("error: writing tags: {e}"),
        });
    }
    let mut analysis = match result {
        Ok(x) => x,
        Err(f) => {
            if let Some(t) = tags {
                t.abandon();
            }
            return Err(f);
        }
    };
    if let Some(t) = tags {
        t.finish(&analysis)?;
    }
    if let Some(w) = unmatched_server(a, &analysis) {
        eprintln!("{w}");
    }
    if !a.opts.keep_retransmissions {
        for f in &mut analysis.flows {
            f.retransmission_log.clear();
            f.client_retransmission_log.clear();
        }
    }
    let text = report(&name, &analysis, a.flows);
    let doc = json_doc(&name, &a.opts, &analysis);
    if let Some(st) = staged.as_mut() {
        write_results(st, &name, &text, &doc, &analysis)?;
    }
    if let Some(t) = &a.targets {
        let server_side = a.opts.point != gentle_analyze::flow::CapturePoint::Client;
        let toml = targets::targets_toml(&name, &analysis, server_side);
        crate::staging::write_whole(t, toml.as_bytes()).map_err(|e| Failure {
            code: 1,
            message: format!("error: writing {}: {e}", t.display()),
        })?;
        eprintln!("wrote {}", t.display());
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).expect("serialisable")
        );
    } else {
        let _ = write!(out, "{text}");
    }
    if let Some(st) = staged {
        let files = st.commit().map_err(|e| Failure {
            code: 1,
            message: format!("error: writing results: {e}"),
        })?;
        for f in files {
            eprintln!("wrote {}", f.display());
        }
    }
    Ok(())
}

/// A warning when `--server` or `--server-port` names no flow's server end: the
/// flows then fell back to the default choice (the end that answered the SYN).
fn unmatched_server(a: &Args, analysis: &Analysis) -> Option<String> {
    if a.opts.server.is_none() && a.opts.server_port.is_none() || analysis.flows.is_empty() {
        return None;
    }
    let matches = |s: &str| {
        let Ok(addr) = s.parse::<std::net::SocketAddr>() else {
            return false;
        };
        a.opts.server.is_none_or(|ip| addr.ip() == ip)
            && a.opts.server_port.is_none_or(|p| addr.port() == p)
    };
    if analysis.flows.iter().any(|f| matches(&f.server)) {
        return None;
    }
    let given = match (a.opts.server, a.opts.server_port) {
        (Some(ip), Some(p)) => format!("--server {ip} --server-port {p}"),
        (Some(ip), None) => format!("--server {ip}"),
        (None, Some(p)) => format!("--server-port {p}"),
        (None, None) => unreachable!("checked above"),
    };
    Some(format!(
        "warning: {given} matches no flow's end in the capture; each flow's server is \
         the end that answered its SYN (or else the lower port)"
    ))
}

/// `--out`: the JSON document, the text report, the records CSV and the figures,
/// named after the capture.
fn write_results(
    st: &mut crate::staging::Staged,
    name: &str,
    text: &str,
    doc: &Value,
    analysis: &Analysis,
) -> Result<(), Failure> {
    let stem =
        crate::staging::file_name(name.trim_end_matches(".pcapng").trim_end_matches(".pcap"));
    let w = |st: &mut crate::staging::Staged, n: String, b: &[u8]| {
        st.write(&n, b).map_err(|e| Failure {
            code: 1,
            message: format!("error: writing {n}: {e}"),
        })
    };
    let j = serde_json::to_string_pretty(doc).expect("serialisable");
    w(st, format!("{stem}.json"), j.as_bytes())?;
    w(st, format!("{stem}.txt"), text.as_bytes())?;
    w(
        st,
        format!("{stem}-records.csv"),
        records_csv(name, analysis).as_bytes(),
    )?;
    let png = st.path(&format!("{stem}-figures.png"));
    let svg = st.path(&format!("{stem}-figures.svg"));
    plot_figures(&png, &svg, name, analysis).map_err(|e| Failure {
        code: 1,
        message: format!("error: drawing the figures: {e}"),
    })
}
