//! `[calibrate]`: the free parameters of a scenario that `gentle calibrate` fits
//! (issue: calibrated networks). Each is a dotted path into the scenario — chosen
//! by the rules of a sweep value (`link.a_to_b.loss.p`, `link.2.delay`) — with the
//! range it may take. A scenario with `[calibrate]` runs with the values it holds;
//! the table only names what may move. A file built on a base fits keys of its own
//! (its paths are into its own tables; the base's are fitted in the base).
//!
//! ```toml
//! [calibrate]
//! variant = "Linux"          # whose statistics are fitted (default: the first)
//! trials = 2000              # trials of every candidate (default: quick_trials)
//! candidates = 120           # candidates evaluated, at most
//! [calibrate.free]
//! link.a_to_b.loss.p = { min = 0.001, max = 0.05, log = true }
//! link.jitter.mean = { min = 1, max = 80, unit = "ms" }
//! ```

use std::ops::Range;
use std::path::Path;

use toml_edit::{Item, TableLike, Value};

use super::error::{ScenarioError, Source};
use super::reader::{Result, Table};
use super::sweep::{get_path, set_path};
use super::{Scenario, parse_doc, parse_toml};

const KEYS: &[&str] = &["variant", "trials", "candidates", "free"];
const FREE_KEYS: &[&str] = &["min", "max", "log", "unit", "integer"];
const FREE_EXPECTED: &str =
    "a range like { min = 0.001, max = 0.05, log = true } (optional unit = \"ms\", integer = true)";
/// Significant digits a candidate's value keeps: what is evaluated is what the
/// fitted scenario file says.
const DIGITS: i32 = 4;

/// One free parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Free {
    /// Its dotted path, as written.
    pub path: Vec<String>,
    pub min: f64,
    pub max: f64,
    /// Searched on a logarithmic scale (both ends positive).
    pub log: bool,
    /// Written as a string with this unit (`"12.5ms"`), else as a number.
    pub unit: Option<String>,
    pub integer: bool,
}

impl Free {
    pub fn name(&self) -> String {
        self.path.join(".")
    }

    /// The value at `u` in [0, 1] of the search scale, rounded as it is written.
    pub fn at(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        let v = if self.log {
            (self.min.ln() + u * (self.max.ln() - self.min.ln())).exp()
        } else {
            self.min + u * (self.max - self.min)
        };
        let v = if self.integer {
            v.round()
        } else {
            round_sig(v, DIGITS)
        };
        v.clamp(self.min, self.max)
    }

    /// Where `v` sits on the search scale, in [0, 1].
    pub fn scale(&self, v: f64) -> f64 {
        let u = if self.log {
            (v.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        if u.is_finite() {
            u.clamp(0.0, 1.0)
        } else {
            0.5
        }
    }

    /// The TOML value that sets `v`.
    pub fn value(&self, v: f64) -> Item {
        let v = if self.integer { v.round() } else { v };
        match &self.unit {
            Some(u) => Item::Value(Value::from(format!("{v}{u}"))),
            None if self.integer => Item::Value(Value::from(v as i64)),
            None => Item::Value(Value::from(v)),
        }
    }

    /// The value as it reads in a report: `12.5ms`, `0.0123`.
    pub fn show(&self, v: f64) -> String {
        match &self.unit {
            Some(u) => format!("{v}{u}"),
            None => format!("{v}"),
        }
    }
}

/// `v` rounded to `digits` significant digits.
fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = v.abs().log10().floor() as i32;
    let f = 10f64.powi(digits - 1 - e);
    (v * f).round() / f
}

/// A scenario's `[calibrate]` table.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The variant whose statistics are fitted (by index).
    pub variant: usize,
    pub trials: Option<u64>,
    pub candidates: Option<u64>,
    pub free: Vec<Free>,
}

/// A scenario file that can be calibrated: its text, its `[calibrate]` table, and
/// its scenarios at any values of the free parameters.
#[derive(Clone, Debug)]
pub struct Calibratable {
    pub file: String,
    pub text: String,
    pub spec: Spec,
    /// The scenario as written (its values are the starting point).
    pub scenario: Scenario,
    /// The values the file holds for each free parameter (clamped into its range).
    pub start: Vec<f64>,
    /// The file's tables, read once: every candidate is a copy with its values set.
    root: toml_edit::Table,
}

impl Calibratable {
    /// Reads a scenario file with a `[calibrate]` table; every free parameter is
    /// checked (its path exists, its range is sound, its ends make valid scenarios)
    /// before this returns.
    pub fn parse(file: &str, text: &str) -> std::result::Result<Self, ScenarioError> {
        let src = Source { file, text };
        let doc = parse_toml(src)?;
        let root = doc.as_table();
        let top = Table::new(src, root, Some(0..0), "the scenario");
        if root.contains_key("base") && !root.contains_key("calibrate") {
            return Err(top.missing(
                "calibrate",
                "a [calibrate] table of this file's own: a file with a base fits its own keys (to fit the base's, calibrate the base itself)",
            ));
        }
        if root.contains_key("sweep") {
            return Err(top.bad(
                "sweep",
                "a sweep cannot be calibrated",
                "a scenario without [sweep]",
            ));
        }
        let scenario = parse_doc(src, super::base::with_base(src, root)?.as_ref())?;
        let ct = top
            .sub("calibrate", "a table: [calibrate] with [calibrate.free]")?
            .ok_or_else(|| {
                top.missing(
                    "calibrate",
                    "a [calibrate] table naming the free parameters under [calibrate.free]",
                )
            })?;
        let spec = parse_spec(&ct, &scenario)?;
        let mut start = Vec::new();
        for f in &spec.free {
            let span = free_span(&ct, f);
            let now = current(root, &f.path).ok_or_else(|| {
                // The path rules may say why (an ambiguous [[table]], a path into nothing).
                let mut why = set_path(&mut root.clone(), &f.path, f.value(f.min))
                    .err()
                    .unwrap_or_else(|| "the scenario sets no number there".to_string());
                if root.contains_key("base") {
                    why += " (a file with a base fits keys of its own; calibrate the base for the base's)";
                }
                src.error(span.clone(), format!("`{}`: {why}", f.name()))
                    .expected(
                        "the dotted path of a number (or a number with a unit) the scenario sets",
                    )
            })?;
            start.push(now.clamp(f.min, f.max));
            for end in [f.min, f.max] {
                with_values(src, root, &[(f, end)]).map_err(|mut e| {
                    let (line, column) = src.position(span.clone().map_or(0, |s| s.start));
                    e.message = format!(
                        "`{}` = {} makes a bad scenario: {}",
                        f.name(),
                        f.show(end),
                        e.message
                    );
                    (e.line, e.column) = (line, column);
                    e
                })?;
            }
        }
        Ok(Calibratable {
            file: file.to_string(),
            text: text.to_string(),
            spec,
            scenario,
            start,
            root: root.clone(),
        })
    }

    /// Fits only the free parameters named in `names` (dotted paths as written in
    /// `[calibrate.free]`): the others keep the values the file holds. An unknown
    /// or repeated name is refused with the names there are.
    pub fn restrict(&mut self, names: &[String]) -> std::result::Result<(), String> {
        let known: Vec<String> = self.spec.free.iter().map(Free::name).collect();
        for (i, n) in names.iter().enumerate() {
            if n.is_empty() {
                return Err(format!(
                    "an empty name (a stray comma?); expected one of: {}",
                    known.join(", ")
                ));
            }
            if !known.contains(n) {
                return Err(format!(
                    "`{n}` is not a free parameter of {}; expected one of: {}",
                    self.file,
                    known.join(", ")
                ));
            }
            if names[..i].contains(n) {
                return Err(format!("`{n}` is named twice"));
            }
        }
        let (free, start) = std::mem::take(&mut self.spec.free)
            .into_iter()
            .zip(std::mem::take(&mut self.start))
            .filter(|(f, _)| names.contains(&f.name()))
            .unzip();
        (self.spec.free, self.start) = (free, start);
        Ok(())
    }

    /// The scenario with every free parameter at `values` (in the order of
    /// `spec.free`).
    pub fn at(&self, values: &[f64]) -> std::result::Result<Scenario, ScenarioError> {
        let src = Source {
            file: &self.file,
            text: &self.text,
        };
        let pairs: Vec<(&Free, f64)> = self.spec.free.iter().zip(values.iter().copied()).collect();
        with_values(src, &self.root, &pairs)
    }

    /// The file's text with every free parameter set to `values`, its formatting
    /// and comments kept, under a header of `header` comment lines, to be written
    /// to `out`: a `base` it names is named from `out`'s directory, so that the
    /// fitted file builds on the same base wherever it is written. The header of an
    /// earlier fit is replaced, unless `partial` (some parameters refitted, the
    /// others as that fit left them): then it stays below the new one.
    pub fn fitted_text(
        &self,
        values: &[f64],
        header: &[String],
        out: &Path,
        partial: bool,
    ) -> String {
        let mut doc: toml_edit::DocumentMut = self.text.parse().expect("parsed before");
        for (f, &v) in self.spec.free.iter().zip(values) {
            set_path(doc.as_table_mut(), &f.path, f.value(v)).expect("checked at parse");
        }
        let moved = doc
            .get("base")
            .and_then(|b| b.as_str())
            .and_then(|b| rebase(Path::new(&self.file), b, out));
        if let Some(b) = moved
            && let Some(v) = doc.get_mut("base").and_then(|i| i.as_value_mut())
        {
            let decor = v.decor().clone();
            *v = toml_edit::Value::from(b);
            *v.decor_mut() = decor;
        }
        let mut out = String::new();
        for h in header {
            out.push_str("# ");
            out.push_str(h);
            out.push('\n');
        }
        let text = doc.to_string();
        out.push_str(if partial {
            &text
        } else {
            without_fitted_header(&text)
        });
        out
    }
}

/// Base `base` of the scenario in `file` (a path relative to its directory) named
/// from the directory of `out` instead, when that is another; `None` when it is
/// the same directory or the paths cannot be resolved.
fn rebase(file: &Path, base: &str, out: &Path) -> Option<String> {
    let dir = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    let absolute = |p: &Path| {
        std::path::absolute(p)
            .ok()
            .map(|p| super::base::normalise(&p))
    };
    let (from, to) = (absolute(&dir(file))?, absolute(&dir(out))?);
    if from == to || Path::new(base).is_absolute() {
        return None;
    }
    let target = super::base::normalise(&from.join(base));
    let common = target
        .components()
        .zip(to.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut rel = std::path::PathBuf::new();
    for _ in to.components().skip(common) {
        rel.push("..");
    }
    rel.extend(target.components().skip(common));
    rel.to_str().map(str::to_string)
}

/// The first line of the header `fitted_text` writes, and of a partial refit's.
const FITTED_HEADERS: [&str; 2] = [
    "# Fitted by `gentle calibrate ",
    "# Refitted by `gentle calibrate ",
];

/// `text` without the headers of earlier fits at its top (two lines each), so that
/// a file fitted again carries the new fit's header only.
fn without_fitted_header(mut text: &str) -> &str {
    while FITTED_HEADERS.iter().any(|h| text.starts_with(h)) {
        text = text.splitn(3, '\n').nth(2).unwrap_or("");
    }
    text
}

fn with_values(
    src: Source<'_>,
    root: &toml_edit::Table,
    values: &[(&Free, f64)],
) -> Result<Scenario> {
    let mut root = root.clone();
    for (f, v) in values {
        set_path(&mut root, &f.path, f.value(*v))
            .map_err(|m| src.error(None, format!("`{}`: {m}", f.name())))?;
    }
    parse_doc(src, super::base::with_base(src, &root)?.as_ref())
}

/// The number the scenario holds at `path` (a number, or a string such as `"20ms"`
/// or `"5Mbit/s"` whose leading number is taken).
fn current(root: &toml_edit::Table, path: &[String]) -> Option<f64> {
    let mut root = root.clone();
    let v = get_path(&mut root, path)?.as_value()?;
    if let Some(x) = v.as_float() {
        return Some(x);
    }
    if let Some(x) = v.as_integer() {
        return Some(x as f64);
    }
    let s = v.as_str()?.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == '+'))
        .unwrap_or(s.len());
    s[..end].parse().ok()
}

fn free_span(ct: &Table<'_>, f: &Free) -> Option<Range<usize>> {
    let t = ct.item("free")?.as_table_like()?;
    find_span(t, &f.path).or_else(|| ct.item_span("free"))
}

fn find_span(t: &dyn TableLike, path: &[String]) -> Option<Range<usize>> {
    let (first, rest) = path.split_first()?;
    if rest.is_empty() {
        return t.key(first).and_then(|k| k.span());
    }
    find_span(t.get(first)?.as_table_like()?, rest)
}

fn parse_spec(ct: &Table<'_>, scn: &Scenario) -> Result<Spec> {
    ct.check_keys(KEYS)?;
    let variant = match ct.str("variant", "the name of a variant")? {
        None => 0,
        Some(n) => scn
            .variants
            .iter()
            .position(|v| v.name == n)
            .ok_or_else(|| {
                let names: Vec<&str> = scn.variants.iter().map(|v| v.name.as_str()).collect();
                ct.bad(
                    "variant",
                    format!("no variant named `{n}`"),
                    &format!("one of: {}", names.join(", ")),
                )
            })?,
    };
    let trials = ct.int("trials", 1, 1_000_000_000)?.map(|v| v as u64);
    let candidates = ct.int("candidates", 2, 1_000_000)?.map(|v| v as u64);
    let ft = ct
        .sub("free", "a table of free parameters")?
        .ok_or_else(|| ct.missing("free", "[calibrate.free] with at least one parameter"))?;
    let mut free = Vec::new();
    collect(&ft, ft.t, &mut Vec::new(), &mut free)?;
    if free.is_empty() {
        return Err(ct.bad("free", "no free parameter", FREE_EXPECTED));
    }
    Ok(Spec {
        variant,
        trials,
        candidates,
        free,
    })
}

/// Walks dotted keys down to the range tables.
fn collect<'a>(
    parent: &Table<'a>,
    t: &'a dyn TableLike,
    prefix: &mut Vec<String>,
    out: &mut Vec<Free>,
) -> Result<()> {
    for (k, item) in t.iter() {
        prefix.push(k.to_string());
        let sub = item
            .as_table_like()
            .ok_or_else(|| parent.bad(k, "not a range", FREE_EXPECTED))?;
        let here = Table::new(parent.src, sub, parent.key_span(k), "a free parameter");
        if sub.is_dotted() || !(sub.contains_key("min") || sub.contains_key("max")) {
            collect(&here, sub, prefix, out)?;
        } else {
            out.push(parse_free(&here, prefix)?);
        }
        prefix.pop();
    }
    Ok(())
}

fn parse_free(t: &Table<'_>, path: &[String]) -> Result<Free> {
    t.check_keys(FREE_KEYS)?;
    let min = t
        .float("min", "a number")?
        .ok_or_else(|| t.missing("min", FREE_EXPECTED))?;
    let max = t
        .float("max", "a number")?
        .ok_or_else(|| t.missing("max", FREE_EXPECTED))?;
    // Written so that a NaN bound fails too.
    if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
        return Err(t.bad("max", "the range is empty", "a max above min"));
    }
    let log = t.bool("log")?.unwrap_or(false);
    if log && min <= 0.0 {
        return Err(t.bad("min", "a log scale needs a positive range", "min above 0"));
    }
    Ok(Free {
        path: path.to_vec(),
        min,
        max,
        log,
        unit: t
            .str("unit", "a unit such as \"ms\" or \"Mbit/s\"")?
            .map(str::to_string),
        integer: t.bool("integer")?.unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refit_of_some_parameters_keeps_the_others_and_the_earlier_header() {
        let text = "# Fitted by `gentle calibrate a.toml --targets t.toml`:\n# 3 of 5 targets\nname = \"x\"\n[[link]]\na = \"s\"\nb = \"c\"\ndelay = \"10ms\"\nloss = { model = \"bernoulli\", p = 0.01 }\n[[workload]]\nclient = \"c\"\nserver = \"s\"\nresponse = \"5000B\"\n[[variant]]\nname = \"v\"\n[calibrate]\n[calibrate.free]\nlink.delay = { min = 1, max = 100, unit = \"ms\" }\nlink.loss.p = { min = 0.001, max = 0.1 }\n";
        let mut c = Calibratable::parse("a.toml", text).expect("valid");
        let err = c.restrict(&["link.rate".to_string()]).unwrap_err();
        assert!(
            err.contains("expected one of: link.delay, link.loss.p"),
            "{err}"
        );
        let twice = ["link.loss.p".to_string(), "link.loss.p".to_string()];
        assert!(c.restrict(&twice).unwrap_err().contains("named twice"));
        let empty = ["link.delay".to_string(), String::new()];
        assert!(c.restrict(&empty).unwrap_err().starts_with("an empty name"));
        c.restrict(&["link.loss.p".to_string()])
            .expect("a free parameter");
        assert_eq!(c.spec.free.len(), 1);
        assert_eq!(c.start, [0.01]);
        let head = [
            "Refitted by `gentle calibrate a.toml --only link.loss.p`:".to_string(),
            "1 of 1 targets".to_string(),
        ];
        let out = c.fitted_text(&[0.02], &head, Path::new("a.toml"), true);
        assert!(out.starts_with("# Refitted by `gentle calibrate a.toml --only link.loss.p`:\n# 1 of 1 targets\n# Fitted by `gentle calibrate a.toml"), "{out}");
        assert!(
            out.contains("delay = \"10ms\"") && out.contains("p = 0.02"),
            "{out}"
        );
        // A whole refit replaces both headers.
        assert_eq!(
            without_fitted_header(&out),
            &out[out.find("name =").unwrap()..]
        );
    }

    #[test]
    fn an_earlier_fits_header_is_replaced_not_kept() {
        let old = "# Fitted by `gentle calibrate a.toml --targets t.toml`:\n# 3 of 5 targets\n# the file's own comment\nname = \"x\"\n";
        assert_eq!(
            without_fitted_header(old),
            "# the file's own comment\nname = \"x\"\n"
        );
        let plain = "# a comment\nname = \"x\"\n";
        assert_eq!(without_fitted_header(plain), plain);
    }
}
