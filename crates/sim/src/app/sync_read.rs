//! The synchronized-read workload (FAST'08 `000_315d806dde942a9f.txt` §3.1, Fig. 1):
//! the client asks every server for its part of a block and asks for the next block only
//! when the whole block has arrived.
//!
//! Fixed-SRU mode: every server returns one SRU, so the block grows with N. Fixed-block
//! mode (FAST'08 Fig. 9, SIGCOMM'09 `001_e0dada207805edc8.txt`): a block of fixed size
//! split over the N servers. Both reduce to "server i returns `part[i]` bytes". With
//! active servers (Osada et al. §5.1) only some servers take part in a block.

use crate::event::FlowId;
use crate::time::Time;

/// What a delivery meant for the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More of the flow's part arrived; this many bytes of it are still missing.
    Partial(u64),
    /// The flow has delivered its whole part; the block goes on.
    FlowDone,
    /// That was the last missing byte of the block.
    BlockDone,
}

/// Client-side bookkeeping of the block in progress.
#[derive(Clone, Debug)]
pub struct SyncReadClient {
    /// Bytes server i returns per block.
    part: Vec<u64>,
    /// Stream offset (in-order bytes on the flow's connection) that ends its part; set
    /// when the request is sent.
    target: Vec<u64>,
    /// The block (count of blocks done before it) for which `target` was set.
    target_block: Vec<u64>,
    /// Flows of the current block that have not delivered their part yet.
    pending: usize,
    block_started: Time,
    pub blocks_done: u64,
    /// Payload bytes delivered in order to this client, every flow together.
    pub app_bytes: u64,
    /// Completion time of each finished block, in picoseconds.
    pub block_times: Vec<u64>,
}

impl SyncReadClient {
    pub fn new(part: Vec<u64>) -> Self {
        let n = part.len();
        SyncReadClient {
            part,
            target: vec![u64::MAX; n],
            target_block: vec![u64::MAX; n],
            pending: 0,
            block_started: Time::ZERO,
            blocks_done: 0,
            app_bytes: 0,
            block_times: Vec::new(),
        }
    }

    /// A block with `active` flows starts at `now`.
    pub fn start_block(&mut self, now: Time, active: usize) {
        self.block_started = now;
        self.pending = active;
    }

    /// The request to `flow` is sent: its part ends `part` bytes after the `base` bytes
    /// its connection has already delivered. Returns the bytes to ask for.
    pub fn request(&mut self, flow: FlowId, base: u64) -> u64 {
        let part = self.part[flow as usize];
        self.target[flow as usize] = base + part;
        self.target_block[flow as usize] = self.blocks_done;
        part
    }

    /// Bytes of its part `flow` has still to send once its server has sent up to stream
    /// offset `sent`; u64::MAX if the flow has not been asked for its part in this block.
    pub fn unsent(&self, flow: FlowId, sent: u64) -> u64 {
        if self.target_block[flow as usize] != self.blocks_done {
            return u64::MAX;
        }
        self.target[flow as usize].saturating_sub(sent)
    }

    /// Bytes of its part `flow` has still to deliver once it has delivered `delivered`.
    pub fn remaining(&self, flow: FlowId, delivered: u64) -> u64 {
        self.target[flow as usize].saturating_sub(delivered)
    }

    /// `flow` went from `before` to `delivered` in-order bytes on its connection. (Inlined
    /// in its one caller, the client's per-segment path.)
    #[inline(always)]
    pub fn on_progress(&mut self, now: Time, flow: FlowId, before: u64, delivered: u64) -> Progress {
        self.app_bytes += delivered - before;
        let target = self.target[flow as usize];
        if !(before < target && delivered >= target) {
            return Progress::Partial(target.saturating_sub(delivered));
        }
        debug_assert!(delivered == target, "a server sent more than it was asked for");
        self.pending -= 1;
        if self.pending > 0 {
            return Progress::FlowDone;
        }
        self.blocks_done += 1;
        self.block_times.push((now - self.block_started).0);
        Progress::BlockDone
    }

    /// The servers it reads from.
    pub fn servers(&self) -> usize {
        self.part.len()
    }

    /// Bytes in one block with `active` flows (fixed-SRU: all parts are equal).
    pub fn block_bytes(&self, active: usize) -> u64 {
        if active == self.part.len() {
            self.part.iter().sum()
        } else {
            self.part[0] * active as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_completes_only_when_every_server_has_delivered() {
        let mut c = SyncReadClient::new(vec![100, 100, 100]);
        c.start_block(Time(0), 3);
        for f in 0..3 {
            assert_eq!(c.request(f, 0), 100);
        }
        assert_eq!(c.on_progress(Time(10), 0, 0, 100), Progress::FlowDone);
        assert_eq!(c.on_progress(Time(20), 2, 0, 100), Progress::FlowDone);
        assert_eq!(c.on_progress(Time(25), 1, 0, 50), Progress::Partial(50));
        assert_eq!(c.on_progress(Time(30), 1, 50, 100), Progress::BlockDone);
        assert_eq!(c.block_times, vec![30]);
    }

    #[test]
    fn targets_follow_the_connection_across_blocks() {
        let mut c = SyncReadClient::new(vec![100]);
        c.start_block(Time(0), 1);
        c.request(0, 0);
        assert_eq!(c.on_progress(Time(5), 0, 0, 100), Progress::BlockDone);
        c.start_block(Time(10), 1);
        c.request(0, 100); // persistent connection: already delivered 100
        assert_eq!(c.on_progress(Time(12), 0, 100, 150), Progress::Partial(50));
        assert_eq!(c.on_progress(Time(15), 0, 150, 200), Progress::BlockDone);
        assert_eq!(c.blocks_done, 2);
        assert_eq!(c.block_times, vec![5, 5]);
    }
}
