//! Scenario errors that point at the place in the file: `file:line:column`, what
//! was expected, and a suggestion for a misspelt key.

use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub expected: Option<String>,
    pub help: Option<String>,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        if let Some(e) = &self.expected {
            write!(f, "\n  expected: {e}")?;
        }
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// Source text and name, to turn byte spans into lines and columns.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// The line and column (both from 1) of byte `offset`; the column counts
    /// characters, not bytes (a `µs` before it on the line is one column each).
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[start..].chars().count() + 1)
    }

    pub fn error(&self, span: Option<Range<usize>>, message: impl Into<String>) -> ScenarioError {
        let (line, column) = self.position(span.map_or(0, |s| s.start));
        ScenarioError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
            expected: None,
            help: None,
        }
    }
}

impl ScenarioError {
    pub fn expected(mut self, e: impl Into<String>) -> Self {
        self.expected = Some(e.into());
        self
    }
    pub fn help(mut self, h: impl Into<String>) -> Self {
        self.help = Some(h.into());
        self
    }
}

/// The allowed key closest to `key`, if it is close enough to be a likely typo.
pub fn suggest<'a>(key: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|a| (strsim::damerau_levenshtein(key, a), *a))
        .filter(|(d, a)| *d <= 2.max(a.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let text = "a = 1\nrtt = \"5µs\", bad = 2\n";
        let src = Source { file: "f", text };
        let at = text.find("bad").unwrap();
        // `µ` is two bytes: the column is one less than the byte offset in the line.
        assert_eq!(src.position(at), (2, 14));
        assert_eq!(src.position(0), (1, 1));
        assert_eq!(src.position(text.len()), (3, 1));
    }
}
