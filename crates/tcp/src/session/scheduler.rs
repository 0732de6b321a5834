//! The session's weighted round-robin scheduler (`fast-start-and-sessions.txt`
//! §6.2: "TCP session implements a *weighted round-robin scheduler*. It is possible
//! to vary the relative weights dynamically"), interleaving per packet ("It is best
//! to interleave them as finely as possible, i.e. interleaved on a per-packet
//! basis").
//!
//! Smooth weighted round robin: every pick adds each ready member's weight to its
//! credit, takes the member with the most credit (the earliest joined on a tie), and
//! takes the ready weights' sum from it. Over any run of picks with the same members
//! ready, each gets picks in proportion to its weight, spread out rather than in
//! runs: weights 1 and 3 give `B A B B`, `B A B B`, ...

/// One member's place in the rotation.
#[derive(Clone, Copy, Debug)]
struct Slot {
    id: u32,
    weight: u32,
    credit: i64,
}

/// The rotation, in join order.
#[derive(Clone, Debug, Default)]
pub struct Wrr {
    slots: Vec<Slot>,
}

impl Wrr {
    /// Adds a member with `weight` (at least 1).
    pub fn add(&mut self, id: u32, weight: u32) {
        self.slots.push(Slot {
            id,
            weight: weight.max(1),
            credit: 0,
        });
    }

    /// Removes a member.
    pub fn remove(&mut self, id: u32) {
        self.slots.retain(|s| s.id != id);
    }

    /// Changes a member's weight; its credit so far stands. Returns false for a
    /// member not in the rotation.
    pub fn set_weight(&mut self, id: u32, weight: u32) -> bool {
        match self.slots.iter_mut().find(|s| s.id == id) {
            Some(s) => {
                s.weight = weight.max(1);
                true
            }
            None => false,
        }
    }

    /// A member's weight.
    pub fn weight(&self, id: u32) -> Option<u32> {
        self.slots.iter().find(|s| s.id == id).map(|s| s.weight)
    }

    /// The members, in join order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().map(|s| s.id)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No members.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Picks the next member among those `ready` says may send.
    pub fn pick(&mut self, mut ready: impl FnMut(u32) -> bool) -> Option<u32> {
        let mut total = 0i64;
        let mut best: Option<usize> = None;
        for i in 0..self.slots.len() {
            if !ready(self.slots[i].id) {
                continue;
            }
            let s = &mut self.slots[i];
            s.credit += s.weight as i64;
            total += s.weight as i64;
            let credit = s.credit;
            if best.is_none_or(|b| credit > self.slots[b].credit) {
                best = Some(i);
            }
        }
        let b = best?;
        self.slots[b].credit -= total;
        Some(self.slots[b].id)
    }
}
