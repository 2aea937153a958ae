//! ICTCP: incast congestion control at the receiver (Wu et al., CoNEXT 2010, as used by
//! Osada et al. §2 and §5 as a baseline). The receiver keeps the sum of its connections'
//! advertised windows within the link's available bandwidth.
//!
//! Our reading, simplified to one global time slot of 2 x RTT (all connections share the
//! same base RTT in the star):
//! - first half of the slot: measure the total incoming rate BW_T; available bandwidth
//!   BW_A = max(0, alpha x C - BW_T), alpha = 0.9;
//! - end of the slot, for each active connection: measured rate b_m (smoothed, beta =
//!   0.75, never below the latest sample), expected rate b_e = max(b_m, rwnd / RTT),
//!   d = (b_e - b_m) / b_e. If d <= gamma1 = 0.1 and BW_A still covers one more MSS per
//!   RTT, rwnd grows by one MSS (and BW_A shrinks by that much); if d > gamma2 = 0.5 for
//!   three slots in a row, rwnd shrinks by one MSS; never below 2 MSS (the minimum Osada
//!   et al. discuss in §5.1);
//! - a new connection starts at the minimum window, 2 MSS.

use crate::event::FlowId;
use crate::time::{Time, PS_PER_S};

const ALPHA: f64 = 0.9;
const BETA: f64 = 0.75;
const GAMMA1: f64 = 0.1;
const GAMMA2: f64 = 0.5;
const DECREASE_AFTER: u32 = 3;

#[derive(Clone, Debug, Default)]
struct FlowState {
    active: bool,
    window: u64,
    /// Bytes delivered at the last slot end.
    delivered_mark: u64,
    measured_bps: f64,
    over: u32,
}

/// The receiver-side controller.
#[derive(Clone, Debug)]
pub struct Ictcp {
    link_bps: f64,
    mss: u64,
    rtt: Time,
    flows: Vec<FlowState>,
    /// Bytes that arrived in the first half of the current slot.
    bytes_first_half: u64,
    slot_start: Time,
}

impl Ictcp {
    pub fn new(link_bps: u64, mss: u64, rtt: Time, flows: usize) -> Self {
        Ictcp { link_bps: link_bps as f64, mss, rtt, flows: vec![FlowState::default(); flows], bytes_first_half: 0, slot_start: Time::ZERO }
    }

    /// Length of one slot.
    pub fn slot(&self) -> Time {
        Time(2 * self.rtt.0)
    }

    /// The minimum (and initial) window.
    pub fn min_window(&self) -> u64 {
        2 * self.mss
    }

    /// A connection opens; returns the window to advertise.
    pub fn open(&mut self, flow: FlowId, delivered: u64) -> u64 {
        let w = self.min_window();
        self.flows[flow as usize] = FlowState { active: true, window: w, delivered_mark: delivered, measured_bps: 0.0, over: 0 };
        w
    }

    pub fn close(&mut self, flow: FlowId) {
        self.flows[flow as usize].active = false;
    }

    /// `bytes` arrived at the client at `now`.
    pub fn on_arrival(&mut self, now: Time, bytes: u64) {
        if now.0 < self.slot_start.0 + self.rtt.0 {
            self.bytes_first_half += bytes;
        }
    }

    /// The slot ends at `now`; `delivered(f)` is flow f's in-order bytes so far. Returns
    /// the flows whose window changed, with the new window.
    pub fn end_slot(&mut self, now: Time, delivered: impl Fn(FlowId) -> u64, out: &mut Vec<(FlowId, u64)>) {
        let half = self.rtt.0 as f64 / PS_PER_S as f64;
        let slot = 2.0 * half;
        let bw_t = self.bytes_first_half as f64 * 8.0 / half;
        let mut bw_a = (ALPHA * self.link_bps - bw_t).max(0.0);
        let one_mss_bps = self.mss as f64 * 8.0 / half; // one more MSS per RTT
        for (i, st) in self.flows.iter_mut().enumerate() {
            if !st.active {
                continue;
            }
            let got = delivered(i as FlowId);
            let sample = (got - st.delivered_mark) as f64 * 8.0 / slot;
            st.delivered_mark = got;
            st.measured_bps = sample.max(BETA * st.measured_bps + (1.0 - BETA) * sample);
            let expected = st.measured_bps.max(st.window as f64 * 8.0 / half); // rwnd / RTT
            let d = if expected > 0.0 { (expected - st.measured_bps) / expected } else { 0.0 };
            let before = st.window;
            if d <= GAMMA1 {
                st.over = 0;
                if bw_a >= one_mss_bps {
                    st.window += self.mss;
                    bw_a -= one_mss_bps;
                }
            } else if d > GAMMA2 {
                st.over += 1;
                if st.over >= DECREASE_AFTER {
                    st.over = 0;
                    st.window = st.window.saturating_sub(self.mss).max(2 * self.mss);
                }
            } else {
                st.over = 0;
            }
            if st.window != before {
                out.push((i as FlowId, st.window));
            }
        }
        self.slot_start = now;
        self.bytes_first_half = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1460;

    #[test]
    fn new_connections_start_at_two_mss() {
        let mut c = Ictcp::new(1_000_000_000, MSS, Time::from_us(100), 2);
        assert_eq!(c.open(0, 0), 2 * MSS);
    }

    #[test]
    fn a_connection_using_its_window_grows_while_bandwidth_is_free() {
        let mut c = Ictcp::new(1_000_000_000, MSS, Time::from_us(100), 1);
        c.open(0, 0);
        let mut out = vec![];
        // 2 MSS per RTT delivered over the 200 us slot: it uses its whole window
        c.end_slot(Time::from_us(200), |_| 4 * MSS, &mut out);
        assert_eq!(out, vec![(0, 3 * MSS)]);
    }

    #[test]
    fn no_growth_when_the_link_is_already_full() {
        let mut c = Ictcp::new(1_000_000_000, MSS, Time::from_us(100), 1);
        c.open(0, 0);
        // 12.5 KB in the first 100 us: the full 1 Gbps
        c.on_arrival(Time::from_us(10), 12_500);
        let mut out = vec![];
        c.end_slot(Time::from_us(200), |_| 4 * MSS, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn an_idle_connection_shrinks_after_three_slots_but_not_below_two_mss() {
        let mut c = Ictcp::new(1_000_000_000, MSS, Time::from_us(100), 1);
        c.open(0, 0);
        c.flows[0].window = 4 * MSS;
        let mut out = vec![];
        for k in 1..=3 {
            c.end_slot(Time::from_us(200 * k), |_| 0, &mut out);
        }
        assert_eq!(out, vec![(0, 3 * MSS)]);
        for k in 4..=20 {
            c.end_slot(Time::from_us(200 * k), |_| 0, &mut out);
        }
        assert_eq!(c.flows[0].window, 2 * MSS);
    }
}
