//! The world's side of the Riak-style workload (`app::riak`): the servers are the nodes;
//! each coordinates gets, asks replicas over persistent connections, and counts replies
//! as their bytes arrive.
//!
//! Connections: one per ordered (replica -> coordinator) pair, pre-established (no
//! handshake, as Riak's long-lived inter-node connections), allocated on first use: an idle
//! connection sends nothing, so making it at the start would change no result.

use std::collections::HashMap;

use rand::Rng;

use super::{World, REQUEST_PAYLOAD_BYTES};
use crate::app::riak::{next_get_in, Readable, ReplySizes, RiakGets};
use crate::event::{Event, FlowId};
use crate::net::HostId;
use crate::packet::{Kind, Packet};
use crate::scenario::Scenario;
use crate::tcp::Segment;
use crate::trace::TraceEvent;

/// The cluster's gets and the connections between its nodes.
pub(super) struct Riak {
    pub(super) gets: RiakGets,
    sizes: ReplySizes,
    rate: f64,
    replicas: usize,
    /// (replica, coordinator) -> its connection's flow (looked up only, never iterated).
    flow_of: HashMap<(HostId, HostId), FlowId>,
    /// Scratch: the nodes a get may ask, and the requests a replica can read.
    others: Vec<HostId>,
    readable: Readable,
}

impl Riak {
    pub(super) fn new(sc: &Scenario) -> Box<Riak> {
        let s = &sc.spec;
        Box::new(Riak {
            gets: RiakGets::new(s.servers as usize, s.read_quorum, s.replicas),
            sizes: ReplySizes::new(s.reply_size_dist, s.reply_bytes),
            rate: s.get_rate,
            replicas: s.replicas as usize,
            flow_of: HashMap::new(),
            others: Vec::with_capacity(s.servers as usize),
            readable: Vec::new(),
        })
    }
}

impl World {
    /// Every node's first get, in node order.
    #[inline(never)] // kept out of the synchronized reads' hot path
    pub(super) fn start_gets(&mut self) {
        let Some(r) = &self.riak else { return };
        let rate = r.rate;
        for node in 0..r.gets.node_bytes_received.len() as u32 {
            let at = self.now + next_get_in(rate, &mut self.rng);
            self.queue.push(at, Event::GetIssue(node));
        }
    }

    /// Node `coordinator` starts a get: a request to each of `replicas` other nodes chosen
    /// uniformly (a partial Fisher-Yates shuffle), each for a reply of a drawn size; and
    /// its next get is drawn.
    #[inline(never)] // kept out of the synchronized reads' hot path
    pub(super) fn issue_get(&mut self, coordinator: u32) {
        let mut r = self.riak.take().expect("the riak workload");
        let get = r.gets.issue(self.now);
        let nodes = r.gets.node_bytes_received.len() as u32;
        r.others.clear();
        r.others.extend((0..nodes).filter(|&x| x != coordinator));
        for k in 0..r.replicas {
            let j = self.rng.random_range(k..r.others.len());
            r.others.swap(k, j);
            let replica = r.others[k];
            let f = match r.flow_of.get(&(replica, coordinator)) {
                Some(&f) => f,
                None => {
                    let f = self.add_flow(replica, coordinator);
                    r.flow_of.insert((replica, coordinator), f);
                    f
                }
            };
            let bytes = r.sizes.draw(&mut self.rng);
            let number = r.gets.send_request(f, get, bytes);
            self.send_request_packet(f, number);
        }
        let next = self.now + next_get_in(r.rate, &mut self.rng);
        self.queue.push(next, Event::GetIssue(coordinator));
        self.riak = Some(r);
    }

    /// The coordinator of flow `f` sends request `seq` (Riak: its number on the
    /// connection; synchronized reads: the bytes asked for). It is data on the same
    /// connection: it carries the cumulative ACK and window, so nothing is left waiting
    /// for the delayed-ACK timer.
    pub(super) fn send_request_packet(&mut self, f: FlowId, seq: u64) {
        let wire = self.header + REQUEST_PAYLOAD_BYTES;
        let fl = &mut self.flows[f as usize];
        fl.receiver.on_ack_sent();
        let mut pkt = Packet::new(f, Kind::Request, wire, REQUEST_PAYLOAD_BYTES, seq, fl.receiver.ack_number());
        pkt.conn = fl.conn;
        pkt.ts = fl.receiver.ts_echo();
        pkt.set_window(fl.receiver.window);
        self.send_from_client::<false>(pkt);
    }

    /// A dropped request enters its NIC again: like any segment TCP sends, it carries the
    /// connection's ACK, window and timestamp echo of now (RFC 793 §3.7 "Managing the
    /// Window", RFC 7323 §4.3), not those of its first sending an RTOmin ago: a stale echo
    /// would make the replica's next RTT sample an RTOmin too long.
    pub(super) fn refresh_request(&mut self, id: crate::event::PktId) {
        let f = self.pool.get(id).flow as usize;
        if self.pool.get(id).conn != self.flows[f].conn {
            return; // its connection was replaced: the replica will count it stale
        }
        let fl = &mut self.flows[f];
        fl.receiver.on_ack_sent();
        let p = self.pool.get_mut(id);
        p.ack = fl.receiver.ack_number();
        p.ts = fl.receiver.ts_echo();
        p.set_window(fl.receiver.window);
    }

    /// Request `number` of flow `f` reached its replica: it writes the reply of every
    /// request it can now read, in order, onto the connection.
    #[inline(never)] // kept out of the synchronized reads' hot path
    pub(super) fn riak_request(&mut self, f: FlowId, number: u64, out: &mut Vec<Segment>) {
        let mut r = self.riak.take().expect("the riak workload");
        let mut readable = std::mem::take(&mut r.readable);
        r.gets.request_arrived(f, number, &mut readable);
        for (get, bytes) in readable.drain(..) {
            r.gets.write_reply(f, get, bytes);
            self.flows[f as usize].sender.write(self.now, bytes, out);
            self.trace::<false>(f, TraceEvent::Write);
            self.transmit::<false>(f, out);
        }
        r.readable = readable;
        self.riak = Some(r);
    }

    /// Flow `f`'s coordinator has in-order stream bytes up to `delivered` (from `before`).
    #[inline(never)] // kept out of the synchronized reads' hot path
    pub(super) fn riak_delivered(&mut self, f: FlowId, before: u64, delivered: u64) {
        let node = self.ends[f as usize].1 as usize;
        let r = self.riak.as_mut().expect("the riak workload");
        r.gets.delivered(self.now, f, node, before, delivered);
    }
}
