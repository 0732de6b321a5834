//! Typed reading of one TOML table with spans: every key is checked against the
//! list the table allows before any value is read.

use std::ops::Range;

use toml_edit::{Item, TableLike, Value};

use super::error::{ScenarioError, Source, suggest};
use crate::units;

/// A string of a file and where it is written (its span), if known.
pub type Spanned<'a> = (&'a str, Option<Range<usize>>);

pub type Result<T> = std::result::Result<T, ScenarioError>;

pub struct Table<'a> {
    pub src: Source<'a>,
    pub t: &'a dyn TableLike,
    pub span: Option<Range<usize>>,
    pub name: String,
}

impl<'a> Table<'a> {
    pub fn new(
        src: Source<'a>,
        t: &'a dyn TableLike,
        span: Option<Range<usize>>,
        name: impl Into<String>,
    ) -> Self {
        Table {
            src,
            t,
            span,
            name: name.into(),
        }
    }

    /// Rejects keys not in `allowed`, suggesting the nearest allowed key.
    pub fn check_keys(&self, allowed: &[&str]) -> Result<()> {
        for (k, _) in self.t.iter() {
            if !allowed.contains(&k) {
                let span = self.t.get_key_value(k).and_then(|(key, _)| key.span());
                let mut e = self
                    .src
                    .error(span, format!("unknown key `{k}` in {}", self.name))
                    .expected(format!("one of {}", allowed.join(", ")));
                if let Some(s) = suggest(k, allowed) {
                    e = e.help(format!("did you mean `{s}`?"));
                }
                return Err(e);
            }
        }
        Ok(())
    }

    pub fn item(&self, key: &str) -> Option<&'a Item> {
        self.t.get(key)
    }

    pub fn key_span(&self, key: &str) -> Option<Range<usize>> {
        self.t.get_key_value(key).and_then(|(k, _)| k.span())
    }

    pub fn item_span(&self, key: &str) -> Option<Range<usize>> {
        match self.t.get(key)? {
            Item::Value(v) => v.span(),
            Item::Table(t) => t.span(),
            i => i.span(),
        }
        .or_else(|| self.key_span(key))
    }

    pub fn missing(&self, key: &str, expected: &str) -> ScenarioError {
        self.src
            .error(
                self.span.clone(),
                format!("missing key `{key}` in {}", self.name),
            )
            .expected(expected.to_string())
    }

    pub fn bad(&self, key: &str, msg: impl Into<String>, expected: &str) -> ScenarioError {
        self.src
            .error(
                self.item_span(key),
                format!("`{key}` in {}: {}", self.name, msg.into()),
            )
            .expected(expected.to_string())
    }

    fn value(&self, key: &str) -> Option<&'a Value> {
        self.item(key).and_then(|i| i.as_value())
    }

    pub fn str(&self, key: &str, expected: &str) -> Result<Option<&'a str>> {
        match self.item(key) {
            None => Ok(None),
            Some(i) => i
                .as_str()
                .map(Some)
                .ok_or_else(|| self.bad(key, "wrong type", expected)),
        }
    }

    pub fn req_str(&self, key: &str, expected: &str) -> Result<&'a str> {
        self.str(key, expected)?
            .ok_or_else(|| self.missing(key, expected))
    }

    pub fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.item(key) {
            None => Ok(None),
            Some(i) => i
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.bad(key, "wrong type", "true or false")),
        }
    }

    pub fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>> {
        let expected = format!("an integer from {min} to {max}");
        match self.item(key) {
            None => Ok(None),
            Some(i) => {
                let v = i
                    .as_integer()
                    .ok_or_else(|| self.bad(key, "wrong type", &expected))?;
                if v < min || v > max {
                    return Err(self.bad(key, format!("{v} is out of range"), &expected));
                }
                Ok(Some(v))
            }
        }
    }

    /// A probability in [0, 1].
    pub fn prob(&self, key: &str) -> Result<Option<f64>> {
        let expected = "a probability from 0 to 1, like 0.02";
        match self.value(key) {
            None if self.item(key).is_none() => Ok(None),
            None => Err(self.bad(key, "wrong type", expected)),
            Some(v) => {
                let p = v
                    .as_float()
                    .or_else(|| v.as_integer().map(|i| i as f64))
                    .ok_or_else(|| self.bad(key, "wrong type", expected))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(self.bad(key, format!("{p} is out of range"), expected));
                }
                Ok(Some(p))
            }
        }
    }

    pub fn req_prob(&self, key: &str) -> Result<f64> {
        self.prob(key)?
            .ok_or_else(|| self.missing(key, "a probability from 0 to 1"))
    }

    pub fn float(&self, key: &str, expected: &str) -> Result<Option<f64>> {
        match self.value(key) {
            None if self.item(key).is_none() => Ok(None),
            None => Err(self.bad(key, "wrong type", expected)),
            Some(v) => v
                .as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .map(Some)
                .ok_or_else(|| self.bad(key, "wrong type", expected)),
        }
    }

    fn unit<T>(
        &self,
        key: &str,
        expected: &str,
        f: fn(&str) -> std::result::Result<T, String>,
    ) -> Result<Option<T>> {
        match self.str(key, expected)? {
            None => Ok(None),
            Some(s) => f(s).map(Some).map_err(|m| self.bad(key, m, expected)),
        }
    }

    pub fn duration(&self, key: &str) -> Result<Option<std::time::Duration>> {
        self.unit(
            key,
            "a duration like \"200ms\" or \"1.5s\"",
            units::duration,
        )
    }
    pub fn bytes(&self, key: &str) -> Result<Option<u64>> {
        self.unit(
            key,
            "a size like \"40B\", \"16KiB\" or \"7.5KB\"",
            units::bytes,
        )
    }

    /// A sub-table (`[x.key]` or an inline table).
    pub fn sub(&self, key: &str, expected: &str) -> Result<Option<Table<'a>>> {
        match self.item(key) {
            None => Ok(None),
            Some(i) => {
                let t = i
                    .as_table_like()
                    .ok_or_else(|| self.bad(key, "wrong type", expected))?;
                Ok(Some(Table::new(
                    self.src,
                    t,
                    self.item_span(key),
                    format!("{}.{key}", self.name),
                )))
            }
        }
    }

    /// An array of strings, with each element's span.
    pub fn str_array(&self, key: &str, expected: &str) -> Result<Option<Vec<Spanned<'a>>>> {
        match self.item(key) {
            None => Ok(None),
            Some(i) => {
                let a = i
                    .as_array()
                    .ok_or_else(|| self.bad(key, "wrong type", expected))?;
                let mut out = Vec::new();
                for v in a.iter() {
                    let s = v.as_str().ok_or_else(|| {
                        self.src
                            .error(v.span(), format!("`{key}`: wrong element type"))
                            .expected(expected.to_string())
                    })?;
                    out.push((s, v.span()));
                }
                Ok(Some(out))
            }
        }
    }

    pub fn int_array(&self, key: &str, min: i64) -> Result<Option<Vec<i64>>> {
        let expected = format!("an array of integers ≥ {min}");
        match self.item(key) {
            None => Ok(None),
            Some(i) => {
                let a = i
                    .as_array()
                    .ok_or_else(|| self.bad(key, "wrong type", &expected))?;
                let mut out = Vec::new();
                for v in a.iter() {
                    let n = v.as_integer().filter(|n| *n >= min).ok_or_else(|| {
                        self.src
                            .error(v.span(), format!("`{key}`: bad element"))
                            .expected(expected.clone())
                    })?;
                    out.push(n);
                }
                Ok(Some(out))
            }
        }
    }
}
