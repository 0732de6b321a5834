//! What the integration tests share: scratch directories, the workspace root, and
//! running the gentle command.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A test's scratch directory, made new under the system's temporary directory
/// and removed when dropped — when the test fails too. Reads as its path.
pub struct Scratch(tempfile::TempDir);

/// A new, empty scratch directory; `name` (in its name) says which test made it.
pub fn scratch(name: &str) -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix(&format!("gentle-{name}-"))
        .tempdir()
        .expect("a scratch directory");
    Scratch(dir)
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

/// Whether a test that needs this machine's kernel (root, network namespaces, TUN,
/// tcpdump) must stand down: never silently. Where real mode is unavailable the
/// test fails with the reason, unless `GENTLE_SKIP_REAL=1` asks to skip such tests
/// knowingly (then it says so on stderr). CI runs as root and skips nothing.
pub fn skip_real(why: Result<(), String>) -> bool {
    match why {
        Ok(()) => false,
        Err(why) if std::env::var_os("GENTLE_SKIP_REAL").is_some() => {
            eprintln!("skipped (GENTLE_SKIP_REAL): {why}");
            true
        }
        Err(why) => panic!(
            "real mode is unavailable: {why}; set GENTLE_SKIP_REAL=1 to skip the tests that need it"
        ),
    }
}

/// [`skip_real`] for gentle's real mode.
pub fn skip_real_mode() -> bool {
    skip_real(gentle_real::available())
}

/// A path that does not exist yet (for gentle to create), inside a scratch
/// directory removed when dropped — when the test fails too. Reads as its path.
pub struct Fresh {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

/// A new path named `name` in a new scratch directory.
pub fn fresh(name: &str) -> Fresh {
    let dir = tempfile::Builder::new()
        .prefix(&format!("gentle-{name}-"))
        .tempdir()
        .expect("a scratch directory");
    let path = dir.path().join(name);
    Fresh { _dir: dir, path }
}

impl Deref for Fresh {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Fresh {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// The workspace's root (this crate is `crates/gentle`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `gentle ARGS...`, run to its end.
pub fn gentle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .args(args)
        .output()
        .expect("gentle runs")
}

/// `gentle ARGS...` in `dir`, run to its end.
pub fn gentle_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gentle"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("gentle runs")
}

/// `gentle run s.toml --json` on scenario `text`, written into a new scratch
/// directory (`name` says which test made it): the JSON report, or the exit status
/// and stderr of a run that failed.
pub fn run_json(name: &str, text: &str) -> Result<serde_json::Value, (i32, String)> {
    let d = scratch(name);
    std::fs::write(d.join("s.toml"), text).unwrap();
    let o = gentle_in(&d, &["run", "s.toml", "--json"]);
    if !o.status.success() {
        return Err((
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ));
    }
    Ok(serde_json::from_slice(&o.stdout).expect("a JSON report"))
}

/// Trial `k` of the frontend example (40 clients, a Linux 3.10 server) captured
/// into `dir`, with `gentle run`'s other outputs beside it.
pub fn frontend_capture(dir: &Path, k: u32) -> PathBuf {
    let example = root().join("examples/analyze-frontend.toml");
    let o = gentle(&[
        "run",
        example.to_str().unwrap(),
        "--trials",
        &(k + 1).to_string(),
        "--pcap",
        &k.to_string(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir.join(format!("analyze-frontend-trial{k}-linux-3.10.pcap"))
}

/// The byte offset of record `n` (0-based) of a big-endian pcap file.
pub fn record_offset(bytes: &[u8], n: usize) -> usize {
    let mut off = 24usize;
    for _ in 0..n {
        let caplen = u32::from_be_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        off += 16 + caplen;
    }
    off
}
