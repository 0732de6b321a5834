//! The hot path does not allocate per segment: two engines move 20 MB to each other
//! directly, and in the steady state the allocator is not called for segments sent,
//! received or acknowledged (a counting global allocator checks it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use gentle_tcp::{Config, Connection, Instant};
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

/// Moves segments between the two engines, 50 µs apart, until `until` returns true
/// or nothing moves. Returns the data segments delivered.
fn pump(
    a: &mut Connection,
    b: &mut Connection,
    now: &mut Instant,
    until: &mut dyn FnMut(&mut Connection, &mut Connection) -> bool,
) -> u64 {
    let mut segs = 0;
    for _ in 0..10_000_000 {
        let mut moved = false;
        while let Some(s) = a.poll_transmit(*now) {
            segs += !s.payload.is_empty() as u64;
            b.handle_segment(*now, &s);
            moved = true;
        }
        while let Some(s) = b.poll_transmit(*now) {
            a.handle_segment(*now, &s);
            moved = true;
        }
        while b.read().is_some() {}
        if until(a, b) {
            break;
        }
        *now = Instant::from_nanos(now.as_nanos() + 50_000);
        for c in [&mut *a, &mut *b] {
            if c.poll_timeout().is_some_and(|t| t <= *now) {
                c.handle_timeout(*now);
            }
        }
        if !moved && a.poll_timeout().is_none() && b.poll_timeout().is_none() {
            break;
        }
    }
    segs
}

#[test]
fn steady_state_transfer_does_not_allocate_per_segment() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let cfg = Config::default();
    let mut now = Instant::ZERO;
    let mut client = Connection::connect(cfg.clone(), now, 1000, 80, &mut rng);
    let syn = client.poll_transmit(now).expect("SYN");
    let mut server = Connection::accept(cfg, now, &syn, &mut rng).expect("accept");
    pump(&mut server, &mut client, &mut now, &mut |s, _| {
        s.is_established()
    });
    // One application write of 20 MB (the writer's allocation, before measuring).
    let total = 20 * 1024 * 1024;
    assert!(server.write(Bytes::from(vec![7u8; total])));
    // Warm up: let windows, queues and buffers reach their working sizes.
    pump(&mut server, &mut client, &mut now, &mut |s, _| {
        s.bytes_acked() > 2 * 1024 * 1024
    });
    let before = ALLOCS.load(Ordering::Relaxed);
    let segs = pump(&mut server, &mut client, &mut now, &mut |s, _| {
        s.bytes_acked() >= 18 * 1024 * 1024
    });
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert!(segs > 10_000, "only {segs} segments moved");
    assert!(
        allocs * 1000 < segs,
        "{allocs} allocations for {segs} data segments in the steady state"
    );
}
