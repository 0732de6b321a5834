//! Agreement with TCPRS on real captures (Zeek's TCPRS-labelled test corpus, read
//! in place from the directory `$GENTLE_CAPTURES`, which holds `zeek-tcprs/`): every retransmission TCPRS labelled, its cause
//! against the one `gentle analyze` infers. The corpus is not in the repository, so
//! these tests are ignored by default (shown as such, never passed):
//! `cargo test --profile ci -p gentle-analyze --test analysis tcprs -- --ignored`
//! runs them, and CI does where the corpus is. Run, they fail if the captures are
//! missing and if the agreement falls below its floor.
//!
//! TCPRS's `rtype` (its README): 1, 14, 15 are timeouts; 2, 3, 13, 16 fast
//! retransmissions (three duplicate ACKs, SACK or FACK recovery); 4 and 9–12 early
//! retransmits; 5 a retransmission inside a recovery begun by another, followed to that
//! recovery's first retransmission; 0, 6, 7, 8 (unknown, testing, no RTT sample, no
//! timestamps) say nothing of the cause and are left out. gentle's slow start after a
//! timeout is a timeout's recovery; a probe is its own class (TCPRS predates them).
//!
//! `GENTLE_TCPRS_MISSES=1` lists every disagreement.

use std::collections::BTreeMap;
use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use gentle_analyze::{Cause, Dir, Options, PacketTags, Tag, analyze};

use super::tcprs_wrong::TCPRS_WRONG;

/// The corpus: `$GENTLE_CAPTURES/zeek-tcprs`.
pub fn corpus() -> PathBuf {
    let dir = std::env::var_os("GENTLE_CAPTURES")
        .expect("GENTLE_CAPTURES names the directory that holds zeek-tcprs/");
    PathBuf::from(dir).join("zeek-tcprs")
}

/// A retransmission's class, as both sides can name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    Timeout,
    Fast,
    Early,
    Probe,
    /// gentle did not call the packet a retransmission.
    None,
}

fn tcprs_class(rtype: u32) -> Option<Class> {
    match rtype {
        1 | 14 | 15 => Some(Class::Timeout),
        2 | 3 | 13 | 16 => Some(Class::Fast),
        4 | 9..=12 => Some(Class::Early),
        _ => None,
    }
}

fn gentle_class(c: Option<Cause>) -> Class {
    match c {
        Some(Cause::Timeout | Cause::SlowStart) => Class::Timeout,
        Some(Cause::Fast) => Class::Fast,
        Some(Cause::Early) => Class::Early,
        Some(Cause::Probe) => Class::Probe,
        None => Class::None,
    }
}

/// (sender address, sender port, absolute sequence number, time in µs).
type Key = (IpAddr, u16, u32, u64);

/// One labelled retransmission.
#[derive(Clone, Debug)]
pub struct Label {
    pub trace: String,
    pub key: Key,
    /// Sent by the originator (TCPRS `orig` = T).
    pub orig: bool,
    pub rtype: u32,
    /// TCPRS's class, after following rtype 5.
    pub class: Option<Class>,
    /// The class the packets show: TCPRS's unless listed in [`TCPRS_WRONG`] (a
    /// listed recovery's rtype 5 followers take its corrected class).
    pub truth: Option<Class>,
}

/// TCPRS's labels of one capture, rtype 5 followed to its recovery's first
/// retransmission (the last one before it, of the same flow and sender, not itself 5),
/// with the corrections of [`TCPRS_WRONG`]: a corrected label begins a recovery of its
/// corrected class for the rtype 5 labels after it.
fn labels(trace: &str, log: &Path) -> Vec<Label> {
    let text = fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    let mut names: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    // Per flow and side: TCPRS's class of the recovery under way, and a correction
    // that carries to its rtype 5 labels up to a time.
    let mut first: BTreeMap<(String, bool), Option<Class>> = BTreeMap::new();
    let mut carry: BTreeMap<(String, bool), (Class, u64)> = BTreeMap::new();
    for line in text.lines() {
        if let Some(f) = line.strip_prefix("#fields\t") {
            names = f.split('\t').collect();
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let v: Vec<&str> = line.split('\t').collect();
        let get = |n: &str| v[names.iter().position(|x| *x == n).expect(n)];
        let orig = get("orig") == "T";
        let (h, p) = if orig {
            (get("id.orig_h"), get("id.orig_p"))
        } else {
            (get("id.resp_h"), get("id.resp_p"))
        };
        let (s, us) = get("ts").split_once('.').expect("ts");
        let ts_us = s.parse::<u64>().unwrap() * 1_000_000 + us.parse::<u64>().unwrap();
        let rtype: u32 = get("rtype").parse().unwrap();
        let flow = (get("uid").to_string(), orig);
        let seq: u32 = get("seq").parse().unwrap();
        let class = if rtype == 5 {
            first.get(&flow).copied().flatten()
        } else {
            carry.remove(&flow);
            let c = tcprs_class(rtype);
            first.insert(flow.clone(), c);
            c
        };
        let mut truth = class;
        if let Some(&(c, until)) = carry.get(&flow)
            && ts_us <= until
        {
            truth = Some(c);
        }
        if let Some(w) = TCPRS_WRONG
            .iter()
            .find(|w| w.trace == trace && w.ts_us == ts_us && w.seq == seq)
        {
            truth = Some(w.truth);
            if let Some(until) = w.through_us {
                carry.insert(flow, (w.truth, until));
            }
        }
        out.push(Label {
            trace: trace.to_string(),
            key: (h.parse().unwrap(), p.parse().unwrap(), seq, ts_us),
            orig,
            rtype,
            class,
            truth,
        });
    }
    out
}

/// gentle's causes of every retransmission in a capture, by key: as the report
/// gives them (`--json`), settled by what the hosts are seen to do over the whole
/// capture, not as first tagged.
fn gentle_causes(path: &Path) -> BTreeMap<Key, Option<Cause>> {
    let f = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut tagged = BTreeMap::new();
    let opts = Options {
        keep_retransmissions: true,
        ..Options::default()
    };
    let analysis = analyze(f, opts, &mut |p: &PacketTags| {
        if p.tags.has(Tag::Retransmission) || p.cause.is_some() {
            let key = (p.seg.src, p.seg.sport, p.seg.seq, p.ts_ns / 1000);
            tagged.insert(key, (p.flow, p.dir, p.ts_ns, p.rel_seq, p.cause));
        }
    })
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The report's retransmissions: (flow, to the client, time, sequence from the ISN).
    let settled: BTreeMap<(u32, bool, u64, u64), Cause> = analysis
        .flows
        .iter()
        .flat_map(|f| {
            f.logged_retransmissions()
                .map(|(to_client, r)| ((f.id, to_client, r.t_ns, r.rel_seq()), r.cause))
        })
        .collect();
    tagged
        .into_iter()
        .map(|(key, (flow, dir, t, rel, cause))| {
            let report = settled.get(&(flow, dir == Dir::ToClient, t, rel)).copied();
            (key, report.or(cause))
        })
        .collect()
}

/// Every labelled retransmission of the corpus with gentle's class for it.
pub fn compare() -> Vec<(Label, Class)> {
    let root = corpus();
    let traces = root.join("traces");
    assert!(
        traces.is_dir(),
        "the TCPRS corpus is missing at {} (set GENTLE_CAPTURES to the directory holding zeek-tcprs/)",
        traces.display()
    );
    let mut out = Vec::new();
    let mut groups: Vec<_> = fs::read_dir(&traces).unwrap().flatten().collect();
    groups.sort_by_key(|e| e.file_name());
    for g in groups {
        let mut files: Vec<_> = fs::read_dir(g.path()).unwrap().flatten().collect();
        files.sort_by_key(|e| e.file_name());
        for f in files {
            let name = f.path().file_stem().unwrap().to_string_lossy().into_owned();
            let group = g.file_name().to_string_lossy().into_owned();
            let base = root.join(format!("baseline/tcpanalyzer.{group}.{name}"));
            let log = base.join("tcpretransmissions.log");
            if !log.exists() {
                continue;
            }
            let causes = gentle_causes(&f.path());
            for l in labels(&format!("{group}/{name}"), &log) {
                let c = causes.get(&l.key).map_or(Class::None, |&c| gentle_class(c));
                out.push((l, c));
            }
        }
    }
    out
}

/// Which class a label is judged against: TCPRS's, or the packets' (TCPRS's with
/// [`TCPRS_WRONG`] applied).
#[derive(Clone, Copy)]
pub enum Reference {
    Tcprs,
    Packets,
}

impl Reference {
    fn of(self, l: &Label) -> Option<Class> {
        match self {
            Reference::Tcprs => l.class,
            Reference::Packets => l.truth,
        }
    }
}

/// (agreeing, compared) against `reference` over the labels that `pick` selects.
pub fn agreement(
    rows: &[(Label, Class)],
    reference: Reference,
    pick: impl Fn(&Label) -> bool,
) -> (usize, usize) {
    let sel = rows.iter().filter(|(l, _)| l.class.is_some() && pick(l));
    let (mut a, mut n) = (0, 0);
    for (l, c) in sel {
        n += 1;
        a += (reference.of(l) == Some(*c)) as usize;
    }
    (a, n)
}

fn pct((a, n): (usize, usize)) -> f64 {
    100.0 * a as f64 / n.max(1) as f64
}

/// Prints the agreement against `reference`, overall and per side.
fn print_agreement(rows: &[(Label, Class)], reference: Reference, name: &str) -> f64 {
    let all = agreement(rows, reference, |_| true);
    let resp = agreement(rows, reference, |l| !l.orig);
    let orig = agreement(rows, reference, |l| l.orig);
    println!(
        "{name}: {:.1}% ({}/{}); responder {:.1}% ({}/{}); originator {:.1}% ({}/{})",
        pct(all),
        all.0,
        all.1,
        pct(resp),
        resp.0,
        resp.1,
        pct(orig),
        orig.0,
        orig.1
    );
    pct(all)
}

/// Prints the agreement, with TCPRS and with the packets, and the confusion;
/// returns the agreement with the packets.
pub fn report(rows: &[(Label, Class)]) -> f64 {
    print_agreement(rows, Reference::Tcprs, "agreement with TCPRS");
    let corrected = print_agreement(
        rows,
        Reference::Packets,
        &format!(
            "agreement with the packets ({} TCPRS labels corrected)",
            rows.iter().filter(|(l, _)| l.truth != l.class).count()
        ),
    );
    let skipped = rows.iter().filter(|(l, _)| l.class.is_none()).count();
    println!("labels without a cause (rtype 0, 6, 7, 8 or following one): {skipped}");
    let mut conf: BTreeMap<(bool, Class, Class), usize> = BTreeMap::new();
    for (l, c) in rows {
        if let Some(t) = l.class {
            *conf.entry((l.orig, t, *c)).or_default() += 1;
        }
    }
    println!("side        TCPRS    gentle   count");
    for ((o, t, g), n) in &conf {
        let side = if *o { "originator" } else { "responder" };
        println!(
            "{side:11} {:8} {:8} {n}",
            format!("{t:?}"),
            format!("{g:?}")
        );
    }
    let mut by_rtype: BTreeMap<(u32, Class), usize> = BTreeMap::new();
    for (l, c) in rows {
        if l.class.is_some() {
            *by_rtype.entry((l.rtype, *c)).or_default() += 1;
        }
    }
    println!("TCPRS rtype, gentle: count");
    for ((r, g), n) in &by_rtype {
        println!("rtype {r:2} {:8} {n}", format!("{g:?}"));
    }
    if std::env::var_os("GENTLE_TCPRS_MISSES").is_some() {
        for (l, c) in rows {
            if let (Some(tcprs), Some(truth)) = (l.class, l.truth)
                && truth != *c
            {
                println!(
                    "miss {} {}.{:06} {}:{} seq {} orig {} rtype {} tcprs {:?} packets {:?} gentle {:?}",
                    l.trace,
                    l.key.3 / 1_000_000,
                    l.key.3 % 1_000_000,
                    l.key.0,
                    l.key.1,
                    l.key.2,
                    l.orig,
                    l.rtype,
                    tcprs,
                    truth,
                    c
                );
            }
        }
    }
    corrected
}

#[test]
#[ignore = "needs the TCPRS capture corpus: GENTLE_CAPTURES=DIR, then -- --ignored"]
fn agreement_with_tcprs_on_real_captures() {
    let rows = compare();
    assert!(rows.len() > 1200, "only {} labels read", rows.len());
    let corrected = report(&rows);
    let all = pct(agreement(&rows, Reference::Tcprs, |_| true));
    let resp = pct(agreement(&rows, Reference::Tcprs, |l| !l.orig));
    assert!(
        corrected >= 97.0,
        "agreement with the packets {corrected:.1}% (floor 97%)"
    );
    assert!(all >= 95.5, "agreement with TCPRS {all:.1}% (floor 95.5%)");
    assert!(
        resp >= 97.5,
        "responder agreement with TCPRS {resp:.1}% (floor 97.5%)"
    );
}

#[test]
#[ignore = "needs the TCPRS capture corpus: GENTLE_CAPTURES=DIR, then -- --ignored"]
fn where_tcprs_is_wrong_the_packets_say_so() {
    let rows = compare();
    for w in TCPRS_WRONG {
        let (l, got) = rows
            .iter()
            .find(|(l, _)| l.trace == w.trace && l.key.3 == w.ts_us && l.key.2 == w.seq)
            .unwrap_or_else(|| panic!("{} {}: no such label", w.trace, w.ts_us));
        assert_ne!(
            l.class,
            Some(w.truth),
            "{} {}: TCPRS agrees after all",
            w.trace,
            w.ts_us
        );
        assert_eq!(
            l.truth,
            Some(w.truth),
            "{} {}: not applied",
            w.trace,
            w.ts_us
        );
        assert_eq!(*got, w.truth, "{} {}: {}", w.trace, w.ts_us, w.why);
    }
    // Every rtype 5 label a correction carries to is one gentle agrees with.
    for (l, got) in &rows {
        if l.rtype == 5 && l.truth != l.class {
            assert_eq!(l.truth, Some(*got), "{} {}: carried", l.trace, l.key.3);
        }
    }
}
