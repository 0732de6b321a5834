#![allow(dead_code)]
//! Helpers shared by the simulator tests.

use std::sync::Arc;
use std::time::Duration;

use gentle_sim::link::{ChannelSpec, LinkSpec, QueueDiscipline, QueueLimit};
use gentle_sim::loss::{AppliesTo, LossModel};
use gentle_sim::record::TrialResult;
use gentle_sim::workload::{ConnectionMode, Size, WorkloadKind, WorkloadSpec};
use gentle_sim::{Setup, Sim};
use gentle_tcp::Config;

pub fn chan(rate: Option<u64>, delay_ms: u64, loss: LossModel) -> ChannelSpec {
    ChannelSpec {
        rate_bps: rate,
        delay: Duration::from_millis(delay_ms),
        queue: QueueDiscipline::DropTail(QueueLimit::Packets(1000)),
        loss,
        loss_applies: AppliesTo::All,
        reorder: None,
        duplicate: 0.0,
        ..ChannelSpec::default()
    }
}

/// server — client over one link; `down` is server → client.
pub fn two_hosts(down: ChannelSpec, up: ChannelSpec, kind: WorkloadKind, cfg: Config) -> Setup {
    Setup {
        nodes: vec!["server".into(), "client".into()],
        links: vec![LinkSpec {
            a: "server".into(),
            b: "client".into(),
            a_to_b: down,
            b_to_a: up,
        }],
        workloads: vec![Arc::new(WorkloadSpec {
            name: "web".into(),
            client: "client".into(),
            server: "server".into(),
            port: 80,
            kind,
            start: Duration::ZERO,
            jitter: Duration::ZERO,
            measure: true,
            client_config: None,
            max_window: None,
            client_receiver: None,
            client_sack: None,
            client_dsack: None,
            backend: None,
            warmup: 0,
            server_config: None,
            period: None,
        })],
        config: Arc::new(cfg),
        time_limit: Duration::from_secs(600),
    }
}

pub fn exchange(request: u64, response: u64, n: u32, mode: ConnectionMode) -> WorkloadKind {
    WorkloadKind::Exchanges {
        request: Size::Fixed(request),
        response: Size::Fixed(response),
        exchanges: n,
        mode,
        think: Duration::ZERO,
        server_close: false,
    }
}

pub fn run(setup: &Setup, seed: u64) -> TrialResult {
    Sim::new(setup, 0, seed).expect("valid setup").run()
}
