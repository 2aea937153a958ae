//! RACK-TLP (RFC 8985): time-based loss detection on per-segment transmit times, and tail
//! loss probes. Only a SACK sender with `rack_tlp` on carries this state (`TcpSender::rack`),
//! so Reno and NewReno senders pay nothing for the per-segment log.
//!
//! Modelled:
//! - the log of sent, unacknowledged segments with their last transmit time, SACKed and
//!   lost marks (RFC 8985 §5.2 per-segment state);
//! - §6.2 steps 1-5: RACK.min_RTT, the most recently sent delivered segment (RACK.xmit_ts,
//!   RACK.end_seq, RACK.rtt, skipping ACKs that a retransmission cannot have caused), RACK.fack
//!   and reordering_seen, the reordering window (0 in recovery or with DupThresh segments
//!   SACKed until reordering is seen, else min(min_RTT / 4, SRTT)) and RACK_detect_loss with
//!   its reordering timer;
//! - §6.3: an RTO marks every unacknowledged segment lost (with `loss_retransmit_queue`,
//!   every one not SACKed, as Linux's `tcp_timeout_mark_lost`);
//! - §7.2-7.3: the probe timeout PTO = 2 SRTT (+ WCDelAckT with one segment in flight, 1 s
//!   without an RTT sample), capped at the RTO's expiry, armed in the open state only; the
//!   probe is new data if the receive window allows, else the highest segment sent;
//! - §7.4: a TLP episode ends when an ACK covers TLP.end_seq: no loss if the probe was new
//!   data or the ACK is a pure duplicate; a congestion response when a later ACK shows the
//!   retransmitted probe repaired a loss.
//!
//! Not modelled: DSACK (the receiver sends none), so the reordering window never widens
//! (§6.2 step 4: reo_wnd_mult stays 1) and a probe is never recognised as spurious by one.

use std::collections::VecDeque;

use crate::time::Time;

/// RFC 8985 §7.2 WCDelAckT: the receiver's worst-case delayed-ACK timer (RECOMMENDED 200 ms),
/// added to the PTO when a lone segment may be waiting for a delayed ACK.
pub const WC_DEL_ACK: Time = Time(200_000_000_000);
/// RFC 8985 §7.2: the PTO before any RTT sample.
pub const PTO_WITHOUT_RTT: Time = Time(1_000_000_000_000);

/// One sent, unacknowledged segment (RFC 8985 §5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSegment {
    pub start: u64,
    pub end: u64,
    /// Segment.xmit_ts: when it was last sent.
    pub xmit: Time,
    pub sacked: bool,
    /// Marked lost and not sent again since: it is not in the network.
    pub lost: bool,
    /// Sent more than once.
    pub retransmitted: bool,
}

/// RACK and TLP state of one sender.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// `rack_rtt_sack_first`: an ACK's SACKed segments are taken before those it
    /// acknowledges cumulatively ([`Rack::on_ack`]).
    pub sack_first: bool,
    /// Unacknowledged segments in sequence order.
    log: VecDeque<SentSegment>,
    /// How many of them are SACKed, and how many marked lost and not SACKed (kept with the
    /// marks, so that asking is O(1)).
    sacked_segments: usize,
    lost_segments: usize,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment known delivered.
    xmit_ts: Time,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    rtt: Time,
    /// RACK.min_RTT.
    min_rtt: Option<Time>,
    /// RACK.fack: the highest end of a delivered segment.
    fack: u64,
    reordering_seen: bool,
    /// Retransmissions `detect_loss` has marked lost again, in all (Linux's
    /// TCPLostRetransmit; an ACK that raises it carries FLAG_LOST_RETRANS).
    pub lost_retransmits: u64,
    /// TLP.end_seq: SND.NXT when the probe of the episode in progress was sent.
    pub tlp_end: Option<u64>,
    /// TLP.is_retrans: that probe was a retransmission.
    pub tlp_is_retrans: bool,
}

/// RFC 8985 §6.2 RACK_sent_after(t1, seq1, t2, seq2).
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// An empty log; `sack_first` as [`Rack::sack_first`].
    pub fn new(sack_first: bool) -> Self {
        Rack { sack_first, ..Rack::default() }
    }

    /// Record a transmission of [seq, seq + len) at `now`: new data joins the log, a
    /// retransmission restamps the segments it covers (§6.1: Segment.xmit_ts).
    pub fn on_send(&mut self, seq: u64, len: u64, now: Time) {
        let end = seq + len;
        let i = self.log.partition_point(|g| g.end <= seq);
        for g in self.log.range_mut(i..) {
            if g.start >= end {
                break;
            }
            g.xmit = now;
            self.lost_segments -= (g.lost && !g.sacked) as usize;
            g.lost = false;
            g.retransmitted = true;
        }
        let top = self.log.back().map_or(seq, |g| g.end.max(seq));
        if end > top {
            let fresh = SentSegment { start: top, end, xmit: now, sacked: false, lost: false, retransmitted: false };
            self.log.push_back(fresh);
        }
    }

    /// An ACK moved SND.UNA to `una` and carried SACK `blocks`: RFC 8985 §6.2 steps 1-3 for
    /// every segment it newly delivers. `echo` is its timestamp echo, if timestamps are on.
    ///
    /// The RFC takes the segments in ascending send time, so RACK.rtt ends as the newest
    /// one's, here the cumulatively acknowledged ones before the SACKed ones. With
    /// `sack_first`, Linux's order: `tcp_ack` runs `tcp_sacktag_write_queue` before
    /// `tcp_clean_rtx_queue`, both call `tcp_rack_advance`, which keeps the RTT of every
    /// segment it is given (only RACK.xmit_ts waits for a newer one), so an ACK that moves
    /// SND.UNA and SACKs later data leaves RACK.rtt at the last cumulatively acknowledged
    /// segment's, older and longer; a hole sent with that segment then waits a reordering
    /// window before it counts as lost. Delivery below RACK.fack (reordering) is judged
    /// against the fack before the ACK, as Linux's `prior_fack`.
    pub fn on_ack(&mut self, now: Time, una: u64, blocks: &[(u64, u64)], echo: Option<Time>) {
        let prior_fack = self.fack;
        if self.sack_first {
            self.sack(now, blocks, echo);
        }
        while let Some(&g) = self.log.front() {
            if g.end > una {
                break;
            }
            self.log.pop_front();
            self.sacked_segments -= g.sacked as usize;
            self.lost_segments -= (g.lost && !g.sacked) as usize;
            if !g.sacked {
                let fack = if self.sack_first { prior_fack } else { self.fack };
                self.delivered(g, now, echo, fack);
            }
        }
        if let Some(first) = self.log.front_mut() {
            first.start = first.start.max(una); // a partial ACK of the first segment
        }
        if !self.sack_first {
            self.sack(now, blocks, echo);
        }
    }

    /// The segments SACK `blocks` newly cover.
    fn sack(&mut self, now: Time, blocks: &[(u64, u64)], echo: Option<Time>) {
        for &(bs, be) in blocks {
            let i = self.log.partition_point(|g| g.end <= bs);
            for k in i..self.log.len() {
                let g = self.log[k];
                if g.start >= be {
                    break;
                }
                if !g.sacked && g.start >= bs && g.end <= be {
                    self.log[k].sacked = true;
                    self.sacked_segments += 1;
                    self.lost_segments -= g.lost as usize;
                    let fack = self.fack;
                    self.delivered(g, now, echo, fack);
                }
            }
        }
    }

    /// §6.2 steps 1-3 for one delivered segment; below `fack` it was reordered.
    fn delivered(&mut self, g: SentSegment, now: Time, echo: Option<Time>, fack: u64) {
        let rtt = Time(now.0.saturating_sub(g.xmit.0));
        if g.retransmitted {
            // step 2: the ACK may be for the original transmission, not the retransmission
            if echo.is_some_and(|e| e < g.xmit) || self.min_rtt.is_some_and(|m| rtt < m) {
                return;
            }
        } else {
            // step 1 (RACK.min_RTT from unambiguous samples); step 3: delivered below RACK.fack
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            if g.end < fack {
                self.reordering_seen = true;
            }
        }
        self.fack = self.fack.max(g.end);
        self.rtt = rtt;
        if sent_after(g.xmit, g.end, self.xmit_ts, self.end_seq) {
            self.xmit_ts = g.xmit;
            self.end_seq = g.end;
        }
    }

    /// §6.2 step 4 (without DSACK, reo_wnd_mult = 1): no window in recovery, or once
    /// DupThresh segments are SACKed, until reordering has been seen.
    pub fn reo_wnd(&self, recovering: bool, dupthresh: u32, srtt: Option<Time>) -> Time {
        if !self.reordering_seen {
            let sacked = self.sacked_segments;
            if recovering || sacked >= dupthresh as usize {
                return Time::ZERO;
            }
        }
        let quarter = Time(self.min_rtt.unwrap_or(Time::ZERO).0 / 4);
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// §6.2 step 5 RACK_detect_loss: mark lost every segment sent more than RACK.rtt +
    /// `reo_wnd` before the most recently sent delivered one. Returns how many it newly
    /// marked and, if some may still be lost, after how long to look again (the
    /// reordering timer).
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Time) -> (u32, Option<Time>) {
        let (mut marked, mut wait) = (0, None);
        let (rack_ts, rack_end, rtt) = (self.xmit_ts, self.end_seq, self.rtt);
        for g in self.log.iter_mut().filter(|g| !g.sacked && !g.lost) {
            if !sent_after(rack_ts, rack_end, g.xmit, g.end) {
                continue;
            }
            let deadline = g.xmit.0 + rtt.0 + reo_wnd.0;
            if deadline <= now.0 {
                g.lost = true;
                self.lost_segments += 1;
                marked += 1;
                self.lost_retransmits += g.retransmitted as u64;
            } else {
                let remaining = Time(deadline - now.0);
                wait = Some(wait.map_or(remaining, |w: Time| w.max(remaining)));
            }
        }
        (marked, wait)
    }

    /// §6.3: after an RTO every unacknowledged segment is lost; the SACK scoreboard is
    /// dropped with it (RFC 2018 §8), and so is a TLP episode. `keep_sacked`: Linux's
    /// `tcp_timeout_mark_lost`, which marks only what was not SACKed (the receiver is
    /// trusted not to renege).
    pub fn on_timeout(&mut self, keep_sacked: bool) {
        for g in &mut self.log {
            if !(keep_sacked && g.sacked) {
                g.lost = true;
                g.sacked = false;
            }
        }
        self.sacked_segments = self.log.iter().filter(|g| g.sacked).count();
        self.lost_segments = self.log.iter().filter(|g| g.lost && !g.sacked).count();
        self.tlp_end = None;
    }

    /// Some unSACKed segment is marked lost and waits to be sent again.
    pub fn any_lost(&self) -> bool {
        self.check_counts();
        self.lost_segments > 0
    }

    /// Segments SACKed or marked lost: the flight is smaller than the log.
    pub fn any_out_of_flight(&self) -> bool {
        self.check_counts();
        self.sacked_segments + self.lost_segments > 0
    }

    /// Debug builds: the counts agree with the marks.
    fn check_counts(&self) {
        debug_assert_eq!(self.sacked_segments, self.log.iter().filter(|g| g.sacked).count());
        debug_assert_eq!(self.lost_segments, self.log.iter().filter(|g| g.lost && !g.sacked).count());
    }

    /// The lowest segment marked lost and not sent since.
    pub fn first_lost(&self) -> Option<SentSegment> {
        self.log.iter().find(|g| g.lost && !g.sacked).copied()
    }

    /// The lowest unSACKed segment not marked lost at or above `from` and below the highest
    /// SACKed byte (RFC 6675 NextSeg rule 3 on this log).
    pub fn first_unsacked_from(&self, from: u64) -> Option<SentSegment> {
        let highest = self.log.iter().rev().find(|g| g.sacked)?.end;
        self.log.iter().find(|g| g.start >= from && g.end <= highest && !g.sacked && !g.lost).copied()
    }

    /// Bytes in the network: unSACKed segments not marked lost since their last
    /// transmission (RFC 6675 SetPipe with RACK's marks for IsLost; a retransmission
    /// replaces its original in the count, as Linux's packets_out - left_out + retrans_out).
    pub fn pipe(&self) -> u64 {
        self.log.iter().filter(|g| !g.sacked && !g.lost).map(|g| g.end - g.start).sum()
    }

    /// The highest segment sent so far (§7.3: what a probe retransmits).
    pub fn last_segment(&self) -> Option<SentSegment> {
        self.log.back().copied()
    }

    /// Segments outstanding.
    pub fn in_flight_segments(&self) -> usize {
        self.log.len()
    }

    /// Some segment is SACKed (the sender is not in Linux's Open state then).
    pub fn any_sacked(&self) -> bool {
        self.check_counts();
        self.sacked_segments > 0
    }

    /// When the first unacknowledged segment was last sent: the transmit time of Linux's
    /// `tcp_rtx_queue_head`, which `tcp_rto_delta_us` counts the RTO from.
    pub fn first_xmit(&self) -> Option<Time> {
        self.log.front().map(|g| g.xmit)
    }

    /// §7.2 TLP_calc_PTO before the RTO cap: 2 SRTT, + WCDelAckT when one segment is in
    /// flight; 1 s without an RTT sample. `timeout_min` is added when more than one is:
    /// Linux's `tcp_schedule_loss_probe` (net/ipv4/tcp_output.c) adds TCP_TIMEOUT_MIN_US, 2
    /// ms, where RFC 8985 adds nothing (`rack_timer_floor`).
    pub fn pto(&self, srtt: Option<Time>, timeout_min: Time) -> Time {
        match srtt {
            Some(s) if self.log.len() == 1 => Time(2 * s.0 + WC_DEL_ACK.0),
            Some(s) => Time(2 * s.0 + timeout_min.0),
            None => PTO_WITHOUT_RTT,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Segment k as [1 + k MSS, 1 + (k + 1) MSS).
    fn seg(k: u64) -> (u64, u64) {
        (1 + k * MSS, 1 + (k + 1) * MSS)
    }

    /// Segments 0..n sent 10 us apart from t = 0.
    fn sent(n: u64) -> Rack {
        let mut r = Rack::default();
        for k in 0..n {
            r.on_send(seg(k).0, MSS, Time::from_us(10 * k));
        }
        r
    }

    #[test]
    fn rack_marks_lost_what_was_sent_more_than_rtt_plus_reo_wnd_before_the_latest_delivered_6_2() {
        // segments 0..5 sent at 0, 10, ..., 40 us; segment 4 (sent at 40 us) is SACKed at
        // 140 us: RACK.rtt = 100 us. With reo_wnd = 15 us, segment k is lost when
        // 10k + 100 + 15 <= 140, i.e. k <= 2; segment 3 (sent at 30 us) waits 5 us more.
        let mut r = sent(5);
        let now = Time::from_us(140);
        r.on_ack(now, seg(0).0, &[seg(4)], None);
        assert_eq!(r.rtt, Time::from_us(100));
        assert_eq!((r.xmit_ts, r.end_seq), (Time::from_us(40), seg(4).1));
        let (marked, wait) = r.detect_loss(now, Time::from_us(15));
        assert_eq!(marked, 3);
        assert_eq!(wait, Some(Time::from_us(5)), "the reordering timer for segment 3");
        assert_eq!(r.first_lost().map(|g| g.start), Some(seg(0).0));
        // the reordering timer fires 5 us later: segment 3 goes too
        assert_eq!(r.detect_loss(Time::from_us(145), Time::from_us(15)), (1, None));
        // 4 segments out, all lost: nothing in the network
        assert_eq!(r.pipe(), 0);
    }

    #[test]
    fn with_sack_first_the_cumulatively_acked_segment_sets_rack_rtt_and_its_hole_waits() {
        // segments 0..2 sent together at 0, segments 3 and 4 at 300 us; segment 2 is lost.
        // At 400 us an ACK acknowledges 0-1 and SACKs 3: RFC 8985 takes segment 3 last
        // (RACK.rtt 100 us) and segment 2, sent 400 us ago, is lost at once (reo_wnd 25 us);
        // Linux takes segment 1 last (RACK.rtt 400 us): segment 2 waits the reordering window
        let ack = |sack_first: bool| {
            let mut r = Rack::new(sack_first);
            for k in 0..3 {
                r.on_send(seg(k).0, MSS, Time::ZERO);
            }
            for k in 3..5 {
                r.on_send(seg(k).0, MSS, Time::from_us(300));
            }
            let now = Time::from_us(400);
            r.on_ack(now, seg(2).0, &[seg(3)], None);
            assert_eq!((r.xmit_ts, r.end_seq), (Time::from_us(300), seg(3).1), "RACK.xmit_ts either way");
            assert!(!r.reordering_seen, "segment 1 was not delivered below the fack before this ACK");
            (r.rtt, r.detect_loss(now, Time::from_us(25)))
        };
        assert_eq!(ack(false), (Time::from_us(100), (1, None)));
        assert_eq!(ack(true), (Time::from_us(400), (0, Some(Time::from_us(25)))));
    }

    #[test]
    fn reo_wnd_is_a_quarter_of_min_rtt_until_dupthresh_segments_are_sacked_6_2_step4() {
        let mut r = sent(6);
        r.on_ack(Time::from_us(100), seg(1).0, &[], None); // segment 0: RTT 100 us
        let srtt = Some(Time::from_us(100));
        assert_eq!(r.reo_wnd(false, 3, srtt), Time::from_us(25), "min_RTT / 4");
        assert_eq!(r.reo_wnd(false, 3, Some(Time::from_us(20))), Time::from_us(20), "capped at SRTT");
        assert_eq!(r.reo_wnd(true, 3, srtt), Time::ZERO, "in recovery, no reordering seen");
        r.on_ack(Time::from_us(160), seg(1).0, &[(seg(3).0, seg(5).1)], None);
        assert_eq!(r.reo_wnd(false, 3, srtt), Time::ZERO, "three segments SACKed");
    }

    #[test]
    fn late_delivery_below_fack_is_reordering_and_keeps_the_window_6_2_step3() {
        let mut r = sent(4);
        r.on_ack(Time::from_us(100), seg(0).0, &[(seg(1).0, seg(3).1)], None);
        assert!(!r.reordering_seen);
        r.on_ack(Time::from_us(110), seg(4).0, &[], None); // segment 0, never resent, arrives late
        assert!(r.reordering_seen);
        // min_RTT is segment 3's 70 us (sent at 30 us, SACKed at 100 us): a quarter of it
        assert_eq!(r.reo_wnd(true, 3, Some(Time::from_us(100))), Time(Time::from_us(70).0 / 4));
    }

    #[test]
    fn an_ack_too_fast_for_the_retransmission_is_not_its_rtt_6_2_step2() {
        let mut r = sent(3);
        r.on_ack(Time::from_us(100), seg(1).0, &[], None); // min_RTT = 100 us
        r.on_send(seg(1).0, MSS, Time::from_us(150)); // segment 1 resent
        // 30 us after the retransmission: the original's ACK, not the retransmission's
        r.on_ack(Time::from_us(180), seg(2).0, &[], None);
        assert_eq!(r.end_seq, seg(0).1, "RACK.end_seq still the first segment's");
        assert_eq!(r.rtt, Time::from_us(100));
    }

    #[test]
    fn a_lost_retransmission_is_detected_by_later_deliveries() {
        // segment 0 lost, resent at 200 us, lost again; segment 3 sent at 250 us is SACKed
        // at 350 us: the retransmission was sent 50 us before it, more than reo_wnd = 0
        let mut r = sent(3);
        r.on_ack(Time::from_us(120), seg(0).0, &[seg(1)], None);
        r.on_ack(Time::from_us(130), seg(0).0, &[(seg(1).0, seg(2).1)], None);
        r.detect_loss(Time::from_us(130), Time::ZERO);
        r.on_send(seg(0).0, MSS, Time::from_us(200));
        assert!(!r.any_lost(), "sent again: back in the network");
        r.on_send(seg(3).0, MSS, Time::from_us(250));
        r.on_ack(Time::from_us(350), seg(0).0, &[seg(3), (seg(1).0, seg(2).1)], None);
        assert_eq!(r.detect_loss(Time::from_us(350), Time::ZERO), (1, None));
        assert_eq!(r.first_lost().map(|g| g.start), Some(seg(0).0));
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_allowance_for_a_lone_segment_7_2() {
        let srtt = Some(Time::from_us(100));
        assert_eq!(sent(3).pto(srtt, Time::ZERO), Time::from_us(200));
        assert_eq!(sent(1).pto(srtt, Time::ZERO), Time(Time::from_us(200).0 + WC_DEL_ACK.0));
        assert_eq!(sent(3).pto(None, Time::ZERO), Time::from_ms(1000));
    }

    #[test]
    fn linux_adds_tcp_timeout_min_us_to_the_pto_with_more_than_one_segment_out() {
        // tcp_schedule_loss_probe: 2 SRTT + TCP_TIMEOUT_MIN_US (2 ms) with packets_out > 1;
        // a lone segment keeps its delayed-ACK allowance (tcp_rto_min_us there, WCDelAckT
        // here: both 200 ms), without the 2 ms
        let (srtt, floor) = (Some(Time::from_us(600)), Time::from_ms(2));
        assert_eq!(sent(3).pto(srtt, floor), Time::from_us(1200 + 2000));
        assert_eq!(sent(1).pto(srtt, floor), Time(Time::from_us(1200).0 + WC_DEL_ACK.0));
    }

    #[test]
    fn an_rto_marks_everything_lost_6_3() {
        let mut r = sent(3);
        r.on_ack(Time::from_us(100), seg(0).0, &[seg(2)], None);
        r.tlp_end = Some(seg(3).0);
        r.on_timeout(false);
        assert_eq!(r.first_lost().map(|g| g.start), Some(seg(0).0));
        assert!(!r.any_sacked() && r.tlp_end.is_none());
        assert_eq!(r.pipe(), 0);
    }
}
