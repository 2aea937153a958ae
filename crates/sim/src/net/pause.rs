//! IEEE 802.3x PAUSE (Ethernet flow control, 802.3 Annex 31B), as FAST'08 §5.2 describes
//! it: "When a switch that supports Ethernet Flow Control (EFC) is overloaded with data, it
//! may send a 'pause' frame to the interface sending data to the congested buffer,
//! informing all devices connected to that interface to stop sending or forwarding data for
//! a designated period of time."
//!
//! A switch accounts, for each ingress (the port whose link brings packets in), the bytes
//! waiting in its output queues that came in over it. Above XOFF it sends the upstream
//! port a PAUSE frame of `quanta` (each 512 bit times at the paused link's rate; 0xFFFF
//! at most); at or below XON it sends one of zero quanta, which resumes the upstream at
//! once. While the ingress stays above XOFF, the next arrival re-sends the XOFF once half
//! the pause time has passed, so the upstream never resumes while the switch is congested.
//! The frame is 64 bytes; it leaves once the frame on the reverse link's wire has left (a
//! MAC control frame goes ahead of waiting data) and crosses the link's propagation delay.
//! The pause stops everything the upstream port would send, whatever its destination: the
//! head-of-line blocking FAST'08 names ("pause frames pause all traffic entering an
//! interface, regardless of whether that traffic is causing congestion").

use crate::event::PortId;
use crate::time::{serialization_time, Time};

/// A PAUSE frame on the wire: the minimum Ethernet frame (802.3 §31B.1).
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// One pause quantum is 512 bit times (802.3 §31B.2).
pub const QUANTUM_BITS: u64 = 512;
/// The largest pause a frame can ask for.
pub const MAX_QUANTA: u16 = 0xFFFF;

/// The thresholds and the pause a switch asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseConfig {
    /// Send XOFF when an ingress's waiting bytes exceed this.
    pub xoff_bytes: u64,
    /// Send XON when they fall to this or below (below `xoff_bytes`).
    pub xon_bytes: u64,
    /// Pause quanta an XOFF frame carries.
    pub quanta: u16,
}

/// Which frame to send upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Pause for the configured quanta.
    Xoff,
    /// Pause for zero quanta: resume now.
    Xon,
}

/// Per-ingress accounting and the frames it calls for.
#[derive(Clone, Debug)]
pub struct IngressPause {
    pub cfg: PauseConfig,
    /// Bytes waiting in the switch's output queues that came in over each port's link.
    bytes: Vec<u64>,
    /// When the last XOFF for each ingress was sent, if no XON followed it.
    xoff_sent: Vec<Option<Time>>,
    pub xoff_frames: u64,
    pub xon_frames: u64,
}

/// How long `quanta` pause a link of `rate_bps`.
pub fn pause_time(quanta: u16, rate_bps: u64) -> Time {
    serialization_time(quanta as u64 * QUANTUM_BITS / 8, rate_bps)
}

/// When a PAUSE frame sent at `now` on a link of `rate_bps` and `delay`, whose current
/// transmission ends at `wire_free`, reaches the far end.
pub fn frame_arrival(now: Time, wire_free: Time, rate_bps: u64, delay: Time) -> Time {
    now.max(wire_free) + serialization_time(PAUSE_FRAME_BYTES, rate_bps) + delay
}

impl IngressPause {
    pub fn new(cfg: PauseConfig, ports: usize) -> Self {
        IngressPause { cfg, bytes: vec![0; ports], xoff_sent: vec![None; ports], xoff_frames: 0, xon_frames: 0 }
    }

    /// A packet of `wire` bytes that came in over `ingress` waits in an output queue at
    /// `now`; `pause` is how long an XOFF pauses that ingress's upstream port.
    pub fn enqueued(&mut self, ingress: PortId, wire: u64, now: Time, pause: Time) -> Option<Frame> {
        let i = ingress as usize;
        self.bytes[i] += wire;
        if self.bytes[i] <= self.cfg.xoff_bytes {
            return None;
        }
        match self.xoff_sent[i] {
            // refresh: the upstream would resume in less than half the pause time
            Some(sent) if now < sent + Time(pause.0 / 2) => None,
            _ => {
                self.xoff_sent[i] = Some(now);
                self.xoff_frames += 1;
                Some(Frame::Xoff)
            }
        }
    }

    /// A packet of `wire` bytes that came in over `ingress` left its output queue.
    pub fn dequeued(&mut self, ingress: PortId, wire: u64) -> Option<Frame> {
        let i = ingress as usize;
        self.bytes[i] -= wire;
        if self.bytes[i] <= self.cfg.xon_bytes && self.xoff_sent[i].take().is_some() {
            self.xon_frames += 1;
            return Some(Frame::Xon);
        }
        None
    }

    /// Bytes waiting that came in over `ingress`.
    pub fn bytes(&self, ingress: PortId) -> u64 {
        self.bytes[ingress as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIG: u64 = 1_000_000_000;

    #[test]
    fn a_quantum_is_512_bit_times() {
        // 802.3 §31B.2: 0xFFFF quanta at 1 Gbps = 65535 x 512 ns = 33.55392 ms
        assert_eq!(pause_time(MAX_QUANTA, GIG), Time::from_us(33_553) + Time(920_000));
        assert_eq!(pause_time(1, 10 * GIG), Time(51_200));
        assert_eq!(pause_time(0, GIG), Time::ZERO);
    }

    #[test]
    fn the_frame_waits_for_the_wire_then_serializes_and_propagates() {
        // 64 B at 1 Gbps = 512 ns, then 25 us of propagation; behind a frame ending at 30 us
        let d = Time::from_us(25);
        assert_eq!(frame_arrival(Time::from_us(10), Time::ZERO, GIG, d), Time::from_us(35) + Time(512_000));
        assert_eq!(frame_arrival(Time::from_us(10), Time::from_us(30), GIG, d), Time::from_us(55) + Time(512_000));
    }

    #[test]
    fn xoff_above_the_threshold_xon_at_or_below_the_other_refresh_after_half_the_pause() {
        let cfg = PauseConfig { xoff_bytes: 3000, xon_bytes: 1500, quanta: 100 };
        let mut p = IngressPause::new(cfg, 4);
        let pause = pause_time(100, GIG); // 51.2 us
        let t = Time::from_us;
        // 1500, 3000: not above XOFF; 4500: above, XOFF; 6000 soon after: no second frame
        assert_eq!(p.enqueued(2, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 1500, t(1), pause), None);
        assert_eq!(p.enqueued(2, 1500, t(2), pause), Some(Frame::Xoff));
        assert_eq!(p.enqueued(2, 1500, t(3), pause), None);
        // another ingress is accounted apart
        assert_eq!(p.enqueued(1, 1500, t(3), pause), None);
        // 25.6 us after the XOFF (half of 51.2) an arrival above XOFF refreshes it
        assert_eq!(p.enqueued(2, 100, t(2) + Time(25_599_999), pause), None);
        assert_eq!(p.enqueued(2, 100, t(2) + Time(25_600_000), pause), Some(Frame::Xoff));
        // draining: 6200 -> 4700 -> 3200 -> 1700 -> 1600: still above XON; 1500: XON, once
        for _ in 0..3 {
            assert_eq!(p.dequeued(2, 1500), None);
        }
        assert_eq!(p.dequeued(2, 100), None);
        assert_eq!(p.bytes(2), 1600);
        assert_eq!(p.dequeued(2, 100), Some(Frame::Xon));
        assert_eq!(p.dequeued(2, 100), None);
        assert_eq!((p.xoff_frames, p.xon_frames), (2, 1));
        // an ingress never paused sends no XON as it drains
        assert_eq!(p.dequeued(1, 1500), None);
    }
}
