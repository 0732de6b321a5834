//! What the integration tests share: scratch directories.

use std::ops::Deref;
use std::path::Path;

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
