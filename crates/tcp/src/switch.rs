//! What a configuration switch is, apart from any one switch: the values it takes
//! ([`SwitchKind`]), a value as a scenario file spells it ([`SwitchValue`]), and the
//! checks and spelling shared by every switch. The switches themselves are the rows of
//! the table in [`config`](crate::config).

use std::fmt::Write as _;
use std::time::Duration;

/// The values a switch takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchKind {
    /// `true` or `false`.
    Flag,
    /// `"on"`, `"off"`, `true` or `false`.
    OnOff,
    /// An integer from `min` to `max`.
    Int {
        /// Smallest.
        min: i64,
        /// Largest.
        max: i64,
    },
    /// A duration, like `"200ms"`.
    Duration,
    /// A duration, or `"off"` for none.
    DurationOrOff,
    /// A size in bytes from `min` to `max`, like `"64KiB"`.
    Bytes {
        /// Smallest.
        min: u64,
        /// Largest.
        max: u64,
    },
    /// One of `names`; `what` says what the names name, for error messages.
    Choice {
        /// What the names name.
        what: &'static str,
        /// The names.
        names: &'static [&'static str],
    },
    /// Not a switch a scenario sets: fixed at the Linux value, or set by the program
    /// (the trace).
    Fixed,
}

/// A switch's value as a scenario file spells it, durations and sizes parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SwitchValue<'a> {
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A duration.
    Duration(Duration),
    /// A size in bytes.
    Bytes(u64),
    /// A name: one of a [`SwitchKind::Choice`], `"on"` or `"off"`.
    Name(&'a str),
}

/// One row of the switch table.
#[derive(Clone, Copy, Debug)]
pub struct Switch {
    /// The field of [`Config`](crate::Config), and the key in a scenario file.
    pub name: &'static str,
    /// What values it takes.
    pub kind: SwitchKind,
    /// The field's documentation, one line per doc-comment line.
    pub doc: &'static str,
}

/// Why a value does not fit a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchError {
    /// What is wrong with the value.
    pub message: String,
    /// What the switch takes, as [`Switch::expected`] says it.
    pub expected: String,
    /// The names a misspelt name may have meant (empty unless the value was a name).
    pub names: &'static [&'static str],
}

impl std::fmt::Display for SwitchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (expected {})", self.message, self.expected)
    }
}

impl std::error::Error for SwitchError {}

impl SwitchKind {
    /// What the switch takes, in words: `"reno" or "cubic"`, `an integer from 1 to 2`.
    pub fn expected(&self) -> String {
        match *self {
            SwitchKind::Flag => "true or false".into(),
            SwitchKind::OnOff => "\"on\", \"off\", true or false".into(),
            SwitchKind::Int { min, max } => format!("an integer from {min} to {max}"),
            SwitchKind::Duration => "a duration like \"200ms\" or \"1.5s\"".into(),
            SwitchKind::DurationOrOff => "a duration like \"40ms\", or \"off\"".into(),
            SwitchKind::Bytes { min, max } => format!(
                "a size from {} to {}, like \"64KiB\"",
                show_bytes(min),
                show_bytes(max)
            ),
            SwitchKind::Choice { names, .. } => quoted_list(names),
            SwitchKind::Fixed => "nothing: it is not a switch".into(),
        }
    }

    /// The values in short, for the README's table: `"reno", "cubic"`, `1–1000`.
    pub fn values(&self) -> String {
        match *self {
            SwitchKind::Flag => "`true`, `false`".into(),
            SwitchKind::OnOff => "`\"on\"`, `\"off\"` (or `true`, `false`)".into(),
            SwitchKind::Int { min, max } => format!("{min}–{max}"),
            SwitchKind::Duration => "a duration".into(),
            SwitchKind::DurationOrOff => "a duration or `\"off\"`".into(),
            SwitchKind::Bytes { min, max } => {
                format!("a size, {}–{}", show_bytes(min), show_bytes(max))
            }
            SwitchKind::Choice { names, .. } => {
                let mut s = String::new();
                for (i, n) in names.iter().enumerate() {
                    if i > 0 {
                        s += ", ";
                    }
                    let _ = write!(s, "`\"{n}\"`");
                }
                s
            }
            SwitchKind::Fixed => String::new(),
        }
    }
}

/// `"a", "b" or "c"`.
fn quoted_list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    match q.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A duration as a scenario file writes it: `"200ms"`, `"1s"`, `"1.5s"`.
pub fn show_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0ms".into()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// A size as a scenario file writes it: `"536B"`, `"64KiB"`, `"6MiB"`.
pub fn show_bytes(b: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if b >= size && b.is_multiple_of(size) {
            return format!("{}{unit}", b / size);
        }
    }
    format!("{b}B")
}

impl Switch {
    /// What the switch takes, in words.
    pub fn expected(&self) -> String {
        self.kind.expected()
    }

    /// The documentation as one line.
    pub fn doc_line(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn error(&self, message: String) -> SwitchError {
        SwitchError {
            message,
            expected: self.expected(),
            names: &[],
        }
    }

    /// Whether `v` is a value of this switch: the right type, in range, a known
    /// name.
    pub fn check(&self, v: SwitchValue<'_>) -> Result<(), SwitchError> {
        use SwitchKind as K;
        use SwitchValue as V;
        match (self.kind, v) {
            (K::Fixed, _) => Err(self.error(format!("`{}` is not a switch", self.name))),
            (K::Flag, V::Bool(_)) | (K::OnOff, V::Bool(_)) => Ok(()),
            (K::OnOff, V::Name("on" | "off")) => Ok(()),
            (K::OnOff, V::Name(x)) => Err(SwitchError {
                names: &["on", "off"],
                ..self.error(format!("unknown value `{x}`"))
            }),
            (K::Int { min, max }, V::Int(i)) => {
                if (min..=max).contains(&i) {
                    Ok(())
                } else {
                    Err(self.error(format!("{i} is out of range")))
                }
            }
            (K::Duration, V::Duration(_)) => Ok(()),
            (K::DurationOrOff, V::Duration(_) | V::Name("off")) => Ok(()),
            (K::Bytes { min, max }, V::Bytes(b)) => {
                if (min..=max).contains(&b) {
                    Ok(())
                } else {
                    Err(self.error(format!("{b} bytes is out of range")))
                }
            }
            (K::Choice { what, names }, V::Name(x)) => {
                if names.contains(&x) {
                    Ok(())
                } else {
                    Err(SwitchError {
                        names,
                        ..self.error(format!("unknown {what} `{x}`"))
                    })
                }
            }
            _ => Err(self.error("wrong type".into())),
        }
    }

    /// `v` in this switch's terms: a size for a size switch.
    pub fn shape(&self, v: SwitchValue<'static>) -> SwitchValue<'static> {
        match (self.kind, v) {
            (SwitchKind::Bytes { .. }, SwitchValue::Int(i)) => SwitchValue::Bytes(i as u64),
            _ => v,
        }
    }

    /// `v` as a scenario file writes it: `true`, `10`, `"200ms"`, `"off"`, `"cubic"`.
    pub fn show(&self, v: SwitchValue<'_>) -> String {
        match (self.kind, v) {
            (SwitchKind::OnOff, SwitchValue::Bool(b)) => {
                format!("\"{}\"", if b { "on" } else { "off" })
            }
            (_, SwitchValue::Bool(b)) => b.to_string(),
            (_, SwitchValue::Int(i)) => i.to_string(),
            (_, SwitchValue::Duration(d)) => format!("\"{}\"", show_duration(d)),
            (_, SwitchValue::Bytes(b)) => format!("\"{}\"", show_bytes(b)),
            (_, SwitchValue::Name(n)) => format!("\"{n}\""),
        }
    }
}

/// A field type of [`Config`](crate::Config): converts to and from a switch value.
pub trait SwitchField: Sized {
    /// The field's value from a checked switch value.
    fn from_value(v: SwitchValue<'_>) -> Option<Self>;
    /// The field's value as a switch value.
    fn to_value(&self) -> SwitchValue<'static>;
}

impl SwitchField for bool {
    fn from_value(v: SwitchValue<'_>) -> Option<Self> {
        match v {
            SwitchValue::Bool(b) => Some(b),
            SwitchValue::Name("on") => Some(true),
            SwitchValue::Name("off") => Some(false),
            _ => None,
        }
    }
    fn to_value(&self) -> SwitchValue<'static> {
        SwitchValue::Bool(*self)
    }
}

macro_rules! int_field {
    ($($t:ty),*) => {$(
        impl SwitchField for $t {
            fn from_value(v: SwitchValue<'_>) -> Option<Self> {
                match v {
                    SwitchValue::Int(i) => <$t>::try_from(i).ok(),
                    SwitchValue::Bytes(b) => <$t>::try_from(b).ok(),
                    _ => None,
                }
            }
            fn to_value(&self) -> SwitchValue<'static> {
                SwitchValue::Int(i64::from(*self))
            }
        }
    )*};
}
int_field!(u16, u32);

impl SwitchField for Duration {
    fn from_value(v: SwitchValue<'_>) -> Option<Self> {
        match v {
            SwitchValue::Duration(d) => Some(d),
            _ => None,
        }
    }
    fn to_value(&self) -> SwitchValue<'static> {
        SwitchValue::Duration(*self)
    }
}

impl SwitchField for Option<Duration> {
    fn from_value(v: SwitchValue<'_>) -> Option<Self> {
        match v {
            SwitchValue::Duration(d) => Some(Some(d)),
            SwitchValue::Name("off") => Some(None),
            _ => None,
        }
    }
    fn to_value(&self) -> SwitchValue<'static> {
        match self {
            Some(d) => SwitchValue::Duration(*d),
            None => SwitchValue::Name("off"),
        }
    }
}
