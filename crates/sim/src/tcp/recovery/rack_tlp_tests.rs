//! The sender with RACK-TLP (RFC 8985) and PRR (RFC 6937) on: probes, their timer, and
//! how recovery uses RACK's marks and PRR's pacing. Hand-computed from the RFCs' rules.

use crate::scenario::TcpVariant;
use crate::tcp::sender::tests::{ack_of, config, seg_numbers, MSS};
use crate::tcp::sender::{Segment, TcpSender, TimeoutKind, TimerMode};
use crate::time::Time;

/// [start, end) of segments a..b as SACK block bytes.
fn blk(a: u64, b: u64) -> (u64, u64) {
    (ack_of(a), ack_of(b))
}

/// A SACK sender (in congestion avoidance at `window` segments) that wrote `total` segments at 0.
fn sender(window: u64, total: u64, rack_tlp: bool, prr: bool) -> TcpSender {
    let mut cfg = config();
    cfg.variant = TcpVariant::Sack;
    cfg.rack_tlp = rack_tlp;
    cfg.prr = prr;
    let mut s = TcpSender::new(cfg);
    s.cwnd = window * MSS;
    s.ssthresh = window * MSS;
    let mut out = vec![];
    s.write(Time::ZERO, total * MSS, &mut out);
    assert_eq!(out.len() as u64, window.min(total));
    s
}

fn us(t: u64) -> Time {
    Time::from_us(t)
}

/// A SACK sender with RACK-TLP and PRR, its configuration changed by `set`, in congestion
/// avoidance at `window` segments, that wrote `total` segments at 0.
fn rack_prr_sender(window: u64, total: u64, set: impl FnOnce(&mut crate::tcp::sender::SenderConfig)) -> TcpSender {
    let mut cfg = config();
    cfg.variant = TcpVariant::Sack;
    cfg.rack_tlp = true;
    cfg.prr = true;
    set(&mut cfg);
    let mut s = TcpSender::new(cfg);
    s.cwnd = window * MSS;
    s.ssthresh = window * MSS;
    s.write(Time::ZERO, total * MSS, &mut vec![]);
    s
}

/// Deliver timer events as the world does (each pending event fires, and one that comes
/// early is rescheduled) until the timer's deadline; returns that time and whether it was
/// a retransmission timeout.
fn expire(s: &mut TcpSender, out: &mut Vec<Segment>) -> (Time, bool) {
    let deadline = s.timer_deadline().expect("armed");
    let mut t = s.take_timer_request().expect("an event pending");
    loop {
        let timeout = s.on_timer_event(t, out);
        if t >= deadline {
            return (t, timeout);
        }
        t = s.take_timer_request().expect("rescheduled");
    }
}

#[test]
fn without_rack_tlp_a_sack_sender_keeps_no_log_and_arms_no_probe() {
    let mut s = sender(4, 4, false, false);
    assert!(s.rack.is_none(), "NewReno/Reno and plain SACK senders carry no per-segment log");
    s.on_ack(us(100), ack_of(1), &[], &mut vec![]);
    assert_eq!(s.timer_mode, TimerMode::Rto);
}

#[test]
fn a_probe_fires_at_pto_after_the_last_ack_and_resends_the_last_segment_7_2_7_3() {
    // all 4 segments sent at 0; segment 0's ACK at 100 us gives SRTT = 100 us; 3 segments
    // in flight, so PTO = 2 SRTT = 200 us: the probe is due at 300 us, well before the RTO
    let mut s = sender(4, 4, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    assert_eq!(s.rto.srtt, Some(us(100)));
    assert_eq!((s.timer_mode, s.timer_deadline()), (TimerMode::Probe, Some(us(300))));
    assert!(out.is_empty());
    // no new data to send: the probe is the highest segment sent, whatever cwnd says
    assert_eq!(expire(&mut s, &mut out), (us(300), false), "a probe, not a timeout");
    assert_eq!(seg_numbers(&out), vec![3]);
    assert!(out[0].retransmit);
    assert_eq!((s.stats.tail_loss_probes, s.stats.timeouts), (1, 0));
    // §7.3: after the probe the RTO runs, not another PTO
    assert_eq!((s.timer_mode, s.timer_deadline()), (TimerMode::Rto, Some(us(300) + s.rto.rto)));
}

#[test]
fn a_probe_sends_new_data_when_there_is_some_7_3() {
    // 8 segments written, cwnd 4: segment 0's ACK grows cwnd to 4.25 and lets segment 4
    // go; the probe at 100 + 200 us is segment 5, new data beyond cwnd
    let mut s = sender(4, 8, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    assert_eq!(seg_numbers(&out), vec![4]);
    out.clear();
    assert_eq!(expire(&mut s, &mut out).0, us(300));
    assert_eq!(seg_numbers(&out), vec![5]);
    assert!(!out[0].retransmit);
    assert_eq!(s.rack.as_ref().unwrap().tlp_end, Some(ack_of(6)), "TLP.end_seq = SND.NXT");
}

#[test]
fn the_pto_is_rearmed_by_acks_not_during_an_episode_and_stops_with_nothing_outstanding_7_2() {
    let mut s = sender(4, 8, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    s.on_ack(us(150), ack_of(2), &[], &mut out);
    assert_eq!(s.timer_deadline(), Some(us(350)), "each ACK of new data moves the PTO");
    assert_eq!(expire(&mut s, &mut out).0, us(350)); // probe: new data up to TLP.end_seq
    let end = s.rack.as_ref().unwrap().tlp_end.unwrap();
    s.on_ack(us(400), ack_of(3), &[], &mut out);
    assert_eq!(s.timer_mode, TimerMode::Rto, "no second probe while one is outstanding");
    // the ACK that covers the probe of new data ends the episode (§7.4): probes resume
    s.on_ack(us(450), end, &[], &mut out);
    assert_eq!(s.rack.as_ref().unwrap().tlp_end, None);
    assert_eq!(s.timer_mode, TimerMode::Probe);
    // everything acknowledged: no timer at all
    s.on_ack(us(500), ack_of(8), &[], &mut out);
    assert!(s.all_acked());
    assert_eq!(s.timer_deadline(), None);
}

#[test]
fn with_one_segment_in_flight_the_pto_waits_for_a_delayed_ack_and_is_capped_at_the_rto_7_2() {
    // PTO = 2 SRTT + WCDelAckT = 200.2 ms from the ACK at 120 us; the RTO (200 ms) is
    // sooner, and the probe takes its place
    let mut s = sender(4, 4, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    s.on_ack(us(120), ack_of(3), &[], &mut out);
    assert_eq!(s.timer_mode, TimerMode::Probe);
    assert_eq!(s.timer_deadline(), Some(us(120) + s.rto.rto));
}

#[test]
fn the_rto_still_fires_when_the_probe_is_lost_and_names_the_lost_last_packet() {
    let mut s = sender(4, 4, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    s.on_ack(us(120), ack_of(3), &[], &mut out);
    let (probe_at, timeout) = expire(&mut s, &mut out);
    assert_eq!((probe_at, timeout), (us(120) + s.rto.rto, false));
    assert_eq!(seg_numbers(&out), vec![3]);
    out.clear();
    let rto = s.rto.rto;
    assert_eq!(expire(&mut s, &mut out), (probe_at + rto, true), "a timeout, one RTO after the probe");
    assert_eq!(seg_numbers(&out), vec![3]);
    assert_eq!(s.stats.timeouts, 1);
    // FAST'08's category still says what was lost: the block's last packet
    assert_eq!(s.stats.timeouts_by_kind[TimeoutKind::LastPacket as usize], 1);
}

#[test]
fn the_probes_sack_lets_rack_repair_a_two_segment_tail_loss_without_a_timeout() {
    // segments 2 and 3 (the tail) are lost; the probe resends 3 at 310 us and its SACK at
    // 410 us shows segment 2, sent at 0, older than RACK.rtt + reo_wnd: lost (§6.2), so
    // fast recovery resends it at once
    let mut s = sender(4, 4, true, false);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    s.on_ack(us(110), ack_of(2), &[], &mut out);
    assert_eq!(expire(&mut s, &mut out).0, us(310));
    assert_eq!(seg_numbers(&out), vec![3]);
    out.clear();
    s.on_ack(us(410), ack_of(2), &[blk(3, 4)], &mut out);
    assert!(s.in_recovery);
    assert_eq!(seg_numbers(&out), vec![2]);
    assert_eq!(s.stats.rack_marked_lost, 1);
    s.on_ack(us(510), ack_of(4), &[], &mut out);
    assert!(s.all_acked() && !s.in_recovery);
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn rack_finds_a_lost_fast_retransmission_without_waiting_for_the_rto() {
    // window 0..7, segment 0 lost; RACK marks it once segments sent after it are SACKed
    // and resends it; that resend is lost too. New data sent later (segment 8, at 150 us)
    // is SACKed at 300 us: the resend at 120 us is older than RACK.rtt + reo_wnd (0 in
    // recovery): lost again, resent at once (DupThresh's RFC 6675 would wait for the RTO)
    let mut s = sender(8, 12, true, false);
    let mut out = vec![];
    for k in 1..4 {
        s.on_ack(us(100 + k), ack_of(0), &[blk(1, 1 + k)], &mut out);
    }
    assert!(s.in_recovery);
    assert_eq!(seg_numbers(&out)[0], 0, "RACK: segment 0 sent before the SACKed ones");
    let resent_at = us(103);
    assert_eq!(s.rack.as_ref().unwrap().first_lost(), None);
    out.clear();
    for k in 4..8 {
        s.on_ack(us(140 + k), ack_of(0), &[blk(1, 1 + k)], &mut out);
    }
    let new: Vec<u64> = seg_numbers(&out);
    assert!(new.contains(&8), "recovery sent new data: {new:?}");
    out.clear();
    s.on_ack(resent_at + us(300), ack_of(0), &[blk(8, 9), blk(1, 8)], &mut out);
    assert_eq!(seg_numbers(&out)[0], 0, "the lost retransmission is sent again");
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn prr_sends_one_segment_every_other_ack_where_rfc6675_waits_for_pipe_to_drain() {
    // 20 segments out, segment 0 lost, limited transmit off; the third SACK enters
    // recovery: ssthresh = 10, RecoverFS = 20. RFC 6675: cwnd = 10 against pipe = 20 - k
    // after the k-th SACK, so nothing goes until k = 11. PRR (RFC 6937 §3, proportional
    // part while pipe > ssthresh): prr_delivered = (k - 2) segments, sndcnt =
    // CEIL(prr_delivered / 2) - prr_out with the fast retransmit in prr_out: one new
    // segment at k = 5, 7, 9, ...
    for prr in [false, true] {
        let mut s = sender(20, 40, false, prr);
        let mut sent_at = vec![];
        for k in 1..=10 {
            let mut out = vec![];
            s.on_ack(us(100 + k), ack_of(0), &[blk(1, 1 + k)], &mut out);
            sent_at.push(seg_numbers(&out));
        }
        assert_eq!(s.ssthresh, 10 * MSS);
        let empty = Vec::<u64>::new;
        let expected = if prr {
            vec![empty(), empty(), vec![0], empty(), vec![20], empty(), vec![21], empty(), vec![22], empty()]
        } else {
            vec![empty(), empty(), vec![0], empty(), empty(), empty(), empty(), empty(), empty(), empty()]
        };
        assert_eq!(sent_at, expected, "prr {prr}");
    }
}

#[test]
fn a_retransmitted_probe_that_repaired_a_loss_reduces_cwnd_and_a_duplicate_answer_does_not_7_4() {
    // the probe resends segment 3 at 300 us (TLP.end_seq = end of 3); the ACK of 3 at
    // 400 us reaches TLP.end_seq without telling whether the original or the probe arrived
    for duplicate_answer in [false, true] {
        let mut s = sender(4, 4, true, false);
        let mut out = vec![];
        s.on_ack(us(100), ack_of(1), &[], &mut out);
        expire(&mut s, &mut out);
        s.on_ack(us(400), ack_of(4), &[], &mut out);
        assert_eq!(s.rack.as_ref().unwrap().tlp_end, Some(ack_of(4)), "the episode goes on");
        let cwnd = s.cwnd;
        if duplicate_answer {
            // a pure duplicate ACK: the receiver got the segment twice, no loss
            s.on_ack(us(410), ack_of(4), &[], &mut out);
            assert_eq!((s.rack.as_ref().unwrap().tlp_end, s.cwnd), (None, cwnd));
        } else {
            // the next block's first ACK passes TLP.end_seq: the probe repaired a loss
            s.write(us(500), 4 * MSS, &mut out);
            s.on_ack(us(600), ack_of(5), &[], &mut out);
            assert_eq!(s.rack.as_ref().unwrap().tlp_end, None);
            // ssthresh = max(FlightSize / 2, 2 SMSS) = max(3000 / 2, 2000) and cwnd = ssthresh,
            // which this ACK's new data then grows by SMSS^2 / cwnd = 500 (RFC 5681 §3.1)
            assert_eq!((s.ssthresh, s.cwnd), (2 * MSS, 2 * MSS + MSS / 2), "cwnd was {cwnd}");
        }
    }
}

#[test]
fn an_ack_of_new_data_that_reveals_a_loss_retransmits_first_and_does_not_grow_cwnd() {
    // Linux's order (tcp_ack: tcp_fastretrans_alert enters recovery, tcp_cong_control
    // reduces instead of growing, tcp_xmit_recovery retransmits, new data goes after) and
    // RFC 6675 NextSeg's (rule 1, the lost segment, before rule 2, new data).
    // Segments 0-6 sent at 0 in slow start (cwnd 7, ssthresh 100); segment 1 is lost. The
    // ACK at 100 us acknowledges segment 0 and SACKs 2-4: three SACKed segments set
    // RACK's reo_wnd to 0, so segment 1, sent no later than the delivered 4, is lost now.
    let mut cfg = config();
    cfg.variant = TcpVariant::Sack;
    cfg.rack_tlp = true;
    cfg.prr = true;
    cfg.ssthresh_from_cwnd = true;
    cfg.count_acked_segments = true;
    let mut s = TcpSender::new(cfg);
    s.cwnd = 7 * MSS;
    s.ssthresh = 100 * MSS;
    let mut out = vec![];
    s.write(Time::ZERO, 20 * MSS, &mut out);
    assert_eq!(out.len(), 7);
    out.clear();
    s.on_ack(us(100), ack_of(1), &[blk(2, 5)], &mut out);
    assert!(s.in_recovery);
    assert_eq!(
        seg_numbers(&out)[0],
        1,
        "the retransmission leads: {:?}",
        seg_numbers(&out)
    );
    assert!(out[0].retransmit);
    // ssthresh from the window before this ACK (7 >> 1 = 3), not from one slow start grew
    // by the acknowledged segment first (8 >> 1 = 4)
    assert_eq!(s.ssthresh, 3 * MSS);
    // what follows is PRR's allowance only: pipe = 1 (the retransmission) + 5 and 6 = 3
    // segments, ssthresh 3, so nothing more this ACK
    assert_eq!(seg_numbers(&out), vec![1]);
}

/// A SACK sender with RACK-TLP and PRR that sent 16 segments at 0 (cwnd 8), had segment 0
/// acknowledged at 100 us (RACK.min_RTT = SRTT = 100 us) and, with `reordered`, segment 2
/// SACKed then and segment 1 acknowledged at 110 us (delivered below RACK.fack: reordering
/// seen, so RACK's reordering window is min_RTT / 4 = 25 us even in recovery, RFC 8985
/// §6.2 step 4), lost the rest and its tail-loss probe, and timed out. Returns it, the
/// timeout's time and the first unacknowledged segment, which the timeout resent.
fn timed_out(recovery_from_loss: bool, reordered: bool) -> (TcpSender, Time, u64) {
    let mut s = rack_prr_sender(8, 16, |c| c.recovery_from_loss = recovery_from_loss);
    let mut out = vec![];
    if reordered {
        s.on_ack(us(100), ack_of(1), &[blk(2, 3)], &mut out);
        s.on_ack(us(110), ack_of(3), &[], &mut out);
    } else {
        s.on_ack(us(100), ack_of(1), &[], &mut out);
    }
    out.clear();
    let at = loop {
        let (t, timeout) = expire(&mut s, &mut out);
        if timeout {
            break t;
        }
        out.clear(); // the tail-loss probe, lost too
    };
    let first = if reordered { 3 } else { 1 };
    assert_eq!(seg_numbers(&out), vec![first], "the timeout resends the first unacknowledged segment");
    assert_eq!(s.cong_state(), crate::trace::CongState::Loss);
    (s, at, first)
}

#[test]
fn after_a_timeout_a_retransmission_rack_marks_lost_again_starts_recovery_with_recovery_from_loss() {
    // Linux's tcp_fastretrans_alert, TCP_CA_Loss case: the timeout resent segment 1, its
    // ACK let slow start resend 2 and 3 at T + 100 us; 3's SACK at T + 200 us shows 2 sent
    // RACK.rtt (100 us) before: lost again (reo_wnd is 0 after a timeout). With the rule
    // the ACK carries FLAG_LOST_RETRANS and enters recovery, resending 2 at once;
    // without it (RFC 6582 §3.2 step 4) 2 waits for the next timeout
    for on in [false, true] {
        let (mut s, t, _) = timed_out(on, false);
        let mut out = vec![];
        s.on_ack(t + us(100), ack_of(2), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![2, 3], "slow start goes back N");
        out.clear();
        let sent_before = s.snd_max;
        s.on_ack(t + us(200), ack_of(2), &[blk(3, 4)], &mut out);
        assert_eq!(s.rack.as_ref().unwrap().lost_retransmits, 1, "RACK marks it either way");
        if !on {
            assert!(out.is_empty(), "recovery_from_loss off: {:?}", seg_numbers(&out));
            assert_eq!(s.cong_state(), crate::trace::CongState::Loss);
            continue;
        }
        assert_eq!(s.cong_state(), crate::trace::CongState::Recovery);
        let sent = seg_numbers(&out);
        assert_eq!(sent[0], 2, "the lost retransmission first: {sent:?}");
        assert!(!sent.contains(&3), "SACKed: not resent: {sent:?}");
        // the go-back-N resend stopped: what follows are the segments the timeout marked
        // lost, in order (NextSeg rule 1), and RecoveryPoint is the highest ever sent
        assert_eq!(&sent[1..], &[4, 5], "PRR-SSRB: the SACKed segment delivered, one more");
        assert_eq!((s.snd_nxt, s.recover), (sent_before, sent_before));
        // recovery ends when that is acknowledged; no second timeout
        s.on_ack(t + us(300), s.snd_max, &[], &mut out);
        assert_eq!(s.cong_state(), crate::trace::CongState::Open);
        assert_eq!(s.stats.timeouts, 1);
    }
}

#[test]
fn after_a_timeout_racks_reordering_timer_marking_a_segment_lost_starts_recovery_with_recovery_from_loss() {
    // Linux's tcp_rack_reo_timeout enters recovery from any state but Recovery once it
    // marks a segment lost. After the timeout (segment 3 resent at T), 3's ACK at T + 100
    // us lets 4 and 5 go; 5's SACK at T + 200 us leaves 4 a reordering window (25 us,
    // reordering was seen) to arrive: the timer fires at T + 225 us and marks it lost
    for on in [false, true] {
        let (mut s, t, first) = timed_out(on, true);
        assert_eq!(first, 3);
        let mut out = vec![];
        s.on_ack(t + us(100), ack_of(4), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![4, 5]);
        out.clear();
        s.on_ack(t + us(200), ack_of(4), &[blk(5, 6)], &mut out);
        assert!(out.is_empty(), "4 may still arrive: {:?}", seg_numbers(&out));
        assert_eq!(s.timer_mode, TimerMode::Reorder);
        let (at, timeout) = expire(&mut s, &mut out);
        assert_eq!((at, timeout), (t + us(225), false));
        if on {
            assert_eq!(s.cong_state(), crate::trace::CongState::Recovery);
            assert_eq!(seg_numbers(&out)[0], 4, "resent at once: {:?}", seg_numbers(&out));
        } else {
            assert_eq!(s.cong_state(), crate::trace::CongState::Loss);
            assert!(out.is_empty(), "off: waits for the next timeout: {:?}", seg_numbers(&out));
            assert_eq!(s.timer_mode, TimerMode::Rto);
        }
    }
}

/// A SACK sender with RACK-TLP and PRR, `loss_retransmit_queue` and `frto` as given, that
/// sent 12 segments at 0 (cwnd 8, then 8 more as ACKs come) and had segment 0 acknowledged
/// at 100 us (SRTT 100 us).
fn queue_sender(queue: bool, frto: bool) -> (TcpSender, Vec<Segment>) {
    let mut s = rack_prr_sender(8, 20, |c| {
        c.loss_retransmit_queue = queue;
        c.frto = frto;
    });
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    (s, out)
}

/// Deliver timer events until a retransmission timeout; its time, with `out` holding what
/// the timeout sent (a lost probe's segment is dropped from it).
fn until_timeout(s: &mut TcpSender, out: &mut Vec<Segment>) -> Time {
    loop {
        out.clear();
        let (t, timeout) = expire(s, out);
        if timeout {
            return t;
        }
    }
}

#[test]
fn in_linux_loss_state_sacked_segments_stay_sacked_and_a_sack_grows_cwnd_and_resends_what_is_lost() {
    // segments 1.. lost but 8 (sent at 100 us), whose SACK at 200 us starts recovery; the
    // recovery's resends are lost too and the RTO fires (in recovery: no F-RTO)
    for queue in [false, true] {
        let (mut s, mut out) = queue_sender(queue, true);
        assert!(seg_numbers(&out).contains(&8), "segment 0's ACK let segment 8 go at 100 us");
        s.on_ack(us(200), ack_of(1), &[blk(8, 9)], &mut out);
        assert!(s.in_recovery);
        out.clear();
        let t = until_timeout(&mut s, &mut out);
        assert_eq!(seg_numbers(&out), vec![1], "the timeout resends the head");
        assert!(!s.frto, "a timeout in recovery takes no F-RTO");
        out.clear();
        // a late SACK of segment 5 while the head's resend is out: Linux grows cwnd 1 -> 2 on
        // it and resends the lowest lost segment; RFC 5681's go-back-N waits for a new ACK
        s.on_ack(t + us(50), ack_of(1), &[blk(5, 6), blk(8, 9)], &mut out);
        if queue {
            assert_eq!((seg_numbers(&out), s.cwnd), (vec![2], 2 * MSS));
        } else {
            assert!(out.is_empty(), "{:?}", seg_numbers(&out));
        }
        // ACK everything up to 8 one resend at a time: the SACKed 5 and 8 are resent only
        // when the timeout forgot them
        let mut sent = seg_numbers(&out);
        while s.snd_una < ack_of(8) {
            out.clear();
            let next = (s.snd_una - 1) / MSS + 1;
            s.on_ack(t + us(100 + 10 * next), ack_of(next), &[blk(5, 6), blk(8, 9)], &mut out);
            sent.extend(seg_numbers(&out));
        }
        let resent_sacked = sent.iter().any(|&n| n == 5 || n == 8);
        assert_eq!(resent_sacked, !queue, "queue {queue}: {sent:?}");
    }
}

#[test]
fn frto_sends_new_data_on_the_first_ack_after_a_timeout_and_resends_once_a_sack_shows_the_loss_rfc5682() {
    // the whole window after segment 0 is lost, the tail-loss probe too: a timeout from
    // Open. F-RTO (step 2b): the head's ACK sends new data, not segment 2; the SACK of that
    // new data shows the loss was real (3a) and the lost segments go
    for frto in [false, true] {
        let (mut s, mut out) = queue_sender(true, frto);
        out.clear();
        let t = until_timeout(&mut s, &mut out);
        assert_eq!(seg_numbers(&out), vec![1]);
        assert_eq!(s.frto, frto);
        let top = s.snd_max;
        out.clear();
        s.on_ack(t + us(100), ack_of(2), &[], &mut out);
        let sent = seg_numbers(&out);
        if !frto {
            assert_eq!(sent, vec![2, 3], "no F-RTO: slow start resends the lost ones");
            continue;
        }
        assert_eq!(sent, vec![top / MSS, top / MSS + 1], "new data beyond the highest sent");
        assert!(s.frto && out.iter().all(|g| !g.retransmit));
        out.clear();
        let first_new = top / MSS;
        s.on_ack(t + us(200), ack_of(2), &[blk(first_new, first_new + 1)], &mut out);
        assert!(!s.frto, "a SACK after the new data: the loss was real");
        assert_eq!(seg_numbers(&out)[0], 2, "the lowest lost segment goes first: {:?}", seg_numbers(&out));
    }
}

/// A SACK sender with RACK-TLP whose handshake gave an SRTT of `srtt`, and which wrote 4
/// segments at `t` with a window of 3: A, B and C (segments 0-2) go, 3 waits for the probe.
fn tail(cfg: crate::tcp::sender::SenderConfig, srtt: Time, t: Time) -> TcpSender {
    let mut s = TcpSender::new(crate::tcp::sender::SenderConfig { variant: TcpVariant::Sack, rack_tlp: true, ..cfg });
    s.rto.sample(srtt);
    s.cwnd = 3 * MSS;
    s.ssthresh = 3 * MSS;
    let mut out = vec![];
    s.write(t, 4 * MSS, &mut out);
    assert_eq!(seg_numbers(&out), vec![0, 1, 2]);
    s
}

#[test]
fn after_a_lost_probe_a_late_ack_does_not_push_the_rto_back_with_rearm_rto_from_head() {
    // A, B, C sent at 0 with SRTT 700 us; the probe (new data, segment 3) at PTO = 1.4 ms,
    // then the RTO (200 ms) from the probe. B, C and the probe are lost; A's delayed ACK
    // comes at 41.4 ms (SRTT 5.7875 ms after its sample, RTO still 200 ms). RFC 6298 §5.3
    // restarts the RTO at that ACK: it fires at 241.4 ms. Linux (tcp_set_xmit_timer ->
    // tcp_schedule_loss_probe) re-arms the probe timer for 2 SRTT = 11.575 ms; at 52.975 ms
    // tcp_send_loss_probe finds a probe outstanding, sends nothing and tcp_rearm_rto arms the
    // RTO for B's transmission + RTO (tcp_rto_delta_us): it fires at 200 ms
    for on in [false, true] {
        let cfg = crate::tcp::sender::SenderConfig { rearm_rto_from_head: on, ..config() };
        let mut s = tail(cfg, us(700), Time::ZERO);
        let mut out = vec![];
        assert_eq!(expire(&mut s, &mut out), (us(1400), false));
        assert_eq!(seg_numbers(&out), vec![3], "the probe: new data");
        assert_eq!(s.timer_deadline(), Some(us(201_400)), "the RTO from the probe");
        out.clear();
        s.on_ack(us(41_400), ack_of(1), &[], &mut out);
        assert!(out.is_empty());
        assert_eq!((s.rto.srtt, s.rto.rto), (Some(Time(5_787_500_000)), Time::from_ms(200)));
        if on {
            assert_eq!((s.timer_mode, s.timer_deadline()), (TimerMode::Probe, Some(us(52_975))));
            assert_eq!(expire(&mut s, &mut out), (us(52_975), false));
            assert!(out.is_empty(), "at most one probe outstanding: {:?}", seg_numbers(&out));
            assert_eq!(s.stats.tail_loss_probes, 1);
            assert_eq!(s.timer_mode, TimerMode::Rto);
            assert_eq!(expire(&mut s, &mut out), (Time::from_ms(200), true), "B's transmission + RTO");
        } else {
            assert_eq!(s.timer_mode, TimerMode::Rto);
            assert_eq!(expire(&mut s, &mut out), (us(241_400), true), "the late ACK + RTO");
        }
        assert_eq!(seg_numbers(&out), vec![1], "B resent");
        assert_eq!(s.stats.timeouts, 1);
    }
}

#[test]
fn the_testbeds_tail_loss_timeline_with_linuxs_timer_rules() {
    // The testbed's flow 3 of block 0 (reno 8 KiB, 8 servers, r1): SRTT 736 us; A, B, C sent
    // at 220.807 ms (jiffy 55 of 4 ms); B, C and the probe lost; A's delayed ACK at 262.551
    // ms, a 41.744 ms sample. The probe timer: 2 x 0.736 + 2 ms (TCP_TIMEOUT_MIN_US) = 1
    // jiffy, fires at jiffy 57 (228 ms). The RTO from there: 200.736 ms -> 51 jiffies, fires
    // at 57 + 52 = 109 (436 ms). The ACK: SRTT 5.862 ms, RTO 205.862 ms = 52 jiffies; the
    // probe timer re-armed for 2 x 5.862 + 2 = 13.724 ms = 4 jiffies from jiffy 65 fires at
    // 70 (280 ms) and re-arms the RTO for B's send + 208 - 280 = 148.807 ms = 38 jiffies:
    // jiffy 109 again, 436 ms, the probe + 208 ms the testbed measured (and the late ACK +
    // 173.4 ms; the testbed's p50 172.0). Without rearm_rto_from_head the RTO restarts at the
    // ACK: jiffy 65 + 53 = 118, 472 ms.
    let jiffy = Time::from_ms(4);
    for (on, fires) in [(true, 436), (false, 472)] {
        let cfg = crate::tcp::sender::SenderConfig {
            granularity: jiffy,
            timer_ticks: true,
            timer_wheel: true,
            rto_min_on_rttvar: true,
            rack_timer_floor: true,
            rearm_rto_from_head: on,
            ..config()
        };
        let mut s = tail(cfg, us(736), us(220_807));
        assert_eq!(s.rto.rto, Time::from_ms(204), "51 jiffies");
        let mut out = vec![];
        assert_eq!(expire(&mut s, &mut out), (Time::from_ms(228), false));
        assert_eq!(seg_numbers(&out), vec![3]);
        assert_eq!(s.timer_deadline(), Some(Time::from_ms(436)), "the probe + 208 ms without an ACK");
        out.clear();
        s.on_ack(us(262_551), ack_of(1), &[], &mut out);
        assert_eq!((s.rto.srtt, s.rto.rto), (Some(us(5862)), Time::from_ms(208)));
        if on {
            assert_eq!(expire(&mut s, &mut out), (Time::from_ms(280), false));
            assert!(out.is_empty());
        }
        assert_eq!(expire(&mut s, &mut out), (Time::from_ms(fires), true));
        assert_eq!(seg_numbers(&out), vec![1]);
    }
}

/// A SACK sender with RACK-TLP and Linux's TSO deferral (`tso_deferral`) at `window`
/// segments that wrote `total` segments at 0.
fn tso_sender(window: u64, total: u64) -> TcpSender {
    rack_prr_sender(window, total, |c| c.tso_deferral = true)
}

#[test]
fn tso_deferral_holds_a_one_segment_allowance_for_the_next_ack_then_sends_both() {
    // cwnd 4, four segments out at 0; segment 0's ACK at 100 us (SRTT 100 us) grows cwnd to
    // 4.25 and leaves 3 in flight: an allowance of 1.25 segments, under a third of 4.25;
    // segment 1's ACK is due at 0 + 100 us, within min(SRTT / 2, 1 ms) of now; the last
    // send was 100 us ago: tcp_tso_should_defer holds it
    let mut s = tso_sender(4, 8);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    assert!(out.is_empty(), "held: {:?}", seg_numbers(&out));
    assert_eq!(s.stats.tso_deferrals, 1);
    // segment 1's ACK at 120 us: 2 in flight, cwnd 4.5, 2.5 segments allowed: more than a
    // third, both go
    s.on_ack(us(120), ack_of(2), &[], &mut out);
    assert_eq!(seg_numbers(&out), vec![4, 5]);
    assert_eq!(s.stats.tso_deferrals, 1);
}

#[test]
fn gso_half_cwnd_sends_half_the_window_and_holds_a_remainder_under_a_third() {
    // cwnd 7, seven segments out at 0; at 100 us (SRTT 100 us) one ACK acknowledges four:
    // cwnd 7.14, 3 in flight, 4.14 segments allowed, more than a third (2.38), so the first
    // GSO skb goes: tcp_cwnd_test's max(7 / 2, 1) = 3 segments. The rest, 1.14 segments, is
    // under a third and segment 4's ACK is due now (sent at 0, SRTT 100 us): held
    let run = |half: bool| {
        let mut s = rack_prr_sender(7, 20, |c| {
            c.tso_deferral = true;
            c.gso_half_cwnd = half;
        });
        let mut steps = vec![];
        for (at, acked) in [(100, 4), (110, 5), (120, 7)] {
            let mut out = vec![];
            s.on_ack(us(at), ack_of(acked), &[], &mut out);
            steps.push((seg_numbers(&out), s.stats.tso_deferrals));
        }
        steps
    };
    let steps = run(true);
    assert_eq!(steps[0], (vec![7, 8, 9], 1), "half of cwnd, the remainder held");
    // segment 4's ACK: 2.28 segments allowed, under a third of 7.28, the next ACK due: held
    assert_eq!(steps[1], (vec![], 2));
    // two more acknowledged: 4.42 allowed, a skb of 3 and the remaining 1.42 under a third,
    // but the new head (segment 7, sent at 100 us) is not due for 80 us, more than SRTT / 2:
    // the remainder goes too
    assert_eq!(steps[2], (vec![10, 11, 12, 13], 2));
    // tested once, as a whole, the first ACK's allowance goes at once
    assert_eq!(run(false)[0], (vec![7, 8, 9, 10], 0));
}

#[test]
fn tso_deferral_sends_at_once_when_any_of_its_tests_fails() {
    let first_ack = |mut s: TcpSender, at: Time| {
        let mut out = vec![];
        s.on_ack(at, ack_of(1), &[], &mut out);
        (seg_numbers(&out), s.stats.tso_deferrals)
    };
    // a third of the window: cwnd 3, 2 in flight after the ACK, 1.33 segments allowed
    assert_eq!(first_ack(tso_sender(3, 8), us(100)), (vec![3], 0));
    // the next ACK is not due soon: SRTT 1 ms before, 887.5 us after this 100 us sample;
    // segment 1's ACK is due 787.5 us from now, more than half the SRTT
    let mut slow = tso_sender(4, 8);
    slow.rto.sample(us(1000));
    assert_eq!(first_ack(slow, us(100)), (vec![4], 0));
    // the last send more than 1 ms ago (tcp_wstamp_ns + 1 ms)
    assert_eq!(first_ack(tso_sender(4, 8), us(1100)), (vec![4], 0));
    // one segment left to send: a one-segment skb is never deferred
    assert_eq!(first_ack(tso_sender(4, 5), us(100)), (vec![4], 0));
    // the rule off: RFC 5681's sender sends what the window allows
    assert_eq!(first_ack(rack_prr_sender(4, 8, |_| {}), us(100)), (vec![4], 0));
}

#[test]
fn a_held_allowance_goes_out_as_the_tail_loss_probe_when_no_ack_follows() {
    // the held segment 4 waits; no ACK comes (segments 1-3 lost); the probe timer sends new
    // data, which tcp_send_loss_probe never defers (push_one)
    let mut s = tso_sender(4, 8);
    let mut out = vec![];
    s.on_ack(us(100), ack_of(1), &[], &mut out);
    assert!(out.is_empty());
    let (at, timeout) = expire(&mut s, &mut out);
    assert!(!timeout && at > us(100));
    assert_eq!(seg_numbers(&out), vec![4]);
    assert!(!out[0].retransmit);
}

#[test]
fn a_held_allowance_leaves_the_flow_cwnd_limited_so_the_next_ack_grows_cwnd() {
    // tcp_tso_should_defer sets is_cwnd_limited when the window is what it holds (cong_win <=
    // skb->len), so tcp_is_cwnd_limited lets the next ACK grow cwnd although the flight (3)
    // is a segment below it (4.25): with the cwnd-limited gate on, segment 1's ACK grows cwnd
    // by RFC 5681's MSS x MSS / cwnd either way
    let grows = |tso: bool| {
        let mut s = rack_prr_sender(4, 8, |c| {
            c.tso_deferral = tso;
            c.cwnd_limited_growth = true;
        });
        let mut out = vec![];
        s.on_ack(us(100), ack_of(1), &[], &mut out);
        let before = s.cwnd;
        s.on_ack(us(120), ack_of(2), &[], &mut out);
        (before, s.cwnd)
    };
    let (held, after) = grows(true);
    assert_eq!((held, after), (4 * MSS + MSS / 4, 4 * MSS + MSS / 4 + MSS * MSS / (4 * MSS + MSS / 4)), "held, then grown");
    assert_eq!(grows(false).1, after, "as much as without the deferral, whose segment 4 filled the window");
}

#[test]
fn with_sacked_leave_flight_an_ack_that_sacks_lets_a_new_segment_go_per_segment_sacked() {
    // cwnd 4, segments 0-3 out at 0. At 100 us an ACK acknowledges segment 0 and SACKs
    // segment 2; segment 1, sent with it, is not lost yet (RACK: within the reordering
    // window), so the sender stays out of recovery (Linux's Disorder). cwnd grows to 4.25:
    // RFC 5681 counts 3 segments in flight and lets 1 go; Linux's tcp_packets_in_flight
    // leaves the SACKed segment out, counts 2 and lets 2 go.
    let first_ack = |on: bool| {
        let mut s = rack_prr_sender(4, 10, |c| c.sacked_leave_flight = on);
        let mut out = vec![];
        s.on_ack(us(100), ack_of(1), &[blk(2, 3)], &mut out);
        assert!(!s.in_recovery);
        (seg_numbers(&out), s)
    };
    assert_eq!(first_ack(false).0, vec![4]);
    let (sent, mut s) = first_ack(true);
    assert_eq!(sent, vec![4, 5]);
    assert_eq!(s.out_of_flight(), MSS);
    // a duplicate ACK SACKing segment 3 frees one more: one new segment, as RFC 3042's
    // limited transmit would send on it
    let mut out = vec![];
    s.on_ack(us(110), ack_of(1), &[blk(2, 4)], &mut out);
    assert_eq!((seg_numbers(&out), s.in_recovery), (vec![6], false));
    // in recovery the SACKed segments are PRR's pipe, not this count
    s.on_ack(us(160), ack_of(1), &[blk(2, 5)], &mut out);
    assert!(s.in_recovery);
    assert_eq!(s.out_of_flight(), 0);
}
