//! What an output port holds beyond its static drop-tail FIFO: one arm per queue discipline.
//!
//! A port without one (`OutputPort::is_plain`, with no ECN marking or PFC either) takes the
//! fabric's short paths; a port with one refuses every packet at its static admission test,
//! which sends it down the port's own path where the discipline decides what enters, which
//! waiting packet leaves next and when it may (a shaper's tokens: `ready_at`), and learns
//! when each one leaves (`net::port`). A new discipline is a module of its own and an arm here.

use super::buffer::PortBuffer;
use super::qos::Classes;
use super::trim::Trim;
use super::shaper::Shaper;
use crate::event::PktId;
use crate::time::Time;

/// A port's queue discipline.
#[derive(Clone, Debug)]
pub enum Discipline {
    /// A share of its switch's pool with dynamic thresholds, QoS classes, or both
    /// (`net::buffer`, `net::qos`).
    Shared(PortBuffer),
    /// Packet trimming: a data queue and a header queue served first (`net::trim`). Its
    /// admission is its own (`OutputPort::offer_trimming`), not the shared hooks below.
    Trim(Trim),
    /// A token-bucket shaper (Linux tbf) gating the link, with its own byte FIFO
    /// (`net::shaper`): a packet waits until the bucket holds its bytes' worth.
    Shaped(Shaper),
}

impl Discipline {
    /// A packet of class `class` and `wire` bytes, offered at `now` to a port holding
    /// `held` bytes of which `on_wire` are on the wire, may enter.
    #[inline]
    pub fn admits(&self, now: Time, held: u64, on_wire: u64, wire: u32, class: usize) -> bool {
        match self {
            Discipline::Shared(b) => b.admits(now, held, on_wire, wire, class),
            Discipline::Trim(_) => unreachable!("a trimming port admits through offer_trimming"),
            // tbf's bfifo counts what waits in it; the packet on the wire has left it
            Discipline::Shaped(s) => s.admits(held - on_wire, wire),
        }
    }

    /// The packet was admitted.
    #[inline]
    pub fn admit(&mut self, wire: u32) {
        match self {
            Discipline::Shared(b) => b.admit(wire),
            Discipline::Trim(_) => {}
            Discipline::Shaped(_) => {}
        }
    }

    /// A packet of class `class` and `wire` bytes started its transmission at `now`, ending
    /// at `end`.
    #[inline]
    pub fn started(&mut self, now: Time, end: Time, wire: u32, class: usize) {
        match self {
            Discipline::Shared(b) => b.started(end, wire, class),
            Discipline::Trim(t) => t.started(end, wire, class),
            Discipline::Shaped(s) => s.release(now, wire),
        }
    }

    /// The earliest instant, `now` or later, at which a packet of `wire` bytes may start on
    /// a free link (a shaper's tokens; `now` for every other discipline).
    #[inline]
    pub fn ready_at(&self, now: Time, wire: u32) -> Time {
        match self {
            Discipline::Shared(_) | Discipline::Trim(_) => now,
            Discipline::Shaped(s) => s.ready_at(now, wire),
        }
    }

    /// Queue a waiting packet (in its class, where there are classes).
    #[inline]
    pub fn push(&mut self, class: usize, id: PktId, wire: u32) {
        match self {
            Discipline::Shared(b) => b.push(class, id, wire),
            Discipline::Trim(t) => t.push(class, id, wire),
            Discipline::Shaped(_) => {} // one FIFO: the port's own
        }
    }

    /// The waiting packet to send next among the classes `eligible` lets send, with its
    /// bytes and class (a trimming port's queue); `None`: the oldest waiting packet.
    #[inline]
    pub fn pop_where(&mut self, eligible: impl Fn(usize) -> bool) -> Option<(PktId, u32, usize)> {
        match self {
            Discipline::Shared(b) => b.pop_where(eligible),
            // (no PFC with trimming: every queue may send)
            Discipline::Trim(t) => t.pop(),
            Discipline::Shaped(_) => None,
        }
    }

    /// The QoS classes, if the discipline has them (PFC pauses them).
    #[inline]
    pub fn classes(&self) -> Option<&Classes> {
        match self {
            Discipline::Shared(b) => b.classes.as_ref(),
            Discipline::Trim(_) => None,
            Discipline::Shaped(_) => None,
        }
    }
}
