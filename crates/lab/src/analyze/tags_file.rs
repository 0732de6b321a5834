//! `gentle analyze --tags FILE`: every packet with its tags as CSV, written to a
//! temporary file beside FILE while the capture is read and renamed at the end.
//! A retransmission's row first carries the cause guessed as it passed; the
//! report's causes are settled by the whole capture, and the rows whose cause moved
//! are rewritten with it before the rename, so that the tags and `--json` agree.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use gentle_analyze::{Analysis, Cause, Dir, PacketTags};
use rustc_hash::FxHashMap;

use super::Failure;

/// The tags CSV header.
const TAGS_HEADER: &str =
    "record,time_s,flow,dir,src,sport,dst,dport,flags,seq,ack,len,win,tags,cause\n";

fn flag_letters(f: u16) -> String {
    use gentle_analyze::decode::flags as F;
    let mut s = String::with_capacity(8);
    for (b, c) in [
        (F::SYN, 'S'),
        (F::FIN, 'F'),
        (F::RST, 'R'),
        (F::PSH, 'P'),
        (F::ACK, 'A'),
        (F::ECE, 'E'),
        (F::CWR, 'W'),
    ] {
        if f & b != 0 {
            s.push(c);
        }
    }
    s
}

/// One CSV row of `--tags`; `t0` is the capture's first time.
fn tag_row(out: &mut String, p: &PacketTags, t0: u64) {
    use std::fmt::Write as _;
    let tags: Vec<&str> = p.tags.iter().map(|t| t.name()).collect();
    let _ = writeln!(
        out,
        "{},{:.6},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        p.record,
        p.ts_ns.saturating_sub(t0) as f64 / 1e9,
        p.flow,
        match p.dir {
            Dir::ToClient => "s>c",
            Dir::ToServer => "c>s",
        },
        p.seg.src,
        p.seg.sport,
        p.seg.dst,
        p.seg.dport,
        flag_letters(p.seg.flags),
        p.rel_seq,
        p.rel_ack,
        p.seg.len,
        p.seg.window,
        tags.join("|"),
        p.cause.map_or("", |c| c.name()),
    );
}

/// Where the report lists a retransmission: (flow, towards the client, time ns,
/// sequence from the ISN).
type RetransmissionKey = (u32, bool, u64, u64);

/// The tags file being written.
pub(super) struct TagsFile {
    dest: PathBuf,
    tmp: PathBuf,
    w: std::io::BufWriter<std::fs::File>,
    row: String,
    error: Option<std::io::Error>,
    /// The retransmissions tagged, by where the report lists them → (record, the
    /// tagged cause).
    tagged: FxHashMap<RetransmissionKey, (u64, Option<Cause>)>,
}

impl TagsFile {
    /// The temporary file beside `dest`, with the header written.
    pub(super) fn create(dest: &Path) -> Result<Self, Failure> {
        let mut n = dest.file_name().unwrap_or_default().to_os_string();
        n.push(format!(".gentle-partial-{}", std::process::id()));
        let tmp = dest.with_file_name(n);
        let f = std::fs::File::create(&tmp).map_err(|e| Failure {
            code: 1,
            message: format!("error: cannot write {}: {e}", tmp.display()),
        })?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let error = w.write_all(TAGS_HEADER.as_bytes()).err();
        Ok(TagsFile {
            dest: dest.to_path_buf(),
            tmp,
            w,
            row: String::new(),
            error,
            tagged: FxHashMap::default(),
        })
    }

    /// Packet `p`'s row; `t0` is the capture's first time.
    pub(super) fn write(&mut self, p: &PacketTags, t0: u64) {
        if p.cause.is_some() {
            let key = (p.flow, p.dir == Dir::ToClient, p.ts_ns, p.rel_seq);
            self.tagged.insert(key, (p.record, p.cause));
        }
        self.row.clear();
        tag_row(&mut self.row, p, t0);
        if self.error.is_none()
            && let Err(e) = self.w.write_all(self.row.as_bytes())
        {
            self.error = Some(e);
        }
    }

    /// The first error writing rows, if any.
    pub(super) fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    /// Removes the temporary file (the analysis failed).
    pub(super) fn abandon(self) {
        drop(self.w);
        let _ = std::fs::remove_file(&self.tmp);
    }

    /// Gives the rows the causes `a` settled on (its retransmission logs kept),
    /// and renames the file into place; on a failure, removes it.
    pub(super) fn finish(mut self, a: &Analysis) -> Result<(), Failure> {
        let settled = self.settled(a);
        let done = self
            .w
            .flush()
            .and_then(|()| settle(&self.tmp, &settled))
            .and_then(|()| std::fs::rename(&self.tmp, &self.dest));
        if let Err(e) = done {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(Failure {
                code: 1,
                message: format!("error: writing {}: {e}", self.dest.display()),
            });
        }
        eprintln!("wrote {}", self.dest.display());
        Ok(())
    }

    /// The records whose cause the report settled otherwise, and that cause.
    fn settled(&self, a: &Analysis) -> FxHashMap<u64, &'static str> {
        let mut out = FxHashMap::default();
        for f in &a.flows {
            for (to_client, r) in f.logged_retransmissions() {
                if let Some(&(record, tagged)) =
                    self.tagged.get(&(f.id, to_client, r.t_ns, r.rel_seq()))
                    && tagged != Some(r.cause)
                {
                    out.insert(record, r.cause.name());
                }
            }
        }
        out
    }
}

/// Rewrites the tags file `path` with the causes of `settled` (by record), through
/// a second temporary file beside it; nothing to do when none changed.
fn settle(path: &Path, settled: &FxHashMap<u64, &'static str>) -> std::io::Result<()> {
    if settled.is_empty() {
        return Ok(());
    }
    let mut n = path.as_os_str().to_os_string();
    n.push(".settled");
    let out_path = PathBuf::from(n);
    let copy = || -> std::io::Result<()> {
        let file = std::fs::File::create(&out_path)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        let input = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
        for line in input.lines() {
            let line = line?;
            let record = line.split(',').next().and_then(|r| r.parse::<u64>().ok());
            match record.and_then(|r| settled.get(&r)) {
                Some(cause) => {
                    let head = line.rsplit_once(',').map_or(line.as_str(), |(h, _)| h);
                    writeln!(out, "{head},{cause}")?;
                }
                None => writeln!(out, "{line}")?,
            }
        }
        out.flush()
    };
    let done = copy().and_then(|()| std::fs::rename(&out_path, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&out_path);
    }
    done
}
