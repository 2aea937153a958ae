//! CUBIC as Linux's net/ipv4/tcp_cubic.c computes it (the scenario's `cubic_linux`), in
//! place of RFC 9438's rules (`tcp::congestion::cubic`). The curve is the RFC's; the
//! arithmetic and the bookkeeping around it are the kernel's, and at incast's windows of
//! a few segments on sub-millisecond round trips they are what decides the growth:
//! - whole packets: cwnd grows by one packet after `cnt` packets are acknowledged
//!   (`tcp_cong_avoid_ai` and its credit `snd_cwnd_cnt`), slow start adds every packet
//!   acknowledged up to ssthresh (`tcp_slow_start`);
//! - the Reno estimate (`tcp_friendliness`) counts whole packets: `tcp_cwnd` gains one
//!   after cwnd x `beta_scale` / 8 packets acknowledged (beta_scale = 15: alpha 0.53), and
//!   only caps `cnt` once it is ahead of cwnd; it has no RFC 9438 §4.3 switch to alpha = 1;
//! - `cnt` (curve and estimate) is recomputed at most once a jiffy, and while cwnd holds
//!   not for HZ / 32 jiffies (28 ms at HZ 250), its acknowledged packets stored meanwhile;
//! - t is in jiffies plus `usecs_to_jiffies(delay_min)`, K in 1/1024 s in fixed point
//!   (`bic_scale` 41: C = 0.4, `cube_factor`);
//! - before a first loss (`last_max_cwnd` = 0) `cnt` is at most 20 (5 % a round trip), and
//!   `cnt` is at least 2 always;
//! - a loss leaves ssthresh = max(cwnd x 717 / 1024, 2) of cwnd in packets
//!   (`cubictcp_recalc_ssthresh`), not of FlightSize, and remembers W_max with fast
//!   convergence; a timeout enters the Loss state, which forgets W_max, `delay_min` and the
//!   epoch (`cubictcp_state` -> `bictcp_reset`), so the next epoch runs with the cap of 20;
//! - after idle the epoch moves by the jiffies since the last send (CA_EVENT_TX_START,
//!   `cubictcp_cwnd_event`), never past now; an application-limited ACK grows nothing
//!   (`tcp_is_cwnd_limited`) and moves nothing.
//!
//! The version read: the `bictcp_update` that kernels from 4.x through the 6.x series carry,
//! checked in a 6.17-era copy (BTF kfunc set, MODULE_VERSION 2.3): the rate limit is still
//! `<= HZ / 32` (a 2023 netdev proposal to recompute at least once a round trip, and one to
//! count in microseconds, did not land there), and the testbed's traces show its 28-32 ms
//! holds (`scripts/cwnd-holds.py`). HyStart stays in `tcp::congestion::hystart`.
//!
//! Where this differs from the kernel: `cubic_root`'s table and Newton step (about 0.2 %
//! off) is an exact floor of the cube root; undo (`tcp_reno_undo_cwnd`) is not modelled;
//! `acked` is the segments an ACK acknowledges cumulatively (a segment SACKed earlier counts
//! when it is cumulatively acknowledged, where Linux counts it at the SACK).

use crate::time::Time;

/// `beta` = 717 / 1024 (`BICTCP_BETA_SCALE`).
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// `bic_scale` x 10: `cube_rtt_scale`, with `BICTCP_HZ` = 10 (time in 1/1024 s).
const CUBE_RTT_SCALE: u64 = 41 * 10;
/// `cube_factor` = 2^(10 + 3 x BICTCP_HZ) / (bic_scale x 10).
const CUBE_FACTOR: u64 = (1 << 40) / CUBE_RTT_SCALE;
/// `beta_scale` = 8 (1024 + 717) / 3 / (1024 - 717), in integers as the kernel computes it.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
const PS_PER_S: u64 = 1_000_000_000_000;
const PS_PER_US: u64 = 1_000_000;

/// One sender's `struct bictcp` (the fields `bictcp_reset` clears) and `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default)]
struct State {
    cnt: u64,
    last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin_point: u64,
    /// K in 1/1024 s.
    k: u64,
    /// Microseconds; 0 before the first sample.
    delay_min_us: u64,
    /// In jiffies; None where the kernel's is 0.
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
}

impl State {
    /// The curve's part of `bictcp_update` in the current epoch: `cnt` from the target
    /// W_cubic(t), t = now - epoch_start + `usecs_to_jiffies(delay_min)`.
    fn curve(&mut self, cwnd: u64, now: u64, jiffy_ps: u64) {
        let epoch = self.epoch_start.unwrap_or(now);
        let t_j = now.saturating_sub(epoch) + (self.delay_min_us * PS_PER_US).div_ceil(jiffy_ps);
        // jiffies to 1/1024 s: (t << BICTCP_HZ) / HZ
        let t = (((t_j as u128 * jiffy_ps as u128) << 10) / PS_PER_S as u128) as u64;
        let offs = t.abs_diff(self.k) as u128;
        let delta = ((CUBE_RTT_SCALE as u128 * offs * offs * offs) >> 40) as u64;
        let target = if t < self.k { self.origin_point.saturating_sub(delta) } else { self.origin_point + delta };
        self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20; // 5 % a round trip while the bandwidth is unknown
        }
    }
}

/// The largest k with k^3 <= a. The kernel's `cubic_root` (a table and one Newton step) is
/// within about 0.2 % of it: for W_max - cwnd of 1 to 10 packets both give the same target
/// at t = 0; from 11 on the kernel's K is sometimes one unit of 1/1024 s larger.
fn cube_root_floor(a: u64) -> u64 {
    let mut k = (a as f64).cbrt() as u64;
    while (k as u128).pow(3) > a as u128 {
        k -= 1;
    }
    while ((k + 1) as u128).pow(3) <= a as u128 {
        k += 1;
    }
    k
}

/// Linux's CUBIC for one sender: cwnd in packets of `mss` bytes, time in jiffies.
#[derive(Clone, Debug)]
pub struct LinuxCubic {
    mss: u64,
    /// A jiffy, in picoseconds (the scenario's timer granularity: 4 ms at HZ 250).
    jiffy_ps: u64,
    /// HZ / 32 in whole jiffies, as the kernel's integer division gives it (7 at HZ 250).
    hold_jiffies: u64,
    slow_start: bool,
    s: State,
    /// `snd_cwnd_cnt`: packets acknowledged towards the next `cnt`.
    cwnd_cnt: u64,
}

impl LinuxCubic {
    pub fn new(mss: u64, jiffy: Time, slow_start: bool) -> Self {
        let jiffy_ps = jiffy.0.max(1);
        let hold_jiffies = PS_PER_S / jiffy_ps / 32;
        LinuxCubic { mss, jiffy_ps, hold_jiffies, slow_start, s: State::default(), cwnd_cnt: 0 }
    }

    fn jiffies(&self, t: Time) -> u64 {
        t.0 / self.jiffy_ps
    }

    /// The epoch's start as a time, for HyStart's one-second gate.
    pub fn epoch_start(&self) -> Option<Time> {
        self.s.epoch_start.map(|j| Time(j * self.jiffy_ps))
    }

    /// `cubictcp_acked`: an RTT sample lowers `delay_min`, unless within a second (HZ) of
    /// the epoch's start ("discard delay samples right after fast recovery").
    pub fn on_sample(&mut self, now: Time, rtt: Time) {
        let j = self.jiffies(now);
        if self.s.epoch_start.is_some_and(|e| j.saturating_sub(e) * self.jiffy_ps < PS_PER_S) {
            return;
        }
        let us = (rtt.0 / PS_PER_US).max(1);
        if self.s.delay_min_us == 0 || self.s.delay_min_us > us {
            self.s.delay_min_us = us;
        }
    }

    /// `cubictcp_cong_avoid` for an ACK of `acked` new bytes at `now`: nothing unless
    /// `tcp_is_cwnd_limited` (in slow start cwnd < 2 x the packets out, else the window was
    /// cwnd-limited), then `tcp_slow_start` and `bictcp_update` + `tcp_cong_avoid_ai`.
    #[inline(never)]
    pub fn on_ack(&mut self, now: Time, cwnd_limited: bool, prior_flight: u64, cwnd: &mut u64, ssthresh: u64, acked: u64) {
        let mss = self.mss;
        let before = *cwnd / mss;
        let ssthresh_pk = ssthresh / mss;
        let in_slow_start = self.slow_start && before < ssthresh_pk;
        let limited = if in_slow_start { before < 2 * prior_flight.div_ceil(mss) } else { cwnd_limited };
        if !limited {
            return;
        }
        let mut pk = before;
        let mut acked = acked.div_ceil(mss);
        if in_slow_start {
            let grown = (pk + acked).min(ssthresh_pk);
            acked -= grown - pk;
            pk = grown;
        }
        if acked > 0 {
            self.update(pk, acked, self.jiffies(now));
            pk = self.cong_avoid_ai(pk, acked);
        }
        *cwnd += (pk - before) * mss;
    }

    /// `bictcp_update`: `cnt` for a window of `cwnd` packets after `acked` more.
    fn update(&mut self, cwnd: u64, acked: u64, now: u64) {
        let hold = self.hold_jiffies;
        let jiffy_ps = self.jiffy_ps;
        let s = &mut self.s;
        s.ack_cnt += acked;
        if s.last_cwnd == cwnd && now.saturating_sub(s.last_time) <= hold {
            return;
        }
        // the curve at most once a jiffy; a reduction clears epoch_start and forces it
        if !(s.epoch_start.is_some() && now == s.last_time) {
            s.last_cwnd = cwnd;
            s.last_time = now;
            if s.epoch_start.is_none() {
                s.epoch_start = Some(now);
                s.ack_cnt = acked;
                s.tcp_cwnd = cwnd;
                if s.last_max_cwnd <= cwnd {
                    s.k = 0;
                    s.origin_point = cwnd;
                } else {
                    s.k = cube_root_floor(CUBE_FACTOR * (s.last_max_cwnd - cwnd));
                    s.origin_point = s.last_max_cwnd;
                }
            }
            s.curve(cwnd, now, jiffy_ps);
        }
        // tcp_friendliness: the Reno estimate in whole packets
        let per_packet = (cwnd * FRIENDLY_SCALE) >> 3;
        if per_packet > 0 && s.ack_cnt > per_packet {
            let n = (s.ack_cnt - 1) / per_packet;
            s.ack_cnt -= n * per_packet;
            s.tcp_cwnd += n;
        }
        if s.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (s.tcp_cwnd - cwnd);
            s.cnt = s.cnt.min(max_cnt);
        }
        // at most one packet per two acknowledged: 1.5 x a round trip
        s.cnt = s.cnt.max(2);
    }

    /// `tcp_cong_avoid_ai(tp, cnt, acked)`: a credit earned at a larger `cnt` is spent
    /// first, as one packet.
    fn cong_avoid_ai(&mut self, mut cwnd: u64, acked: u64) -> u64 {
        let w = self.s.cnt.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            cwnd += d;
        }
        cwnd
    }

    /// `cubictcp_recalc_ssthresh` with a window of `cwnd` bytes: the epoch ends, W_max is
    /// remembered (fast convergence lowers it below the last one), ssthresh in bytes.
    pub fn on_loss(&mut self, cwnd: u64) -> u64 {
        let pk = cwnd / self.mss;
        let s = &mut self.s;
        s.epoch_start = None;
        s.last_max_cwnd = if pk < s.last_max_cwnd { pk * (BETA_SCALE + BETA) / (2 * BETA_SCALE) } else { pk };
        (pk * BETA / BETA_SCALE).max(2) * self.mss
    }

    /// `tcp_init_cwnd_reduction`: fast recovery clears `snd_cwnd_cnt`.
    pub fn on_recovery_start(&mut self) {
        self.cwnd_cnt = 0;
    }

    /// `tcp_enter_loss`: ssthresh from cwnd unless already reduced for this window
    /// (`repeated`), cwnd one packet, `snd_cwnd_cnt` cleared; the Loss state resets CUBIC.
    pub fn on_timeout(&mut self, cwnd: &mut u64, ssthresh: &mut u64, repeated: bool) {
        if !repeated {
            *ssthresh = self.on_loss(*cwnd);
        }
        self.s = State::default();
        self.cwnd_cnt = 0;
        *cwnd = self.mss;
        if !self.slow_start {
            *ssthresh = *cwnd;
        }
    }

    /// CA_EVENT_TX_START: the first send after idle moves the epoch by the jiffies since
    /// the last send, never past now.
    pub fn on_tx_start(&mut self, now: Time, last_send: Time) {
        let (now, last) = (self.jiffies(now), self.jiffies(last_send));
        if let Some(e) = &mut self.s.epoch_start {
            if now > last {
                *e = (*e + (now - last)).min(now);
            }
        }
    }

    #[cfg(test)]
    fn state(&self) -> &State {
        &self.s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const J: u64 = 4_000_000_000; // 4 ms: HZ 250

    fn linux() -> LinuxCubic {
        LinuxCubic::new(MSS, Time(J), true)
    }

    #[test]
    fn the_kernels_constants() {
        assert_eq!(FRIENDLY_SCALE, 15, "beta_scale");
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(linux().hold_jiffies, 7, "HZ / 32 at HZ 250");
    }

    #[test]
    fn ssthresh_is_717_1024_of_cwnd_in_whole_packets_and_w_max_converges() {
        let mut c = linux();
        assert_eq!(c.on_loss(7 * MSS + 100), 4 * MSS, "7 x 717 / 1024 = 4.9 -> 4");
        assert_eq!(c.state().last_max_cwnd, 7);
        assert_eq!(c.on_loss(10 * MSS), 7 * MSS);
        assert_eq!(c.state().last_max_cwnd, 10);
        // below the last W_max: (1024 + 717) / 2048 of cwnd
        c.on_loss(8 * MSS);
        assert_eq!(c.state().last_max_cwnd, 6);
        assert_eq!(c.on_loss(2 * MSS), 2 * MSS, "at least 2");
    }

    /// ACKs of one packet each, `per_jiffy` of them in each 4 ms jiffy, from `cwnd` packets
    /// in congestion avoidance: cwnd in packets after `n`.
    fn grow(c: &mut LinuxCubic, cwnd: u64, n: u64, per_jiffy: u64) -> u64 {
        let mut w = cwnd * MSS;
        for i in 0..n {
            c.on_ack(Time(1_000 * J + i / per_jiffy * J), true, w, &mut w, 2 * MSS, MSS);
        }
        w / MSS
    }

    #[test]
    fn before_a_first_loss_cwnd_grows_one_packet_per_20_acked() {
        // the curve's target stays at cwnd (K = 0, t of a few jiffies), so cnt = 100 cwnd,
        // capped at 20 while last_max_cwnd = 0; the Reno estimate (one packet per 1.875 cwnd)
        // has not passed cwnd yet
        let mut c = linux();
        assert_eq!(grow(&mut c, 10, 19, 100), 10);
        let mut c = linux();
        assert_eq!(grow(&mut c, 10, 20, 100), 11);
    }

    #[test]
    fn after_fast_recovery_the_curve_gives_a_reno_step_then_holds_for_hz_over_32() {
        // W_max 10, cwnd 7: K = floor(cbrt(cube_factor x 3)) = 2003 (1.96 s). At t = 0 the
        // curve is W_max - (410 K^3 >> 40) = 10 - 2 = 8 (cube_factor's floor loses a fraction,
        // so the target sits a packet above cwnd): cnt = 7 / 1, a Reno step. 13 ACKs a jiffy:
        let mut c = linux();
        c.on_loss(10 * MSS);
        let mut w = 7 * MSS;
        let mut at = Vec::new();
        for i in 0..12 * 13u64 {
            c.on_ack(Time(1_000 * J + i / 13 * J), true, w, &mut w, 2 * MSS, MSS);
            at.push(w / MSS);
        }
        assert_eq!(c.state().k, 2003);
        assert_eq!((at[5], at[6]), (7, 8), "one packet after 7 acknowledged");
        // at 8 the target (8) is no longer above cwnd: cnt = 800, and while cwnd holds cnt
        // is not recomputed for HZ / 32 = 7 jiffies; then the Reno estimate, fed all the
        // while (one packet per (8 x 15) >> 3 = 15 acknowledged), is far ahead: cnt = 2
        assert!(at[13..9 * 13].iter().all(|&p| p == 8), "held: {:?}", &at[..9 * 13]);
        assert!(at[9 * 13 + 4] >= 10, "then a burst of growth: {:?}", &at[9 * 13..]);
    }

    #[test]
    fn a_timeout_forgets_w_max_and_delay_min_and_restarts_with_the_cap_of_20() {
        let mut c = linux();
        c.on_sample(Time(0), Time(500_000_000));
        assert_eq!(c.state().delay_min_us, 500);
        let (mut cwnd, mut ssthresh) = (10 * MSS, 1 << 30);
        c.on_timeout(&mut cwnd, &mut ssthresh, false);
        assert_eq!((cwnd, ssthresh), (MSS, 7 * MSS));
        assert_eq!((c.state().last_max_cwnd, c.state().delay_min_us, c.state().epoch_start), (0, 0, None));
        c.on_timeout(&mut cwnd, &mut ssthresh, true);
        assert_eq!(ssthresh, 7 * MSS, "held when already reduced for this window");
    }

    #[test]
    fn slow_start_adds_every_packet_acknowledged_up_to_ssthresh() {
        let mut c = linux();
        let mut w = 2 * MSS;
        c.on_ack(Time(0), true, 2 * MSS, &mut w, 5 * MSS, 2 * MSS); // a delayed ACK of two
        assert_eq!(w, 4 * MSS);
        c.on_ack(Time(0), true, 4 * MSS, &mut w, 5 * MSS, 2 * MSS);
        assert_eq!(w, 5 * MSS, "to ssthresh; the packet left over starts the epoch");
        assert_eq!(c.state().epoch_start, Some(0));
        // an application-limited ACK in slow start: cwnd >= 2 x the packets out
        let mut w = 4 * MSS;
        c.on_ack(Time(0), false, 2 * MSS, &mut w, 10 * MSS, MSS);
        assert_eq!(w, 4 * MSS);
    }

    #[test]
    fn idle_moves_the_epoch_by_the_jiffies_since_the_last_send_never_past_now() {
        let mut c = linux();
        let mut w = 10 * MSS;
        c.on_ack(Time(10 * J), true, w, &mut w, 2 * MSS, MSS);
        assert_eq!(c.state().epoch_start, Some(10));
        c.on_tx_start(Time(25 * J + 1), Time(20 * J));
        assert_eq!(c.state().epoch_start, Some(15));
        c.on_tx_start(Time(100 * J), Time(0));
        assert_eq!(c.state().epoch_start, Some(100), "never past now");
    }
}
