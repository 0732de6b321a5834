//! The parsed form of a packetdrill script (the structures of google/packetdrill's
//! `script.h`, `packet.h` and `syscalls.h`, reduced to what this interpreter runs).

/// When an event happens (`event_time` in packetdrill's `parser.y`), in µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Time {
    /// `T`: since the script began.
    Absolute(i64),
    /// `+T`: since the previous event ended.
    Relative(i64),
    /// `T1~T2`.
    AbsoluteRange(i64, i64),
    /// `+T1~+T2`.
    RelativeRange(i64, i64),
    /// `*`: any time (outbound packets only).
    Any,
}

/// The IP ECN field a packet line names (`[ect0]`, `[ect1]`, `[ce]`, `[noecn]`,
/// `[ect01]`), or none to leave it unchecked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnSpec {
    /// `noecn`.
    NotEct,
    /// `ect0`.
    Ect0,
    /// `ect1`.
    Ect1,
    /// `ect01`: either ECT codepoint.
    Ect01,
    /// `ce`.
    Ce,
}

/// One TCP option of a packet line.
#[derive(Clone, Debug, PartialEq)]
pub enum TcpOpt {
    /// `nop`.
    Nop,
    /// `eol`.
    Eol,
    /// `mss N`.
    Mss(u16),
    /// `wscale N`.
    WScale(u8),
    /// `sackOK`.
    SackOk,
    /// `sack a:b c:d`.
    Sack(Vec<(u32, u32)>),
    /// `TS val V ecr E`.
    Ts(u32, u32),
    /// An option this interpreter does not model (`FO`, `md5`, `ECN`, …).
    Unsupported(String),
}

/// A `<` or `>` TCP packet line.
#[derive(Clone, Debug, PartialEq)]
pub struct PacketSpec {
    /// `>`: the engine sends it.
    pub outbound: bool,
    /// The ECN field, if the line names one.
    pub ecn: Option<EcnSpec>,
    /// Flag letters as written (`S`, `.`, `P.`, `F.`, `S.E`, `-` as empty).
    pub flags: String,
    /// Relative start sequence number.
    pub seq: u32,
    /// Payload length.
    pub len: u32,
    /// `ack N`, if given.
    pub ack: Option<u32>,
    /// `win N`, if given.
    pub win: Option<u32>,
    /// `<...>` options; `None` for `<...>` (not checked).
    pub options: Option<Vec<TcpOpt>>,
}

/// A syscall argument or result (`expression` in `parser.y`).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// `...`.
    Ellipsis,
    /// An integer (decimal or hex).
    Int(i64),
    /// A symbol such as `SOL_SOCKET` or `O_NONBLOCK`.
    Word(String),
    /// `"…"`.
    Str(String),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{a, b}` or `{name=value, …}`.
    Struct(Vec<Expr>),
    /// `a|b`, `a=b`.
    Binary(char, Box<Expr>, Box<Expr>),
    /// `f(args)`, e.g. `htons(8080)`.
    Call(String, Vec<Expr>),
}

/// As the script writes it (for messages).
impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |f: &mut std::fmt::Formatter<'_>, v: &[Expr]| -> std::fmt::Result {
            for (i, e) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{e}")?;
            }
            Ok(())
        };
        match self {
            Expr::Ellipsis => f.write_str("..."),
            Expr::Int(i) => write!(f, "{i}"),
            Expr::Word(w) => f.write_str(w),
            Expr::Str(s) => write!(f, "\"{s}\""),
            Expr::List(v) => {
                f.write_str("[")?;
                join(f, v)?;
                f.write_str("]")
            }
            Expr::Struct(v) => {
                f.write_str("{")?;
                join(f, v)?;
                f.write_str("}")
            }
            Expr::Binary(op, a, b) => write!(f, "{a}{op}{b}"),
            Expr::Call(name, v) => {
                write!(f, "{name}(")?;
                join(f, v)?;
                f.write_str(")")
            }
        }
    }
}

/// A syscall line: `name(args) = result [ERRNO (note)]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SyscallSpec {
    /// `socket`, `write`, …
    pub name: String,
    /// The arguments.
    pub args: Vec<Expr>,
    /// The expected result.
    pub result: Expr,
    /// The expected errno's name, when the result is -1.
    pub errno: Option<String>,
    /// `...T` before the name: a blocking call ending at `T` (µs).
    pub end_time: Option<i64>,
}

/// What a line does.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A packet line.
    Packet(PacketSpec),
    /// A syscall line.
    Syscall(SyscallSpec),
    /// A back-quoted shell command.
    Command(String),
    /// `%{ … }%` Python code.
    Code(String),
    /// A line of a kind this interpreter does not run (UDP, ICMP, IPv6 headers, …).
    Unsupported(String),
}

/// One event of a script.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The line of its time.
    pub line: usize,
    /// The column of its time.
    pub col: usize,
    /// When.
    pub time: Time,
    /// What.
    pub action: Action,
}

/// A whole script: its `--name=value` options and its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    /// Options at the top of the script, in order.
    pub options: Vec<(String, String, usize)>,
    /// Events in order.
    pub events: Vec<Event>,
}
