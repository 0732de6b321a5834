//! Tokens of packetdrill scripts, following the rules of google/packetdrill's
//! `gtests/net/packetdrill/lexer.l`: integers (`-?[0-9]+`), hex (`0x…`), floats
//! (`-?[0-9]*\.[0-9]+`), words (`[a-zA-Z0-9_]+`), `...`, `--options`, strings,
//! back-quoted shell commands, `%{ … }%` code, `//` and `/* */` comments, and any
//! other character as itself. Every token carries its line and column (from 1).

use std::fmt;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A decimal integer, possibly negative.
    Int(i64),
    /// `0x…`.
    Hex(i64),
    /// A decimal with a point; the text is kept to convert times exactly.
    Float(f64),
    /// `[a-zA-Z0-9_]+` that is not a number.
    Word(String),
    /// `"…"`.
    Str(String),
    /// `` `…` ``: a shell command.
    Command(String),
    /// `%{ … }%`: Python code.
    Code(String),
    /// `--name` (the value follows after `=`).
    Opt(String),
    /// `...`.
    Ellipsis,
    /// Any other single character.
    Punct(char),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(i) => write!(f, "{i}"),
            Tok::Hex(i) => write!(f, "{i:#x}"),
            Tok::Float(x) => write!(f, "{x}"),
            Tok::Word(w) => write!(f, "`{w}`"),
            Tok::Str(s) => write!(f, "\"{s}\""),
            Tok::Command(_) => write!(f, "a `command`"),
            Tok::Code(_) => write!(f, "%{{ code }}%"),
            Tok::Opt(o) => write!(f, "--{o}"),
            Tok::Ellipsis => write!(f, "`...`"),
            Tok::Punct(c) => write!(f, "`{c}`"),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1 (in characters).
    pub col: usize,
}

/// A lexical or syntax error at a place in the script.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub col: usize,
    /// What is wrong.
    pub msg: String,
}

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
    line: usize,
    col: usize,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }
    fn starts(&self, p: &str) -> bool {
        p.chars().enumerate().all(|(k, c)| self.peek(k) == Some(c))
    }
    fn err(&self, line: usize, col: usize, msg: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line,
            col,
            msg: msg.into(),
        }
    }
    /// Takes characters up to and including `end`; error if the script ends first.
    fn until(&mut self, end: &str, what: &str, at: (usize, usize)) -> Result<String, SyntaxError> {
        let mut out = String::new();
        while !self.starts(end) {
            match self.bump() {
                // A backslash escapes the next character; in a back-quoted
                // command it stays, for the shell (`\` + newline continues a line).
                Some('\\') if end.len() == 1 => {
                    if end == "`" {
                        out.push('\\');
                    }
                    if let Some(c) = self.bump() {
                        out.push(c);
                    }
                }
                Some(c) => out.push(c),
                None => return Err(self.err(at.0, at.1, format!("unterminated {what}"))),
            }
        }
        for _ in 0..end.chars().count() {
            self.bump();
        }
        Ok(out)
    }
    fn skip_space_and_comments(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek(0) {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') if self.peek(1) == Some('/') => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                Some('/') if self.peek(1) == Some('*') => {
                    let at = (self.line, self.col);
                    self.until("*/", "comment", at)?;
                }
                _ => return Ok(()),
            }
        }
    }
    fn number_or_word(&mut self) -> Result<Tok, SyntaxError> {
        let (line, col) = (self.line, self.col);
        let mut text = String::new();
        if self.peek(0) == Some('-') {
            text.push('-');
            self.bump();
        }
        if self.starts("0x") || self.starts("0X") {
            self.bump();
            self.bump();
            let mut h = String::new();
            while let Some(c) = self.peek(0).filter(|c| c.is_ascii_hexdigit()) {
                h.push(c);
                self.bump();
            }
            return i64::from_str_radix(&h, 16)
                .map(Tok::Hex)
                .map_err(|_| self.err(line, col, "bad hex number"));
        }
        while let Some(c) = self
            .peek(0)
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            text.push(c);
            self.bump();
        }
        let digits = |t: &str| {
            !t.trim_start_matches('-').is_empty()
                && t.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit())
        };
        if self.peek(0) == Some('.')
            && self.peek(1).is_some_and(|c| c.is_ascii_digit())
            && (digits(&text) || text == "-" || text.is_empty())
        {
            text.push('.');
            self.bump();
            while let Some(c) = self.peek(0).filter(|c| c.is_ascii_digit()) {
                text.push(c);
                self.bump();
            }
            return text
                .parse()
                .map(Tok::Float)
                .map_err(|_| self.err(line, col, "bad number"));
        }
        if digits(&text) {
            return text
                .parse()
                .map(Tok::Int)
                .map_err(|_| self.err(line, col, "integer out of range"));
        }
        if text == "-" {
            return Ok(Tok::Punct('-'));
        }
        // An IPv6 address (`fd::1`, an option's value: lexer.l's IPV6_ADDR): hex
        // groups and colons, with `::` in it. (A sequence range `1:1001` starts with
        // digits and is lexed as numbers.)
        if text.chars().all(|c| c.is_ascii_hexdigit())
            && self.peek(0) == Some(':')
            && self.peek(1) == Some(':')
        {
            while let Some(c) = self
                .peek(0)
                .filter(|c| c.is_ascii_hexdigit() || *c == ':' || *c == '.')
            {
                text.push(c);
                self.bump();
            }
        }
        Ok(Tok::Word(text))
    }
    fn next(&mut self) -> Result<Option<Token>, SyntaxError> {
        self.skip_space_and_comments()?;
        let (line, col) = (self.line, self.col);
        let Some(c) = self.peek(0) else {
            return Ok(None);
        };
        let tok = if self.starts("...") {
            (0..3).for_each(|_| {
                self.bump();
            });
            Tok::Ellipsis
        } else if self.starts("--") && self.peek(2).is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.bump();
            self.bump();
            let mut o = String::new();
            while let Some(c) = self
                .peek(0)
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            {
                o.push(c);
                self.bump();
            }
            Tok::Opt(o)
        } else if self.starts("%{") {
            self.bump();
            self.bump();
            Tok::Code(self.until("}%", "%{ code }%", (line, col))?)
        } else if c == '"' || c == '`' {
            self.bump();
            let s = self.until(&c.to_string(), "quoted text", (line, col))?;
            if c == '"' {
                Tok::Str(s)
            } else {
                Tok::Command(s)
            }
        } else if c.is_ascii_alphanumeric()
            || c == '_'
            || (c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()))
            || (c == '-' && self.peek(1).is_some_and(|d| d.is_ascii_digit() || d == '.'))
        {
            self.number_or_word()?
        } else {
            self.bump();
            Tok::Punct(c)
        };
        Ok(Some(Token { tok, line, col }))
    }
}

/// Splits a script into tokens.
pub fn lex(src: &str) -> Result<Vec<Token>, SyntaxError> {
    let chars: Vec<char> = src.chars().collect();
    let mut l = Lexer {
        s: &chars,
        i: 0,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    while let Some(t) = l.next()? {
        let opt = matches!(t.tok, Tok::Opt(_));
        out.push(t);
        // An option's value runs to the next blank, as the shell would pass it
        // (`--local_ip=192.0.2.1`); a quoted one is a string.
        if opt
            && l.peek(0) == Some('=')
            && l.peek(1).is_some_and(|c| !c.is_whitespace() && c != '"')
        {
            let (line, col) = (l.line, l.col);
            l.bump();
            out.push(Token {
                tok: Tok::Punct('='),
                line,
                col,
            });
            let (line, col) = (l.line, l.col);
            let mut v = String::new();
            while let Some(c) = l.peek(0).filter(|c| !c.is_whitespace()) {
                v.push(c);
                l.bump();
            }
            out.push(Token {
                tok: Tok::Word(v),
                line,
                col,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn an_ipv6_address_is_one_word() {
        assert_eq!(
            toks("--local_ip=fd::1 ab"),
            [
                Tok::Opt("local_ip".into()),
                Tok::Punct('='),
                Tok::Word("fd::1".into()),
                Tok::Word("ab".into())
            ]
        );
    }

    #[test]
    fn numbers_words_and_punctuation() {
        use Tok::*;
        assert_eq!(
            toks("+.1 < S. 0:0(0) win 32792 <mss 1460,sackOK> // c"),
            vec![
                Punct('+'),
                Float(0.1),
                Punct('<'),
                Word("S".into()),
                Punct('.'),
                Int(0),
                Punct(':'),
                Int(0),
                Punct('('),
                Int(0),
                Punct(')'),
                Word("win".into()),
                Int(32792),
                Punct('<'),
                Word("mss".into()),
                Int(1460),
                Punct(','),
                Word("sackOK".into()),
                Punct('>'),
            ]
        );
        assert_eq!(
            toks("= -1 0x2 ... --tolerance_usecs=7")[1..4],
            [Int(-1), Hex(2), Ellipsis]
        );
        assert_eq!(
            toks("`a\nb` %{ x }%"),
            vec![Command("a\nb".into()), Code(" x ".into())]
        );
        // A back-quoted command keeps its backslashes for the shell.
        assert_eq!(toks("`a \\\n\tb`"), vec![Command("a \\\n\tb".into())]);
    }

    #[test]
    fn positions_and_errors() {
        let t = lex("0 a\n /* x\n */ +1").unwrap();
        assert_eq!((t[2].line, t[2].col), (3, 5));
        let e = lex("0 `open").unwrap_err();
        assert_eq!((e.line, e.col), (1, 3));
    }
}
