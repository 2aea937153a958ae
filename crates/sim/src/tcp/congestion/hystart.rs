//! HyStart, the slow-start exit of Linux's CUBIC (net/ipv4/tcp_cubic.c, `hystart = 1` by
//! default; Ha and Rhee, "Taming the elephants: new TCP slow start", Computer Networks 2011).
//! RFC 9438 §4.10 allows a CUBIC sender to leave slow start this way; the RFC's own
//! suggestion, HyStart++ (RFC 9406), is not what Linux runs: its tcp_cubic.c (checked on
//! 6.18, the testbed's kernel, whose module parameters are `hystart`, `hystart_detect = 3`,
//! `hystart_low_window = 16`, `hystart_ack_delta_us = 2000`) keeps the original two tests.
//!
//! The rules, on every ACK that gives an RTT sample (Linux's `cubictcp_acked` and
//! `hystart_update`):
//!
//! - The sample is ignored within a second (HZ) of the start of a congestion-avoidance epoch
//!   ("discard delay samples right after fast recovery"). Otherwise it lowers `delay_min`,
//!   the least RTT seen (forgotten at a timeout).
//! - Only in slow start (cwnd < ssthresh) and until the exit has been found: a round ends
//!   when SND.UNA passes the highest sequence sent when it began; a new round starts then.
//! - Only with cwnd of `LOW_WINDOW` (16) segments or more:
//!   - ACK train: an ACK at most `ACK_DELTA` (2 ms) after the train's previous one extends
//!     the train; the exit is found when the train has run longer than half of delay_min
//!     plus a cushion since the round began. The cushion is Linux's `hystart_ack_delay`:
//!     four GSO super-packets at the socket's pacing rate (200 % of cwnd / srtt in slow
//!     start while cwnd < ssthresh / 2, 120 % after), at most 1 ms. "Half": the
//!     socket does not pace (`SK_PACING_NONE`), which holds for cubic without the fq qdisc.
//!   - Delay: the least of the round's first 8 samples and every later one (the round's
//!     `curr_rtt`), once 8 have been taken, above delay_min + clamp(delay_min / 8, 4 ms,
//!     16 ms).
//! - The exit sets ssthresh = cwnd: slow start ends at once, and congestion avoidance
//!   starts its epoch from there (W_max = cwnd, K = 0, as after any slow start).
//! - A timeout (Linux's TCP_CA_Loss, `bictcp_reset` and `bictcp_hystart_reset`) forgets the
//!   exit and delay_min and starts a round; nothing else re-arms it, so once a connection
//!   has found its exit, its later slow starts (after idle, RFC 5681 §4.1) run to ssthresh.
//!
//! Where the simulator's samples differ from Linux's: a sample is the sender's RTT
//! measurement of an ACK that advances SND.UNA (with RFC 7323 timestamps, the echo; Linux
//! takes the send time of the most recently sent segment the ACK covers, and also samples
//! ACKs that only SACK new data), and times are picoseconds where Linux counts microseconds
//! (the one-second gate: jiffies).

use crate::time::Time;

/// `hystart_low_window`: HyStart acts from this cwnd on, in segments.
pub const LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us`: ACKs this close belong to one train.
pub const ACK_DELTA: Time = Time(2_000_000_000);
/// `HYSTART_MIN_SAMPLES`: samples per round before the delay test.
pub const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`: the delay test's margin is delay_min / 8
/// clamped to this range.
pub const DELAY_MIN: Time = Time(4_000_000_000);
pub const DELAY_MAX: Time = Time(16_000_000_000);
/// The cushion of the ACK-train threshold is at most 1 ms (`USEC_PER_MSEC`).
pub const CUSHION_MAX: Time = Time(1_000_000_000);
/// The socket's GSO limit, `sk_gso_max_size`: a device's default 65536 (GSO_LEGACY_MAX_SIZE)
/// less MAX_TCP_HEADER + 1 (320 + 1 on x86-64 builds; 0.5 % either way).
pub const GSO_MAX_BYTES: u64 = 65536 - 321;
/// Samples taken within this long of a congestion-avoidance epoch's start are ignored (HZ).
pub const AFTER_EPOCH: Time = Time(1_000_000_000_000);

/// What one ACK tells HyStart.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub now: Time,
    /// The ACK's RTT sample.
    pub rtt: Time,
    pub snd_una: u64,
    /// The highest sequence sent, plus one (Linux's SND.NXT, which a timeout does not move back).
    pub snd_max: u64,
    /// Bytes outstanding (Linux's packets_out, for the pacing rate).
    pub flight: u64,
}

/// One sender's HyStart state (the `found`, `delay_min`, round and train fields of Linux's
/// `struct bictcp`).
#[derive(Clone, Debug, Default)]
pub struct HyStart {
    /// The exit was found: no more tests until a timeout.
    found: bool,
    delay_min: Option<Time>,
    round_start: Time,
    /// The round ends when SND.UNA passes this.
    end_seq: u64,
    /// The latest ACK of the current train.
    last_ack: Time,
    /// The least RTT of the round's samples.
    curr_rtt: Option<Time>,
    samples: u32,
    /// Linux's srtt_us (RFC 6298's 1/8 average of the same samples), for the pacing rate:
    /// the sender's own srtt counts in timer ticks when `timer_granularity` is a jiffy.
    srtt: Option<Time>,
}

impl HyStart {
    pub fn new() -> Self {
        Self::default()
    }

    /// `bictcp_hystart_reset`: a new round from `now`, ending when everything sent is acknowledged.
    fn new_round(&mut self, now: Time, snd_max: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_max;
        self.curr_rtt = None;
        self.samples = 0;
    }

    /// A retransmission timeout (TCP_CA_Loss): the exit and delay_min are forgotten.
    pub fn on_timeout(&mut self, now: Time, snd_max: u64) {
        self.found = false;
        self.delay_min = None;
        self.new_round(now, snd_max);
    }

    pub fn delay_min(&self) -> Option<Time> {
        self.delay_min
    }

    pub fn found(&self) -> bool {
        self.found
    }

    /// An ACK with an RTT sample. `epoch_start`: when the current congestion-avoidance epoch
    /// began, if one runs. Returns true when this ACK finds the exit: the caller sets
    /// ssthresh = cwnd.
    pub fn on_sample(&mut self, s: Sample, epoch_start: Option<Time>, mss: u64, cwnd: u64, ssthresh: u64) -> bool {
        self.srtt = Some(self.srtt.map_or(s.rtt, |r| Time(r.0 - r.0 / 8 + s.rtt.0 / 8)));
        if epoch_start.is_some_and(|e| s.now.0.saturating_sub(e.0) < AFTER_EPOCH.0) {
            return false;
        }
        let delay = Time(s.rtt.0.max(1)); // Linux: a zero sample counts as 1 us
        if self.delay_min.is_none_or(|m| delay < m) {
            self.delay_min = Some(delay);
        }
        if self.found || cwnd >= ssthresh {
            return false;
        }
        if s.snd_una > self.end_seq {
            self.new_round(s.now, s.snd_max);
        }
        if cwnd < LOW_WINDOW * mss {
            return false;
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        if s.now.0.saturating_sub(self.last_ack.0) <= ACK_DELTA.0 {
            self.last_ack = s.now;
            let threshold = (delay_min.0 + cushion(self.srtt, s.flight, cwnd, ssthresh).0) / 2;
            if s.now.0.saturating_sub(self.round_start.0) > threshold {
                self.found = true;
            }
        }
        if self.found {
            return true;
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else {
            let margin = Time(delay_min.0 / 8).clamp(DELAY_MIN, DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c.0 > delay_min.0 + margin.0) {
                self.found = true;
            }
        }
        self.found
    }
}

/// `hystart_ack_delay`: four GSO super-packets at the pacing rate Linux keeps for the socket
/// (`tcp_update_pacing_rate`: mss x max(cwnd, packets out) / srtt, times 2 in slow start
/// below ssthresh / 2, else 1.2), at most 1 ms; none before there is an srtt. Linux
/// computed the rate at the previous ACK; this uses the values before this ACK's growth.
fn cushion(srtt: Option<Time>, flight: u64, cwnd: u64, ssthresh: u64) -> Time {
    let Some(srtt) = srtt.filter(|r| r.0 > 0) else { return Time::ZERO };
    let (num, den) = if cwnd < ssthresh / 2 { (2u128, 1u128) } else { (6, 5) };
    let window = cwnd.max(flight) as u128;
    // 4 x GSO / (window x num / den / srtt) seconds, in picoseconds
    let ps = 4 * GSO_MAX_BYTES as u128 * srtt.0 as u128 * den / (window * num).max(1);
    Time(ps.min(CUSHION_MAX.0 as u128) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    const US: u64 = 1_000_000;

    fn sample(now_us: u64, rtt_us: u64, snd_una: u64, snd_max: u64) -> Sample {
        Sample { now: Time(now_us * US), rtt: Time(rtt_us * US), snd_una, snd_max, flight: 0 }
    }

    /// A slow-start round of `acks` ACKs `gap_us` apart from `start_us`, each covering the
    /// next segment, the round ending at `end`: returns the index of the ACK that found the exit.
    fn round(h: &mut HyStart, start_us: u64, acks: u64, gap_us: u64, rtt_us: u64, cwnd: u64, first_seq: u64) -> Option<u64> {
        for i in 0..acks {
            let una = first_seq + (i + 1) * MSS;
            if h.on_sample(sample(start_us + i * gap_us, rtt_us, una, una + cwnd), None, MSS, cwnd, u64::MAX) {
                return Some(i);
            }
        }
        None
    }

    #[test]
    fn below_the_low_window_nothing_is_found() {
        // a train of 2 s at 15 segments: cwnd < hystart_low_window
        let mut h = HyStart::new();
        assert_eq!(round(&mut h, 0, 1000, 100, 100, 15 * MSS, 0), None);
        assert!(!h.found());
        assert_eq!(h.delay_min(), Some(Time(100 * US)), "delay_min is kept below the low window too");
    }

    #[test]
    fn an_ack_train_longer_than_half_delay_min_plus_the_cushion_is_the_exit() {
        // RTT 400 us, cwnd 20 segments: pacing rate 2 x 20 x 1448 B / 400 us = 144.8 MB/s, so
        // the cushion 4 x 65215 B / 144.8 MB/s = 1.8 ms is capped at 1 ms: threshold
        // (400 + 1000) / 2 = 700 us. ACKs every 100 us from the round's start (0 us): the ACK
        // at 800 us is the first more than 700 us in.
        let mut h = HyStart::new();
        // the first sample starts the round (SND.UNA passes the initial end, 0)
        assert_eq!(round(&mut h, 0, 20, 100, 400, 20 * MSS, 0), Some(8));
        assert!(h.found());
    }

    #[test]
    fn the_cushion_follows_the_pacing_rate_below_one_ms() {
        // RTT 100 us, cwnd 40: rate 2 x 40 x 1448 / 100 us = 1158.4 MB/s, cushion
        // 4 x 65215 / 1158.4e6 s = 225.2 us: threshold (100 + 225.2) / 2 = 162.6 us
        let srtt = Some(Time(100 * US));
        let c = cushion(srtt, 0, 40 * MSS, u64::MAX);
        assert_eq!(c.0 / 100_000, 2251, "{c:?}");
        // in slow start above ssthresh / 2, 120 %: 375.4 us
        let c = cushion(srtt, 0, 40 * MSS, 60 * MSS);
        assert_eq!(c.0 / 100_000, 3753, "{c:?}");
        let mut h = HyStart::new();
        // ACKs 50 us apart: 150 us is not past 162.6, 200 us is
        assert_eq!(round(&mut h, 0, 10, 50, 100, 40 * MSS, 0), Some(4));
    }

    #[test]
    fn acks_more_than_2ms_apart_are_not_a_train() {
        // RTT 400 us, ACKs 2.5 ms apart: each is more than hystart_ack_delta after the last
        // of the train, so the train never grows (and the delay test sees no increase)
        let mut h = HyStart::new();
        let mut found = None;
        for i in 0..20u64 {
            // one round: SND.UNA stays below the round's end (1000 segments)
            let una = (i + 1) * MSS;
            if h.on_sample(sample(i * 2500, 400, una, 1000 * MSS), None, MSS, 20 * MSS, u64::MAX) {
                found = Some(i);
            }
        }
        assert_eq!(found, None);
    }

    #[test]
    fn a_delay_increase_over_4ms_after_8_samples_is_the_exit() {
        // delay_min 100 us (first round), then a round whose samples are 4.2 ms: margin
        // clamp(100 / 8 us, 4 ms, 16 ms) = 4 ms, curr_rtt 4.2 ms > 4.1 ms after the 8 first
        // samples, so the 9th sample finds it. ACKs 3 ms apart: no train.
        let mut h = HyStart::new();
        let una = |k: u64| k * MSS;
        // (a round of its own: it ends at the next ACK)
        assert!(!h.on_sample(sample(0, 100, una(1), una(1)), None, MSS, 20 * MSS, u64::MAX));
        let mut found = None;
        for i in 1..=12u64 {
            if h.on_sample(sample(i * 3000, 4200, una(1 + i), una(100)), None, MSS, 20 * MSS, u64::MAX) {
                found = Some(i);
                break;
            }
        }
        assert_eq!(found, Some(9));
        // 4.0 ms is not above 100 us + 4 ms
        let mut h = HyStart::new();
        h.on_sample(sample(0, 100, una(1), una(1)), None, MSS, 20 * MSS, u64::MAX);
        for i in 1..=30u64 {
            assert!(!h.on_sample(sample(i * 3000, 4100, una(1 + i), una(100)), None, MSS, 20 * MSS, u64::MAX));
        }
    }

    #[test]
    fn the_delay_margin_is_an_eighth_of_delay_min_between_4_and_16_ms() {
        // delay_min 80 ms: margin 10 ms; 89.9 ms is no exit, 90.1 ms is
        for (rtt_us, exit) in [(89_900, false), (90_100, true)] {
            let mut h = HyStart::new();
            h.on_sample(sample(0, 80_000, MSS, MSS), None, MSS, 20 * MSS, u64::MAX);
            let mut found = false;
            for i in 1..=9u64 {
                found |= h.on_sample(sample(i * 3000, rtt_us, (1 + i) * MSS, 100 * MSS), None, MSS, 20 * MSS, u64::MAX);
            }
            assert_eq!(found, exit, "{rtt_us} us");
        }
    }

    #[test]
    fn samples_within_a_second_of_an_epoch_are_ignored() {
        let mut h = HyStart::new();
        let epoch = Some(Time(0));
        for i in 0..100u64 {
            let una = (i + 1) * MSS;
            assert!(!h.on_sample(sample(i * 100, 400, una, una + 20 * MSS), epoch, MSS, 20 * MSS, u64::MAX));
        }
        assert_eq!(h.delay_min(), None, "not even delay_min");
        // a second after the epoch began they count again
        h.on_sample(sample(1_000_000, 400, 200 * MSS, 220 * MSS), epoch, MSS, 20 * MSS, u64::MAX);
        assert_eq!(h.delay_min(), Some(Time(400 * US)));
    }

    #[test]
    fn out_of_slow_start_or_once_found_nothing_more_is_tested() {
        let mut h = HyStart::new();
        // cwnd = ssthresh: congestion avoidance
        for i in 0..20u64 {
            let una = (i + 1) * MSS;
            assert!(!h.on_sample(sample(i * 100, 400, una, una + 20 * MSS), None, MSS, 20 * MSS, 20 * MSS));
        }
        assert_eq!(round(&mut h, 10_000, 20, 100, 400, 20 * MSS, 100 * MSS), Some(8));
        assert!(!h.on_sample(sample(20_000, 400, 200 * MSS, 300 * MSS), None, MSS, 20 * MSS, u64::MAX),
                "found once: the caller already set ssthresh");
    }

    #[test]
    fn a_timeout_forgets_the_exit_and_delay_min() {
        let mut h = HyStart::new();
        assert!(round(&mut h, 0, 20, 100, 400, 20 * MSS, 0).is_some());
        h.on_timeout(Time(300_000 * US), 50 * MSS);
        assert!(!h.found());
        assert_eq!(h.delay_min(), None);
        // the round the timeout began ends when SND.UNA passes 50 segments; the next train
        // (delay_min now 600 us: threshold (600 + 1000) / 2 = 800 us) finds it again
        assert_eq!(round(&mut h, 300_500, 20, 100, 600, 20 * MSS, 50 * MSS), Some(9));
    }
}
