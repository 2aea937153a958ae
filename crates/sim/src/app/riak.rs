//! The Riak-style get workload (Fritchie, `003_a133663d5dbcfa75.txt`): "Riak will create a
//! new process to coordinate the operation. That new process will send 'get' requests to
//! three different nodes and await their replies. Each server that receives a 'get'
//! request will send a copy of the key, its value, and its metadata dictionary back to the
//! coordinator"; in a busy cluster "each cluster member is taking in many thousands of
//! queries per second".
//!
//! Every node coordinates gets arriving as a Poisson process; each get asks `replicas`
//! other nodes, chosen uniformly, and completes when `read_quorum` replies have fully
//! arrived (Riak's default R is a quorum of N = 3, i.e. 2: Riak docs, "Replication
//! Properties"); the other replies still arrive ("Riak attempts to fetch everything from
//! all N replicas", the author in the blog's comments). Replies from one replica to one
//! coordinator travel on one persistent TCP connection, one after another; requests travel
//! its reverse direction, in order (a TCP byte stream delivers them in order, so a lost
//! request holds the later ones back). This module keeps that bookkeeping and decides; the
//! world moves the packets.

use std::collections::VecDeque;

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal};
use serde::{Deserialize, Serialize};

use super::latency::Latencies;
use super::{Action, Actions};
use crate::ctx::Ctx;
use crate::event::FlowId;
use crate::host::Conns;
use crate::net::HostId;
use crate::time::{Time, PS_PER_S};

/// How reply sizes are drawn around their mean `reply_bytes`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplySizeDist {
    /// Every reply is `reply_bytes`.
    #[default]
    Fixed,
    /// Exponential with mean `reply_bytes`.
    Exponential,
    /// Lognormal with mean `reply_bytes` and shape sigma = [`LOGNORMAL_SIGMA`]: mu = ln(mean)
    /// - sigma^2 / 2, so the median is mean x e^(-1/2) and one reply in a hundred is above
    /// about 6 x the mean (values spread as object sizes in key-value stores do).
    Lognormal,
}

/// The lognormal reply sizes' shape parameter.
pub const LOGNORMAL_SIGMA: f64 = 1.0;

/// A sampler of reply sizes, at least one byte each.
#[derive(Clone, Debug)]
pub enum ReplySizes {
    Fixed(u64),
    Exponential(Exp<f64>),
    Lognormal(LogNormal<f64>),
}

impl ReplySizes {
    pub fn new(dist: ReplySizeDist, mean_bytes: u64) -> Self {
        let mean = mean_bytes as f64;
        match dist {
            ReplySizeDist::Fixed => ReplySizes::Fixed(mean_bytes),
            ReplySizeDist::Exponential => ReplySizes::Exponential(Exp::new(1.0 / mean).expect("a positive mean")),
            ReplySizeDist::Lognormal => {
                let mu = mean.ln() - LOGNORMAL_SIGMA * LOGNORMAL_SIGMA / 2.0;
                ReplySizes::Lognormal(LogNormal::new(mu, LOGNORMAL_SIGMA).expect("a finite mu"))
            }
        }
    }

    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        let x = match self {
            ReplySizes::Fixed(b) => return *b,
            ReplySizes::Exponential(d) => d.sample(rng),
            ReplySizes::Lognormal(d) => d.sample(rng),
        };
        (x.round() as u64).max(1)
    }
}

/// One get.
#[derive(Clone, Copy, Debug)]
struct Get {
    started: Time,
    /// Replies fully arrived so far; at `replicas` the get is retired.
    replies: u32,
}

/// A request on a connection's reverse direction: which get, and the reply size it asks for.
#[derive(Clone, Copy, Debug)]
struct Request {
    get: u64,
    bytes: u64,
    arrived: bool,
}

/// What a request's arrival at its replica let it read, in stream order.
pub type Readable = Vec<(u64, u64)>;

/// Per connection (replica -> coordinator): the requests sent and not yet read, and the
/// replies written and not yet fully arrived.
#[derive(Clone, Debug, Default)]
struct Conn {
    /// Requests in the order the coordinator sent them; `read` of them read already.
    requests: VecDeque<Request>,
    read: u64,
    /// Replies in the order the replica wrote them: (stream offset that ends it, get).
    replies: VecDeque<(u64, u64)>,
    /// Stream bytes the replica has written.
    written: u64,
    /// Stream offset where the last reply fully delivered ends.
    whole: u64,
}

/// The gets of a whole cluster. Memory follows the gets in flight, not the time run: a get
/// is retired once all its replies have arrived, and latencies go to a bounded histogram.
#[derive(Clone, Debug)]
pub struct RiakGets {
    quorum: u32,
    replicas: u32,
    /// The gets from the oldest one not retired (id `first`) to the newest; retired ones
    /// behind a live one wait in place until it retires.
    gets: VecDeque<Get>,
    first: u64,
    conns: Vec<Conn>,
    pub issued: u64,
    pub completed: u64,
    /// Replies the replicas wrote, and their bytes.
    pub replies_written: u64,
    pub reply_bytes_written: u64,
    /// Replies whose last byte reached their coordinator, and their bytes.
    pub replies_delivered: u64,
    pub reply_bytes_delivered: u64,
    /// Latencies of the completed gets, picoseconds.
    pub latencies: Latencies,
    /// Reply payload delivered in order to each node, bytes.
    pub node_bytes_received: Vec<u64>,
}

impl RiakGets {
    /// Gets ask `replicas` nodes and complete at `quorum` (<= `replicas`) replies.
    pub fn new(nodes: usize, quorum: u32, replicas: u32) -> Self {
        assert!(quorum <= replicas, "the read quorum is at most the replicas asked");
        RiakGets {
            quorum,
            replicas,
            gets: VecDeque::new(),
            first: 0,
            conns: Vec::new(),
            issued: 0,
            completed: 0,
            replies_written: 0,
            reply_bytes_written: 0,
            replies_delivered: 0,
            reply_bytes_delivered: 0,
            latencies: Latencies::default(),
            node_bytes_received: vec![0; nodes],
        }
    }

    /// A get starts now; its id.
    pub fn issue(&mut self, now: Time) -> u64 {
        self.gets.push_back(Get { started: now, replies: 0 });
        self.issued += 1;
        self.issued - 1
    }

    /// Gets held in memory: from the oldest not retired to the newest.
    pub fn gets_held(&self) -> usize {
        self.gets.len()
    }

    /// The coordinator sends, on `flow`, the request of `get` for a reply of `bytes`; its
    /// number on the connection (what the packet carries).
    pub fn send_request(&mut self, flow: FlowId, get: u64, bytes: u64) -> u64 {
        let c = self.conn(flow);
        c.requests.push_back(Request { get, bytes, arrived: false });
        c.read + c.requests.len() as u64 - 1
    }

    /// Request `number` of `flow` reached the replica. Returns the (get, reply bytes) the
    /// replica can now read, in order: none while an earlier request is missing.
    pub fn request_arrived(&mut self, flow: FlowId, number: u64, out: &mut Readable) {
        let c = self.conn(flow);
        let at = (number - c.read) as usize;
        c.requests[at].arrived = true;
        while c.requests.front().is_some_and(|r| r.arrived) {
            let r = c.requests.pop_front().unwrap();
            c.read += 1;
            out.push((r.get, r.bytes));
        }
    }

    /// The replica writes its reply for `get`, `bytes` long, on `flow` after what it wrote.
    pub fn write_reply(&mut self, flow: FlowId, get: u64, bytes: u64) {
        let c = self.conn(flow);
        c.written += bytes;
        let end = c.written;
        c.replies.push_back((end, get));
        self.note_reply_written(bytes);
    }

    /// A replica wrote a reply of `bytes` (on whatever connection carries it).
    pub fn note_reply_written(&mut self, bytes: u64) {
        self.replies_written += 1;
        self.reply_bytes_written += bytes;
    }

    /// A reply of `bytes` to `get` fully reached its coordinator now: it counts towards its
    /// get, which completes at the quorum and is retired (with every older get all of whose
    /// replies arrived) at the last. True if this reply completed its get.
    pub fn reply_arrived(&mut self, now: Time, get: u64, bytes: u64) -> bool {
        self.replies_delivered += 1;
        self.reply_bytes_delivered += bytes;
        let g = &mut self.gets[(get - self.first) as usize];
        g.replies += 1;
        let completes = g.replies == self.quorum;
        if completes {
            self.completed += 1;
            self.latencies.record((now - g.started).0);
        }
        while self.gets.front().is_some_and(|g| g.replies == self.replicas) {
            self.gets.pop_front();
            self.first += 1;
        }
        completes
    }

    /// `flow`'s coordinator `node` got stream bytes up to offset `delivered` (from
    /// `before`): the replies they complete count towards their gets, in order; each is
    /// told to `on_reply` (true: it completed its get).
    pub fn delivered(
        &mut self,
        now: Time,
        flow: FlowId,
        node: usize,
        before: u64,
        delivered: u64,
        mut on_reply: impl FnMut(bool),
    ) {
        self.node_bytes_received[node] += delivered - before;
        while let Some(&(end, get)) = self.conns[flow as usize].replies.front() {
            if end > delivered {
                break;
            }
            let c = &mut self.conns[flow as usize];
            c.replies.pop_front();
            let bytes = end - c.whole;
            c.whole = end;
            on_reply(self.reply_arrived(now, get, bytes));
        }
    }

    fn conn(&mut self, flow: FlowId) -> &mut Conn {
        let i = flow as usize;
        if i >= self.conns.len() {
            self.conns.resize_with(i + 1, Conn::default);
        }
        &mut self.conns[i]
    }
}

/// The Riak workload: the servers are the nodes; each coordinates gets, asks replicas over
/// persistent connections, and counts replies as their bytes arrive.
///
/// Connections: one per ordered (replica -> coordinator) pair, pre-established (no
/// handshake, as Riak's long-lived inter-node connections), made on first use: an idle
/// connection sends nothing, so making it at the start would change no result.
pub struct Riak {
    pub gets: RiakGets,
    sizes: ReplySizes,
    rate: f64,
    replicas: usize,
    /// (replica, coordinator) -> its connection's flow (looked up only, never iterated).
    flow_of: std::collections::HashMap<(HostId, HostId), FlowId>,
    /// Scratch: the nodes a get may ask, and the requests a replica can read.
    others: Vec<HostId>,
    readable: Readable,
}

/// The timer kind of a node's next get.
const GET: u8 = 0;

impl Riak {
    /// `nodes` nodes, each coordinating `rate` gets per second, each asking `replicas`
    /// nodes for a reply sized as `sizes` draws and completing at `quorum` replies.
    pub fn new(nodes: usize, rate: f64, replicas: u32, quorum: u32, sizes: ReplySizes) -> Riak {
        Riak {
            gets: RiakGets::new(nodes, quorum, replicas),
            sizes,
            rate,
            replicas: replicas as usize,
            flow_of: std::collections::HashMap::new(),
            others: Vec::with_capacity(nodes),
            readable: Vec::new(),
        }
    }

    /// Every node's first get, in node order.
    pub(crate) fn on_start(&mut self, cx: &mut Ctx, out: &mut Actions) {
        for node in 0..self.gets.node_bytes_received.len() as u32 {
            let at = cx.now + next_get_in(self.rate, &mut cx.rng);
            out.push(Action::Timer { at, kind: GET, arg: node });
        }
    }

    /// Node `coordinator` starts a get: a request to each of `replicas` other nodes chosen
    /// uniformly (a partial Fisher-Yates shuffle), each for a reply of a drawn size; and
    /// its next get is drawn.
    pub(crate) fn on_timer(&mut self, cx: &mut Ctx, conns: &Conns, coordinator: u32, out: &mut Actions) {
        let get = self.gets.issue(cx.now);
        let nodes = self.gets.node_bytes_received.len() as u32;
        self.others.clear();
        self.others.extend((0..nodes).filter(|&x| x != coordinator));
        for k in 0..self.replicas {
            let j = cx.rng.random_range(k..self.others.len());
            self.others.swap(k, j);
            let replica = self.others[k];
            let pair = self.flow_of.entry((replica, coordinator));
            let f = *pair.or_insert_with(|| out.dial(conns, replica, coordinator));
            let bytes = self.sizes.draw(&mut cx.rng);
            let number = self.gets.send_request(f, get, bytes);
            out.push(Action::Request(f, number));
        }
        let next = cx.now + next_get_in(self.rate, &mut cx.rng);
        out.push(Action::Timer { at: next, kind: GET, arg: coordinator });
    }

    /// Request `number` of flow `f` reached its replica: it writes the reply of every
    /// request it can now read, in order, onto the connection.
    pub(crate) fn on_request(&mut self, f: FlowId, number: u64, out: &mut Actions) {
        let mut readable = std::mem::take(&mut self.readable);
        self.gets.request_arrived(f, number, &mut readable);
        for (get, bytes) in readable.drain(..) {
            self.gets.write_reply(f, get, bytes);
            out.push(Action::Write(f, bytes));
        }
        self.readable = readable;
    }

    /// Flow `f`'s coordinator has in-order stream bytes up to `to` (from `from`). With the
    /// time breakdown kept, each reply that arrived ends its part (`Action::Close`: the
    /// connection stays open), a block's last when it completed its get.
    pub(crate) fn on_delivered(&mut self, cx: &mut Ctx, conns: &Conns, f: FlowId, from: u64, to: u64, out: &mut Actions) {
        let node = conns.get(f).hosts.1 as usize;
        if conns.clocks.is_none() {
            return self.gets.delivered(cx.now, f, node, from, to, |_| {});
        }
        self.gets.delivered(cx.now, f, node, from, to, |completes| out.push(Action::Close(f, completes)));
    }
}

/// Time to a node's next get: exponential with mean 1 / `rate` seconds (a Poisson process),
/// at least 1 ps so time moves.
pub fn next_get_in(rate_per_s: f64, rng: &mut impl Rng) -> Time {
    let gap = Exp::new(rate_per_s).expect("a positive rate").sample(rng);
    Time(((gap * PS_PER_S as f64) as u64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_get_completes_at_the_quorum_not_before_nor_again() {
        let mut g = RiakGets::new(4, 2, 3);
        let id = g.issue(Time(100));
        // three replicas, one connection each (flows 0, 1, 2), 1000 B replies
        for f in 0..3 {
            assert_eq!(g.send_request(f, id, 1000), 0);
            let mut out = vec![];
            g.request_arrived(f, 0, &mut out);
            assert_eq!(out, vec![(id, 1000)]);
            g.write_reply(f, id, 1000);
        }
        g.delivered(Time(200), 0, 3, 0, 1000, |_| {});
        g.delivered(Time(250), 1, 3, 0, 999, |_| {});
        assert_eq!(g.completed, 0, "one reply and 999 of 1000 bytes of another: not yet");
        assert_eq!((g.replies_delivered, g.reply_bytes_delivered), (1, 1000));
        assert_eq!((g.replies_written, g.reply_bytes_written), (3, 3000));
        g.delivered(Time(300), 1, 3, 999, 1000, |_| {});
        assert_eq!((g.completed, g.latencies.len(), g.latencies.max()), (1, 1, Some(200)));
        assert_eq!(g.gets_held(), 1, "its third reply is still due");
        g.delivered(Time(400), 2, 3, 0, 1000, |_| {});
        assert_eq!(g.completed, 1, "the third reply arrives but the get completed once");
        assert_eq!((g.latencies.len(), g.gets_held()), (1, 0), "and the get is retired");
        assert_eq!(g.node_bytes_received, vec![0, 0, 0, 3000]);
    }

    #[test]
    fn replies_on_one_connection_are_attributed_in_order_by_offset() {
        // quorum 1: each reply completes its get. Three gets on one connection, replies of
        // 500, 300 and 200 B end at offsets 500, 800, 1000
        let mut g = RiakGets::new(2, 1, 1);
        let ids: Vec<u64> = (0..3).map(|i| g.issue(Time(i))).collect();
        for (&id, bytes) in ids.iter().zip([500, 300, 200]) {
            g.send_request(0, id, bytes);
        }
        let mut out = vec![];
        for n in 0..3 {
            g.request_arrived(0, n, &mut out);
        }
        for &(id, bytes) in &out {
            g.write_reply(0, id, bytes);
        }
        g.delivered(Time(10), 0, 1, 0, 799, |_| {});
        assert_eq!((g.latencies.len(), g.latencies.max()), (1, Some(10)), "offset 799 ends the first reply only");
        assert_eq!(g.gets_held(), 2, "the first get is retired");
        g.delivered(Time(20), 0, 1, 799, 1000, |_| {});
        // both others end by 1000, in order: latencies 19 and 18 ps (exact below 2048 ps)
        let l = &g.latencies;
        assert_eq!((l.len(), l.percentile(1.0), l.percentile(50.0), l.max()), (3, Some(10), Some(18), Some(19)));
        assert_eq!(g.gets_held(), 0);
    }

    #[test]
    fn memory_follows_the_gets_in_flight_not_the_gets_issued() {
        // 100,000 gets, each answered by its 3 replicas (flows 0-2) before the next: one
        // get is ever held, and the latencies' histogram stays small
        let mut g = RiakGets::new(4, 2, 3);
        let mut out = vec![];
        for i in 0..100_000u64 {
            let id = g.issue(Time(i * 1_000_000));
            for f in 0..3 {
                let n = g.send_request(f, id, 100);
                g.request_arrived(f, n, &mut out);
                g.write_reply(f, id, 100);
                g.delivered(Time(i * 1_000_000 + 5000 + f as u64), f, 3, i * 100, (i + 1) * 100, |_| {});
            }
            out.clear();
            assert_eq!(g.gets_held(), 0);
        }
        assert_eq!((g.completed, g.latencies.len(), g.latencies.max()), (100_000, 100_000, Some(5001)));
    }

    #[test]
    fn a_late_request_holds_back_the_ones_behind_it_as_a_byte_stream_does() {
        let mut g = RiakGets::new(2, 1, 1);
        for id in 0..3 {
            let get = g.issue(Time::ZERO);
            assert_eq!(g.send_request(5, get, 100 + id), id);
        }
        let mut out = vec![];
        g.request_arrived(5, 1, &mut out);
        g.request_arrived(5, 2, &mut out);
        assert!(out.is_empty(), "request 0 was lost: 1 and 2 wait for it");
        g.request_arrived(5, 0, &mut out);
        assert_eq!(out, vec![(0, 100), (1, 101), (2, 102)]);
    }

    #[test]
    fn reply_sizes_have_the_mean_asked_for() {
        // 200,000 draws: the sample mean's standard error is 0.22 % (exponential) and 0.29 %
        // (lognormal, sigma 1: sd = mean x sqrt(e - 1)); 1.5 % is five of those
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for dist in [ReplySizeDist::Exponential, ReplySizeDist::Lognormal] {
            let sizes = ReplySizes::new(dist, 100_000);
            let n = 200_000;
            let mean = (0..n).map(|_| sizes.draw(&mut rng)).sum::<u64>() as f64 / n as f64;
            assert!((mean / 100_000.0 - 1.0).abs() < 0.015, "{dist:?}: {mean}");
        }
        assert_eq!(ReplySizes::new(ReplySizeDist::Fixed, 1234).draw(&mut rng), 1234);
    }

    #[test]
    fn gets_arrive_at_the_rate_asked_for() {
        // 100,000 gaps of a 5000/s Poisson process: mean 200 us, standard error 0.32 %
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let n = 100_000;
        let total: u64 = (0..n).map(|_| next_get_in(5000.0, &mut rng).0).sum();
        let mean_us = total as f64 / n as f64 / 1e6;
        assert!((mean_us / 200.0 - 1.0).abs() < 0.016, "{mean_us}");
    }
}
