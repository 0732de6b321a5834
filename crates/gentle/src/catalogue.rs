//! The built-in experiments of `gentle reproduce`: scenarios shipped with gentle.
//! Until the mechanism experiments of the papers land, the catalogue holds the
//! demonstration scenarios under `examples/`.

pub struct Experiment {
    pub name: &'static str,
    pub summary: &'static str,
    pub toml: &'static str,
}

pub const CATALOGUE: &[Experiment] = &[
    Experiment {
        name: "demo-tail-loss",
        summary: "short responses over a lossy 200 ms path: plain NewReno vs RFC 6675 SACK vs Linux 2.6 (FACK)",
        toml: include_str!("../../../examples/demo-tail-loss.toml"),
    },
    Experiment {
        name: "fast-retransmit",
        summary: "one segment dropped in the middle of a 30 kB response: recovered by fast retransmit",
        toml: include_str!("../../../examples/fast-retransmit.toml"),
    },
    Experiment {
        name: "rto-backoff",
        summary: "a single-segment response dropped three times: RTO with exponential back-off",
        toml: include_str!("../../../examples/rto-backoff.toml"),
    },
    Experiment {
        name: "dsack-undo",
        summary: "reordering triggers a spurious fast retransmit; the DSACK undoes the cwnd reduction",
        toml: include_str!("../../../examples/dsack-undo.toml"),
    },
];

pub fn find(name: &str) -> Option<&'static Experiment> {
    CATALOGUE.iter().find(|e| e.name == name)
}
