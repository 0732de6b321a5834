//! Writing results: everything goes to a staging directory first and is moved into
//! place only when all of it was written, so a failed run leaves nothing half-written.

use std::fs;
use std::path::{Path, PathBuf};

pub struct Staged {
    dir: PathBuf,
    stage: PathBuf,
    files: Vec<String>,
    /// The directory did not exist before this run.
    created: bool,
    committed: bool,
    /// Adds files to a directory that may hold others (`plot`): no manifest, and an
    /// existing file of the same name is refused unless forced.
    adding: Option<bool>,
}

/// Lists the files the last run wrote into an `--out` directory, so that `--force`
/// can clear them before writing new ones.
const MANIFEST: &str = ".gentle-manifest";

impl Staged {
    /// Opens `dir` for results. A directory holding anything is refused unless
    /// `force`: then the files a previous gentle run wrote there (its manifest) are
    /// removed when the new results are committed, so old and new never mix.
    pub fn new(dir: &Path, force: bool) -> Result<Staged, String> {
        refuse_file(dir)?;
        let created = !dir.exists();
        if !created {
            let entries = fs::read_dir(dir)
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| {
                    !e.file_name()
                        .to_string_lossy()
                        .starts_with(".gentle-staging-")
                })
                .count();
            if entries > 0 && !force {
                return Err(format!(
                    "--out {}: is not empty; choose a new directory, or add --force to replace the results gentle wrote there",
                    dir.display()
                ));
            }
        }
        Self::open(dir, created, None)
    }

    /// Opens `dir` (which may hold other files) to add a few files to it. Nothing
    /// there is removed; a file of the same name is replaced only if `force`.
    pub fn adding(dir: &Path, force: bool) -> Result<Staged, String> {
        Self::open(dir, !dir.exists(), Some(force))
    }

    /// Creates `dir` and a fresh staging area inside it.
    fn open(dir: &Path, created: bool, adding: Option<bool>) -> Result<Staged, String> {
        refuse_file(dir)?;
        fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create the directory: {e}", dir.display()))?;
        remove_stale_stages(dir);
        let stage = dir.join(format!(".gentle-staging-{}", std::process::id()));
        let _ = fs::remove_dir_all(&stage);
        fs::create_dir_all(&stage)
            .map_err(|e| format!("cannot create {}: {e}", stage.display()))?;
        Ok(Staged {
            dir: dir.to_path_buf(),
            stage,
            files: Vec::new(),
            created,
            committed: false,
            adding,
        })
    }

    /// Files of this run that already exist in the directory (refused when adding
    /// without force).
    pub fn clashes(&self) -> Vec<PathBuf> {
        self.files
            .iter()
            .map(|f| self.dir.join(f))
            .filter(|p| p.exists())
            .collect()
    }
    /// Path to write `name` to while staging.
    pub fn path(&mut self, name: &str) -> PathBuf {
        self.files.push(name.to_string());
        self.stage.join(name)
    }
    pub fn write(&mut self, name: &str, data: &[u8]) -> std::io::Result<()> {
        let p = self.path(name);
        fs::write(p, data)
    }
    /// Bytes staged so far.
    pub fn staged_bytes(&self) -> u64 {
        self.files
            .iter()
            .filter_map(|f| fs::metadata(self.stage.join(f)).ok())
            .map(|m| m.len())
            .sum()
    }
    /// Moves every staged file into the directory, after removing the files of the
    /// previous run listed in its manifest.
    pub fn commit(mut self) -> std::io::Result<Vec<PathBuf>> {
        if let Some(force) = self.adding {
            let clashes = self.clashes();
            if !force && !clashes.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    format!(
                        "{} already exists; add --force to replace it",
                        clashes[0].display()
                    ),
                ));
            }
            let mut out = Vec::new();
            for f in &self.files {
                let (from, to) = (self.stage.join(f), self.dir.join(f));
                if from.exists() {
                    fs::rename(&from, &to)?;
                    out.push(to);
                }
            }
            fs::remove_dir_all(&self.stage)?;
            self.committed = true;
            return Ok(out);
        }
        if let Ok(old) = fs::read_to_string(self.dir.join(MANIFEST)) {
            for f in old.lines().filter(|l| !l.is_empty() && !l.contains('/')) {
                let _ = fs::remove_file(self.dir.join(f));
            }
        }
        let mut out = Vec::new();
        let mut names = String::new();
        for f in &self.files {
            let from = self.stage.join(f);
            if from.exists() {
                let to = self.dir.join(f);
                fs::rename(&from, &to)?;
                out.push(to);
                names.push_str(f);
                names.push('\n');
            }
        }
        fs::write(self.dir.join(MANIFEST), names)?;
        fs::remove_dir_all(&self.stage)?;
        self.committed = true;
        Ok(out)
    }
}

/// An `--out` that names a file is bad input.
fn refuse_file(dir: &Path) -> Result<(), String> {
    if dir.exists() && !dir.is_dir() {
        return Err(format!(
            "--out {}: is a file; expected a directory",
            dir.display()
        ));
    }
    Ok(())
}

/// Removes the staging areas of gentle runs that died without cleaning up (killed
/// by SIGKILL, say): those whose process no longer exists. Each is named on stderr.
fn remove_stale_stages(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(".gentle-staging-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_exists(pid) && fs::remove_dir_all(e.path()).is_ok()
        {
            eprintln!(
                "note: removed {}, the staging area of an interrupted gentle run (process {pid} is gone)",
                e.path().display()
            );
        }
    }
}

/// Whether process `pid` exists (Linux's /proc; elsewhere every process is taken
/// to exist, so nothing is removed).
fn process_exists(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

impl Drop for Staged {
    /// Without a commit nothing is left behind: not the staging area, and not the
    /// directory if this run created it.
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.stage);
        if !self.committed && self.created {
            let _ = fs::remove_dir(&self.dir); // only if empty
        }
    }
}

/// A file name from a scenario, variant or experiment name: ASCII letters, digits,
/// `_` and `-` are kept, and `.` between two letters or digits (`linux-2.6`);
/// anything else — spaces, `/`, other dots — becomes `_`, as does a leading `-`.
/// So the name stays inside the output directory and needs no quoting in a shell.
pub fn file_name(name: &str) -> String {
    let c: Vec<char> = name.chars().collect();
    let alnum = |i: usize| c.get(i).is_some_and(|x| x.is_ascii_alphanumeric());
    let mut s: String = (0..c.len())
        .map(|i| {
            let x = c[i];
            let dot_ok = x == '.' && i > 0 && alnum(i - 1) && alnum(i + 1);
            if x.is_ascii_alphanumeric() || x == '_' || x == '-' || dot_ok {
                x
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('-') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() {
        s.push('_');
    }
    s
}

/// A pcap writer onto `w`: LINKTYPE_RAW (IPv4 frames), nanosecond timestamps
/// (magic 0xa1b23c4d), big-endian.
pub fn pcap_writer<W: std::io::Write>(w: W) -> std::io::Result<pcap_file::pcap::PcapWriter<W>> {
    use pcap_file::pcap::{PcapHeader, PcapWriter};
    use pcap_file::{DataLink, Endianness, TsResolution};
    let header = PcapHeader {
        datalink: DataLink::RAW,
        snaplen: 65535,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Big,
        ..Default::default()
    };
    PcapWriter::with_header(w, header).map_err(pcap_error)
}

/// Writes one frame captured at `ns` (since the capture began) with `pcap_writer`'s
/// writer.
pub fn pcap_packet<W: std::io::Write>(
    w: &mut pcap_file::pcap::PcapWriter<W>,
    ns: u64,
    frame: &[u8],
) -> std::io::Result<()> {
    let ts = std::time::Duration::from_nanos(ns);
    let packet = pcap_file::pcap::PcapPacket::new(ts, frame.len() as u32, frame);
    w.write_packet(&packet).map(|_| ()).map_err(pcap_error)
}

fn pcap_error(e: pcap_file::PcapError) -> std::io::Error {
    match e {
        pcap_file::PcapError::IoError(e) => e,
        e => std::io::Error::other(e),
    }
}

/// A pcap file (LINKTYPE_RAW: IPv4 frames, nanosecond timestamps) from captured
/// `(ns, frame)` pairs.
pub fn pcap_bytes(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let mut w = pcap_writer(Vec::new()).expect("in-memory writer");
    for (ns, f) in frames {
        pcap_packet(&mut w, *ns, f).expect("in-memory write");
    }
    w.into_writer()
}

/// Writes `data` to `path` whole: into a new temporary file beside it, renamed into
/// place once written (removed if the writing fails). A new file gets the mode
/// `fs::write` gives one (0666 less the umask; a temporary file would be its
/// owner's alone), a file replaced keeps its own.
pub fn write_whole(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy());
    let kept = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    if let Some(mode) = kept {
        tmp.as_file().set_permissions(mode)?;
    }
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another writer's temporary file of the same point is left alone: each writer
    /// has a name of its own.
    #[test]
    fn writers_of_one_file_do_not_share_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("point-000001.parquet");
        let others = [
            dir.path().join("point-000001.tmp"),
            dir.path().join(".point-000001.parquet.tmp"),
        ];
        for o in &others {
            std::fs::write(o, b"another writer's").unwrap();
        }
        write_whole(&path, b"PAR1 mine").unwrap();
        write_whole(&path, b"PAR1 mine again").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"PAR1 mine again");
        for o in &others {
            assert_eq!(std::fs::read(o).unwrap(), b"another writer's");
        }
        // Nothing else is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    /// A new file has the mode `fs::write` gives one (the umask's), not the owner-only
    /// mode of a temporary file; a file written over keeps its mode.
    #[test]
    fn a_new_file_has_the_umasks_mode_and_a_replaced_one_keeps_its_own() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").unwrap();
        let whole = dir.path().join("whole");
        write_whole(&whole, b"x").unwrap();
        assert_eq!(mode(&whole), mode(&plain));
        // 0640 is a mode neither a temporary file (0600) nor a umask of 022 or 002
        // gives.
        std::fs::set_permissions(&whole, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&whole, b"y").unwrap();
        assert_eq!(mode(&whole), 0o640);
        assert_eq!(std::fs::read(&whole).unwrap(), b"y");
    }
}
