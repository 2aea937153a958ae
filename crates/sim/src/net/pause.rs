//! IEEE 802.3x PAUSE (Ethernet flow control, 802.3 Annex 31B), as FAST'08 §5.2 describes
//! it: "When a switch that supports Ethernet Flow Control (EFC) is overloaded with data, it
//! may send a 'pause' frame to the interface sending data to the congested buffer,
//! informing all devices connected to that interface to stop sending or forwarding data for
//! a designated period of time." And its per-priority successor, IEEE 802.1Qbb
//! priority-based flow control (PFC).
//!
//! A switch accounts, for each ingress (the port whose link brings packets in), the bytes
//! waiting in its output queues that came in over it. Above XOFF it sends the upstream
//! port a PAUSE frame of `quanta` (each 512 bit times at the paused link's rate; 0xFFFF
//! at most); at or below XON it sends one of zero quanta, which resumes the upstream at
//! once. While the ingress stays above XOFF, the next arrival re-sends the XOFF once half
//! the pause time has passed, so the upstream never resumes while the switch is congested.
//! The pause stops everything the upstream port would send, whatever its destination: the
//! head-of-line blocking FAST'08 names ("pause frames pause all traffic entering an
//! interface, regardless of whether that traffic is causing congestion").
//!
//! PFC (IEEE 802.1Qbb-2011, clause 36 of 802.1Q; its frame in 802.3 Annex 31D) keeps the
//! same machinery per (ingress, priority): its frame (MAC control opcode 0x0101) carries a
//! priority-enable vector and a pause time per priority (quanta of 512 bit times, as
//! 802.3x), and the receiving MAC stops only the queues of the priorities enabled in it. A
//! frame here enables exactly one class: the one whose bytes crossed XOFF or fell to XON
//! (a switch may coalesce several into one frame; sending them apart changes their timing
//! by one frame time each).
//!
//! A MAC control frame is 64 bytes, with the 8-byte preamble before it and the 12-byte
//! interframe gap after it: 84 bytes of link time. It is sent at the next frame boundary
//! (802.3 Annex 31B: the MAC control sublayer may interleave it between data frames,
//! not inside one), so it waits for the frame on the reverse link's wire, goes ahead of
//! waiting data, and the data frame after it waits for its 84 bytes. It takes effect when
//! its last bit arrives: 72 bytes after it started, plus the link's propagation delay.

use crate::event::PortId;
use crate::time::{serialization_time, Time};

/// A PAUSE frame on the wire: the minimum Ethernet frame (802.3 §31B.1).
pub const PAUSE_FRAME_BYTES: u64 = 64;
/// The preamble and start-of-frame delimiter before a frame (802.3 §4.2.5).
pub const PREAMBLE_BYTES: u64 = 8;
/// The interframe gap after a frame: 96 bit times (802.3 §4.4.2).
pub const IFG_BYTES: u64 = 12;
/// Link time a MAC control frame takes: preamble, frame and interframe gap.
pub const CONTROL_WIRE_BYTES: u64 = PREAMBLE_BYTES + PAUSE_FRAME_BYTES + IFG_BYTES;
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

/// Per-ingress (802.3x) or per-(ingress, class) (802.1Qbb) accounting and the frames it
/// calls for.
#[derive(Clone, Debug)]
pub struct IngressPause {
    pub cfg: PauseConfig,
    /// Classes accounted apart: 1 for 802.3x (a class is ignored), the QoS classes for PFC.
    classes: usize,
    /// Bytes waiting in the switch's output queues that came in over each port's link
    /// (in each class), at `slot(ingress, class)`.
    bytes: Vec<u64>,
    /// When the last XOFF for each slot was sent, if no XON followed it.
    xoff_sent: Vec<Option<Time>>,
    pub xoff_frames: u64,
    pub xon_frames: u64,
}

/// How long a port (or one class of it, under PFC) has been held by PAUSE frames, up to
/// an instant: what a flow's time breakdown reads as its sender's PAUSE time
/// (`host::flowtime`). A new XOFF before the last one's quanta ran out, or an XON, cuts
/// the last hold short.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HeldClock {
    /// Held time before `from`.
    before: Time,
    /// The last frame's arrival, and the instant it holds the port to.
    from: Time,
    until: Time,
}

impl HeldClock {
    /// A frame at `now` holds the port until `until` (`now`: an XON, it resumes).
    pub fn hold(&mut self, now: Time, until: Time) {
        self.before = self.through(now);
        self.from = now;
        self.until = until;
    }

    /// Held time up to `now` (not before the last frame).
    #[inline]
    pub fn through(&self, now: Time) -> Time {
        Time(self.before.0 + now.min(self.until).0.saturating_sub(self.from.0))
    }
}

/// How long `quanta` pause a link of `rate_bps`.
pub fn pause_time(quanta: u16, rate_bps: u64) -> Time {
    serialization_time(quanta as u64 * QUANTUM_BITS / 8, rate_bps)
}

/// When a PAUSE frame that starts on a link of `rate_bps` and `delay` at `start` (the
/// next frame boundary) has its last bit at the far end, and when the link is free again.
pub fn frame_times(start: Time, rate_bps: u64, delay: Time) -> (Time, Time) {
    let lands = start + serialization_time(PREAMBLE_BYTES + PAUSE_FRAME_BYTES, rate_bps) + delay;
    (lands, start + serialization_time(CONTROL_WIRE_BYTES, rate_bps))
}

impl IngressPause {
    /// 802.3x: one account per ingress.
    pub fn new(cfg: PauseConfig, ports: usize) -> Self {
        Self::per_class(cfg, ports, 1)
    }

    /// 802.1Qbb: one account per (ingress, class), `classes` classes.
    pub fn per_class(cfg: PauseConfig, ports: usize, classes: usize) -> Self {
        let n = ports * classes;
        IngressPause { cfg, classes, bytes: vec![0; n], xoff_sent: vec![None; n], xoff_frames: 0, xon_frames: 0 }
    }

    /// Classes are accounted apart (PFC).
    pub fn is_per_class(&self) -> bool {
        self.classes > 1
    }

    #[inline]
    fn slot(&self, ingress: PortId, class: usize) -> usize {
        if self.classes == 1 {
            ingress as usize
        } else {
            ingress as usize * self.classes + class
        }
    }

    /// A packet of class `class` and `wire` bytes that came in over `ingress` waits in an
    /// output queue at `now`; `pause` is how long an XOFF pauses that ingress's upstream
    /// port (its class, under PFC).
    pub fn enqueued(&mut self, ingress: PortId, class: usize, wire: u64, now: Time, pause: Time) -> Option<Frame> {
        let i = self.slot(ingress, class);
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

    /// A packet of class `class` and `wire` bytes that came in over `ingress` left its
    /// output queue.
    pub fn dequeued(&mut self, ingress: PortId, class: usize, wire: u64) -> Option<Frame> {
        let i = self.slot(ingress, class);
        self.bytes[i] -= wire;
        if self.bytes[i] <= self.cfg.xon_bytes && self.xoff_sent[i].take().is_some() {
            self.xon_frames += 1;
            return Some(Frame::Xon);
        }
        None
    }

    /// Bytes waiting that came in over `ingress` (in `class`, under PFC).
    pub fn bytes(&self, ingress: PortId, class: usize) -> u64 {
        self.bytes[self.slot(ingress, class)]
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
    fn the_frame_lands_after_preamble_frame_and_propagation_and_holds_the_wire_84_bytes() {
        // 8 B preamble + 64 B at 1 Gbps = 576 ns, then 25 us of propagation; the wire is
        // busy 84 B = 672 ns (the 12 B interframe gap included)
        let d = Time::from_us(25);
        let lands = Time::from_us(35) + Time(576_000);
        assert_eq!(frame_times(Time::from_us(10), GIG, d), (lands, Time::from_us(10) + Time(672_000)));
        assert_eq!(frame_times(Time::ZERO, 10 * GIG, Time::ZERO), (Time(57_600), Time(67_200)));
    }

    #[test]
    fn xoff_above_the_threshold_xon_at_or_below_the_other_refresh_after_half_the_pause() {
        let cfg = PauseConfig { xoff_bytes: 3000, xon_bytes: 1500, quanta: 100 };
        let mut p = IngressPause::new(cfg, 4);
        let pause = pause_time(100, GIG); // 51.2 us
        let t = Time::from_us;
        // 1500, 3000: not above XOFF; 4500: above, XOFF; 6000 soon after: no second frame
        assert_eq!(p.enqueued(2, 0, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 0, 1500, t(1), pause), None);
        assert_eq!(p.enqueued(2, 0, 1500, t(2), pause), Some(Frame::Xoff));
        assert_eq!(p.enqueued(2, 0, 1500, t(3), pause), None);
        // another ingress is accounted apart
        assert_eq!(p.enqueued(1, 0, 1500, t(3), pause), None);
        // 25.6 us after the XOFF (half of 51.2) an arrival above XOFF refreshes it
        assert_eq!(p.enqueued(2, 0, 100, t(2) + Time(25_599_999), pause), None);
        assert_eq!(p.enqueued(2, 0, 100, t(2) + Time(25_600_000), pause), Some(Frame::Xoff));
        // draining: 6200 -> 4700 -> 3200 -> 1700 -> 1600: still above XON; 1500: XON, once
        for _ in 0..3 {
            assert_eq!(p.dequeued(2, 0, 1500), None);
        }
        assert_eq!(p.dequeued(2, 0, 100), None);
        assert_eq!(p.bytes(2, 0), 1600);
        assert_eq!(p.dequeued(2, 0, 100), Some(Frame::Xon));
        assert_eq!(p.dequeued(2, 0, 100), None);
        assert_eq!((p.xoff_frames, p.xon_frames), (2, 1));
        // an ingress never paused sends no XON as it drains
        assert_eq!(p.dequeued(1, 0, 1500), None);
    }

    #[test]
    fn pfc_accounts_each_class_of_an_ingress_apart() {
        // 802.1Qbb: the same thresholds per (ingress, priority). Class 0 crosses XOFF at
        // 4500 B; class 1 of the same ingress, at 3000 B, sends nothing; class 0's XON
        // comes at 1500 B whatever class 1 holds
        let cfg = PauseConfig { xoff_bytes: 3000, xon_bytes: 1500, quanta: 100 };
        let mut p = IngressPause::per_class(cfg, 4, 2);
        let pause = pause_time(100, GIG);
        let t = Time::from_us;
        assert_eq!(p.enqueued(2, 0, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 1, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 0, 1500, t(1), pause), None);
        assert_eq!(p.enqueued(2, 1, 1500, t(1), pause), None, "3000 B of class 1: not above XOFF");
        assert_eq!(p.enqueued(2, 0, 1500, t(2), pause), Some(Frame::Xoff), "4500 B of class 0");
        assert_eq!((p.bytes(2, 0), p.bytes(2, 1)), (4500, 3000));
        assert_eq!(p.dequeued(2, 0, 1500), None);
        assert_eq!(p.dequeued(2, 0, 1500), Some(Frame::Xon), "class 0 at 1500 B; class 1 holds 3000");
        assert_eq!(p.dequeued(2, 1, 1500), None, "class 1 was never paused");
        // under 802.3x the same arrivals are one account: XOFF at the third packet
        let mut p = IngressPause::new(cfg, 4);
        assert_eq!(p.enqueued(2, 0, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 1, 1500, t(0), pause), None);
        assert_eq!(p.enqueued(2, 1, 1500, t(0), pause), Some(Frame::Xoff));
    }

    #[test]
    fn held_time_counts_each_hold_to_its_end_or_to_the_frame_that_cut_it() {
        let mut c = HeldClock::default();
        assert_eq!(c.through(Time(50)), Time::ZERO, "never paused");
        c.hold(Time(100), Time(300)); // XOFF at 100 for 200
        assert_eq!(c.through(Time(150)), Time(50));
        assert_eq!(c.through(Time(400)), Time(200), "the quanta ran out at 300");
        c.hold(Time(500), Time(700)); // XOFF at 500 ...
        c.hold(Time(550), Time(550)); // ... cut by an XON at 550
        assert_eq!(c.through(Time(1000)), Time(250));
        c.hold(Time(1000), Time(1100)); // XOFF, refreshed before it ran out
        c.hold(Time(1050), Time(1150));
        assert_eq!(c.through(Time(2000)), Time(400));
    }
}
