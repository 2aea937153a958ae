//! Riak gets over Erlang distribution (`riak_transport = erlang_dist`): what a Riak cluster
//! runs on, as the blog describes it (`003_a133663d5dbcfa75.txt`, "What happens to Erlang
//! programs when TCP incast strikes?"):
//!
//! - "Between any two Erlang nodes A and B, there is a single TCP connection that carries
//!   all Erlang messages between A and B." Here: one simulator flow per direction of a node
//!   pair (A -> B carries every message A sends B: A's requests as a coordinator and A's
//!   replies as a replica), made on first use. A message is read when its last byte has
//!   arrived in order, so a request waits behind the replies ahead of it in the same stream.
//!   (The connection's two directions are two flows whose ACKs travel as their own packets,
//!   not piggybacked on the other direction's data.)
//! - "If an Erlang process writes data to the port until the buffer is full, then that
//!   process will be descheduled": Erlang's `dist_buf_busy_limit` (erl `+zdbbl`, "Defaults to
//!   1024" KB; "When the buffer limit has been reached, sending processes will be suspended
//!   until the buffer size has shrunk. The buffer limit is per distribution channel"), and
//!   `erlang:system_monitor`'s `busy_dist_port` ("a process in the system gets suspended
//!   because it sends to a process on a remote node whose inter-node communication was
//!   handled by a busy port"). In ERTS (`erts/emulator/beam/dist.c`, `erts_dsig_send`) the
//!   message is queued first and its sender suspended when the queue is then at or above the
//!   limit; on the default TCP carrier the port is no longer busy when the queue falls below
//!   it. Here the queue is the connection's bytes written and not yet acknowledged (the
//!   kernel's send buffer counted in it, which makes a port busy a socket buffer earlier than
//!   ERTS would), checked after each write and at each ACK the connection's sender gets.
//! - The blog's vnode: "Like all gen_server processes, it handles all requests serially ...
//!   our Riak vnode process P cannot answer any more queries until the A-to-B network link
//!   becomes uncongested. If the cluster has 12 machines in it, P cannot process any queries
//!   from the other 10 machines". Here each node serves requests with one such process, in
//!   the order they are read (a node's several vnodes are one process here: the blog's
//!   example); a get's coordinator (its FSM) sends its requests one after another and is
//!   suspended on a busy connection the same way, its later requests waiting.
//!
//! Gets, quorum and latencies are `riak::RiakGets`', as with one connection per pair.

use std::collections::{HashMap, VecDeque};

use rand::Rng;

use super::riak::{next_get_in, ReplySizes, RiakGets};
use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::host::{Conns, REQUEST_PAYLOAD_BYTES};
use crate::net::HostId;

/// A message on a node pair's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Msg {
    /// A get's request, asking for a reply of `bytes`.
    Request { get: u64, bytes: u64 },
    /// A replica's reply to a get, `bytes` long.
    Reply { get: u64, bytes: u64 },
}

/// One direction of a node pair's connection: the messages written, by the stream offset
/// their last byte ends at, until read.
#[derive(Clone, Debug, Default)]
struct Stream {
    unread: VecDeque<(u64, Msg)>,
    written: u64,
}

/// Who is suspended on a busy connection, resumed in the order they were suspended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiter {
    /// A node's serving process (a vnode).
    Vnode(HostId),
    /// A get's coordinator, with the requests it has still to send (`Pending` index).
    Fsm(usize),
}

/// A get whose coordinator was suspended before sending every request.
#[derive(Clone, Debug)]
struct Pending {
    get: u64,
    coordinator: HostId,
    /// (replica, reply bytes) still to ask, in order.
    left: VecDeque<(HostId, u64)>,
}

/// The Riak workload over Erlang distribution (module docs).
pub struct ErlangDist {
    pub gets: RiakGets,
    sizes: ReplySizes,
    rate: f64,
    replicas: usize,
    busy_limit: u64,
    /// (from, to) -> the flow carrying from's messages to `to`.
    flow_of: HashMap<(HostId, HostId), FlowId>,
    /// By flow id (flows of other applications: never read).
    streams: Vec<Stream>,
    /// Per node: the requests read and not yet served, (coordinator, get, reply bytes).
    mailbox: Vec<VecDeque<(HostId, u64, u64)>>,
    /// Per node: its vnode is suspended (on a busy connection).
    vnode_suspended: Vec<bool>,
    /// Per flow: who waits for it to be no longer busy.
    waiting: HashMap<FlowId, VecDeque<Waiter>>,
    pending: Vec<Option<Pending>>,
    free_pending: Vec<usize>,
    /// Times a process was suspended on a busy connection (the `busy_dist_port` messages a
    /// system monitor would get).
    pub busy_dist_port: u64,
    others: Vec<HostId>,
}

/// The timer kind of a node's next get.
const GET: u8 = 0;

impl ErlangDist {
    /// `nodes` nodes, each coordinating `rate` gets per second of `replicas` replies sized as
    /// `sizes` draws, complete at `quorum`; a connection is busy at `busy_limit` bytes.
    pub fn new(nodes: usize, rate: f64, replicas: u32, quorum: u32, sizes: ReplySizes, busy_limit: u64) -> Self {
        ErlangDist {
            gets: RiakGets::new(nodes, quorum, replicas),
            sizes,
            rate,
            replicas: replicas as usize,
            busy_limit,
            flow_of: HashMap::new(),
            streams: Vec::new(),
            mailbox: vec![VecDeque::new(); nodes],
            vnode_suspended: vec![false; nodes],
            waiting: HashMap::new(),
            pending: Vec::new(),
            free_pending: Vec::new(),
            busy_dist_port: 0,
            others: Vec::with_capacity(nodes),
        }
    }

    /// Every node's first get, in node order (the same draws as one connection per pair).
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        for node in 0..self.mailbox.len() as u32 {
            let at = cx.now + next_get_in(self.rate, &mut cx.rng);
            out.push(Action::Timer { at, kind: GET, arg: node });
        }
    }

    /// Node `coordinator` starts a get: `replicas` other nodes chosen uniformly (as
    /// `riak::Riak` chooses them, draw for draw), each asked for a reply of a drawn size, one
    /// request after another; its next get is drawn.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, conns: &Conns, coordinator: u32, out: &mut Actions) {
        let get = self.gets.issue(cx.now);
        let nodes = self.mailbox.len() as u32;
        self.others.clear();
        self.others.extend((0..nodes).filter(|&x| x != coordinator));
        let mut left = VecDeque::with_capacity(self.replicas);
        for k in 0..self.replicas {
            let j = cx.rng.random_range(k..self.others.len());
            self.others.swap(k, j);
            left.push_back((self.others[k], self.sizes.draw(&mut cx.rng)));
        }
        self.run_fsm(conns, Pending { get, coordinator, left }, out);
        let next = cx.now + next_get_in(self.rate, &mut cx.rng);
        out.push(Action::Timer { at: next, kind: GET, arg: coordinator });
    }

    /// A get's coordinator sends its requests until done or suspended on a busy connection.
    fn run_fsm(&mut self, conns: &Conns, mut p: Pending, out: &mut Actions) {
        while let Some((replica, bytes)) = p.left.pop_front() {
            let f = self.send(conns, p.coordinator, replica, Msg::Request { get: p.get, bytes }, out);
            if self.busy(conns, f) {
                let slot = self.free_pending.pop().unwrap_or_else(|| {
                    self.pending.push(None);
                    self.pending.len() - 1
                });
                self.pending[slot] = Some(p);
                self.suspend(f, Waiter::Fsm(slot));
                return;
            }
        }
    }

    /// Node `node`'s vnode serves the requests it has read, in order, until its mailbox is
    /// empty or a reply finds its connection busy.
    fn run_vnode(&mut self, conns: &Conns, node: HostId, out: &mut Actions) {
        while let Some((coordinator, get, bytes)) = self.mailbox[node as usize].pop_front() {
            let f = self.send(conns, node, coordinator, Msg::Reply { get, bytes }, out);
            self.gets.note_reply_written(bytes);
            if self.busy(conns, f) {
                self.vnode_suspended[node as usize] = true;
                self.suspend(f, Waiter::Vnode(node));
                return;
            }
        }
    }

    fn suspend(&mut self, f: FlowId, w: Waiter) {
        self.busy_dist_port += 1;
        self.waiting.entry(f).or_default().push_back(w);
    }

    /// Write `msg` on `from`'s connection to `to` (made on first use); its flow.
    fn send(&mut self, conns: &Conns, from: HostId, to: HostId, msg: Msg, out: &mut Actions) -> FlowId {
        let f = *self.flow_of.entry((from, to)).or_insert_with(|| out.dial(conns, from, to));
        let bytes = match msg {
            Msg::Request { .. } => REQUEST_PAYLOAD_BYTES as u64,
            Msg::Reply { bytes, .. } => bytes,
        };
        let s = self.stream(f);
        s.written += bytes;
        let end = s.written;
        s.unread.push_back((end, msg));
        out.push(Action::Write(f, bytes));
        f
    }

    /// Flow `f`'s queue is at or above the busy limit: bytes written and not yet acknowledged
    /// (a flow dialled by actions not yet carried out has acknowledged nothing).
    fn busy(&self, conns: &Conns, f: FlowId) -> bool {
        let acked = if (f as usize) < conns.len() { conns.get(f).sender.snd_una - 1 } else { 0 };
        self.streams[f as usize].written - acked >= self.busy_limit
    }

    fn stream(&mut self, f: FlowId) -> &mut Stream {
        let i = f as usize;
        if i >= self.streams.len() {
            self.streams.resize_with(i + 1, Stream::default);
        }
        &mut self.streams[i]
    }

    /// Flow `f`'s receiving node has in-order stream bytes up to `to` (from `from`): the
    /// messages they complete are read, in order. A request goes to the node's vnode; a reply
    /// counts towards its get.
    pub(crate) fn on_delivered(&mut self, cx: &mut Ctx, conns: &Conns, f: FlowId, from: u64, to: u64, out: &mut Actions) {
        let node = conns.get(f).hosts.1;
        let sender = conns.get(f).hosts.0;
        self.gets.node_bytes_received[node as usize] += to - from;
        let mut requests = false;
        while let Some(&(end, msg)) = self.streams[f as usize].unread.front() {
            if end > to {
                break;
            }
            self.streams[f as usize].unread.pop_front();
            match msg {
                Msg::Request { get, bytes } => {
                    self.mailbox[node as usize].push_back((sender, get, bytes));
                    requests = true;
                }
                Msg::Reply { get, bytes } => {
                    self.gets.reply_arrived(cx.now, get, bytes);
                }
            }
        }
        if requests && !self.vnode_suspended[node as usize] {
            self.run_vnode(conns, node, out);
        }
    }

    /// An ACK reached flow `f`'s sender: if the flow is no longer busy, the processes
    /// suspended on it resume, in the order they were suspended.
    pub(crate) fn on_acked(&mut self, conns: &Conns, f: FlowId, out: &mut Actions) {
        if !self.waiting.contains_key(&f) || self.busy(conns, f) {
            return;
        }
        let mut waiters = self.waiting.remove(&f).unwrap_or_default();
        while let Some(w) = waiters.pop_front() {
            match w {
                Waiter::Vnode(node) => {
                    self.vnode_suspended[node as usize] = false;
                    self.run_vnode(conns, node, out);
                }
                Waiter::Fsm(slot) => {
                    let p = self.pending[slot].take().expect("a suspended get");
                    self.free_pending.push(slot);
                    self.run_fsm(conns, p, out);
                }
            }
        }
    }
}
