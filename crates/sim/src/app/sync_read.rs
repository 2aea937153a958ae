//! The synchronized-read workload (FAST'08 `000_315d806dde942a9f.txt` §3.1, Fig. 1):
//! the client asks every server for its part of a block (one request packet each) and
//! asks for the next block only when the whole block has arrived.
//!
//! Fixed-SRU mode: every server returns one SRU, so the block grows with N. Fixed-block
//! mode (FAST'08 Fig. 9, SIGCOMM'09 `001_e0dada207805edc8.txt`): a block of fixed size
//! split over the N servers. Both reduce to "server i returns `part[i]` bytes".

use crate::time::Time;

/// Client-side bookkeeping of the block in progress.
#[derive(Clone, Debug)]
pub struct SyncReadClient {
    /// Bytes server i returns per block.
    part: Vec<u64>,
    /// Stream offset (in-order bytes) each flow must reach to finish the current block.
    target: Vec<u64>,
    /// Flows of the current block that have not delivered their part yet.
    pending: usize,
    block_started: Time,
    pub blocks_done: u64,
    /// Completion time of each finished block, in picoseconds.
    pub block_times: Vec<u64>,
}

impl SyncReadClient {
    pub fn new(part: Vec<u64>) -> Self {
        let n = part.len();
        SyncReadClient { part, target: vec![0; n], pending: 0, block_started: Time::ZERO, blocks_done: 0, block_times: Vec::new() }
    }

    /// Start a block at `now`: returns (flow, bytes) for each request to send.
    pub fn start_block(&mut self, now: Time) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.block_started = now;
        self.pending = self.part.len();
        for (t, p) in self.target.iter_mut().zip(&self.part) {
            *t += p;
        }
        self.part.iter().enumerate().map(|(i, &p)| (i as u32, p))
    }

    /// Flow `flow` has now delivered `delivered` bytes in order in total. Returns true
    /// when this completes the block.
    pub fn on_progress(&mut self, now: Time, flow: u32, delivered_before: u64, delivered: u64) -> bool {
        let target = self.target[flow as usize];
        if delivered_before < target && delivered >= target {
            debug_assert!(delivered == target, "a server sent more than it was asked for");
            self.pending -= 1;
            if self.pending == 0 {
                self.blocks_done += 1;
                self.block_times.push((now - self.block_started).0);
                return true;
            }
        }
        false
    }

    /// Bytes in one block.
    pub fn block_bytes(&self) -> u64 {
        self.part.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_completes_only_when_every_server_has_delivered() {
        let mut c = SyncReadClient::new(vec![100, 100, 100]);
        assert_eq!(c.start_block(Time(0)).count(), 3);
        assert!(!c.on_progress(Time(10), 0, 0, 100));
        assert!(!c.on_progress(Time(20), 2, 0, 100));
        assert!(!c.on_progress(Time(25), 1, 0, 50));
        assert!(c.on_progress(Time(30), 1, 50, 100));
        assert_eq!(c.block_times, vec![30]);
    }

    #[test]
    fn targets_accumulate_across_blocks_on_persistent_connections() {
        let mut c = SyncReadClient::new(vec![100]);
        c.start_block(Time(0)).for_each(drop);
        assert!(c.on_progress(Time(5), 0, 0, 100));
        c.start_block(Time(10)).for_each(drop);
        assert!(!c.on_progress(Time(12), 0, 100, 150));
        assert!(c.on_progress(Time(15), 0, 150, 200));
        assert_eq!(c.blocks_done, 2);
        assert_eq!(c.block_times, vec![5, 5]);
    }
}
