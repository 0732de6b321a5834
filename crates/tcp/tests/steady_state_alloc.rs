//! The hot path does not allocate per segment: two engines move 20 MB over a short
//! path, and in the steady state the allocator is not called for segments sent,
//! received or acknowledged (a counting global allocator checks it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

#[path = "engine/pair/mod.rs"]
mod pair;

use bytes::Bytes;
use gentle_tcp::Config;
use pair::Pair;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs the pair (one-way delay 50 µs, no bottleneck), the client reading all it
/// receives, until `until` says so or nothing is left to happen. Returns the data
/// segments the server sent.
fn pump(p: &mut Pair, until: &mut dyn FnMut(&Pair) -> bool) -> u64 {
    let mut segs = 0;
    for _ in 0..100_000_000 {
        segs += p.server_output(&mut |_| false);
        while p.client.read().is_some() {}
        p.client_output();
        if until(p) {
            break;
        }
        let Some(next) = p.next() else { break };
        p.handle(next);
    }
    segs
}

#[test]
fn steady_state_transfer_does_not_allocate_per_segment() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut p = Pair::open(Config::default(), &mut rng, 50_000, 0);
    pump(&mut p, &mut |p| p.server.is_established());
    // One application write of 20 MB (the writer's allocation, before measuring).
    let total = 20 * 1024 * 1024;
    assert!(p.server.write(Bytes::from(vec![7u8; total])));
    // Warm up: let windows, queues and buffers reach their working sizes.
    pump(&mut p, &mut |p| p.server.bytes_acked() > 2 * 1024 * 1024);
    let before = ALLOCS.load(Ordering::Relaxed);
    let segs = pump(&mut p, &mut |p| p.server.bytes_acked() >= 18 * 1024 * 1024);
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert!(segs > 10_000, "only {segs} segments moved");
    assert!(
        allocs * 1000 < segs,
        "{allocs} allocations for {segs} data segments in the steady state"
    );
}
