//! The synchronized-read workload (FAST'08 `000_315d806dde942a9f.txt` §3.1, Fig. 1):
//! the client asks every server for its part of a block and asks for the next block only
//! when the whole block has arrived.
//!
//! Fixed-SRU mode: every server returns one SRU, so the block grows with N. Fixed-block
//! mode (FAST'08 Fig. 9, SIGCOMM'09 `001_e0dada207805edc8.txt`): a block of fixed size
//! split over the N servers. Both reduce to "server i returns `part[i]` bytes". With
//! active servers (Osada et al. §5.1) only some servers take part in a block.

use rand::Rng;

use super::schedule::{Action as Step, Scheduler};
use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::host::Conns;
use crate::scenario::Mitigation;
use crate::tcp::ictcp::Ictcp;
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

/// The synchronized reads of a world: every client's blocks, the servers' side (requests
/// and think times), the schedule of each block's connections (`app::schedule`), and ICTCP,
/// the receiver-side window control, observing the client's arrivals.
pub struct SyncReads {
    pub clients: Vec<SyncReadClient>,
    /// Servers each client reads from; client c's flow from server i is `c * servers + i`.
    servers: usize,
    /// Each flow's (client, server).
    reader: Vec<(u32, FlowId)>,
    /// Servers answering each block (Osada et al.'s N_a).
    active_servers: usize,
    /// Flows of the current block, in the order they were chosen.
    active: Vec<FlowId>,
    scheduler: Scheduler,
    ictcp: Option<Ictcp>,
    /// Connections are made per block (a SYN, then the request when it is open).
    handshake: bool,
    /// Bytes requested from each server and not yet written to its socket.
    pending_request: Vec<u64>,
    /// How long a server thinks before it answers.
    think: Think,
    /// Blocks each client reads before the run ends (`None`: the run has a duration).
    blocks: Option<u64>,
    /// Clients that have read all their blocks.
    clients_done: usize,
    /// Scratch for the schedule's steps.
    steps: Vec<Step>,
}

/// How long a server thinks between a request's arrival and its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Think {
    /// It answers at once (FAST'08 §4.1: no think time).
    Immediate,
    /// Uniform in [0, this) ps (`response_jitter_ps`).
    Uniform(u64),
    /// One of these ps, each equally likely: a measured distribution (`think_times_ps`, e.g.
    /// the testbed's servers' start spread, which validate reads from its capture).
    Drawn(Vec<u64>),
}

/// Timer kinds.
pub(crate) const RESPOND: u8 = 0;
pub(crate) const ICTCP_SLOT: u8 = 1;

/// What the reads are built from.
pub struct SyncReadConfig {
    pub servers: usize,
    pub clients: usize,
    /// Bytes server i returns per block.
    pub part: Vec<u64>,
    pub active_servers: usize,
    pub scheme: Mitigation,
    pub ictcp: Option<Ictcp>,
    pub handshake: bool,
    pub think: Think,
    pub blocks: Option<u64>,
}

impl SyncReads {
    pub fn new(c: SyncReadConfig) -> SyncReads {
        let flows = c.servers * c.clients;
        SyncReads {
            clients: vec![SyncReadClient::new(c.part.clone()); c.clients],
            servers: c.servers,
            reader: (0..flows).map(|f| ((f / c.servers) as u32, (f % c.servers) as FlowId)).collect(),
            active_servers: c.active_servers,
            active: Vec::with_capacity(c.servers),
            scheduler: Scheduler::new(c.scheme, c.part),
            ictcp: c.ictcp,
            handshake: c.handshake,
            pending_request: vec![0; flows],
            think: c.think,
            blocks: c.blocks,
            clients_done: 0,
            steps: Vec::with_capacity(16),
        }
    }

    /// ICTCP follows every arrival.
    pub fn observes_arrivals(&self) -> bool {
        self.ictcp.is_some()
    }

    /// The schedule counts bytes sent (NCCS, OCS; Osada et al. §4.3).
    pub fn follows_sent(&self) -> bool {
        self.scheduler.counts_sent()
    }

    /// The schedule counts bytes delivered.
    pub fn follows_delivery(&self) -> bool {
        self.scheduler.follows_delivery()
    }

    /// Blocks every client has completed.
    pub fn blocks_done(&self) -> u64 {
        self.clients.iter().map(|c| c.blocks_done).sum()
    }

    /// Servers answering each block.
    pub fn active_per_block(&self) -> usize {
        self.active_servers
    }

    /// ICTCP's first slot, and every client's first block.
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, conns: &Conns, out: &mut Actions) {
        if let Some(ictcp) = &self.ictcp {
            out.push(Action::Timer { at: ictcp.slot(), kind: ICTCP_SLOT, arg: 0 });
        }
        for c in 0..self.clients.len() {
            self.start_block(cx, conns, c, out);
        }
    }

    /// Client `c` starts its next block.
    fn start_block(&mut self, cx: &mut Ctx, conns: &Conns, c: usize, out: &mut Actions) {
        let n = self.servers;
        let first = (c * n) as FlowId; // client c's flows are c * n + server
        self.active.clear();
        if self.active_servers < n {
            // Osada et al. §5.1: N_a of the N_s servers, chosen at random for each block
            let mut all: Vec<FlowId> = (first..first + n as FlowId).collect();
            for i in 0..self.active_servers {
                let j = cx.rng.random_range(i..n);
                all.swap(i, j);
            }
            self.active.extend_from_slice(&all[..self.active_servers]);
        } else {
            self.active.extend(first..first + n as FlowId);
        }
        self.clients[c].start_block(cx.now, self.active.len());
        let mut steps = std::mem::take(&mut self.steps);
        self.scheduler.start_block(&self.active, &mut steps);
        self.carry_out(conns, &mut steps, out);
        self.steps = steps;
    }

    /// Turn the schedule's steps into actions, in order.
    fn carry_out(&mut self, conns: &Conns, steps: &mut Vec<Step>, out: &mut Actions) {
        for step in steps.drain(..) {
            match step {
                Step::Open(f) => self.open(conns, f, out),
                Step::Window(f, w) => {
                    let (c, server) = self.reader[f as usize];
                    let may_update = self.clients[c as usize].remaining(server, conns.delivered(f)) > 0;
                    out.push(Action::Window { flow: f, window: w, may_update });
                }
            }
        }
    }

    /// Open flow `f` for this block: a SYN in handshake mode, else the request.
    fn open(&mut self, conns: &Conns, f: FlowId, out: &mut Actions) {
        if let Some(ictcp) = &mut self.ictcp {
            // ICTCP measures from here; a connection made for this block counts from 0
            let delivered = if self.handshake { 0 } else { conns.delivered(f) };
            out.push(Action::Window { flow: f, window: ictcp.open(f, delivered), may_update: false });
        }
        if self.handshake {
            out.push(Action::Connect(f));
        } else {
            self.request(conns, f, out);
        }
    }

    /// The client asks flow `f`'s server for its part of the block.
    fn request(&mut self, conns: &Conns, f: FlowId, out: &mut Actions) {
        let (c, server) = self.reader[f as usize];
        let bytes = self.clients[c as usize].request(server, conns.delivered(f));
        out.push(Action::Request(f, bytes));
    }

    /// `flow`'s connection is open: its request goes.
    pub(crate) fn on_established(&mut self, conns: &Conns, flow: FlowId, out: &mut Actions) {
        self.request(conns, flow, out);
    }

    /// A new connection replaced `flow`'s old one at its server: what was asked of the old
    /// one is forgotten.
    pub(crate) fn on_accepted(&mut self, flow: FlowId) {
        self.pending_request[flow as usize] = 0;
    }

    /// A request for `bytes` reached flow `f`'s server: it answers now, or after its think
    /// time.
    pub(crate) fn on_request(&mut self, cx: &mut Ctx, f: FlowId, bytes: u64, out: &mut Actions) {
        self.pending_request[f as usize] += bytes;
        let think = match &self.think {
            Think::Immediate => return self.respond(f, out),
            Think::Uniform(up_to) => cx.rng.random_range(0..*up_to),
            Think::Drawn(times) => times[cx.rng.random_range(0..times.len())],
        };
        out.push(Action::Timer { at: cx.now + Time(think), kind: RESPOND, arg: f });
    }

    /// A test's request of `bytes` from flow `f`'s server, not yet answered.
    #[cfg(test)]
    pub(crate) fn pend(&mut self, f: FlowId, bytes: u64) {
        self.pending_request[f as usize] += bytes;
    }

    /// The server writes the requested bytes to its socket.
    fn respond(&mut self, f: FlowId, out: &mut Actions) {
        out.push(Action::Write(f, std::mem::take(&mut self.pending_request[f as usize])));
    }

    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, conns: &Conns, kind: u8, arg: u32, out: &mut Actions) {
        match kind {
            RESPOND => self.respond(arg, out),
            ICTCP_SLOT => self.on_ictcp_slot(cx, conns, out),
            _ => unreachable!("no timer of kind {kind}"),
        }
    }

    /// A data segment of `len` bytes reached the client now.
    pub(crate) fn on_arrival(&mut self, now: Time, len: u32) {
        if let Some(ictcp) = &mut self.ictcp {
            ictcp.on_arrival(now, len as u64);
        }
    }

    fn on_ictcp_slot(&mut self, cx: &mut Ctx, conns: &Conns, out: &mut Actions) {
        let Some(ictcp) = &mut self.ictcp else { return };
        let mut changed = vec![];
        ictcp.end_slot(cx.now, |f| conns.delivered(f), &mut changed);
        out.push(Action::Timer { at: cx.now + ictcp.slot(), kind: ICTCP_SLOT, arg: 0 });
        for (f, w) in changed {
            let (c, server) = self.reader[f as usize];
            let may_update = self.clients[c as usize].remaining(server, conns.delivered(f)) > 0;
            out.push(Action::Window { flow: f, window: w, may_update });
        }
    }

    /// Flow `f`'s client holds in-order bytes up to `to` (from `from`). (Inlined: the
    /// client's per-segment path.)
    #[inline(always)]
    pub(crate) fn on_delivered<const LEAN: bool>(
        &mut self,
        cx: &mut Ctx,
        conns: &Conns,
        f: FlowId,
        from: u64,
        to: u64,
        out: &mut Actions,
    ) {
        let (c, server) = self.reader[f as usize];
        let progress = self.clients[c as usize].on_progress(cx.now, server, from, to);
        if let Progress::Partial(_) = progress {
            if LEAN || !self.scheduler.follows_delivery() {
                return; // nothing to tell (NCCS and OCS counting sent bytes hear it in `on_sent`)
            }
        }
        self.on_progress(cx, conns, f, c as usize, progress, out);
    }

    #[inline(never)]
    fn on_progress(&mut self, cx: &mut Ctx, conns: &Conns, f: FlowId, c: usize, progress: Progress, out: &mut Actions) {
        if progress == Progress::BlockDone {
            self.flow_done(f, true, out);
            return self.block_done(cx, conns, c, out);
        }
        let mut steps = std::mem::take(&mut self.steps);
        match progress {
            Progress::Partial(remaining) => {
                // (the schemes that count run with one client: flow = server)
                let client = &self.clients[0];
                let remaining_of = |g: FlowId| client.remaining(g, conns.delivered(g));
                self.scheduler.on_progress(f, remaining, remaining_of, &mut steps);
            }
            Progress::FlowDone => {
                self.flow_done(f, false, out);
                self.scheduler.on_progress(f, 0, |_| 0, &mut steps);
                self.scheduler.on_done(f, &mut steps);
            }
            Progress::BlockDone => unreachable!("handled above"),
        }
        self.carry_out(conns, &mut steps, out);
        self.steps = steps;
    }

    fn flow_done(&mut self, f: FlowId, last_of_block: bool, out: &mut Actions) {
        if let Some(ictcp) = &mut self.ictcp {
            ictcp.close(f);
        }
        out.push(Action::Close(f, last_of_block));
    }

    /// Client `c` has its block. In blocks mode each client reads `blocks` blocks; the
    /// measurement ends when the last client has read its last.
    fn block_done(&mut self, cx: &mut Ctx, conns: &Conns, c: usize, out: &mut Actions) {
        if let Some(target) = self.blocks {
            if self.clients[c].blocks_done >= target {
                self.clients_done += 1;
                if self.clients_done == self.clients.len() {
                    out.push(Action::Finished);
                }
                return;
            }
        }
        self.start_block(cx, conns, c, out);
    }

    /// Osada et al. §4.3 count "the number of bits which has been already sent": tell the
    /// schedule how much of its part each server has still to send.
    pub(crate) fn on_sent(&mut self, conns: &Conns, flow: FlowId, out: &mut Actions) {
        let client = &self.clients[0]; // one client (validation)
        let unsent_of = |g: FlowId| client.unsent(g, conns.get(g).sender.snd_max - 1);
        let unsent = unsent_of(flow);
        if unsent == u64::MAX {
            return;
        }
        let mut steps = std::mem::take(&mut self.steps);
        self.scheduler.on_progress(flow, unsent, unsent_of, &mut steps);
        self.carry_out(conns, &mut steps, out);
        self.steps = steps;
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
