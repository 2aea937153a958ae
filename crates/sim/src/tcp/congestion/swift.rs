//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020): AIMD on the measured delay against a target delay, with a
//! window that may fall below one packet, the sender then pacing one packet every
//! RTT / cwnd. The scenario's `transport = swift` gives every flow this controller on
//! TCP's connection (its sequence space, SACK or NewReno recovery and RFC 6298 timer).
//!
//! Per ACK (§3.2, Algorithm 1; cwnd in packets, `delay` the ACK's delay sample):
//! - `delay < target`: additive increase, cwnd += ai / cwnd x num_acked (cwnd >= 1) or
//!   cwnd += ai x num_acked (cwnd < 1), num_acked in packets;
//! - otherwise, if `can_decrease` (the last decrease is an RTT or more ago): multiplicative
//!   decrease, cwnd x max(1 - beta (delay - target) / delay, 1 - max_mdf).
//!
//! On fast recovery (a loss found by duplicate ACKs or SACK): cwnd x (1 - max_mdf) if
//! `can_decrease`, and the count of timeouts in a row ends. On a retransmission timeout
//! the same, or `min_cwnd` after `RETX_RESET_THRESHOLD` timeouts in a row (Algorithm 1's
//! "On retransmit timeout"). cwnd stays within [`SwiftParams::min_cwnd`] ([`MIN_CWND`] unless the scenario raises it) and [`MAX_CWND`].
//!
//! Below one packet (§3.4, "large-scale incast"): pacing_delay = rtt / cwnd, rtt the flow's
//! own measured delay; the sender sends one packet per pacing delay
//! (`TcpSender::send_paced`), whatever is in flight. Before its first delay sample a flow
//! has no rtt and does not pace: its timer resends (`pacing_delay`).
//!
//! The target (§3.5, "scaling the fabric target delay"): base_target + #hops x h
//! (topology-based scaling) + the flow-based scaling
//! fs = clamp(alpha / sqrt(cwnd) + beta', 0, fs_range), with alpha and beta' chosen so that
//! fs is fs_range at fs_min_cwnd and 0 at fs_max_cwnd:
//! alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd)),
//! beta' = -alpha / sqrt(fs_max_cwnd). Many flows sharing a bottleneck each hold a small
//! window, so together they settle on a longer queue instead of fighting over a short one.
//!
//! The delay (§3.1's components; §3.3 splits it into fabric and endpoint parts, each with its own window):
//! here one delay, now - the send time the ACK echoes (TSecr of the segment that brought
//! the ACK, every segment's own: `TcpReceiver::echo_own`). It holds the sender's NIC
//! queue, the fabric's propagation, serialization and queues and the ACK's way back; the
//! simulated hosts add no processing or remote-queuing time, so the paper's endpoint
//! delay (t3 - t2 and the host's own queues) is zero and its endpoint window never
//! binds: only the fabric window is modelled (`docs/transports.md`).

use crate::time::Time;

/// The window's floor by default, packets (§3.4: "down to a minimum of 0.001 packets";
/// htsim's Swift uses 0.001). `SwiftParams::min_cwnd` (`swift_min_cwnd_floor`) sets it: 1
/// is Table 3's "Swift w/o cwnd < 1".
pub const MIN_CWND: f64 = 0.001;
/// The window's ceiling, packets.
pub const MAX_CWND: f64 = 10_000.0;
/// Timeouts in a row after which cwnd drops to its floor, `min_cwnd` (Algorithm 1's
/// RETX_RESET_THRESHOLD; the paper gives no value: 5, htsim's).
pub const RETX_RESET_THRESHOLD: u32 = 5;

/// Swift's parameters, named as the paper names them (§3.2, §3.5). `base_target` and `h`
/// are per flow: the scenario's values or ones derived from the flow's path
/// (`host::Conns`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftParams {
    /// The target's fixed part (§3.5): the path's fixed delay and an allowance.
    pub base_target: Time,
    /// Topology-based scaling: target added per hop of the flow's path (§3.5).
    pub h: Time,
    /// Flow-based scaling: the most it adds, at `fs_min_cwnd` and below (§3.5).
    pub fs_range: Time,
    /// Flow-based scaling adds `fs_range` at this window, packets.
    pub fs_min_cwnd: f64,
    /// Flow-based scaling adds nothing at this window and above, packets.
    pub fs_max_cwnd: f64,
    /// Additive increment, packets per RTT (§3.2).
    pub ai: f64,
    /// Multiplicative decrease constant (§3.2).
    pub beta: f64,
    /// The largest multiplicative decrease, per RTT (§3.2).
    pub max_mdf: f64,
    /// The window's floor, packets (Algorithm 1's min_cwnd; [`MIN_CWND`] by default).
    pub min_cwnd: f64,
}

/// One sender's Swift state.
#[derive(Clone, Debug)]
pub struct Swift {
    p: SwiftParams,
    /// Hops on the flow's path (topology-based scaling).
    hops: u32,
    /// The window in packets: the truth the sender's byte window is made from.
    cwnd: f64,
    mss: f64,
    /// When the window last decreased (`can_decrease`).
    t_last_decrease: Option<Time>,
    /// The smoothed delay: the RTT of `can_decrease` and of the pacing delay.
    rtt: Option<Time>,
    /// Retransmission timeouts in a row.
    retransmit_cnt: u32,
    /// The instant of the ACK being processed (fast recovery decides then).
    now: Time,
    /// The least window reached, packets (the results report it).
    pub min_cwnd_seen: f64,
    /// Pacing below one packet: the next paced segment may leave at `pace_at`; the
    /// pacing event pending (`Time::NEVER`: none); one the owner must schedule.
    pub(crate) pace_at: Time,
    pace_event: Time,
    pub(crate) pace_request: Option<Time>,
}

impl Swift {
    /// A sender of `mss`-byte segments starting with a window of `init_cwnd` bytes on a
    /// path of `hops` hops.
    pub fn new(p: SwiftParams, hops: u32, mss: u64, init_cwnd: u64) -> Swift {
        let cwnd = init_cwnd as f64 / mss as f64;
        Swift {
            p,
            hops,
            cwnd,
            mss: mss as f64,
            t_last_decrease: None,
            rtt: None,
            retransmit_cnt: 0,
            now: Time::ZERO,
            min_cwnd_seen: cwnd,
            pace_at: Time::ZERO,
            pace_event: Time::NEVER,
            pace_request: None,
        }
    }

    /// After a paced send at `now`: with `more` to send and the next send not due yet, ask
    /// for a pacing event at `pace_at`, unless one at or before it is pending.
    pub(crate) fn request_pace(&mut self, now: Time, more: bool) {
        if more && self.pace_at > now && self.pace_event > self.pace_at {
            self.pace_event = self.pace_at;
            self.pace_request = Some(self.pace_at);
        }
    }

    /// A pacing event fires at `now`: true if it is the one pending (not superseded).
    pub(crate) fn pace_fired(&mut self, now: Time) -> bool {
        if now != self.pace_event {
            return false;
        }
        self.pace_event = Time::NEVER;
        true
    }

    /// The window in packets.
    pub fn window(&self) -> f64 {
        self.cwnd
    }

    /// The smoothed delay, once there is a sample.
    pub fn rtt(&self) -> Option<Time> {
        self.rtt
    }

    /// The flow-based scaling at window `cwnd` (§3.5).
    fn flow_scaling(&self, cwnd: f64) -> f64 {
        let range = self.p.fs_range.0 as f64;
        let alpha = range / (1.0 / self.p.fs_min_cwnd.sqrt() - 1.0 / self.p.fs_max_cwnd.sqrt());
        let beta = -alpha / self.p.fs_max_cwnd.sqrt();
        (alpha / cwnd.sqrt() + beta).clamp(0.0, range)
    }

    /// The flow-based scaling at the current window, picoseconds.
    pub fn flow_scaling_now(&self) -> f64 {
        self.flow_scaling(self.cwnd)
    }

    /// The target delay at the current window (§3.5).
    pub fn target(&self) -> Time {
        let fixed = self.p.base_target.0 + self.hops as u64 * self.p.h.0;
        Time(fixed + self.flow_scaling(self.cwnd) as u64)
    }

    /// Algorithm 1's `can_decrease`: the last decrease is at least an RTT ago.
    fn can_decrease(&self, now: Time) -> bool {
        match (self.t_last_decrease, self.rtt) {
            (Some(at), Some(rtt)) => now.0.saturating_sub(at.0) >= rtt.0,
            _ => true,
        }
    }

    /// Set the window to `w` packets (clamped), noting a decrease, and the sender's byte
    /// window from it (at least one byte: a window of zero would send nothing, paced or not).
    fn set(&mut self, now: Time, w: f64, cwnd: &mut u64) {
        let w = w.clamp(self.p.min_cwnd, MAX_CWND);
        if w < self.cwnd {
            self.t_last_decrease = Some(now);
        }
        self.cwnd = w;
        self.min_cwnd_seen = self.min_cwnd_seen.min(w);
        *cwnd = self.bytes();
    }

    fn bytes(&self) -> u64 {
        ((self.cwnd * self.mss).round() as u64).max(1)
    }

    /// Take up a byte window the loss recovery set (NewReno's inflation and its end).
    fn adopt(&mut self, cwnd: u64) {
        if self.bytes() != cwnd {
            self.cwnd = (cwnd as f64 / self.mss).clamp(self.p.min_cwnd, MAX_CWND);
        }
    }

    /// Any ACK at `now` outside fast recovery: `acked` new bytes, `delay` its delay
    /// sample (`None`: its segment's timestamp did not come back). Algorithm 1's
    /// "On receiving ACK".
    pub fn on_ack(&mut self, now: Time, acked: u64, delay: Option<Time>, cwnd: &mut u64) {
        self.adopt(*cwnd);
        self.now = now;
        let Some(delay) = delay else { return };
        // its own smoothed RTT from every delay sample (RFC 6298's gain of 1/8)
        self.rtt = Some(match self.rtt {
            Some(r) => Time((7 * r.0 + delay.0) / 8),
            None => delay,
        });
        if acked > 0 {
            self.retransmit_cnt = 0;
        }
        let target = self.target();
        if delay < target {
            let packets = acked as f64 / self.mss;
            let w = if self.cwnd >= 1.0 { self.cwnd + self.p.ai / self.cwnd * packets } else { self.cwnd + self.p.ai * packets };
            self.set(now, w, cwnd);
        } else if self.can_decrease(now) {
            let d = delay.0 as f64;
            let factor = (1.0 - self.p.beta * (d - target.0 as f64) / d).max(1.0 - self.p.max_mdf);
            self.set(now, self.cwnd * factor, cwnd);
        }
    }

    /// The ACK being processed began fast recovery with a window of `cwnd` bytes: the
    /// window (bytes) the recovery is to keep. Algorithm 1's "On fast recovery".
    pub fn on_fast_recovery(&mut self, cwnd: u64) -> u64 {
        let now = self.now;
        self.adopt(cwnd);
        self.retransmit_cnt = 0;
        let mut bytes = cwnd;
        if self.can_decrease(now) {
            self.set(now, self.cwnd * (1.0 - self.p.max_mdf), &mut bytes);
        }
        bytes
    }

    /// The retransmission timer expired at `now`. Algorithm 1's "On retransmit timeout".
    pub fn on_timeout(&mut self, now: Time, cwnd: &mut u64) {
        self.adopt(*cwnd);
        self.retransmit_cnt += 1;
        if self.retransmit_cnt >= RETX_RESET_THRESHOLD {
            self.set(now, self.p.min_cwnd, cwnd);
        } else if self.can_decrease(now) {
            self.set(now, self.cwnd * (1.0 - self.p.max_mdf), cwnd);
        } else {
            *cwnd = self.bytes();
        }
    }

    /// With a window of `cwnd` bytes below one packet, the gap between paced packets:
    /// rtt / cwnd (§3.2, Algorithm 1's pacing_delay; §3.4), rtt the flow's own smoothed
    /// delay. `None` at a packet or more (the window alone clocks the sender) and before the
    /// flow's first delay sample: then nothing is paced and the retransmission timer alone
    /// resends, one segment per RTO, until an ACK brings a delay to pace by (as htsim's
    /// Swift, whose pacer starts only on an ACK). The paper's rtt is a measured one; a
    /// stand-in such as the path's unloaded round trip would pace a flow whose packets
    /// wait in a full queue tens of times too fast (`docs/transports.md`, "Pacing before
    /// the first delay sample").
    pub fn pacing_delay(&self, cwnd: u64) -> Option<Time> {
        if cwnd as f64 >= self.mss {
            return None;
        }
        let rtt = self.rtt?;
        Some(Time((rtt.0 as f64 * self.mss / cwnd.max(1) as f64) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_US;

    const MSS: u64 = 1000;

    fn us(x: u64) -> Time {
        Time(x * PS_PER_US)
    }

    fn params() -> SwiftParams {
        SwiftParams {
            base_target: us(20),
            h: us(3),
            fs_range: us(100),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            min_cwnd: MIN_CWND,
        }
    }

    fn swift(packets: u64) -> (Swift, u64) {
        (Swift::new(params(), 0, MSS, packets * MSS), packets * MSS)
    }

    #[test]
    fn the_target_is_base_plus_hops_times_h_plus_the_flow_scaling_of_3_4() {
        let mut s = Swift::new(params(), 6, MSS, 10 * MSS);
        let mut at = |w: f64| {
            s.cwnd = w;
            s.target()
        };
        // fs_range at fs_min_cwnd, nothing at fs_max_cwnd and above
        assert_eq!(at(100.0), us(20 + 6 * 3));
        assert_eq!(at(1000.0), us(38));
        let off = at(0.1).0 as i64 - us(38 + 100).0 as i64;
        assert!(off.abs() < 10, "fs_range at fs_min_cwnd ({off} ps off: float rounding)");
        assert_eq!(at(0.01), us(138), "clamped at fs_range");
        // alpha / sqrt(cwnd) + beta' in between: at 1 packet, 100 us x (1 - 0.1) / (sqrt(10) - 0.1)
        let expected = 100.0 * (1.0 - 0.1) / (10f64.sqrt() - 0.1);
        let got = (at(1.0).0 - us(38).0) as f64 / PS_PER_US as f64;
        assert!((got - expected).abs() < 1e-3, "{got} vs {expected}");
    }

    #[test]
    fn below_the_target_the_window_grows_by_ai_per_window_of_acks() {
        let (mut s, mut cwnd) = swift(10);
        // ten ACKs of one packet each, below the target: ai / cwnd each, about +1 in all
        for i in 0..10 {
            s.on_ack(us(i), MSS, Some(us(10)), &mut cwnd);
        }
        // sum of 1 / w over w = 10, 10.1, ...: 0.96 to 1.0 (the window grows as it goes)
        assert!((s.window() - 10.96).abs() < 0.02, "{}", s.window());
        // below one packet: + ai per packet acknowledged
        s.set(us(20), 0.2, &mut cwnd);
        s.on_ack(us(20), MSS, Some(us(10)), &mut cwnd);
        assert!((s.window() - 1.2).abs() < 1e-9);
        assert_eq!(cwnd, 1200);
    }

    #[test]
    fn above_the_target_the_window_falls_by_beta_times_the_excess_at_most_max_mdf_once_per_rtt() {
        let (mut s, mut cwnd) = swift(10);
        let target = s.target().0;
        // a delay twice the target: 1 - 0.8 x 1/2 = 0.6
        s.on_ack(us(100), MSS, Some(Time(2 * target)), &mut cwnd);
        assert!((s.window() - 6.0).abs() < 1e-6, "{}", s.window());
        assert_eq!(cwnd, 6 * MSS);
        // again 5 us later, within the RTT (the smoothed delay, 2 x target, is over 40 us):
        // no further decrease
        s.on_ack(us(105), MSS, Some(Time(2 * target)), &mut cwnd);
        assert!((s.window() - 6.0).abs() < 1e-6);
        // a delay 100 times the target an RTT later (the smoothed delay is under 1 ms):
        // 1 - 0.8 x 0.99 would be 0.21, max_mdf bounds it at 0.5
        s.on_ack(us(1100), MSS, Some(Time(100 * target)), &mut cwnd);
        assert!((s.window() - 3.0).abs() < 1e-6, "{}", s.window());
    }

    #[test]
    fn below_one_packet_the_sender_paces_a_packet_every_rtt_over_cwnd() {
        let (mut s, mut cwnd) = swift(1);
        s.rtt = Some(us(50));
        assert_eq!(s.pacing_delay(cwnd), None, "at one packet the window clocks");
        s.set(us(1), 0.25, &mut cwnd);
        assert_eq!(cwnd, 250);
        assert_eq!(s.pacing_delay(cwnd), Some(us(200)));
        // the floor
        s.set(us(2), 1e-9, &mut cwnd);
        assert_eq!(s.window(), MIN_CWND);
        assert_eq!(cwnd, 1);
        // before the flow's first delay sample there is nothing to pace by
        let (mut fresh, mut c) = swift(1);
        fresh.set(us(1), 0.5, &mut c);
        assert_eq!(fresh.pacing_delay(c), None);
        fresh.on_ack(us(40), 0, Some(us(30)), &mut c);
        assert_eq!(fresh.pacing_delay(c), Some(us(60)), "the first sample paces: 30 us / 0.5");
    }

    #[test]
    fn with_the_floor_at_one_packet_the_window_never_falls_below_it_and_never_paces_table_3() {
        // Table 3's "Swift w/o cwnd < 1": min_cwnd 1 instead of 0.001 (§3.4)
        let p = SwiftParams { min_cwnd: 1.0, ..params() };
        let mut cwnd = 2 * MSS;
        let mut s = Swift::new(p, 0, MSS, cwnd);
        s.rtt = Some(us(10));
        // a delay 100 times the target, an RTT apart each time: halved until the floor
        for k in 0..5 {
            s.on_ack(us(100 * (k + 1)), MSS, Some(Time(100 * s.target().0)), &mut cwnd);
        }
        assert_eq!((s.window(), cwnd), (1.0, MSS));
        assert_eq!(s.pacing_delay(cwnd), None, "at one packet the window clocks: no pacing");
        // five timeouts in a row reset the window to the floor, not to 0.001
        for k in 0..5 {
            s.on_timeout(us(1000 + 100 * k), &mut cwnd);
        }
        assert_eq!((s.window(), s.min_cwnd_seen), (1.0, 1.0));
    }

    #[test]
    fn fast_recovery_cuts_by_max_mdf_once_per_rtt() {
        let (mut s, mut cwnd) = swift(64);
        s.on_ack(us(10), MSS, Some(us(10)), &mut cwnd); // rtt 10 us, below target
        let w = s.window();
        let kept = s.on_fast_recovery(cwnd);
        assert!((s.window() - w / 2.0).abs() < 1e-9);
        assert_eq!(kept, cwnd / 2 + (cwnd % 2)); // rounding of w x mss
        // a second loss in the same RTT leaves it
        assert_eq!(s.on_fast_recovery(kept), kept);
    }

    #[test]
    fn timeouts_cut_by_max_mdf_once_per_rtt_and_five_in_a_row_floor_the_window() {
        let (mut s, mut cwnd) = swift(64);
        s.rtt = Some(us(10));
        s.on_timeout(us(100), &mut cwnd);
        assert!((s.window() - 32.0).abs() < 1e-9);
        s.on_timeout(us(105), &mut cwnd); // within an RTT of the last decrease
        assert!((s.window() - 32.0).abs() < 1e-9);
        for k in 0..2 {
            s.on_timeout(us(200 + 100 * k), &mut cwnd);
        }
        assert!((s.window() - 8.0).abs() < 1e-9, "{}", s.window());
        s.on_timeout(us(500), &mut cwnd); // the fifth in a row
        assert_eq!(s.window(), MIN_CWND);
        // an ACK of new data ends the run of timeouts
        s.on_ack(us(600), MSS, Some(us(10)), &mut cwnd);
        s.on_timeout(us(700), &mut cwnd);
        assert!(s.window() > MIN_CWND);
    }
}
