//! Memory a finished trial leaves to the next on the same thread.
//!
//! A sweep runs many small trials one after another on each worker thread; built
//! afresh, every trial would allocate its event heap, packet slab, connection and
//! session tables and hash maps again, and free them at its end. Instead a trial's
//! containers are emptied when it finishes and kept by its thread, and the next
//! [`Sim`](super::Sim) built there starts from them. Only capacity carries over:
//! every container is empty when a trial starts — but the connection table, whose
//! slots keep the last trial's connections until a new connection is built in each
//! (from nothing but the emptied storage of its scoreboard and send buffer:
//! `Connection::connect_here`, `accept_here`), none read before — and none of them
//! is iterated in an order that depends on its capacity
//! (the hash maps are only looked up), so results do not depend on what ran before
//! on the thread.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::apps::{AppConn, WorkloadRt};
use super::metrics::{EpisodeWatch, TailWatch};
use super::tcp_sessions::HostSession;
use super::{ConnSlot, Entry};
use crate::link::{Channel, ChannelStorage};
use crate::packet::Slab;
use crate::rng::HostRng;

/// The reusable containers of one simulation, all empty.
#[derive(Default)]
pub(super) struct Spare {
    pub heap: BinaryHeap<Reverse<Entry>>,
    pub slab: Slab,
    pub node_names: Vec<Arc<str>>,
    pub route: Vec<u32>,
    pub scratch: Scratch,
    pub chans: Vec<Channel>,
    /// The last trial's channels' queues, emptied, for this trial's channels.
    pub chan_storage: Vec<ChannelStorage>,
    /// Slots of connections, kept with the last trial's connections in them (a new
    /// trial builds its own in their place).
    pub conns: Vec<ConnSlot>,
    pub demux: FxHashMap<u64, u32>,
    pub listeners: Vec<(u16, u16)>,
    pub app_conns: Vec<AppConn>,
    pub app_conn_by_client: FxHashMap<u64, u32>,
    pub workloads: Vec<WorkloadRt>,
    pub host_rngs: Vec<HostRng>,
    pub path_cache: FxHashMap<(u16, u16), gentle_tcp::PathMetrics>,
    pub host_sessions: Vec<HostSession>,
    pub host_session_of: FxHashMap<(u16, u16), u32>,
    pub next_port: Vec<u16>,
    pub tails: TailWatch,
    pub episodes: EpisodeWatch,
}

/// Scratch space of the routes' search.
#[derive(Default)]
pub(super) struct Scratch {
    pub dist: Vec<u32>,
    pub frontier: VecDeque<usize>,
}

/// Initial capacity of a new event heap (a short trial's events in flight).
const HEAP_CAPACITY: usize = 256;

thread_local! {
    /// Boxed, so that the thread-local itself is one pointer: a library loaded
    /// into another program (the Python extension) has little static TLS room.
    static KEPT: Cell<Option<Box<Spare>>> = const { Cell::new(None) };
}

impl Spare {
    /// What the last trial on this thread left, or new containers.
    pub fn take() -> Spare {
        KEPT.take().map_or_else(
            || Spare {
                heap: BinaryHeap::with_capacity(HEAP_CAPACITY),
                ..Spare::default()
            },
            |kept| *kept,
        )
    }

    /// Empties every container but the connection table (see above) and keeps them
    /// for this thread's next trial.
    pub fn keep(mut self) {
        self.heap.clear();
        self.slab.clear();
        self.node_names.clear();
        self.chan_storage
            .extend(self.chans.drain(..).map(Channel::into_storage));
        // The connections stay in their slots, for the next trial to overwrite
        // (a connection is built once, not built and then moved into the table).
        self.demux.clear();
        self.listeners.clear();
        self.app_conns.clear();
        self.app_conn_by_client.clear();
        self.workloads.clear();
        self.host_rngs.clear();
        self.path_cache.clear();
        self.host_sessions.clear();
        self.host_session_of.clear();
        self.next_port.clear();
        self.tails.clear();
        self.episodes.clear();
        KEPT.set(Some(Box::new(self)));
    }
}
