//! The captures and outputs of a many-capture `gentle analyze`, checked before any
//! capture is analysed: every path exists, every directory holds captures, every
//! capture opens with a pcap or pcapng header, and no table would be replaced
//! without `--force`.

use std::path::{Path, PathBuf};

use super::tables::FILES;
use crate::LabError;

/// The file names a directory contributes: these extensions, in any case.
pub const EXTENSIONS: [&str; 5] = ["pcap", "pcapng", "cap", "dmp", "trace"];

fn is_capture_name(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// Every capture file under `dir`, recursively (directories that are symbolic links
/// are not followed, so that a link back up cannot loop).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), LabError> {
    let bad = |e: std::io::Error| LabError::Input(format!("cannot read {}: {e}", dir.display()));
    for e in std::fs::read_dir(dir).map_err(bad)? {
        let e = e.map_err(bad)?;
        let p = e.path();
        if e.file_type().map_err(bad)?.is_dir() {
            walk(&p, out)?;
        } else if is_capture_name(&p) && p.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

/// The captures `paths` name: files as given, and every `*.pcap`, `*.pcapng`,
/// `*.cap`, `*.dmp` and `*.trace` under each directory; sorted by path, each once.
/// A missing path, a directory without captures, or a file that does not open as a
/// capture is bad input, named.
pub fn captures(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LabError> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| LabError::Input(format!("cannot read {}: {e}", p.display())))?;
        if meta.is_dir() {
            let before = files.len();
            walk(p, &mut files)?;
            if files.len() == before {
                return Err(LabError::Input(format!(
                    "{}: no captures under it (files named *.{})",
                    p.display(),
                    EXTENSIONS.join(", *.")
                )));
            }
        } else {
            files.push(p.clone());
        }
    }
    files.sort();
    files.dedup();
    for f in &files {
        // The header alone: a damaged record later on is a warning, not bad input.
        super::open_capture(f)
            .map_err(|e| LabError::Input(e.message.trim_start_matches("error: ").to_string()))?;
    }
    Ok(files)
}

/// Checks `--parquet DIR`: a directory (or a path to make one), none of whose tables
/// exists unless `force`.
pub fn check_parquet(dir: &Path, force: bool) -> Result<(), LabError> {
    if dir.exists() && !dir.is_dir() {
        return Err(LabError::Input(format!(
            "--parquet {}: is not a directory; give a directory for the tables",
            dir.display()
        )));
    }
    if !force && let Some(f) = FILES.iter().map(|f| dir.join(f)).find(|f| f.exists()) {
        return Err(LabError::Input(format!(
            "--parquet {}: {} exists; add --force to replace the tables",
            dir.display(),
            f.display()
        )));
    }
    Ok(())
}
