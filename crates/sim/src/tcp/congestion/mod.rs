//! Congestion control: how cwnd grows with the ACKs of new data, what ssthresh a loss
//! leaves, and what a retransmission timeout does to both (ns-3's `TcpCongestionOps`,
//! smoltcp's `Controller`). The sender owns cwnd and ssthresh (ns-3's `TcpSocketState`)
//! and hands them here; loss recovery (`tcp::recovery`) asks for ssthresh when it detects
//! a loss. One file per algorithm, one arm each: `newreno` (RFC 5681 AIMD), `cubic`
//! (RFC 9438), chosen by the scenario's `cc`.
//!
//! An enum rather than a trait object: the calls sit on the per-ACK hot path, and a match
//! on one arm costs nothing.

pub mod cubic;
pub mod newreno;

use crate::scenario::Cc;
use crate::tcp::sender::SenderConfig;
use crate::time::Time;

/// What an ACK's growth step may look at besides the windows: CUBIC's curve runs on time.
#[derive(Clone, Copy, Debug)]
pub struct AckClock {
    pub now: Time,
    /// The smoothed RTT, if there has been a sample.
    pub srtt: Option<Time>,
}

/// The congestion controller of one sender.
#[derive(Clone, Debug)]
pub enum Congestion {
    /// RFC 5681 slow start and congestion avoidance, halving on loss.
    NewReno(newreno::NewReno),
    /// RFC 9438 CUBIC.
    Cubic(cubic::Cubic),
}

impl Congestion {
    pub fn new(cfg: &SenderConfig) -> Self {
        match cfg.cc {
            Cc::Newreno => Congestion::NewReno(newreno::NewReno::new(cfg)),
            Cc::Cubic => Congestion::Cubic(cubic::Cubic::new(cfg)),
        }
    }

    /// An ACK of `acked` new bytes arrived outside recovery: grow `cwnd`.
    #[inline]
    pub fn on_ack(&mut self, clock: AckClock, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        match self {
            Congestion::NewReno(c) => c.on_ack(cwnd, ssthresh, acked),
            Congestion::Cubic(c) => c.on_ack(clock, cwnd, ssthresh, acked),
        }
    }

    /// A loss was detected with a congestion window of `cwnd`, `in_flight` bytes believed
    /// in the network and a window of `window` bytes (min(cwnd, rwnd)): the new ssthresh.
    #[inline]
    pub fn on_loss(&mut self, cwnd: u64, in_flight: u64, window: u64) -> u64 {
        match self {
            Congestion::NewReno(c) => c.ssthresh_on_loss(in_flight, window),
            Congestion::Cubic(c) => c.on_loss(cwnd, in_flight),
        }
    }

    /// The sender had nothing outstanding for `idle` and the application now writes more:
    /// time spent application-limited must not count as growth time (CUBIC's epoch).
    #[inline]
    pub fn on_idle(&mut self, idle: Time) {
        match self {
            Congestion::NewReno(_) => {}
            Congestion::Cubic(c) => c.on_idle(idle),
        }
    }

    /// The retransmission timer expired: set `cwnd` and `ssthresh`. `repeated`: the
    /// segment had already been retransmitted by a timeout.
    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, window: u64, repeated: bool) {
        match self {
            Congestion::NewReno(c) => c.on_timeout(cwnd, ssthresh, in_flight, window, repeated),
            Congestion::Cubic(c) => c.on_timeout(cwnd, ssthresh, in_flight, repeated),
        }
    }
}
