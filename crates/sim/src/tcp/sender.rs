//! The data sender: RFC 5681 congestion control around a byte stream that the
//! application extends block by block.
//!
//! Sequence numbers count bytes and the first data byte is 1 (the SYN used 0).
//! `recover` is kept as an exclusive bound (one past the highest byte sent when
//! recovery began); RFC 6582 initialises it to ISS, which is 1 in that form. The sender never touches the
//! network: it appends the segments to transmit to an output vector and reports the
//! time its retransmission timer must fire (see [`TcpSender::take_timer_request`]).

use crate::scenario::TcpVariant;
use crate::tcp::rto::RtoEstimator;
use crate::tcp::timer::{Fired, LazyTimer};
use crate::time::Time;

/// Per-connection sender parameters.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub variant: TcpVariant,
    pub mss: u64,
    /// Initial window in bytes (RFC 5681 §3.1 IW).
    pub init_cwnd: u64,
    /// Receiver's advertised window in bytes: a per-flow cap on data in flight.
    pub rwnd: u64,
    pub dupack_threshold: u32,
    /// Off: the window only grows additively (FAST'08 §5.1.2, "no slow start").
    pub slow_start: bool,
    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from the IW.
    pub slow_start_after_idle: bool,
    pub rto_min: Time,
    pub rto_max: Time,
    pub granularity: Time,
}

/// A segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    /// Some byte of it was sent before.
    pub retransmit: bool,
}

/// Counters of one sender.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub timeouts: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub segments: u64,
    pub payload_bytes: u64,
}

/// One TCP sender.
#[derive(Clone, Debug)]
pub struct TcpSender {
    pub cfg: SenderConfig,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u64,
    /// Next sequence number to send (moved back to `snd_una` by a timeout: go-back-N).
    pub snd_nxt: u64,
    /// Highest sequence number sent so far, plus one.
    pub snd_max: u64,
    /// End of the data the application has written.
    pub app_limit: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// RFC 6582 `recover`, exclusive: `snd_max` when recovery (or a timeout) began. An
    /// ACK "covers recover" when it is at least this.
    pub recover: u64,
    /// A partial ACK has already reset the timer in this recovery (RFC 6582 §3.2 step 5).
    pub(crate) partial_ack_seen: bool,
    pub rto: RtoEstimator,
    timer: LazyTimer,
    timer_request: Option<Time>,
    /// The one segment being timed for an RTT sample: (end sequence, send time).
    timed: Option<(u64, Time)>,
    last_activity: Time,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: SenderConfig) -> Self {
        let rto = RtoEstimator::new(cfg.rto_min, cfg.rto_max, cfg.granularity);
        // RFC 5681 §3.1: initial ssthresh "arbitrarily high"; the receive window bounds it.
        let ssthresh = if cfg.slow_start { cfg.rwnd } else { cfg.init_cwnd };
        TcpSender {
            snd_una: 1,
            snd_nxt: 1,
            snd_max: 1,
            app_limit: 1,
            cwnd: cfg.init_cwnd,
            ssthresh,
            dupacks: 0,
            in_recovery: false,
            recover: 1,
            partial_ack_seen: false,
            rto,
            timer: LazyTimer::default(),
            timer_request: None,
            timed: None,
            last_activity: Time::ZERO,
            stats: SenderStats::default(),
            cfg,
        }
    }

    /// Bytes sent and not yet acknowledged (RFC 5681 FlightSize).
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Everything written has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una == self.app_limit
    }

    /// A time at which the owner must deliver a timer event, if one is needed.
    pub fn take_timer_request(&mut self) -> Option<Time> {
        self.timer_request.take()
    }

    fn arm_timer(&mut self, now: Time) {
        if let Some(t) = self.timer.arm(now + self.rto.rto) {
            self.timer_request = Some(t);
        }
    }

    /// RFC 6298 §5.2-5.3: after an ACK of new data, restart the timer, or stop it when
    /// nothing is outstanding.
    pub(crate) fn restart_timer(&mut self, now: Time) {
        if self.snd_una >= self.snd_max {
            self.timer.cancel();
        } else {
            self.arm_timer(now);
        }
    }

    /// The application wrote `bytes` more.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) {
        if self.cfg.slow_start_after_idle
            && self.snd_una == self.snd_max
            && now.0.saturating_sub(self.last_activity.0) > self.rto.rto.0
        {
            self.cwnd = self.cwnd.min(self.cfg.init_cwnd);
        }
        self.app_limit += bytes;
        self.send_new_data(now, out);
    }

    /// Put one segment on the wire and do the bookkeeping every transmission needs.
    pub(crate) fn emit(&mut self, now: Time, seq: u64, len: u64, out: &mut Vec<Segment>) {
        let retransmit = seq < self.snd_max;
        if retransmit {
            self.stats.retransmits += 1;
            // Karn's algorithm (RFC 6298 §3): no sample from a retransmitted segment.
            self.timed = None;
        } else if self.timed.is_none() {
            self.timed = Some((seq + len, now));
        }
        self.stats.segments += 1;
        self.stats.payload_bytes += len;
        out.push(Segment { seq, len: len as u32, retransmit });
        self.last_activity = now;
        // RFC 6298 §5.1: start the timer when data is sent and it is not running.
        if !self.timer.is_armed() {
            self.arm_timer(now);
        }
    }

    /// Send as much unsent (or, after a timeout, unacknowledged) data as the window allows.
    pub(crate) fn send_new_data(&mut self, now: Time, out: &mut Vec<Segment>) {
        let window = self.cwnd.min(self.cfg.rwnd);
        while self.snd_nxt < self.app_limit {
            let len = self.cfg.mss.min(self.app_limit - self.snd_nxt);
            if self.snd_nxt + len > self.snd_una + window {
                break;
            }
            let seq = self.snd_nxt;
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    /// Retransmit the segment at `snd_una` (fast retransmit, partial ACK).
    pub(crate) fn retransmit_first_unacked(&mut self, now: Time, out: &mut Vec<Segment>) {
        let len = self.cfg.mss.min(self.snd_max - self.snd_una);
        let seq = self.snd_una;
        self.emit(now, seq, len, out);
    }

    /// Window growth for an ACK of `acked` new bytes outside recovery (RFC 5681 §3.1).
    fn grow_window(&mut self, acked: u64) {
        let mss = self.cfg.mss;
        if self.cfg.slow_start && self.cwnd < self.ssthresh {
            self.cwnd += acked.min(mss); // slow start, RFC 5681 eq. (2)
        } else {
            self.cwnd += (mss * mss / self.cwnd).max(1); // congestion avoidance, eq. (3)
        }
    }

    /// An ACK with cumulative acknowledgment `ack` arrived.
    pub fn on_ack(&mut self, now: Time, ack: u64, out: &mut Vec<Segment>) {
        self.last_activity = now;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            if let Some((end, sent)) = self.timed {
                if ack >= end {
                    let r = self.rto.measure(sent, now);
                    self.rto.sample(r);
                    self.timed = None;
                }
            }
            self.snd_una = ack;
            if self.snd_nxt < ack {
                self.snd_nxt = ack; // the receiver already had data we were about to resend
            }
            if self.in_recovery {
                self.on_ack_in_recovery(now, ack, acked, out);
            } else {
                self.dupacks = 0;
                self.grow_window(acked);
                self.restart_timer(now);
            }
            self.send_new_data(now, out);
        } else if ack == self.snd_una && self.snd_una < self.snd_max {
            self.on_duplicate_ack(now, out);
        }
    }

    /// Deliver a retransmission-timer event; returns true if the timer expired.
    pub fn on_timer_event(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        match self.timer.on_event(now) {
            Fired::Expired => {
                self.on_timeout(now, out);
                true
            }
            Fired::Reschedule(t) => {
                self.timer_request = Some(t);
                false
            }
            Fired::Ignore => false,
        }
    }

    /// RFC 6298 §5.4-5.6 and RFC 5681 §3.1 eq. (4): the timer expired.
    fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd_una >= self.snd_max {
            return; // nothing outstanding (cannot happen: the timer is off then)
        }
        self.stats.timeouts += 1;
        let mss = self.cfg.mss;
        // RFC 5681: ssthresh is not reduced again when the segment was already
        // retransmitted by a timeout (repeated expiry of the same segment).
        if self.rto.backoffs == 0 {
            self.ssthresh = (self.flight_size() / 2).max(2 * mss);
        }
        self.cwnd = mss; // loss window, LW = 1 SMSS
        if !self.cfg.slow_start {
            self.ssthresh = self.cwnd;
        }
        self.in_recovery = false;
        self.recover = self.snd_max; // RFC 6582 §3.2 step 4 (after a timeout)
        self.dupacks = 0;
        self.timed = None;
        self.rto.back_off();
        self.snd_nxt = self.snd_una; // go-back-N, as ns-2 and BSD do
        self.send_new_data(now, out);
        self.arm_timer(now);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const MSS: u64 = 1000;

    pub fn config() -> SenderConfig {
        SenderConfig {
            variant: TcpVariant::Newreno,
            mss: MSS,
            init_cwnd: 2 * MSS,
            rwnd: 1 << 30,
            dupack_threshold: 3,
            slow_start: true,
            slow_start_after_idle: false,
            rto_min: Time::from_ms(200),
            rto_max: Time::from_ms(60_000),
            granularity: Time::from_us(1),
        }
    }

    /// Sequence numbers of `segs`, in segment units (first data segment is 0).
    pub fn seg_numbers(segs: &[Segment]) -> Vec<u64> {
        segs.iter().map(|s| (s.seq - 1) / MSS).collect()
    }

    /// The cumulative ACK number that acknowledges the first `n` segments.
    pub fn ack_of(n: u64) -> u64 {
        1 + n * MSS
    }

    #[test]
    fn sends_initial_window_then_waits() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, 10 * MSS, &mut out);
        assert_eq!(seg_numbers(&out), vec![0, 1]);
        assert!(s.take_timer_request().is_some(), "sending data starts the RTO timer");
    }

    #[test]
    fn slow_start_sends_two_segments_per_ack() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        out.clear();
        s.on_ack(Time::from_us(100), ack_of(1), &mut out);
        assert_eq!(seg_numbers(&out), vec![2, 3]);
        assert_eq!(s.cwnd, 3 * MSS);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_window() {
        let mut s = TcpSender::new(config());
        s.cwnd = 10 * MSS;
        s.ssthresh = 5 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 1000 * MSS, &mut out);
        for i in 1..=10 {
            s.on_ack(Time::from_us(100), ack_of(i), &mut out);
        }
        assert!(s.cwnd >= 10 * MSS + 9 * MSS / 10 && s.cwnd <= 11 * MSS, "cwnd {}", s.cwnd);
    }

    #[test]
    fn short_last_segment_carries_the_tail_of_the_write() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, MSS + 10, &mut out);
        assert_eq!(out.iter().map(|s| s.len).collect::<Vec<_>>(), vec![MSS as u32, 10]);
    }

    #[test]
    fn receive_window_caps_data_in_flight() {
        let mut cfg = config();
        cfg.rwnd = 3 * MSS;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 50 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn timeout_halves_ssthresh_sets_one_segment_and_goes_back_n() {
        let mut s = TcpSender::new(config());
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 8 * MSS, &mut out);
        assert_eq!(out.len(), 8);
        out.clear();
        let fire = s.take_timer_request().unwrap();
        assert!(s.on_timer_event(fire, &mut out));
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(s.ssthresh, 4 * MSS);
        assert_eq!(s.cwnd, MSS);
        assert_eq!(seg_numbers(&out), vec![0]);
        assert!(out[0].retransmit);
        // the backed-off timer is armed for twice the RTO (RFC 6298 §5.5)
        assert_eq!(s.take_timer_request(), Some(fire + Time::from_ms(2000)));
    }

    #[test]
    fn ack_beyond_resent_data_skips_what_the_receiver_already_has() {
        let mut s = TcpSender::new(config());
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 8 * MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        out.clear();
        s.on_timer_event(fire, &mut out);
        out.clear();
        // segment 0 was lost, 1..7 were buffered by the receiver: the ACK covers all
        s.on_ack(fire + Time::from_us(100), ack_of(8), &mut out);
        assert!(out.is_empty());
        assert!(s.all_acked());
    }

    #[test]
    fn rtt_sample_from_acked_segment_sets_srtt() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, 2 * MSS, &mut out);
        s.on_ack(Time::from_us(100), ack_of(1), &mut out);
        assert_eq!(s.rto.srtt, Some(Time::from_us(100)));
    }

    #[test]
    fn no_rtt_sample_from_a_retransmitted_segment_karn() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        s.on_timer_event(fire, &mut out);
        s.on_ack(fire + Time::from_us(100), ack_of(1), &mut out);
        assert_eq!(s.rto.srtt, None);
    }

    #[test]
    fn all_acked_stops_the_timer() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        s.on_ack(Time::from_us(100), ack_of(1), &mut out);
        assert!(!s.on_timer_event(fire, &mut out), "a stopped timer does not expire");
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn without_slow_start_the_window_grows_additively_after_a_timeout() {
        let mut cfg = config();
        cfg.slow_start = false;
        let mut s = TcpSender::new(cfg);
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        s.on_timer_event(fire, &mut out);
        assert_eq!(s.cwnd, MSS);
        s.on_ack(fire + Time::from_us(100), ack_of(1), &mut out);
        // additive: +MSS*MSS/cwnd = +1 MSS at cwnd = 1 MSS; then +1/2 MSS, not doubling
        assert_eq!(s.cwnd, 2 * MSS);
        s.on_ack(fire + Time::from_us(200), ack_of(2), &mut out);
        assert_eq!(s.cwnd, 2 * MSS + MSS / 2);
    }

    #[test]
    fn idle_restart_returns_to_initial_window_when_enabled() {
        let mut cfg = config();
        cfg.slow_start_after_idle = true;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 20 * MSS;
        let mut out = vec![];
        s.write(Time::from_ms(5_000), MSS, &mut out);
        assert_eq!(s.cwnd, 2 * MSS);
    }
}
