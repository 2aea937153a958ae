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
//!   Reno does here (ns-2, Linux); like NewReno, only if the ACK covers `recover`;
//! - on every ACK in recovery, `pipe` is recomputed (SetPipe) and while cwnd - pipe is at
//!   least one SMSS, NextSeg picks what to send: the lowest lost hole above HighRxt (rule
//!   1), else new data (rule 2), else the lowest unSACKed hole above HighRxt (rule 3);
//!   rule 4 (rescue retransmission) is not implemented;
//! - recovery ends when the cumulative ACK reaches RecoveryPoint;
//! - after a timeout the scoreboard is cleared (RFC 2018 §8) and the sender goes back N;
//!   with `loss_retransmit_queue` (and RACK), Linux's Loss state instead: SACKs kept, every
//!   ACK grows cwnd by what it delivered and lets the segments marked lost go, and with
//!   `frto` the first ACK sends new data (RFC 5682 §3);
//! - with `prr`, PRR-SSRB (RFC 6937 §3, `prr`) sets how much each ACK in recovery lets go;
//!   with `prr_counts_fast_retransmit` the fast retransmit is part of the entering ACK's
//!   allowance (Linux's `tcp_cwnd_reduction`, RFC 9937), not sent before it;
//! - with `grow_on_recovery_exit`, the ACK that ends recovery grows cwnd from ssthresh as
//!   an Open-state ACK would (Linux's `tcp_ack`: `tcp_fastretrans_alert` returns to Open
//!   before `tcp_cong_control` runs `tcp_cong_avoid` on that ACK's delivered segments);
//! - with `rack_tlp`, RACK's time-based marks (RFC 8985 §6, `rack`) replace IsLost and
//!   DupThresh, and tail loss probes (§7) are scheduled by the sender;
//! - with `recovery_from_loss` too, those marks start recovery after a timeout as well
//!   (Linux's TCP_CA_Loss: a retransmission lost again, or RACK's reordering timer).
//!
//! Only holes are ever retransmitted in recovery: bytes the receiver reported are not sent
//! again.

use crate::tcp::recovery::prr::Prr;
use crate::tcp::recovery::scoreboard::Scoreboard;
use crate::tcp::sender::{Segment, TcpSender};
use crate::time::Time;

/// The scoreboard and the recovery marks of RFC 6675.
#[derive(Clone, Debug, Default)]
pub struct Sack {
    scoreboard: Scoreboard,
    /// One past the highest byte retransmitted in this recovery (RFC 6675 HighRxt).
    high_rxt: u64,
    /// `snd_max` when recovery began (RFC 6675 RecoveryPoint).
    recovery_point: u64,
    /// RFC 6937's counters, used when `prr` is on.
    prr: Prr,
}

impl Sack {
    /// Every ACK, for the SACK variant.
    pub(super) fn on_ack(
        &mut self,
        s: &mut TcpSender,
        now: Time,
        ack: u64,
        acked: u64,
        blocks: &[(u64, u64)],
        out: &mut Vec<Segment>,
    ) {
        let new_data = acked > 0;
        let marked_before = s.stats.rack_marked_lost;
        let count_delivered = s.cfg.prr || s.cfg.grow_on_recovery_exit || s.cfg.loss_retransmit_queue;
        let sacked_before = if count_delivered { self.scoreboard.sacked_bytes() } else { 0 };
        let new_sack = self.scoreboard.update(s.snd_una, blocks);
        // RFC 6937 §3 DeliveredData: change in SND.UNA plus change in SACKed bytes (what
        // Linux's tcp_newly_delivered counts for tcp_cong_control, in segments)
        let delivered =
            if count_delivered { (acked + self.scoreboard.sacked_bytes()).saturating_sub(sacked_before) } else { 0 };
        let una = s.snd_una;
        let echo = if s.cfg.timestamps { s.echo } else { None }; // TSecr only with RFC 7323 on
        if let Some(r) = s.rack.as_deref_mut() {
            r.on_ack(now, una, blocks, echo);
            tlp_on_ack(s, ack, acked, blocks);
        }
        if s.in_recovery {
            if s.snd_una >= self.recovery_point {
                s.leave_recovery();
                if s.cfg.grow_on_recovery_exit {
                    let (clock, ssthresh) = (s.ack_clock(now), s.ssthresh);
                    s.congestion.on_ack(clock, &mut s.cwnd, ssthresh, delivered);
                }
                s.restart_timer(now);
                s.send_new_data_on_ack(now, out); // Open again: tcp_data_snd_check may defer
            } else {
                if new_data {
                    s.restart_timer(now);
                } else if new_sack {
                    s.dart += 1;
                }
                self.rack_detect(s, now);
                let extra = ssrb_extra(s, new_data, marked_before);
                self.send_in_recovery(s, now, delivered, extra, out);
            }
            return;
        }
        if new_data && s.rack.is_none() {
            s.on_new_ack_open(now, acked);
            s.send_new_data(now, out);
            return;
        }
        let duplicate = ack == s.snd_una && s.snd_una < s.snd_max && new_sack && !new_data;
        if s.rack.is_some() {
            // RFC 8985: losses are RACK's marks, found on any ACK, instead of DupThresh.
            // They are found before the ACK grows cwnd or sends: an ACK that advances
            // SND.UNA and reveals a loss enters recovery without growing the window and
            // sends the retransmission first, then what PRR allows (RFC 6675 NextSeg rule 1
            // before rule 2; Linux's tcp_ack: tcp_fastretrans_alert, then tcp_cong_control
            // reduces instead of tcp_cong_avoid, tcp_xmit_recovery, and new data only
            // after, in tcp_data_snd_check). New data sent ahead of the retransmission in
            // the same instant counts as sent after it (RFC 8985 RACK_sent_after's tie on
            // end_seq) and arrives first, so RACK would mark the retransmission lost too.
            if duplicate {
                s.dart += 1;
                s.dupacks += 1;
            }
            let relost_before = s.rack.as_deref().map_or(0, |r| r.lost_retransmits);
            let wait = self.rack_mark(s, now);
            let lost = s.rack.as_deref().is_some_and(|r| r.any_lost());
            // Linux's TCP_CA_Loss case of tcp_fastretrans_alert: a retransmission marked
            // lost again on this ACK (FLAG_LOST_RETRANS) falls through to tcp_enter_recovery
            let relost = in_loss_state(s) && s.rack.as_deref().is_some_and(|r| r.lost_retransmits > relost_before);
            let enter = (lost && s.covers_recover()) || relost;
            if !enter && s.cfg.loss_retransmit_queue && s.snd_una < s.recover {
                // after a timeout (the sender is never in recovery with SND.UNA below
                // `recover` otherwise): Linux's TCP_CA_Loss
                self.loss_ack(s, now, new_data, new_sack || duplicate, delivered, out);
                s.arm_reorder_wait(now, wait);
                return;
            }
            if new_data && !enter {
                // the timers as before: the RTO restarted, then the reordering timer
                s.on_new_ack_open(now, acked);
                s.send_new_data_on_ack(now, out);
                s.arm_reorder_wait(now, wait);
                return;
            }
            s.arm_reorder_wait(now, wait);
            if enter {
                if new_data {
                    s.dupacks = 0;
                }
                let extra = ssrb_extra(s, new_data, marked_before);
                self.enter(s, now, delivered, extra, out);
            } else if duplicate && s.cfg.sacked_leave_flight {
                // Linux: every ACK ends in tcp_data_snd_check, and what it SACKed left the
                // flight (`TcpSender::out_of_flight`), so it lets as many new segments go
                s.send_new_data_on_ack(now, out);
            } else if duplicate && s.dupacks < s.cfg.dupack_threshold {
                s.limited_transmit(now, out);
            }
            return;
        }
        if !duplicate {
            return; // not a duplicate ACK in the RFC 6675 sense
        }
        s.dart += 1;
        s.dupacks += 1;
        let mss = s.cfg.mss;
        let lost = self.scoreboard.is_lost(s.snd_una, s.cfg.dupack_threshold, mss);
        if (s.dupacks >= s.cfg.dupack_threshold || lost) && s.covers_recover() {
            let extra = ssrb_extra(s, new_data, marked_before);
            self.enter(s, now, delivered, extra, out);
        } else if s.dupacks < s.cfg.dupack_threshold {
            s.limited_transmit(now, out);
        }
    }

    /// RFC 8985 §6.2 steps 4-5: mark losses, and arm the reordering timer for segments
    /// that may yet turn out lost.
    fn rack_detect(&mut self, s: &mut TcpSender, now: Time) {
        let wait = self.rack_mark(s, now);
        s.arm_reorder_wait(now, wait);
    }

    /// RFC 8985 §6.2 step 5 without arming anything: mark losses and return how long the
    /// earliest segment that may yet be lost has left.
    fn rack_mark(&mut self, s: &mut TcpSender, now: Time) -> Option<Time> {
        let recovering = s.in_recovery || s.snd_una < s.recover;
        let (th, srtt) = (s.cfg.dupack_threshold, s.rto.srtt);
        let r = s.rack.as_deref_mut()?;
        let reo_wnd = r.reo_wnd(recovering, th, srtt);
        let (marked, wait) = r.detect_loss(now, reo_wnd);
        s.stats.rack_marked_lost += marked as u64;
        wait
    }

    /// RACK's reordering timer expired: look again, and repair what it finds.
    pub(super) fn on_rack_timer(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        let marked_before = s.stats.rack_marked_lost;
        self.rack_detect(s, now);
        if !s.rack.as_deref().is_some_and(|r| r.any_lost()) {
            return;
        }
        // no ACK: SND.UNA did not advance
        let extra = !s.cfg.prr_extra_if_advanced;
        if s.in_recovery {
            self.send_in_recovery(s, now, 0, extra, out);
        } else if s.covers_recover() || (in_loss_state(s) && s.stats.rack_marked_lost > marked_before) {
            // after a timeout, Linux's tcp_rack_reo_timeout: a segment newly marked lost
            // (packets in flight fell) enters recovery from any state but Recovery
            self.enter(s, now, 0, extra, out);
        }
    }

    /// An ACK in Linux's Loss state (`loss_retransmit_queue`), after RACK looked for losses
    /// and found none that starts recovery: `tcp_cong_control` grows cwnd in slow start by
    /// every segment the ACK delivered, SACKed ones too (`tcp_cong_avoid` on acked_sacked),
    /// then `tcp_xmit_retransmit_queue` resends the segments still marked lost, lowest
    /// first, while the segments in flight are fewer than cwnd, and new data may follow
    /// (`tcp_data_snd_check`). F-RTO (`frto`; RFC 5682 §3, `tcp_process_loss`): the first
    /// ACK that advances SND.UNA sends new data instead (step 2b), if there is some and
    /// the windows allow; once new data went out, an ACK with SACK information or a
    /// duplicate shows the loss was real (step 3a) and the resends begin. Not modelled:
    /// step 3b's undo of a spurious timeout (never-resent data below `recover` newly
    /// acknowledged), and the undo on timestamps (`tcp_try_undo_loss`).
    fn loss_ack(&mut self, s: &mut TcpSender, now: Time, new_data: bool, sacked: bool, delivered: u64, out: &mut Vec<Segment>) {
        if new_data {
            s.dupacks = 0;
            s.restart_timer(now);
        }
        if delivered > 0 {
            let clock = s.ack_clock(now);
            s.congestion.on_ack(clock, &mut s.cwnd, s.ssthresh, delivered);
        }
        let mss = s.cfg.mss;
        let mut pipe = self.pipe(s);
        if s.frto {
            if s.snd_max > s.recover {
                // step 3a: new data went out, and this ACK SACKs data or is a duplicate
                // (FLAG_DATA_SACKED, num_dupack): the loss was real
                if sacked {
                    s.frto = false;
                }
            } else if new_data {
                let sent = self.send_new(s, now, &mut pipe, out);
                if sent {
                    return; // step 2b
                }
                s.frto = false;
            }
        }
        while s.cwnd >= pipe + mss {
            let Some(g) = s.rack.as_deref().and_then(|r| r.first_lost()) else { break };
            let len = g.end - g.start;
            s.emit(now, g.start, len, out);
            pipe += len;
        }
        self.send_new(s, now, &mut pipe, out);
    }

    /// New data while the segments in flight (`pipe`) leave a whole segment of cwnd and
    /// the receive window allows it; whether any went.
    fn send_new(&mut self, s: &mut TcpSender, now: Time, pipe: &mut u64, out: &mut Vec<Segment>) -> bool {
        let mss = s.cfg.mss;
        let mut sent = false;
        while s.cwnd >= *pipe + mss && s.snd_nxt < s.app_limit {
            let len = mss.min(s.app_limit - s.snd_nxt);
            if s.snd_nxt + len > s.snd_una + s.rwnd {
                break;
            }
            let seq = s.snd_nxt;
            s.emit(now, seq, len, out);
            s.snd_nxt += len;
            s.snd_max = s.snd_max.max(s.snd_nxt);
            *pipe += len;
            sent = true;
        }
        sent
    }

    /// RFC 6675 §5 step 4: enter recovery and retransmit the first hole (with RACK, the
    /// first segment marked lost).
    fn enter(&mut self, s: &mut TcpSender, now: Time, delivered: u64, extra: bool, out: &mut Vec<Segment>) {
        let mss = s.cfg.mss;
        let recover_fs = if s.covers_recover() {
            s.flight_size()
        } else {
            // from the Loss state (`recovery_from_loss`): the timeout's go-back-N resend
            // stops, RACK's marks (every segment not resent since the timeout) say what is
            // left to repair (NextSeg rule 1), as Linux's retransmit queue does; PRR
            // proportions to cwnd (tcp_init_cwnd_reduction: prior_cwnd = snd_cwnd), since
            // FlightSize still counts what the timeout marked lost
            s.snd_nxt = s.snd_max;
            s.cwnd
        };
        self.recovery_point = s.snd_max;
        s.recover = s.snd_max;
        s.ssthresh = s.loss_ssthresh();
        self.prr.enter(recover_fs);
        s.cwnd = s.ssthresh;
        s.in_recovery = true;
        s.stats.fast_retransmits += 1;
        if s.cfg.grow_on_recovery_exit {
            s.congestion.on_recovery_start(); // tcp_init_cwnd_reduction: snd_cwnd_cnt = 0
        }
        let first_lost = s.rack.as_deref().and_then(|r| r.first_lost());
        let (seq, len) = match first_lost {
            Some(g) => (g.start, g.end - g.start),
            None => {
                let (seq, hole_end) = self.scoreboard.hole_at_or_after(s.snd_una);
                (seq, mss.min(hole_end.unwrap_or(s.snd_max).min(s.snd_max) - seq))
            }
        };
        if s.cfg.prr && s.cfg.prr_counts_fast_retransmit {
            // Linux's tcp_cwnd_reduction (RFC 9937 alike): this ACK's sndcnt is taken on the
            // pipe before the retransmission and is at least one segment (`max(sndcnt,
            // prr_out ? 0 : 1)`), and the fast retransmit goes within it, first
            let pipe = self.pipe(s);
            s.cwnd = pipe + self.prr.sndcnt(delivered, pipe, s.ssthresh, mss, extra).max(mss);
            self.fast_retransmit(s, now, seq, len, out);
            self.fill_window(s, now, pipe + len, out);
            return;
        }
        self.fast_retransmit(s, now, seq, len, out);
        self.send_in_recovery(s, now, delivered, extra, out);
    }

    /// RFC 6675 §5 step 4.3: retransmit the first hole and restart the RTO timer.
    fn fast_retransmit(&mut self, s: &mut TcpSender, now: Time, seq: u64, len: u64, out: &mut Vec<Segment>) {
        s.emit(now, seq, len, out);
        self.prr.on_sent(len);
        s.restart_timer(now);
        self.high_rxt = seq + len;
    }

    /// RFC 2018 §8: after a timeout, SACK information is no longer trusted; `keep`:
    /// Linux keeps it (`tcp_timeout_mark_lost` clears SACK marks only on reneging).
    pub(super) fn on_timeout(&mut self, keep: bool) {
        if !keep {
            self.scoreboard.clear();
        }
    }

    /// RFC 6675 SetPipe: bytes believed to be in the network (with RACK, its own count).
    fn pipe(&self, s: &TcpSender) -> u64 {
        if let Some(r) = s.rack.as_deref() {
            return r.pipe();
        }
        let (mss, th) = (s.cfg.mss, s.cfg.dupack_threshold);
        let mut pipe = 0;
        let mut seq = s.snd_una;
        while seq < s.snd_max {
            let end = (seq + mss).min(s.snd_max);
            if let Some((_, e)) = self.scoreboard.sacked_at(seq) {
                seq = e; // SACKed: not in the network
                continue;
            }
            let len = end - seq;
            if !self.scoreboard.is_lost(seq, th, mss) {
                pipe += len; // the original is presumably still travelling
            }
            if seq < self.high_rxt {
                pipe += len; // and so is our retransmission
            }
            seq = end;
        }
        pipe
    }

    /// Send what NextSeg allows while cwnd - pipe >= 1 SMSS (RFC 6675 §5 step C). With
    /// PRR, this ACK's `delivered` bytes set cwnd = pipe + sndcnt (RFC 6937 §3), and
    /// segments go while sndcnt is not used up; `extra`: PRR-SSRB's extra MSS is allowed
    /// ([`ssrb_extra`]).
    fn send_in_recovery(&mut self, s: &mut TcpSender, now: Time, delivered: u64, extra: bool, out: &mut Vec<Segment>) {
        let pipe = self.pipe(s);
        if s.cfg.prr {
            s.cwnd = pipe + self.prr.sndcnt(delivered, pipe, s.ssthresh, s.cfg.mss, extra);
        }
        self.fill_window(s, now, pipe, out);
    }

    /// RFC 6675 §5 step C: send what NextSeg picks while the window allows, `pipe` bytes
    /// being in the network before the first.
    fn fill_window(&mut self, s: &mut TcpSender, now: Time, mut pipe: u64, out: &mut Vec<Segment>) {
        let (prr, mss) = (s.cfg.prr, s.cfg.mss);
        while if prr { s.cwnd > pipe } else { s.cwnd >= pipe + mss } {
            let Some((seq, len, new)) = self.next_seg(s) else { break };
            s.emit(now, seq, len, out);
            self.prr.on_sent(len);
            if new {
                s.snd_nxt = seq + len;
                s.snd_max = s.snd_max.max(s.snd_nxt);
            } else {
                self.high_rxt = self.high_rxt.max(seq + len);
            }
            pipe += len;
        }
    }

    /// RFC 6675 NextSeg: (sequence, length, is new data).
    fn next_seg(&self, s: &TcpSender) -> Option<(u64, u64, bool)> {
        let (mss, th) = (s.cfg.mss, s.cfg.dupack_threshold);
        let start = self.high_rxt.max(s.snd_una);
        let hole_seg = if let Some(r) = s.rack.as_deref() {
            // rule 1 with RACK's marks: any segment marked lost and not sent since
            if let Some(g) = r.first_lost() {
                return Some((g.start, g.end - g.start, false));
            }
            r.first_unsacked_from(start).map(|g| (g.start, g.end - g.start))
        } else {
            let highest = self.scoreboard.highest_sacked().unwrap_or(0);
            // rules 1 and 3: the lowest hole above HighRxt below the highest SACKed byte
            let (hole, hole_end) = self.scoreboard.hole_at_or_after(start);
            let hole_seg = (hole < highest && hole < s.snd_max).then(|| {
                let end = hole_end.unwrap_or(s.snd_max).min(s.snd_max).min(hole + mss);
                (hole, end - hole)
            });
            if let Some((seq, len)) = hole_seg {
                if self.scoreboard.is_lost(seq, th, mss) {
                    return Some((seq, len, false)); // rule 1
                }
            }
            hole_seg
        };
        // rule 2: new data, if the receive window allows
        if s.snd_nxt < s.app_limit {
            let len = mss.min(s.app_limit - s.snd_nxt);
            if s.snd_nxt + len <= s.snd_una + s.rwnd {
                return Some((s.snd_nxt, len, true));
            }
        }
        hole_seg.map(|(seq, len)| (seq, len, false)) // rule 3
    }
}

/// After a timeout, until what was sent before it is acknowledged (Linux's TCP_CA_Loss,
/// RFC 6582's `recover` not yet covered), with `recovery_from_loss` on: a loss RACK finds
/// then may start fast recovery.
fn in_loss_state(s: &TcpSender) -> bool {
    s.cfg.recovery_from_loss && !s.in_recovery && s.snd_una < s.recover
}

/// Whether PRR-SSRB may add its extra MSS on this ACK (RFC 6937 §3: always). With
/// `prr_extra_if_advanced`, Linux's `tcp_cwnd_reduction` condition: the ACK advanced
/// SND.UNA and RACK marked no segment lost while processing it (`tcp_ack`'s `rs->losses`,
/// the segments newly marked lost). Without RACK only the first half applies: the
/// scoreboard's IsLost marks are not counted per ACK.
fn ssrb_extra(s: &TcpSender, advanced: bool, marked_before: u64) -> bool {
    !s.cfg.prr_extra_if_advanced || (advanced && s.stats.rack_marked_lost == marked_before)
}

/// RFC 8985 §7.4: an ACK at or beyond TLP.end_seq ends the probe's episode. A probe of new
/// data, or one answered by a pure duplicate ACK (original and probe both arrived), saw
/// no loss; when a later ACK shows the retransmitted probe repaired one, the sender reacts
/// to that loss as to a recovery's, with cwnd = ssthresh at once (Linux's CWR episode).
/// Without DSACK a spurious probe answered out of order also counts as a repaired loss.
fn tlp_on_ack(s: &mut TcpSender, ack: u64, acked: u64, blocks: &[(u64, u64)]) {
    let Some(r) = s.rack.as_deref_mut() else { return };
    let Some(end) = r.tlp_end else { return };
    if ack < end {
        return;
    }
    if !r.tlp_is_retrans || (acked == 0 && blocks.is_empty()) {
        r.tlp_end = None;
    } else if ack > end {
        r.tlp_end = None;
        if !s.in_recovery && s.snd_una >= s.recover {
            s.ssthresh = s.loss_ssthresh();
            s.cwnd = s.ssthresh;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::TcpVariant;
    use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
    use crate::tcp::sender::{SenderConfig, TcpSender};
    use crate::time::Time;

    /// [start, end) of segments a..b as SACK block bytes.
    fn blk(a: u64, b: u64) -> (u64, u64) {
        (ack_of(a), ack_of(b))
    }

    #[test]
    fn ssrb_extra_follows_rfc_6937_or_linux_tcp_cwnd_reduction() {
        // RFC 6937 §3: the extra MSS on every ACK, whatever it did
        let mut cfg = config();
        cfg.variant = TcpVariant::Sack;
        let mut s = TcpSender::new(cfg.clone());
        assert!(super::ssrb_extra(&s, false, 0));
        s.stats.rack_marked_lost = 2;
        assert!(super::ssrb_extra(&s, true, 0));
        // Linux: only when SND.UNA advanced (FLAG_SND_UNA_ADVANCED) and nothing was newly
        // marked lost (rs->losses == 0) on this ACK
        cfg.prr_extra_if_advanced = true;
        let mut s = TcpSender::new(cfg);
        s.stats.rack_marked_lost = 2;
        assert!(super::ssrb_extra(&s, true, 2), "advanced, no new mark");
        assert!(!super::ssrb_extra(&s, false, 2), "a duplicate ACK");
        assert!(!super::ssrb_extra(&s, true, 1), "advanced, but one segment newly marked lost");
    }

    fn sack_sender(window: u64, total: u64) -> TcpSender {
        sack_sender_with(|_| {}, window, total)
    }

    /// `sack_sender` with the configuration changed by `set` first.
    fn sack_sender_with(set: impl FnOnce(&mut SenderConfig), window: u64, total: u64) -> TcpSender {
        let mut cfg = config();
        cfg.variant = TcpVariant::Sack;
        set(&mut cfg);
        let mut s = TcpSender::new(cfg);
        s.cwnd = window * MSS;
        s.ssthresh = window * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, total * MSS, &mut out);
        assert_eq!(out.len() as u64, window.min(total));
        s
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

    /// Segments 0-7 sent; 0-3 lost, 4-6 SACKed by three duplicate ACKs (the third enters
    /// recovery), 7 still travelling: ssthresh = 4, and pipe = 1 before the fast retransmit.
    fn prr_entry(counts_fast_retransmit: bool, extra_if_advanced: bool) -> Vec<u64> {
        let set = |cfg: &mut SenderConfig| {
            cfg.prr = true;
            cfg.prr_extra_if_advanced = extra_if_advanced;
            cfg.prr_counts_fast_retransmit = counts_fast_retransmit;
        };
        let mut s = sack_sender_with(set, 8, 100);
        let mut out = vec![];
        for k in 5..8 {
            s.on_ack(Time::from_us(100), ack_of(0), &[blk(4, k)], &mut out);
        }
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh, 4 * MSS);
        seg_numbers(&out)
    }

    #[test]
    fn the_fast_retransmit_is_sent_within_the_entering_acks_allowance_as_linux_does() {
        // The entering ACK delivered one segment (6 SACKed); pipe <= ssthresh: PRR-SSRB.
        // RFC 6937 read literally: the fast retransmit (prr_out = 1, pipe 2), then sndcnt =
        // MIN(4 - 2, MAX(1 - 1, 1) + 1) = 2 more
        assert_eq!(prr_entry(false, false), vec![0, 1, 2]);
        // Linux's tcp_cwnd_reduction: sndcnt on the pipe before it, MIN(4 - 1, MAX(1, 1) + 1)
        // = 2, the fast retransmit among them
        assert_eq!(prr_entry(true, false), vec![0, 1]);
        // and without the extra segment (the ACK did not advance SND.UNA): MAX(1, 1) = 1, so
        // the fast retransmit alone, as 517 of the 518 recoveries in the 2-server testbed
        // trace began (docs/testbed.md, "The first and last ACK of a recovery"); the literal
        // reading sends one more
        assert_eq!(prr_entry(false, true), vec![0, 1]);
        assert_eq!(prr_entry(true, true), vec![0]);
    }

    #[test]
    fn the_ack_that_ends_recovery_grows_cwnd_from_ssthresh_with_grow_on_recovery_exit() {
        // Linux's reno (segments counted, cwnd_limited gate off here): recovery entered at
        // cwnd 8 with 1-3 SACKed; the ACK of all 8 delivers 5 segments (8 acknowledged less
        // the 3 SACKed before). RFC 6675: cwnd = ssthresh = 4. Linux: Open again, then
        // tcp_cong_avoid_ai with the credit cleared at entry: 5 >= 4, one segment more.
        for (grow, cwnd) in [(false, 4), (true, 5)] {
            let set = |cfg: &mut SenderConfig| {
                cfg.count_acked_segments = true;
                cfg.grow_on_recovery_exit = grow;
            };
            let mut s = sack_sender_with(set, 8, 100);
            let mut out = vec![];
            for k in 2..5 {
                s.on_ack(Time::from_us(100), ack_of(0), &[blk(1, k)], &mut out);
            }
            assert!(s.in_recovery && s.ssthresh == 4 * MSS);
            s.on_ack(Time::from_us(200), ack_of(8), &[], &mut out);
            assert!(!s.in_recovery);
            assert_eq!(s.cwnd, cwnd * MSS, "grow_on_recovery_exit = {grow}");
        }
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
