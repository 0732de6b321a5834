//! Writing results: everything goes to a staging directory first and is moved into
//! place only when all of it was written, so a failed run leaves nothing half-written.

use std::fs;
use std::path::{Path, PathBuf};

pub struct Staged {
    dir: PathBuf,
    stage: PathBuf,
    files: Vec<String>,
}

impl Staged {
    pub fn new(dir: &Path) -> std::io::Result<Staged> {
        fs::create_dir_all(dir)?;
        let stage = dir.join(format!(".gentle-staging-{}", std::process::id()));
        let _ = fs::remove_dir_all(&stage);
        fs::create_dir_all(&stage)?;
        Ok(Staged {
            dir: dir.to_path_buf(),
            stage,
            files: Vec::new(),
        })
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
    /// Moves every staged file into the directory.
    pub fn commit(self) -> std::io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for f in &self.files {
            let from = self.stage.join(f);
            if from.exists() {
                let to = self.dir.join(f);
                fs::rename(&from, &to)?;
                out.push(to);
            }
        }
        fs::remove_dir_all(&self.stage)?;
        Ok(out)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.stage);
    }
}

/// A pcap file (LINKTYPE_RAW: IPv4 frames) from captured `(ns, frame)` pairs.
pub fn pcap_bytes(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
    use pcap_file::DataLink;
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let header = PcapHeader {
        datalink: DataLink::RAW,
        snaplen: 65535,
        ..Default::default()
    };
    let mut w = PcapWriter::with_header(Vec::new(), header).expect("in-memory writer");
    for (ns, f) in frames {
        let ts = std::time::Duration::from_nanos(*ns);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .expect("in-memory write");
    }
    w.into_writer()
}
