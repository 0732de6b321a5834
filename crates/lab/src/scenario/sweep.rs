//! `[sweep]`: a grid of parameter values over one scenario. Each axis is a table of
//! `[sweep]`; a point of the grid takes one value of every axis, sets the keys those
//! values name in a copy of the scenario, and is read and checked like any scenario
//! file — a bad value is reported at its place in the sweep table. Every point is a
//! scenario of its own with its own seed, so it can run alone, anywhere, in any
//! order, and give the same result.
//!
//! ```toml
//! [sweep]
//! seed = "derived"                  # or "scenario"
//! [sweep.drops]                     # an axis of plain values: one key, an array
//! link.a_to_b.loss.n = [0, 1, 2]
//! [sweep.network.mobile]            # an axis of named points: keys to set
//! link.rate = "7.2Mbit/s"
//! trials = 100
//! ```

use std::ops::Range;

use toml_edit::{Item, Key, TableLike, Value};

use super::error::{ScenarioError, Source};
use super::reader::{Result, Table};
use super::{Scenario, parse_doc};

/// How the points' seeds are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seeding {
    /// From the scenario's seed and the point's coordinates ([`point_seed`]).
    Derived,
    /// Every point runs from the scenario's seed.
    Scenario,
}

/// One axis of the grid: its name and the labels of its values, in file order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axis {
    pub name: String,
    pub labels: Vec<String>,
}

/// One point of the grid.
#[derive(Clone, Debug)]
pub struct Point {
    /// `(axis, label)` for every axis, in axis order (also `scenario.point`).
    pub coords: Vec<(String, String)>,
    /// The seed the point sets itself with a `seed` key, if it does.
    pub own_seed: Option<u64>,
    /// The point's scenario; its `seed` is the point's seed.
    pub scenario: Scenario,
}

impl Point {
    /// The coordinates as `--point` takes them: `axis=label,axis=label`.
    pub fn label(&self) -> String {
        coords_label(&self.coords, ",")
    }

    /// The label of axis `axis` at this point.
    pub fn at(&self, axis: &str) -> Option<&str> {
        self.coords
            .iter()
            .find(|(a, _)| a == axis)
            .map(|(_, l)| l.as_str())
    }
}

/// A scenario file's points: one point without coordinates when the file has no
/// `[sweep]`, else every point of the grid, the first axis outermost.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    /// The scenario's seed, from which the points' seeds derive.
    pub seed: u64,
    pub seeding: Seeding,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
}

/// The seed of a point under [`Seeding::Derived`]: FNV-1a (64-bit) over the bytes
/// `axis=label` followed by a zero byte for every coordinate, in the order of the
/// axis names; XORed with the scenario's seed, mixed by SplitMix64's finaliser, and
/// kept to 63 bits so that it can be written as a scenario's `seed`. It depends on
/// the point's coordinates alone — not on where the point sits in the grid, nor on
/// the order in which axes and values are written.
pub fn point_seed(seed: u64, coords: &[(String, String)]) -> u64 {
    let mut sorted: Vec<&(String, String)> = coords.iter().collect();
    sorted.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (axis, label) in sorted {
        for b in axis.bytes().chain([b'=']).chain(label.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    let mut z = seed ^ h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & (i64::MAX as u64)
}

fn coords_label(coords: &[(String, String)], sep: &str) -> String {
    coords
        .iter()
        .map(|(a, l)| format!("{a}={l}"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// One key a sweep value sets: its path in the scenario, where it was written, and
/// the value.
pub(super) struct Setting {
    pub(super) path: Vec<String>,
    pub(super) span: Option<Range<usize>>,
    /// The last key as written (a key the scenario lacks is added with it, so an
    /// error about it points here).
    key: Option<Key>,
    value: Item,
}

/// One value of an axis.
struct AxisValue {
    label: String,
    settings: Vec<Setting>,
}

impl Sweep {
    /// Reads a scenario file with or without a `[sweep]`; every point is read and
    /// checked before this returns.
    pub fn parse(file: &str, text: &str) -> std::result::Result<Sweep, ScenarioError> {
        let src = Source { file, text };
        let doc = super::parse_toml(src)?;
        let root = super::base::with_base(src, doc.as_table())?;
        let root = root.as_ref();
        let Some(item) = root.get("sweep") else {
            let scenario = parse_doc(src, root)?;
            return Ok(Sweep {
                name: scenario.name.clone(),
                seed: scenario.seed,
                seeding: Seeding::Scenario,
                axes: Vec::new(),
                points: vec![Point {
                    coords: Vec::new(),
                    own_seed: None,
                    scenario,
                }],
            });
        };
        let top = Table::new(src, root, Some(0..0), "the scenario");
        let name = top
            .str("name", "a string")?
            .unwrap_or("scenario")
            .to_string();
        let seed = top.int("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
        let table = item.as_table_like().ok_or_else(|| {
            top.bad(
                "sweep",
                "wrong type",
                "a table of axes, written [sweep] and [sweep.AXIS]",
            )
        })?;
        let st = Table::new(src, table, top.item_span("sweep"), "[sweep]");
        let seeding = match st.str("seed", "\"derived\" or \"scenario\"")? {
            None | Some("derived") => Seeding::Derived,
            Some("scenario") => Seeding::Scenario,
            Some(x) => {
                return Err(st.bad(
                    "seed",
                    format!("unknown seeding `{x}`"),
                    "\"derived\" or \"scenario\"",
                ));
            }
        };
        let mut axes: Vec<(Axis, Vec<AxisValue>)> = Vec::new();
        for (key, item) in table.iter() {
            if key == "seed" {
                continue;
            }
            let values = parse_axis(&st, key, item)?;
            let axis = Axis {
                name: key.to_string(),
                labels: values.iter().map(|v| v.label.clone()).collect(),
            };
            axes.push((axis, values));
        }
        if axes.is_empty() {
            return Err(st
                .src
                .error(st.span.clone(), "[sweep] has no axis")
                .expected("an axis, such as [sweep.drops] with `link.a_to_b.loss.n = [0, 1, 2]`"));
        }
        let mut base = root.clone();
        base.remove("sweep");
        let mut points = Vec::new();
        let mut index = vec![0usize; axes.len()];
        loop {
            let chosen: Vec<(&str, &AxisValue)> = axes
                .iter()
                .zip(&index)
                .map(|((a, vs), &i)| (a.name.as_str(), &vs[i]))
                .collect();
            points.push(point(src, &base, &name, seed, seeding, &chosen)?);
            // The next index, the last axis innermost.
            let mut k = axes.len();
            loop {
                if k == 0 {
                    let axes = axes.into_iter().map(|(a, _)| a).collect();
                    return Ok(Sweep {
                        name,
                        seed,
                        seeding,
                        axes,
                        points,
                    });
                }
                k -= 1;
                index[k] += 1;
                if index[k] < axes[k].1.len() {
                    break;
                }
                index[k] = 0;
            }
        }
    }

    /// Gives the sweep another seed (`--seed`): points without a seed of their own
    /// take theirs from it by the sweep's rule.
    pub fn reseed(&mut self, seed: u64) {
        self.seed = seed;
        for p in &mut self.points {
            if p.own_seed.is_none() {
                p.scenario.seed = match self.seeding {
                    Seeding::Derived if !p.coords.is_empty() => point_seed(seed, &p.coords),
                    _ => seed,
                };
            }
        }
    }

    /// Keeps only the points that match `spec`, `axis=label` pairs separated by
    /// commas (`--point`); axes it does not name may take any value.
    pub fn select(&mut self, spec: &str) -> std::result::Result<(), String> {
        if self.axes.is_empty() {
            return Err(format!(
                "{} has no [sweep], so no points to choose",
                self.name
            ));
        }
        let mut want = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (axis, label) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected AXIS=VALUE"))?;
            let (axis, label) = (axis.trim(), label.trim());
            let a = self.axes.iter().find(|a| a.name == axis).ok_or_else(|| {
                let names: Vec<&str> = self.axes.iter().map(|a| a.name.as_str()).collect();
                format!("no axis `{axis}` (the axes: {})", names.join(", "))
            })?;
            if !a.labels.iter().any(|l| l == label) {
                return Err(format!(
                    "axis `{axis}` has no value `{label}` (its values: {})",
                    a.labels.join(", ")
                ));
            }
            want.push((axis.to_string(), label.to_string()));
        }
        if want.is_empty() {
            return Err("an empty --point: expected AXIS=VALUE[,AXIS=VALUE...]".to_string());
        }
        self.points
            .retain(|p| want.iter().all(|(a, l)| p.at(a) == Some(l.as_str())));
        Ok(())
    }

    /// The point with these coordinates.
    pub fn point(&self, coords: &[(&str, &str)]) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| coords.iter().all(|(a, l)| p.at(a) == Some(*l)))
    }
}

/// Reads axis `key`: `KEY = [values]` (one key, an array), or named points
/// `LABEL = { KEY = value, ... }` / `[sweep.AXIS.LABEL]`.
fn parse_axis<'a>(st: &Table<'a>, key: &str, item: &'a Item) -> Result<Vec<AxisValue>> {
    let expected = "an axis: `KEY = [values]`, or named points `LABEL = { KEY = value, ... }`";
    let span = st.item_span(key);
    let t = item
        .as_table_like()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| st.bad(key, "not an axis", expected))?;
    let named = t
        .iter()
        .all(|(_, i)| i.as_table_like().is_some_and(|t| !t.is_dotted()));
    let mut out: Vec<AxisValue> = Vec::new();
    if named {
        for (label, i) in t.iter() {
            let label_span = t.key(label).and_then(|k| k.span()).or(span.clone());
            if out.iter().any(|v| v.label == label) {
                return Err(st
                    .src
                    .error(
                        label_span,
                        format!("axis `{key}`: value `{label}` is named twice"),
                    )
                    .expected("a unique name"));
            }
            let mut settings = Vec::new();
            flatten(
                i.as_table_like().expect("checked"),
                &mut Vec::new(),
                &mut settings,
            );
            if settings.is_empty() {
                return Err(st
                    .src
                    .error(label_span, format!("axis `{key}`: `{label}` sets nothing"))
                    .expected("keys to set, like `link.rate = \"10Mbit/s\"`"));
            }
            out.push(AxisValue {
                label: label.to_string(),
                settings,
            });
        }
        return Ok(out);
    }
    let mut settings = Vec::new();
    flatten(t, &mut Vec::new(), &mut settings);
    let [one] = settings.as_slice() else {
        return Err(st
            .src
            .error(
                span,
                format!(
                    "axis `{key}`: {} keys, none of them named points",
                    settings.len()
                ),
            )
            .expected(expected.to_string())
            .help("an axis of plain values sets one key; to set several, name each point"));
    };
    let Some(values) = one.value.as_array() else {
        return Err(st
            .src
            .error(
                one.value.span().or(one.span.clone()),
                format!("axis `{key}`: `{}` is not an array", one.path.join(".")),
            )
            .expected(expected.to_string()));
    };
    if values.is_empty() {
        return Err(st
            .src
            .error(values.span(), format!("axis `{key}` has no values"))
            .expected("at least one value"));
    }
    for v in values.iter() {
        let label = label_of(v);
        if out.iter().any(|o| o.label == label) {
            return Err(st
                .src
                .error(
                    v.span(),
                    format!("axis `{key}`: value `{label}` appears twice"),
                )
                .expected("distinct values"));
        }
        out.push(AxisValue {
            label,
            settings: vec![Setting {
                path: one.path.clone(),
                span: one.span.clone(),
                key: one.key.clone(),
                value: Item::Value(v.clone()),
            }],
        });
    }
    Ok(out)
}

/// The keys a table sets, following dotted keys (`link.rate = ...`) into paths.
pub(super) fn flatten(t: &dyn TableLike, prefix: &mut Vec<String>, out: &mut Vec<Setting>) {
    for (k, i) in t.iter() {
        prefix.push(k.to_string());
        match i.as_table_like() {
            Some(sub) if sub.is_dotted() => flatten(sub, prefix, out),
            _ => out.push(Setting {
                path: prefix.clone(),
                span: t.key(k).and_then(|k| k.span()),
                key: t.key(k).cloned(),
                value: i.clone(),
            }),
        }
        prefix.pop();
    }
}

/// A value's label: a string's text, a number or boolean as written, anything else
/// in TOML's inline form.
fn label_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        Value::Integer(i) => i.value().to_string(),
        Value::Float(f) => f.value().to_string(),
        Value::Boolean(b) => b.value().to_string(),
        Value::Datetime(d) => d.value().to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::InlineTable(t) => format!(
            "{{ {} }}",
            t.iter()
                .map(|(k, v)| format!("{k} = {}", inline(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{:?}", s.value()),
        other => label_of(other),
    }
}

/// Builds and reads one point.
fn point(
    src: Source<'_>,
    base: &toml_edit::Table,
    name: &str,
    seed: u64,
    seeding: Seeding,
    chosen: &[(&str, &AxisValue)],
) -> Result<Point> {
    let coords: Vec<(String, String)> = chosen
        .iter()
        .map(|(a, v)| (a.to_string(), v.label.clone()))
        .collect();
    let at = coords_label(&coords, ", ");
    let mut root = base.clone();
    let mut keep: Option<&Setting> = None;
    let mut own_seed = None;
    for (_, v) in chosen {
        for s in &v.settings {
            if s.path == ["variants"] {
                keep = Some(s);
                continue;
            }
            if s.path == ["sweep"] {
                return Err(src
                    .error(s.span.clone(), "a sweep point cannot set `sweep`")
                    .expected("keys of the scenario"));
            }
            set(&mut root, s).map_err(|m| {
                src.error(s.span.clone(), format!("`{}`: {m}", s.path.join(".")))
                    .expected("the dotted path of a key of the scenario, such as `link.rate` or `variant.2.tlp`")
            })?;
            if s.path == ["seed"] {
                own_seed = s.value.as_integer().map(|i| i as u64);
            }
        }
    }
    let mut scenario = parse_doc(src, &root).map_err(|mut e| {
        e.message += &format!(" (at sweep point {at})");
        e
    })?;
    if let Some(s) = keep {
        filter_variants(src, &mut scenario, s)?;
    }
    scenario.name = format!("{name} {}", coords_label(&coords, " "));
    scenario.seed = match (own_seed, seeding) {
        (Some(s), _) => s,
        (None, Seeding::Derived) => point_seed(seed, &coords),
        (None, Seeding::Scenario) => seed,
    };
    scenario.point = coords.clone();
    Ok(Point {
        coords,
        own_seed,
        scenario,
    })
}

/// `variants = ["a", "b"]`: the variants that run at this point, in file order.
fn filter_variants(src: Source<'_>, scn: &mut Scenario, s: &Setting) -> Result<()> {
    let expected = "an array of variant names";
    let bad = |span, m: String| src.error(span, m).expected(expected.to_string());
    let a = s
        .value
        .as_array()
        .ok_or_else(|| bad(s.value.span(), "`variants`: wrong type".to_string()))?;
    let mut names = Vec::new();
    for v in a.iter() {
        let n = v
            .as_str()
            .ok_or_else(|| bad(v.span(), "`variants`: wrong element type".to_string()))?;
        if !scn.variants.iter().any(|x| x.name == n) {
            let known: Vec<&str> = scn.variants.iter().map(|x| x.name.as_str()).collect();
            return Err(bad(v.span(), format!("`variants`: no variant named `{n}`"))
                .help(format!("the variants: {}", known.join(", "))));
        }
        names.push(n);
    }
    if names.is_empty() {
        return Err(bad(a.span(), "`variants` is empty".to_string()));
    }
    scn.variants.retain(|v| names.contains(&v.name.as_str()));
    Ok(())
}

/// Sets the key at dotted `path` to `value` in a scenario's tables, by the rules of
/// a sweep value ([`set`]); `gentle calibrate` sets its candidates' values so.
pub(crate) fn set_path(
    root: &mut toml_edit::Table,
    path: &[String],
    value: Item,
) -> std::result::Result<(), String> {
    set(
        root,
        &Setting {
            path: path.to_vec(),
            span: None,
            key: None,
            value,
        },
    )
}

/// Sets one key in the scenario's tables. A `[[table]]` is chosen by number from 1
/// (`link.2.rate`), by its `name` (`variant.TLP.tlp`), or is the only one
/// (`link.rate`); the tables on the way must exist, the last key need not.
pub(super) fn set(root: &mut toml_edit::Table, s: &Setting) -> std::result::Result<(), String> {
    let (last, path) = s.path.split_last().expect("a key");
    let cur = parent_of(root, path, last)?;
    let value = s.value.clone();
    match cur.get_mut(last) {
        Some(old) => {
            if old.is_array_of_tables() {
                return Err(format!("[[{last}]] tables cannot be set; set their keys"));
            }
            *old = value;
        }
        None => match &s.key {
            Some(k) => {
                cur.entry_format(k).or_insert(value);
            }
            None => {
                cur.insert(last, value);
            }
        },
    }
    Ok(())
}

/// The value at dotted `path` in a scenario's tables, chosen as [`set`] chooses.
pub(crate) fn get_path<'a>(root: &'a mut toml_edit::Table, path: &[String]) -> Option<&'a Item> {
    let (last, path) = path.split_last()?;
    let cur = parent_of(root, path, last).ok()?;
    cur.get(last)
}

/// The table that holds key `last` under `path`.
fn parent_of<'a>(
    root: &'a mut toml_edit::Table,
    path: &[String],
    last: &str,
) -> std::result::Result<&'a mut dyn TableLike, String> {
    let mut cur: &mut dyn TableLike = root;
    let mut i = 0;
    while i < path.len() {
        let seg = &path[i];
        let item = cur
            .get_mut(seg)
            .ok_or_else(|| format!("the scenario has no `{}`", path[..=i].join(".")))?;
        if item.is_array_of_tables() {
            let arr = item.as_array_of_tables_mut().expect("checked");
            let n = arr.len();
            // The element: by number, by name, or the only one.
            let by = |tables: &toml_edit::ArrayOfTables, key: &str| -> Option<usize> {
                if let Ok(k) = key.parse::<usize>() {
                    return (1..=n).contains(&k).then(|| k - 1);
                }
                tables
                    .iter()
                    .position(|t| t.get("name").and_then(|v| v.as_str()) == Some(key))
            };
            let next = path.get(i + 1).map(String::as_str).unwrap_or(last);
            let (idx, used) = match by(arr, next) {
                Some(k) => (k, true),
                None if n == 1 => (0, false),
                None => {
                    return Err(format!(
                        "there are {n} [[{seg}]] tables and none is `{next}`: choose one by number from 1 or by name, as `{seg}.1.{last}`"
                    ));
                }
            };
            if used && i + 1 == path.len() {
                return Err(format!(
                    "a whole [[{seg}]] table cannot be set; set its keys"
                ));
            }
            cur = arr.get_mut(idx).expect("in range");
            i += if used { 2 } else { 1 };
            continue;
        }
        cur = item
            .as_table_like_mut()
            .ok_or_else(|| format!("`{}` is not a table", path[..=i].join(".")))?;
        i += 1;
    }
    Ok(cur)
}
