//! SACK-based loss recovery: the receiver reports up to three blocks of data it holds
//! beyond the cumulative ACK (RFC 2018); the sender keeps them in a scoreboard and
//! recovers as RFC 6675 describes:
//!
//! - a duplicate ACK is one that carries new SACK information (RFC 6675 §2);
//! - `IsLost(S)`: DupThresh discontiguous SACKed ranges above S, or more than
//!   (DupThresh - 1) x SMSS SACKed bytes above it (§4);
//! - recovery starts on the DupThresh-th duplicate ACK or when the first unacknowledged
//!   byte `IsLost`: RecoveryPoint = highest sent, ssthresh = cwnd = max(FlightSize/2,
//!   2 SMSS), retransmit the first hole (§5 steps 4.1-4.3) and restart the RTO timer, as
//!   NewReno does here (ns-2, Linux);
//! - on every ACK in recovery, `pipe` is recomputed (SetPipe) and while cwnd - pipe is at
//!   least one SMSS, NextSeg picks what to send: the lowest lost hole above HighRxt (rule
//!   1), else new data (rule 2), else the lowest unSACKed hole above HighRxt (rule 3);
//!   rule 4 (rescue retransmission) is not implemented;
//! - recovery ends when the cumulative ACK reaches RecoveryPoint;
//! - after a timeout the scoreboard is cleared (RFC 2018 §8) and the sender goes back N.
//!
//! Only holes are ever retransmitted in recovery: bytes the receiver reported are not sent
//! again.

use crate::tcp::sender::{Segment, TcpSender};
use crate::time::Time;

/// SACKed ranges above the cumulative ACK, and the recovery marks of RFC 6675.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Disjoint, sorted [start, end) ranges the receiver reported holding.
    ranges: Vec<(u64, u64)>,
    /// One past the highest byte retransmitted in this recovery (RFC 6675 HighRxt).
    pub high_rxt: u64,
    /// `snd_max` when recovery began (RFC 6675 RecoveryPoint).
    pub recovery_point: u64,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// Merge `blocks` and forget everything below `snd_una`. Returns true if the ACK
    /// told something new.
    pub fn update(&mut self, snd_una: u64, blocks: &[(u64, u64)]) -> bool {
        let before: u64 = self.sacked_bytes();
        for &(s, e) in blocks {
            let (s, e) = (s.max(snd_una), e);
            if s >= e {
                continue;
            }
            let i = self.ranges.partition_point(|&(_, re)| re < s);
            let mut j = i;
            let (mut ns, mut ne) = (s, e);
            while j < self.ranges.len() && self.ranges[j].0 <= ne {
                ns = ns.min(self.ranges[j].0);
                ne = ne.max(self.ranges[j].1);
                j += 1;
            }
            self.ranges.splice(i..j, std::iter::once((ns, ne)));
        }
        let gained = self.sacked_bytes() > before;
        self.ranges.retain(|&(_, e)| e > snd_una);
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(snd_una);
        }
        gained
    }

    fn sacked_bytes(&self) -> u64 {
        self.ranges.iter().map(|(s, e)| e - s).sum()
    }

    /// The range starting at or containing `seq`, if SACKed.
    pub fn sacked_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        self.ranges.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// RFC 6675 IsLost(seq).
    pub fn is_lost(&self, seq: u64, dupthresh: u32, mss: u64) -> bool {
        let mut bytes = 0;
        let mut count = 0;
        for &(s, e) in self.ranges.iter().rev() {
            if e <= seq {
                break;
            }
            bytes += e - s.max(seq + 1);
            count += 1;
        }
        count >= dupthresh as usize || bytes > (dupthresh as u64 - 1) * mss
    }

    /// One past the highest SACKed byte.
    pub fn highest_sacked(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, e)| e)
    }

    /// The first unSACKed byte at or after `from`, and where the hole ends.
    fn hole_at_or_after(&self, from: u64) -> (u64, Option<u64>) {
        let mut seq = from;
        let i = self.ranges.partition_point(|&(_, e)| e <= seq);
        for &(s, e) in &self.ranges[i..] {
            if s > seq {
                return (seq, Some(s));
            }
            seq = seq.max(e);
        }
        (seq, None)
    }
}

impl TcpSender {
    /// Every ACK, for the SACK variant.
    pub(crate) fn on_ack_sack(&mut self, now: Time, ack: u64, blocks: &[(u64, u64)], out: &mut Vec<Segment>) {
        let new_data = ack > self.snd_una;
        let acked = if new_data { self.advance_una(now, ack) } else { 0 };
        let new_sack = self.scoreboard.update(self.snd_una, blocks);
        if self.in_recovery {
            if self.snd_una >= self.scoreboard.recovery_point {
                self.in_recovery = false;
                self.dupacks = 0;
                self.cwnd = self.ssthresh;
                self.restart_timer(now);
                self.send_new_data(now, out);
            } else {
                if new_data {
                    self.restart_timer(now);
                } else if new_sack {
                    self.dart += 1;
                }
                self.send_in_recovery(now, out);
            }
            return;
        }
        if new_data {
            self.dupacks = 0;
            self.grow_window(acked);
            self.restart_timer(now);
            self.send_new_data(now, out);
            return;
        }
        if ack != self.snd_una || self.snd_una >= self.snd_max || !new_sack {
            return; // not a duplicate ACK in the RFC 6675 sense
        }
        self.dart += 1;
        self.dupacks += 1;
        let mss = self.cfg.mss;
        let lost = self.scoreboard.is_lost(self.snd_una, self.cfg.dupack_threshold, mss);
        if (self.dupacks >= self.cfg.dupack_threshold || lost) && self.may_fast_retransmit() {
            self.scoreboard.recovery_point = self.snd_max;
            self.recover = self.snd_max;
            self.ssthresh = self.loss_ssthresh();
            self.cwnd = self.ssthresh;
            self.in_recovery = true;
            self.stats.fast_retransmits += 1;
            let (seq, hole_end) = self.scoreboard.hole_at_or_after(self.snd_una);
            let len = mss.min(hole_end.unwrap_or(self.snd_max).min(self.snd_max) - seq);
            self.emit(now, seq, len, out);
            self.restart_timer(now);
            self.scoreboard.high_rxt = seq + len;
            self.send_in_recovery(now, out);
        } else if self.dupacks < self.cfg.dupack_threshold {
            self.limited_transmit(now, out);
        }
    }

    /// RFC 6675 SetPipe: bytes believed to be in the network.
    fn pipe(&self) -> u64 {
        let (mss, th) = (self.cfg.mss, self.cfg.dupack_threshold);
        let mut pipe = 0;
        let mut seq = self.snd_una;
        while seq < self.snd_max {
            let end = (seq + mss).min(self.snd_max);
            if let Some((_, e)) = self.scoreboard.sacked_at(seq) {
                seq = e; // SACKed: not in the network
                continue;
            }
            let len = end - seq;
            if !self.scoreboard.is_lost(seq, th, mss) {
                pipe += len; // the original is presumably still travelling
            }
            if seq < self.scoreboard.high_rxt {
                pipe += len; // and so is our retransmission
            }
            seq = end;
        }
        pipe
    }

    /// Send what NextSeg allows while cwnd - pipe >= 1 SMSS (RFC 6675 §5 step C).
    fn send_in_recovery(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mss = self.cfg.mss;
        let mut pipe = self.pipe();
        while self.cwnd >= pipe + mss {
            let Some((seq, len, new)) = self.next_seg() else { break };
            self.emit(now, seq, len, out);
            if new {
                self.snd_nxt = seq + len;
                self.snd_max = self.snd_max.max(self.snd_nxt);
            } else {
                self.scoreboard.high_rxt = self.scoreboard.high_rxt.max(seq + len);
            }
            pipe += len;
        }
    }

    /// RFC 6675 NextSeg: (sequence, length, is new data).
    fn next_seg(&self) -> Option<(u64, u64, bool)> {
        let (mss, th) = (self.cfg.mss, self.cfg.dupack_threshold);
        let highest = self.scoreboard.highest_sacked().unwrap_or(0);
        let start = self.scoreboard.high_rxt.max(self.snd_una);
        // rules 1 and 3: the lowest hole above HighRxt below the highest SACKed byte
        let (hole, hole_end) = self.scoreboard.hole_at_or_after(start);
        let hole_seg = (hole < highest && hole < self.snd_max).then(|| {
            let end = hole_end.unwrap_or(self.snd_max).min(self.snd_max).min(hole + mss);
            (hole, end - hole)
        });
        if let Some((seq, len)) = hole_seg {
            if self.scoreboard.is_lost(seq, th, mss) {
                return Some((seq, len, false)); // rule 1
            }
        }
        // rule 2: new data, if the receive window allows
        if self.snd_nxt < self.app_limit {
            let len = mss.min(self.app_limit - self.snd_nxt);
            if self.snd_nxt + len <= self.snd_una + self.rwnd {
                return Some((self.snd_nxt, len, true));
            }
        }
        hole_seg.map(|(seq, len)| (seq, len, false)) // rule 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpVariant;
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};

    /// [start, end) of segments a..b as SACK block bytes.
    fn blk(a: u64, b: u64) -> (u64, u64) {
        (ack_of(a), ack_of(b))
    }

    fn sack_sender(window: u64, total: u64) -> TcpSender {
        let mut cfg = config();
        cfg.variant = TcpVariant::Sack;
        let mut s = TcpSender::new(cfg);
        s.cwnd = window * MSS;
        s.ssthresh = window * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, total * MSS, &mut out);
        assert_eq!(out.len() as u64, window.min(total));
        s
    }

    #[test]
    fn scoreboard_merges_blocks_and_drops_acknowledged_data() {
        let mut sb = Scoreboard::default();
        assert!(sb.update(ack_of(0), &[blk(2, 3), blk(4, 5)]));
        assert!(sb.update(ack_of(0), &[blk(3, 4)]));
        assert!(!sb.update(ack_of(0), &[blk(2, 5)]), "nothing new");
        assert_eq!(sb.sacked_at(ack_of(3)), Some(blk(2, 5)));
        sb.update(ack_of(3), &[]);
        assert_eq!(sb.sacked_at(ack_of(3)), Some(blk(3, 5)));
    }

    #[test]
    fn is_lost_needs_dupthresh_segments_sacked_above() {
        let mut sb = Scoreboard::default();
        sb.update(ack_of(0), &[blk(1, 3)]);
        assert!(!sb.is_lost(ack_of(0), 3, MSS), "two segments above: not yet");
        sb.update(ack_of(0), &[blk(1, 4)]);
        assert!(sb.is_lost(ack_of(0), 3, MSS), "three segments above");
    }

    #[test]
    fn retransmits_only_the_holes() {
        // window 0..9; segments 0, 3 and 6 lost; SACKs report the rest
        let mut s = sack_sender(10, 10);
        let mut out = vec![];
        let t = Time::from_us(100);
        s.on_ack(t, ack_of(0), &[blk(1, 2)], &mut out);
        s.on_ack(t, ack_of(0), &[blk(1, 3)], &mut out);
        s.on_ack(t, ack_of(0), &[blk(4, 5), blk(1, 3)], &mut out);
        assert_eq!(seg_numbers(&out), vec![0], "third dupACK retransmits the first hole");
        for upto in 6..10 {
            let b = if upto == 6 { blk(4, 6) } else { blk(7, upto + 1) };
            s.on_ack(t, ack_of(0), &[b, blk(4, 6), blk(1, 3)], &mut out);
        }
        let sent = seg_numbers(&out);
        assert_eq!(sent, vec![0, 3, 6], "holes only, lowest first, nothing SACKed resent");
        assert!(out.iter().all(|s| s.retransmit));
        // the retransmissions arrive: the cumulative ACK covers everything
        s.on_ack(Time::from_us(200), ack_of(10), &[], &mut out);
        assert!(s.all_acked() && !s.in_recovery);
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn duplicate_ack_without_new_sack_information_is_not_counted() {
        let mut s = sack_sender(6, 6);
        let mut out = vec![];
        for _ in 0..5 {
            s.on_ack(Time::from_us(100), ack_of(0), &[blk(1, 2)], &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(s.dupacks, 1);
    }

    #[test]
    fn recovery_ends_at_the_recovery_point_with_cwnd_at_ssthresh() {
        let mut s = sack_sender(8, 100);
        let mut out = vec![];
        for k in 2..5 {
            s.on_ack(Time::from_us(100), ack_of(0), &[blk(1, k)], &mut out);
        }
        assert!(s.in_recovery);
        s.on_ack(Time::from_us(200), ack_of(8), &[], &mut out);
        assert!(!s.in_recovery);
        assert_eq!(s.cwnd, 4 * MSS);
    }

    #[test]
    fn fast_retransmit_restarts_the_retransmission_timer() {
        // sent at 0, the third dupACK at 150 us: the timer now runs from 150 us (ns-2, Linux)
        let mut s = sack_sender(8, 100);
        let rto = s.rto.rto;
        let mut out = vec![];
        let t = Time::from_us(150);
        for k in 2..5 {
            s.on_ack(t, ack_of(0), &[blk(1, k)], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!(s.timer_deadline(), Some(t + rto));
    }
}
