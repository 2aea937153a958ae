//! Congestion control: how cwnd grows with the ACKs of new data, what ssthresh a loss
//! leaves, and what a retransmission timeout does to both (ns-3's `TcpCongestionOps`,
//! smoltcp's `Controller`). The sender owns cwnd and ssthresh (ns-3's `TcpSocketState`)
//! and hands them here; loss recovery (`tcp::recovery`) asks for ssthresh when it detects
//! a loss. One file per algorithm, one arm each: `newreno` (RFC 5681 AIMD), `dctcp`
//! (RFC 8257), `cubic` (RFC 9438), `cubic_linux` (Linux's
//! tcp_cubic.c, which `cubic` runs with the scenario's `cubic_linux`). [`Cc`] names them for the scenario's `cc` field.
//! `swift` (SIGCOMM 2020) is the scenario's `transport = swift`, not a `cc`: its window
//! moves with every ACK's delay (`TcpSender::on_ack` calls it), below one packet too.
//!
//! An enum rather than a trait object: the calls sit on the per-ACK hot path, and a match
//! on one arm costs nothing.

pub mod cubic;
pub mod cubic_linux;
pub mod dctcp;
pub mod hystart;
pub mod newreno;
pub mod swift;

use serde::{Deserialize, Serialize};

use crate::tcp::sender::SenderConfig;
use crate::time::Time;

/// The scenario's `cc` field: which congestion control the servers run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cc {
    #[default]
    Newreno,
    Dctcp,
    Cubic,
}

impl Cc {
    /// Its packets are ECN-capable (RFC 3168 §6.1.1) and its receiver echoes marks.
    pub fn uses_ecn(self) -> bool {
        matches!(self, Cc::Dctcp)
    }
}

/// What an ACK's growth step may look at besides the windows: CUBIC's curve runs on time.
#[derive(Clone, Copy, Debug)]
pub struct AckClock {
    pub now: Time,
    /// The smoothed RTT, if there has been a sample.
    pub srtt: Option<Time>,
    /// Before this ACK the data in flight filled cwnd to within a segment: the window, not
    /// the application or the receive window, was what limited the sender (RFC 9438 §5.8;
    /// Linux's `tcp_is_cwnd_limited`). CUBIC looks at it, and reno with `cwnd_limited_growth`.
    pub cwnd_limited: bool,
    /// The bytes in flight before this ACK (Linux's `tcp_is_cwnd_limited` in slow start
    /// compares cwnd with twice the packets out).
    pub prior_flight: u64,
}

/// The congestion controller of one sender.
#[derive(Clone, Debug)]
pub enum Congestion {
    /// RFC 5681 slow start and congestion avoidance, halving on loss.
    NewReno(newreno::NewReno),
    /// RFC 8257: cwnd x (1 - alpha / 2) on ECN marks; NewReno's growth and loss response.
    /// Boxed, so NewReno's senders stay as small as before.
    Dctcp(Box<dctcp::Dctcp>),
    /// RFC 9438 CUBIC. Boxed for the same reason.
    Cubic(Box<cubic::Cubic>),
    /// Swift (`transport = swift`): set by `TcpSender::use_swift`. Boxed.
    Swift(Box<swift::Swift>),
}

impl Congestion {
    pub fn new(cfg: &SenderConfig) -> Self {
        match cfg.cc {
            Cc::Newreno => Congestion::NewReno(newreno::NewReno::new(cfg)),
            Cc::Dctcp => Congestion::Dctcp(Box::new(dctcp::Dctcp::new(cfg))),
            Cc::Cubic => Congestion::Cubic(Box::new(cubic::Cubic::new(cfg))),
        }
    }

    /// An ACK of `acked` new bytes arrived outside recovery: grow `cwnd`.
    #[inline]
    pub fn on_ack(&mut self, clock: AckClock, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        match self {
            Congestion::NewReno(c) => {
                if c.may_grow(clock, *cwnd, ssthresh) {
                    c.on_ack(cwnd, ssthresh, acked)
                }
            }
            Congestion::Dctcp(c) => c.on_ack(cwnd, ssthresh, acked),
            Congestion::Cubic(c) => c.on_ack(clock, cwnd, ssthresh, acked),
            // every ACK's delay moved the window already (`TcpSender::on_ack`)
            Congestion::Swift(_) => {}
        }
    }

    /// A loss was detected with a congestion window of `cwnd`, `in_flight` bytes believed
    /// in the network and a window of `window` bytes (min(cwnd, rwnd)): the new ssthresh.
    #[inline]
    pub fn on_loss(&mut self, cwnd: u64, in_flight: u64, window: u64) -> u64 {
        match self {
            Congestion::NewReno(c) => c.ssthresh_on_loss(cwnd, in_flight, window),
            // RFC 8257 §3.5: a loss is answered as conventional TCP answers it
            Congestion::Dctcp(c) => c.ssthresh_on_loss(cwnd, in_flight, window),
            Congestion::Cubic(c) => c.on_loss(cwnd, in_flight),
            Congestion::Swift(c) => c.on_fast_recovery(cwnd),
        }
    }

    /// Fast recovery begins: Linux's `tcp_init_cwnd_reduction` clears the growth credit
    /// (`snd_cwnd_cnt`) that reno's congestion avoidance counts (`grow_on_recovery_exit`).
    pub fn on_recovery_start(&mut self) {
        match self {
            Congestion::NewReno(c) => c.clear_credit(),
            Congestion::Cubic(c) => c.on_recovery_start(),
            Congestion::Dctcp(_) | Congestion::Swift(_) => {}
        }
    }

    /// An ACK that gave an RTT sample, before loss recovery and growth see it: CUBIC's
    /// HyStart may end slow start (it sets ssthresh).
    #[inline]
    pub fn on_sample(&mut self, s: hystart::Sample, cwnd: u64, ssthresh: &mut u64) {
        if let Congestion::Cubic(c) = self {
            c.on_sample(s, cwnd, ssthresh);
        }
    }

    /// The retransmission timer fired at `now` with `snd_max` sent (after `on_timeout`).
    pub fn on_timeout_state(&mut self, now: Time, snd_max: u64) {
        if let Congestion::Cubic(c) = self {
            c.on_timeout_state(now, snd_max);
        }
    }

    /// The sender had nothing outstanding for `idle` and the application now writes more:
    /// time spent application-limited must not count as growth time (CUBIC's epoch).
    #[inline]
    pub fn on_idle(&mut self, idle: Time, now: Time, last_send: Time) {
        match self {
            Congestion::NewReno(_) | Congestion::Dctcp(_) | Congestion::Swift(_) => {}
            Congestion::Cubic(c) => c.on_idle(idle, now, last_send),
        }
    }

    /// The retransmission timer expired at `now`: set `cwnd` and `ssthresh`. `repeated`:
    /// the segment had already been retransmitted by a timeout.
    #[allow(clippy::too_many_arguments)]
    pub fn on_timeout(&mut self, now: Time, cwnd: &mut u64, ssthresh: &mut u64, in_flight: u64, window: u64, repeated: bool) {
        match self {
            Congestion::NewReno(c) => c.on_timeout(cwnd, ssthresh, in_flight, window, repeated),
            Congestion::Dctcp(c) => c.on_timeout(cwnd, ssthresh, in_flight, window, repeated),
            Congestion::Cubic(c) => c.on_timeout(cwnd, ssthresh, in_flight, repeated),
            Congestion::Swift(c) => {
                c.on_timeout(now, cwnd);
                *ssthresh = *cwnd; // no slow start after it: Swift alone moves the window
            }
        }
    }

    /// Any ACK, before loss recovery sees it: `acked` new bytes, ECN-Echo `ece`
    /// (only ECN-capable controllers act on it).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn on_ack_ecn(&mut self, cwnd: &mut u64, ssthresh: &mut u64, acked: u64, ece: bool, snd_una: u64, snd_nxt: u64, recovering: bool) {
        if let Congestion::Dctcp(c) = self {
            c.on_ack_ecn(cwnd, ssthresh, acked, ece, snd_una, snd_nxt, recovering);
        }
    }
}
