//! How far a running simulation has got, readable from another thread while it runs:
//! the front shows progress inside one long point (simulated time, blocks done) and
//! estimates when it ends. The world writes it where it checks for cancellation, every
//! [`crate::world::CANCEL_CHECK_EVENTS`] events, so the hot path pays nothing more.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::time::Time;

/// Simulated time reached and blocks completed, updated while a world runs.
#[derive(Debug, Default)]
pub struct RunProgress {
    sim_ps: AtomicU64,
    blocks: AtomicU64,
}

impl RunProgress {
    pub(crate) fn record(&self, now: Time, blocks: u64) {
        self.sim_ps.store(now.0, Ordering::Relaxed);
        self.blocks.store(blocks, Ordering::Relaxed);
    }

    /// Simulated time reached, in picoseconds.
    pub fn sim_ps(&self) -> u64 {
        self.sim_ps.load(Ordering::Relaxed)
    }

    /// Blocks completed.
    pub fn blocks(&self) -> u64 {
        self.blocks.load(Ordering::Relaxed)
    }
}
