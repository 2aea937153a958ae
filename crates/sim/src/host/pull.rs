//! The connections' side of the receiver-driven transports (NDP, receiver credit): a
//! flow's sender writes and answers pulls (`ndp::PullSender`); its receiving end
//! reassembles (the flow's `TcpReceiver`), acknowledges each packet at once, NACKs each
//! trimmed header, and asks its host's pacer (`pacer::PullPacer`) for the pulls or credits
//! that clock the sender. Packets on the wire:
//!
//! | kind | from | carries |
//! |---|---|---|
//! | `Data` | sender | `seq`, `len`; `ack`: the flow's length; `ts`: when sent |
//! | `Header` | a trimming switch | the trimmed packet's `seq`, `len` |
//! | `Ack` / `Nack` | receiver, at once | `seq` answered; `ack`: bytes held in order + 1; `wnd`: the pull number; [`PULL`]: the pull rides on it; `ts`: the data's |
//! | `Pull` | receiver's pacer | `wnd`: the pull (credit) number; `ack` as above |
//! | `Bounced` | a trimming switch | the returned header's `seq`, `len` |
//!
//! Every control packet is `header` bytes on the wire (htsim's NDP: 64).

use super::conn::{PullFlow, PullSink};
use super::pacer::{PullPacer, Pulled};
use super::{Arrival, Conns};
use crate::ctx::Ctx;
use crate::event::{Event, FlowId};
use crate::net::{Fabric, HostId};
use crate::packet::{Kind, Packet, PULL};
use crate::time::serialization_time;
use crate::trace::EventKind;

impl Conns {
    /// The pacer of `host`'s arriving flows, made when its first flow is: one full data
    /// packet's time on the host's link apart (NDP §3.2's "paced at the receiver's link
    /// rate"; htsim's `_packet_drain_time`).
    pub(super) fn pacer_for(&mut self, net: &Fabric, host: HostId) {
        let h = host as usize;
        if self.pacers.len() <= h {
            self.pacers.resize_with(h + 1, || None);
        }
        if self.pacers[h].is_none() {
            let rate = net.topology().ports[net.topology().nic(host) as usize].rate_bps;
            let interval = serialization_time(self.sender_cfg.mss + self.header as u64, rate);
            self.pacers[h] = Some(PullPacer::new(interval));
        }
    }

    fn pull_flow(&mut self, f: FlowId) -> &mut PullFlow {
        self.conns[f as usize].pull.as_deref_mut().expect("a receiver-driven flow")
    }

    /// The sending end of receiver-driven flow `f` writes `bytes`; true if it sent.
    pub(super) fn write_pull(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId, bytes: u64) -> bool {
        if self.clocks.is_some() {
            let (phase, held) = (self.phase(f), net.held_through(f, cx.now));
            self.clocks.as_mut().expect("kept").written(f, phase, cx.now, held, bytes);
        }
        let mut out = std::mem::take(&mut self.scratch);
        self.pull_flow(f).sender.write(cx.now, bytes, &mut out);
        self.scratch = out;
        self.transmit_pull(cx, net, f)
    }

    /// Put the packets flow `f`'s sender just made (in `scratch`) on its NIC, and keep its
    /// timer; true if there were any.
    fn transmit_pull(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) -> bool {
        let fl = &self.conns[f as usize];
        let (conn, measured) = (fl.server_conn, fl.measured);
        let p = fl.pull.as_deref().expect("a receiver-driven flow");
        let total = p.sender.flow_size();
        let sent_any = !self.scratch.is_empty();
        for i in 0..self.scratch.len() {
            let seg = self.scratch[i];
            if cx.recorder.events {
                let kind = if seg.retransmit { EventKind::Rtx } else { EventKind::Tx };
                cx.recorder.event(cx.now, kind, f, seg.seq, seg.len as u64, None);
            }
            let mut pkt = Packet::new(f, Kind::Data, self.header + seg.len, seg.len, seg.seq, total);
            pkt.conn = conn;
            pkt.ts = cx.now;
            if measured {
                self.counters.data_bytes_sent += seg.len as u64;
            }
            self.send_data::<false>(cx, net, f, pkt);
        }
        self.scratch.clear();
        if sent_any && self.clocks.is_some() {
            self.clock_progress(cx, net, f);
        }
        if let Some(t) = self.pull_flow(f).sender.take_timer_request() {
            cx.queue.push(t, Event::RtoTimer(f));
        }
        sent_any
    }

    /// An ACK, NACK, pull or returned header reached the sending end of receiver-driven
    /// flow `p.flow`.
    pub(super) fn at_pull_sender(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        let f = p.flow;
        if p.kind == Kind::Bounced {
            self.count_lost_payload(f, p.len);
        }
        let measured = self.conns[f as usize].measured;
        if self.clocks.is_some() {
            self.clock_tick(cx, net, f);
        }
        let mut out = std::mem::take(&mut self.scratch);
        let s = &mut self.pull_flow(f).sender;
        let was_done = s.done;
        match p.kind {
            Kind::Ack => s.on_ack(cx.now, p.seq, p.ack, p.ts, p.has(PULL).then_some(p.wnd), &mut out),
            Kind::Nack => s.on_nack(cx.now, p.seq, p.wnd, p.has(PULL), &mut out),
            Kind::Pull => s.on_pull(cx.now, p.wnd, &mut out),
            Kind::Bounced => s.on_bounce(cx.now, p.seq, &mut out),
            _ => unreachable!("a receiver-driven sender hears ACKs, NACKs, pulls and returned headers"),
        }
        let all_acked = measured && !was_done && s.done;
        self.scratch = out;
        if p.kind == Kind::Ack && self.clocks.is_some() {
            self.clock_progress(cx, net, f); // an ACK is progress, as a transmission is
        }
        let sent = self.transmit_pull(cx, net, f);
        Arrival::Acked { flow: f, sent, all_acked }
    }

    /// Flow `f`'s packet at `seq` reached its receiver whole (the time breakdown: a trimmed
    /// packet's resend ends its trim recovery). Out of line: off the per-packet path.
    #[inline(never)]
    fn clock_arrived(&mut self, cx: &Ctx, net: &Fabric, f: FlowId, seq: u64) {
        let (phase, held) = (self.phase(f), net.held_through(f, cx.now));
        if let Some(c) = &mut self.clocks {
            c.arrived(f, seq, phase, cx.now, held);
        }
    }

    /// The trims the fabric noted since the last call: each receiver-driven flow is in
    /// `trim_recovery` until the trimmed packet's resend arrives (the time breakdown; a TCP
    /// flow's trim is a loss its own recovery states count).
    #[inline(never)]
    pub(crate) fn clock_trims(&mut self, cx: &Ctx, net: &mut Fabric) {
        let Some(trims) = net.take_trims() else { return };
        let trims: Vec<(FlowId, u64)> = trims.collect();
        for (f, seq) in trims {
            if self.conns[f as usize].pull.is_some() {
                let (phase, held) = (self.phase(f), net.held_through(f, cx.now));
                self.clocks.as_mut().expect("kept").trimmed(f, seq, phase, cx.now, held);
            }
        }
    }

    /// A trimmed packet's payload is lost: counted as dropped when its header reaches the
    /// receiver (or returns to the sender, or is dropped itself).
    pub(super) fn count_lost_payload(&mut self, f: FlowId, len: u32) {
        if self.conns[f as usize].measured {
            self.counters.data_bytes_dropped += len as u64;
        } else {
            self.counters.background_bytes_dropped += len as u64;
        }
    }

    /// A data packet reached the receiving end of receiver-driven flow `p.flow`: its bytes
    /// are reassembled, an ACK goes back at once, and a pull (NDP) or the flow's credit
    /// (receiver credit) is asked for.
    pub(super) fn on_pull_data(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        let f = p.flow;
        if self.clocks.is_some() {
            self.clock_arrived(cx, net, f, p.seq);
        }
        let fl = &mut self.conns[f as usize];
        if fl.measured {
            self.counters.data_bytes_arrived += p.len as u64;
        }
        let before = fl.receiver.rcv_nxt - 1;
        let got = fl.receiver.on_segment(cx.now, p.seq, p.len);
        if fl.measured {
            self.counters.app_bytes += got.delivered;
        }
        let complete = fl.receiver.rcv_nxt > p.ack;
        self.answer(cx, net, p, Kind::Ack, complete);
        Arrival::Data { flow: f, len: p.len, from: before, to: before + got.delivered }
    }

    /// A trimmed header reached the receiving end of flow `p.flow`: its payload is lost; a
    /// receiver-driven flow NACKs it at once and asks for a pull or a credit to have it
    /// sent again; a TCP flow's receiver ignores it (TCP over trimming ports: a drop
    /// whose header still crossed the fabric).
    pub(super) fn on_header(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet) -> Arrival {
        self.count_lost_payload(p.flow, p.len);
        if self.conns[p.flow as usize].pull.is_some() {
            let complete = self.conns[p.flow as usize].receiver.rcv_nxt > p.ack;
            self.answer(cx, net, p, Kind::Nack, complete);
        }
        Arrival::Nothing
    }

    /// The receiving end answers data or header `p` with an ACK or a NACK (`kind`), and
    /// asks for what the transport asks for: NDP a pull, carried by the answer if the
    /// pacer lets it go now; receiver credit the flow's credits, the first time, and one
    /// for each header. `complete`: the receiver has the whole flow, and its pulls owed are
    /// dropped.
    fn answer(&mut self, cx: &mut Ctx, net: &mut Fabric, p: Packet, kind: Kind, complete: bool) {
        let f = p.flow;
        let (dst, mss) = (self.conns[f as usize].hosts.1 as usize, self.sender_cfg.mss);
        let fl = &mut self.conns[f as usize];
        let conn = fl.conn;
        let ack = fl.receiver.rcv_nxt;
        let pacer = self.pacers[dst].as_mut().expect("a receiving host's pacer");
        let flow = fl.pull.as_deref_mut().expect("a receiver-driven flow");
        // the receiver knows the unscheduled window: given, or its path's BDP, which it
        // works out as the sender does
        let first_window = flow.sender.first_window();
        let mut reply = Packet::new(f, kind, self.header, 0, p.seq, ack);
        reply.ts = p.ts;
        reply.conn = conn;
        match &mut flow.sink {
            PullSink::Ndp(sink) => {
                sink.pull_no += 1;
                sink.headers += u64::from(kind == Kind::Nack);
                reply.wnd = sink.pull_no;
                if pacer.request(cx.now, f) == Pulled::Now {
                    reply.ecn |= PULL;
                }
                if complete {
                    // (again for a late duplicate: htsim's release_pulls at every arrival
                    // that finds the flow whole)
                    sink.done = true;
                    pacer.flush(f);
                }
            }
            PullSink::Credit(sink) => {
                let owed = sink.learn(p.ack, mss, first_window) + u32::from(kind == Kind::Nack);
                sink.headers += u64::from(kind == Kind::Nack);
                if complete && !sink.done {
                    sink.done = true;
                    pacer.flush(f);
                } else if !sink.done {
                    pacer.owe(cx.now, f, owed);
                }
            }
        }
        if let Some(t) = pacer.take_timer_request() {
            cx.queue.push(t, Event::PullTimer(dst as HostId));
        }
        self.send_from_receiver::<false>(cx, net, reply);
    }

    /// `host`'s pacer may send its next pull: to the flow whose turn it is.
    pub(crate) fn on_pull_timer(&mut self, cx: &mut Ctx, net: &mut Fabric, host: HostId) {
        let pacer = self.pacers[host as usize].as_mut().expect("a receiving host's pacer");
        let next = pacer.on_timer(cx.now);
        if let Some(t) = pacer.take_timer_request() {
            cx.queue.push(t, Event::PullTimer(host));
        }
        let Some(f) = next else { return };
        let owed = self.pacers[host as usize].as_ref().map_or(0, |p| p.owed(f));
        let fl = &mut self.conns[f as usize];
        let (conn, ack) = (fl.conn, fl.receiver.rcv_nxt);
        let number = match &mut fl.pull.as_deref_mut().expect("a receiver-driven flow").sink {
            // the pulls queued for one flow are its latest numbers (a pull goes at once only
            // when none is queued): the oldest of them goes now
            PullSink::Ndp(sink) => sink.pull_no - owed,
            PullSink::Credit(sink) => {
                sink.credit_no += 1;
                sink.credit_no
            }
        };
        let mut pull = Packet::new(f, Kind::Pull, self.header, 0, 0, ack);
        pull.wnd = number;
        pull.conn = conn;
        pull.ts = cx.now; // when the pacer let it go (as a TSval; the harness reads it)
        self.send_from_receiver::<false>(cx, net, pull);
    }

    /// Receiver-driven flow `f`'s retransmission timer may expire; true if it sent.
    pub(super) fn on_pull_rto(&mut self, cx: &mut Ctx, net: &mut Fabric, f: FlowId) -> bool {
        if self.clocks.is_some() {
            self.clock_tick(cx, net, f);
        }
        let mut out = std::mem::take(&mut self.scratch);
        let timed_out = self.pull_flow(f).sender.on_timer_event(cx.now, &mut out);
        self.scratch = out;
        if timed_out {
            if let Some(c) = &mut self.clocks {
                c.timeout(f);
            }
            net.note_timeout(cx, f);
        }
        self.transmit_pull(cx, net, f)
    }
}
