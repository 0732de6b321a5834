//! `base = "FILE"`: a scenario built on another — a calibrated population that every
//! experiment of its setting uses unchanged (issue: calibrated networks, "one
//! fitted population serves every experiment of its setting"). The base is a
//! scenario of its own, read and checked first; the file's tables are laid over
//! it: a table merges key by key, an array of tables (`[[link]]`) follows the
//! base's, any other value replaces the base's. Two rules let an experiment change
//! what the population fixes without copying it: a `[[variant]]` named as one of
//! the base's replaces it (in its place), and `[workload]` written as a table (not
//! `[[workload]]`) is laid over every workload of the base (`connection = "fresh"`,
//! a `backend`). A base may have a base of its own (a setting's population built on
//! a wider one: the 2013 frontends and their backend leg on the 2013 clients), to
//! [`MAX_DEPTH`] files deep. The path is relative to the
//! file's directory; the built-in experiments' bases are compiled in.

use std::borrow::Cow;
use std::path::Path;

use toml_edit::Item;

use super::error::Source;
use super::reader::{Result, Table};

/// The bases of the built-in experiments, by their path in the repository.
pub const BUILT_IN: &[(&str, &str)] = &[
    (
        "examples/populations/google-2011-dc1.toml",
        include_str!("../../../../examples/populations/google-2011-dc1.toml"),
    ),
    (
        "examples/populations/india-2011-dc2.toml",
        include_str!("../../../../examples/populations/india-2011-dc2.toml"),
    ),
    (
        "examples/populations/google-2013.toml",
        include_str!("../../../../examples/populations/google-2013.toml"),
    ),
    (
        "examples/populations/google-2013-frontends.toml",
        include_str!("../../../../examples/populations/google-2013-frontends.toml"),
    ),
];

/// How many bases deep a scenario may be built (a chain longer than any setting
/// needs, so that a cycle is reported rather than followed).
pub const MAX_DEPTH: usize = 4;

/// `root` laid over its base (and that over its own base, and so on) when it names
/// one; `root` itself otherwise.
pub fn with_base<'a>(
    src: Source<'_>,
    root: &'a toml_edit::Table,
) -> Result<Cow<'a, toml_edit::Table>> {
    with_base_at(src, root, 0)
}

/// [`with_base`] for a file `depth` bases below the scenario.
fn with_base_at<'a>(
    src: Source<'_>,
    root: &'a toml_edit::Table,
    depth: usize,
) -> Result<Cow<'a, toml_edit::Table>> {
    let top = Table::new(src, root, Some(0..0), "the scenario");
    let Some(name) = top.str("base", "the path of a scenario file to build on")? else {
        return Ok(Cow::Borrowed(root));
    };
    let (file, text) = read(src.file, name).map_err(|m| {
        top.bad(
            "base",
            m,
            "the path of a scenario file, relative to this one",
        )
    })?;
    let base_src = Source {
        file: &file,
        text: &text,
    };
    if depth + 1 >= MAX_DEPTH {
        return Err(top.bad(
            "base",
            format!("{file} is more than {MAX_DEPTH} bases deep (do the bases name each other?)"),
            "a chain of bases that ends in a file without `base`",
        ));
    }
    let doc = super::parse_toml(base_src)?;
    // The base is a scenario by itself, on its own bases: its errors are reported in
    // its own file.
    let base = with_base_at(base_src, doc.as_table(), depth + 1)?;
    super::parse_doc(base_src, base.as_ref())?;
    let mut merged = base.into_owned();
    let mut over = root.clone();
    over.remove("base");
    lay_over(&mut merged, over);
    Ok(Cow::Owned(merged))
}

/// The file and text of base `name` of the scenario in `file`.
fn read(file: &str, name: &str) -> std::result::Result<(String, String), String> {
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let path = dir.join(name);
    let shown = path.display().to_string();
    match std::fs::read_to_string(&path) {
        Ok(t) => Ok((shown, t)),
        Err(e) => BUILT_IN
            .iter()
            .find(|(p, _)| Path::new(p) == normalise(&path))
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .ok_or_else(|| format!("cannot read {shown}: {e}")),
    }
}

/// `path` without its `.` and `dir/..` parts.
pub(crate) fn normalise(path: &Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Lays `over` over `base`, in place.
fn lay_over(base: &mut toml_edit::Table, over: toml_edit::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Item::Table(b)), Item::Table(o)) => lay_over(b, o),
            (Some(Item::ArrayOfTables(b)), Item::Table(o)) => {
                for t in b.iter_mut() {
                    lay_over(t, o.clone());
                }
            }
            (Some(Item::ArrayOfTables(b)), Item::ArrayOfTables(o)) => {
                for t in o {
                    if let Some(same) = b.iter_mut().find(|x| named_alike(x, &t)) {
                        *same = t;
                    } else {
                        b.push(t);
                    }
                }
            }
            (_, v) => {
                base.insert(&k, v);
            }
        }
    }
}

/// Two tables of an array with the same `name` (variants).
fn named_alike(a: &toml_edit::Table, b: &toml_edit::Table) -> bool {
    let name = |t: &toml_edit::Table| t.get("name").and_then(|n| n.as_str().map(str::to_owned));
    name(a).is_some() && name(a) == name(b)
}
