//! The data receiver at the client: cumulative ACKs, an out-of-order store, and
//! delayed ACKs.
//!
//! ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2), when delayed ACK is on: an ACK for at
//! least every second segment, and within the delayed-ACK timeout; an immediate ACK for
//! an out-of-order segment (a duplicate ACK), for a segment that fills a hole, and for a
//! duplicate segment. When delayed ACK is off (FAST'08's ns-2 runs), every segment is
//! acknowledged at once.
//!
//! With `ack_short_below` (the `ack_short_segments` field, Linux), an in-order segment
//! shorter than the MSS is also acknowledged at once: Linux's `tcp_measure_rcv_mss`
//! marks such a segment ICSK_ACK_PUSHED (a sender sends less than a full segment only at
//! the end of what it was given), and `tcp_cleanup_rbuf` (net/ipv4/tcp.c) sends the ACK
//! as soon as the application has read it and the receive queue is empty. The client here
//! reads every byte as it arrives, so that is at once. Linux skips this in its
//! "ping-pong" (interactive) mode unless two short segments came: with `ack_pingpong`
//! (below) so does this receiver (docs/testbed.md, "reno at 8 KiB: delayed-ACK stalls and
//! PRR's extra segment").
//!
//! Linux's receive window and quick-ACK rules, each its scenario field (`tcp::linux_rcv`
//! holds them and cites net/ipv4/tcp_input.c): `rcv_window_growth` (`tcp_grow_window`:
//! an in-order segment that raises `rcv_ssthresh` is acknowledged at once, and the
//! advertised window is `rcv_ssthresh`), `rcv_autotuning` (`tcp_rcv_space_adjust`'s
//! Dynamic Right-Sizing raises the `window_clamp` that bounds it) and `ack_pingpong`
//! (`inet_csk`'s ping-pong mode, which holds those quick ACKs and the short-segment one).

use crate::tcp::linux_rcv::{LinuxRcv, LinuxRcvConfig};
use crate::tcp::timer::{wheel_expiry, Fired, LazyTimer};
use crate::time::Time;

/// Receiver parameters.
#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    /// Delayed-ACK timeout; `None` acknowledges every segment immediately.
    pub delayed_ack: Option<Time>,
    /// Report SACK blocks (RFC 2018).
    pub sack: bool,
    /// Receive window to advertise, bytes (the application consumes data at once).
    pub window: u64,
    /// Echo CE marks as DCTCP's receiver does (RFC 8257 §3.2).
    pub dctcp_echo: bool,
    /// Acknowledge at once an in-order segment shorter than this many bytes (the MSS;
    /// Linux's ICSK_ACK_PUSHED); `None`: RFC 1122's rules only.
    pub ack_short_below: Option<u32>,
    /// Linux's window growth, autotuning and ping-pong mode (`tcp::linux_rcv`); `None`:
    /// a fixed window and RFC 1122's ACK rules.
    pub linux: Option<LinuxRcvConfig>,
    /// The delayed-ACK timer is a Linux `timer_list` (`icsk_delack_timer`, armed by
    /// `tcp_send_delayed_ack` for `jiffies + ato`) on jiffies of this length
    /// (`tcp::timer::wheel_expiry`, `timer_wheel`); `None`: it fires exactly after the timeout.
    pub timer_wheel: Option<Time>,
}

/// What the receiver did with a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Bytes that became deliverable in order (handed to the application).
    pub delivered: u64,
    /// Send an ACK now.
    pub ack_now: bool,
}

/// Counters of one receiver.
#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// Segments whose bytes had all been received before.
    pub duplicate_segments: u64,
    pub out_of_order_segments: u64,
    /// Times the delayed-ACK timer fired (FAST'08 §4.2's delayed-ACK waits).
    pub delayed_ack_timeouts: u64,
}

/// One TCP receiver.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    cfg: ReceiverConfig,
    /// Next byte expected in order (the cumulative ACK number).
    pub rcv_nxt: u64,
    /// Window advertised on every ACK; the client's scheduler or ICTCP may change it.
    pub window: u64,
    /// Disjoint, sorted [start, end) ranges received beyond `rcv_nxt`.
    ooo: Vec<(u64, u64)>,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    /// Start of the most recent out-of-order segment (its block is reported first).
    latest_ooo: Option<u64>,
    /// RFC 7323 TS.Recent: the timestamp the next ACK echoes.
    ts_recent: Time,
    /// The ACK number last sent (RFC 7323 Last.ACK.sent).
    last_ack_sent: u64,
    /// DCTCP.CE (RFC 8257 §3.2): the CE bit of the last data segment; ACKs carry it as ECE.
    ce_state: bool,
    timer: LazyTimer,
    timer_request: Option<Time>,
    /// An in-order short segment waits for its ACK (Linux's ICSK_ACK_PUSHED, held in
    /// ping-pong mode; a second one is ICSK_ACK_PUSHED2, acknowledged regardless).
    pushed: bool,
    /// Linux's receive-window state, when `cfg.linux` is set (boxed: a receiver without
    /// it stays as small as before, on the per-segment path).
    pub linux: Option<Box<LinuxRcv>>,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        TcpReceiver {
            window: cfg.window,
            rcv_nxt: 1,
            ooo: Vec::new(),
            unacked_segments: 0,
            latest_ooo: None,
            ts_recent: Time::ZERO,
            last_ack_sent: 1,
            ce_state: false,
            timer: LazyTimer::default(),
            timer_request: None,
            pushed: false,
            linux: cfg.linux.map(|c| Box::new(LinuxRcv::new(c))),
            cfg,
            stats: ReceiverStats::default(),
        }
    }

    /// The window the next ACK advertises: the owner's (`window`), and with Linux's window
    /// growth no more than `rcv_ssthresh` (`__tcp_select_window`).
    #[inline]
    pub fn advertised_window(&self) -> u64 {
        match &self.linux {
            Some(lx) => lx.advertised(self.window),
            None => self.window,
        }
    }

    /// Linux's receive window is modelled (the owner then passes each data segment's
    /// TSecr: [`TcpReceiver::note_tsecr`]).
    #[inline]
    pub fn models_linux_window(&self) -> bool {
        self.linux.is_some()
    }

    /// A data segment of `len` bytes echoed `tsecr` (the TSval of the last ACK its sender
    /// had): Linux's receiver RTT sample (`tcp_rcv_rtt_measure_ts`), for autotuning.
    pub fn note_tsecr(&mut self, now: Time, tsecr: Time, len: u32) {
        if let Some(lx) = &mut self.linux {
            lx.rtt_measure_ts(now, tsecr, len);
        }
    }

    /// The receiving end sent a request (data of its own) at `now`: Linux's
    /// `tcp_event_data_sent` may enter ping-pong mode.
    pub fn on_data_sent(&mut self, now: Time) {
        if let Some(lx) = &mut self.linux {
            lx.on_data_sent(now);
        }
    }

    /// A time at which the owner must deliver a delayed-ACK timer event, if needed.
    pub fn take_timer_request(&mut self) -> Option<Time> {
        self.timer_request.take()
    }

    /// The ACK number to send.
    pub fn ack_number(&self) -> u64 {
        self.rcv_nxt
    }

    /// The next ACK carries SACK blocks: SACK is on and data is held out of order.
    #[inline]
    pub fn has_sack_blocks(&self) -> bool {
        self.cfg.sack && !self.ooo.is_empty()
    }

    /// Fill `out` with SACK blocks for the next ACK; returns how many. RFC 2018 §4: the
    /// first block holds the most recently received segment; the others follow, highest
    /// first (we do not remember older reports, so "most recently reported" is
    /// approximated by position).
    pub fn sack_blocks(&self, out: &mut [(u64, u64)]) -> usize {
        if !self.cfg.sack || self.ooo.is_empty() || out.is_empty() {
            return 0;
        }
        let first = self
            .latest_ooo
            .and_then(|seq| self.ooo.iter().position(|&(s, e)| s <= seq && seq < e))
            .unwrap_or(self.ooo.len() - 1);
        out[0] = self.ooo[first];
        let mut n = 1;
        for (i, &r) in self.ooo.iter().enumerate().rev() {
            if n == out.len() {
                break;
            }
            if i != first {
                out[n] = r;
                n += 1;
            }
        }
        n
    }

    /// The receiver holds every byte of [seq, seq + len).
    pub fn holds(&self, seq: u64, len: u32) -> bool {
        let end = seq + len as u64;
        end <= self.rcv_nxt || self.ooo.iter().any(|&(s, e)| s <= seq.max(self.rcv_nxt) && end <= e)
    }

    /// Bytes held out of order.
    pub fn out_of_order_bytes(&self) -> u64 {
        self.ooo.iter().map(|(s, e)| e - s).sum()
    }

    /// A data segment [seq, seq + len) arrived at `now`.
    pub fn on_segment(&mut self, now: Time, seq: u64, len: u32) -> Received {
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            self.stats.duplicate_segments += 1;
            let rcv_wnd = self.advertised_window();
            if let Some(lx) = &mut self.linux {
                lx.on_duplicate(rcv_wnd);
            }
            return Received { delivered: 0, ack_now: true };
        }
        if seq > self.rcv_nxt {
            self.stats.out_of_order_segments += 1;
            self.latest_ooo = Some(seq);
            self.insert_out_of_order(seq, end);
            return Received { delivered: 0, ack_now: true };
        }
        let before = self.rcv_nxt;
        let filled_hole = !self.ooo.is_empty();
        self.rcv_nxt = end;
        // pull in every stored range that is now contiguous
        let mut merged = 0;
        for &(s, e) in &self.ooo {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            merged += 1;
        }
        self.ooo.drain(..merged);
        let delivered = self.rcv_nxt - before;
        // Linux: tcp_event_data_recv's tcp_grow_window may ask for a quick ACK; ping-pong
        // mode holds it, and the short segment's (tcp_in_quickack_mode, tcp_cleanup_rbuf)
        let rcv_wnd = self.advertised_window();
        let (quick, pingpong) = match &mut self.linux {
            Some(lx) => {
                let ooo = self.ooo.iter().map(|(s, e)| e - s).sum::<u64>();
                // tcp_event_data_recv runs after tcp_queue_rcv, before tcp_ofo_queue merges
                lx.rtt_measure_window(now, end, rcv_wnd);
                lx.on_in_order(now, len, ooo, rcv_wnd);
                (lx.in_quickack_mode(), lx.in_pingpong_mode())
            }
            None => (false, false),
        };
        let short = self.cfg.ack_short_below.is_some_and(|mss| len < mss);
        let ack_now = match self.cfg.delayed_ack {
            None => true,
            Some(_) if filled_hole => true,
            Some(_) if short && (!pingpong || self.pushed) => true,
            Some(timeout) => {
                self.unacked_segments += 1;
                self.pushed |= short;
                if self.unacked_segments >= 2 || quick {
                    true
                } else {
                    let due = match self.cfg.timer_wheel {
                        Some(jiffy) => wheel_expiry(now, timeout, jiffy),
                        None => now + timeout,
                    };
                    if let Some(t) = self.timer.arm(due) {
                        self.timer_request = Some(t);
                    }
                    false
                }
            }
        };
        if let Some(lx) = &mut self.linux {
            // the application reads at once: tcp_recvmsg's tcp_rcv_space_adjust
            let ooo_end = self.ooo.last().map(|&(_, e)| e);
            lx.rcv_space_adjust(now, self.rcv_nxt, ooo_end);
        }
        Received { delivered, ack_now }
    }

    /// DCTCP's receiver (RFC 8257 §3.2; Alizadeh et al. Fig. 10's two-state machine), for
    /// a data segment whose CE bit is `ce`, before [`TcpReceiver::on_segment`]: returns
    /// true when the owner must first send an ACK of the segments received so far,
    /// carrying the old state as ECE, because the CE bit changed while an ACK was
    /// delayed. Then the state becomes `ce`, and every later ACK echoes it, so the ACKs
    /// tell the sender exactly how many bytes were marked.
    #[inline]
    pub fn on_ce(&mut self, ce: bool) -> bool {
        if !self.cfg.dctcp_echo || ce == self.ce_state {
            return false;
        }
        let flush = self.unacked_segments > 0;
        if !flush {
            self.ce_state = ce;
        }
        flush
    }

    /// The owner sent the ACK [`TcpReceiver::on_ce`] asked for: take the new CE state.
    pub fn ce_flushed(&mut self) {
        self.ce_state = !self.ce_state;
    }

    /// ECN-Echo for the next ACK.
    #[inline]
    pub fn ece(&self) -> bool {
        self.ce_state
    }

    /// RFC 7323 §4.3: a segment starting at `seq` carried timestamp `ts`. It becomes
    /// TS.Recent if it is not older and the segment does not start beyond the last ACK
    /// sent, so a retransmission that fills the hole is echoed (a valid RTT sample) and
    /// an out-of-order segment is not (dupACKs echo the older timestamp).
    pub fn note_timestamp(&mut self, seq: u64, ts: Time) {
        if ts >= self.ts_recent && seq <= self.last_ack_sent {
            self.ts_recent = ts;
        }
    }

    /// Swift: the next ACK echoes `ts`, the send time of the segment that brings it, in
    /// order or not (the per-packet delay NIC timestamps give, §3.1), where RFC 7323
    /// has a duplicate ACK echo the last in-order segment's.
    pub fn echo_own(&mut self, ts: Time) {
        self.ts_recent = ts;
    }

    /// The timestamp the next ACK echoes (TSecr).
    pub fn ts_echo(&self) -> Time {
        self.ts_recent
    }

    /// The owner sent an ACK: nothing is waiting to be acknowledged any more.
    pub fn on_ack_sent(&mut self) {
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.pushed = false;
        self.timer.cancel();
        if let Some(lx) = &mut self.linux {
            lx.on_ack_sent();
        }
    }

    /// A delayed-ACK timer event fired; returns true if an ACK must be sent now.
    pub fn on_timer_event(&mut self, now: Time) -> bool {
        match self.timer.on_event(now) {
            Fired::Expired => {
                self.stats.delayed_ack_timeouts += 1;
                if let Some(lx) = &mut self.linux {
                    lx.on_delack_timeout();
                }
                true
            }
            Fired::Reschedule(t) => {
                self.timer_request = Some(t);
                false
            }
            Fired::Ignore => false,
        }
    }

    fn insert_out_of_order(&mut self, seq: u64, end: u64) {
        // find the first range that ends at or after seq; merge every overlapping one
        let i = self.ooo.partition_point(|&(_, e)| e < seq);
        let mut j = i;
        let (mut s, mut e) = (seq, end);
        while j < self.ooo.len() && self.ooo[j].0 <= e {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            j += 1;
        }
        // replace ranges i..j by the merged one (Vec::splice's general machinery cost more
        // than the out-of-order segment's other work)
        if i == j {
            self.ooo.insert(i, (s, e));
        } else {
            self.ooo[i] = (s, e);
            self.ooo.drain(i + 1..j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn immediate() -> TcpReceiver {
        TcpReceiver::new(ReceiverConfig { delayed_ack: None, sack: true, window: 1 << 20, dctcp_echo: false, ack_short_below: None, linux: None, timer_wheel: None })
    }

    fn delayed() -> TcpReceiver {
        TcpReceiver::new(ReceiverConfig { delayed_ack: Some(Time::from_ms(40)), sack: false, window: 1 << 20, dctcp_echo: false, ack_short_below: None, linux: None, timer_wheel: None })
    }

    fn dctcp_delayed() -> TcpReceiver {
        TcpReceiver::new(ReceiverConfig { delayed_ack: Some(Time::from_ms(40)), sack: false, window: 1 << 20, dctcp_echo: true, ack_short_below: None, linux: None, timer_wheel: None })
    }

    /// Deliver in-order segment `i` (1000 bytes) with CE bit `ce` as the world does; returns
    /// the ACKs sent, as (ACK number, ECE).
    fn deliver(r: &mut TcpReceiver, i: u64, ce: bool) -> Vec<(u64, bool)> {
        let mut acks = vec![];
        if r.on_ce(ce) {
            acks.push((r.ack_number(), r.ece()));
            r.on_ack_sent();
            r.ce_flushed();
        }
        if r.on_segment(Time::ZERO, 1 + 1000 * i, 1000).ack_now {
            acks.push((r.ack_number(), r.ece()));
            r.on_ack_sent();
        }
        acks
    }

    #[test]
    fn dctcp_echoes_ce_on_delayed_acks_while_it_does_not_change() {
        // RFC 8257 §3.2: with no change of CE, the delayed-ACK rules apply (one ACK per two
        // segments) and ECE is the CE of the segments acknowledged
        let mut r = dctcp_delayed();
        assert_eq!(deliver(&mut r, 0, true), vec![]);
        assert_eq!(deliver(&mut r, 1, true), vec![(2001, true)]);
        assert_eq!(deliver(&mut r, 2, false), vec![]);
        assert_eq!(deliver(&mut r, 3, false), vec![(4001, false)]);
    }

    #[test]
    fn dctcp_acks_at_once_with_the_old_state_when_ce_changes_under_a_delayed_ack() {
        // RFC 8257 §3.2 / the paper's Fig. 10: segment 0 unmarked waits for its delayed
        // ACK; marked segment 1 first forces an ACK of segment 0 with ECE = 0, then counts
        // as the first of a new pair; unmarked segment 3 likewise flushes 2 with ECE = 1
        let mut r = dctcp_delayed();
        assert_eq!(deliver(&mut r, 0, false), vec![]);
        assert_eq!(deliver(&mut r, 1, true), vec![(1001, false)]);
        assert_eq!(deliver(&mut r, 2, true), vec![(3001, true)]);
        assert_eq!(deliver(&mut r, 3, true), vec![]);
        assert_eq!(deliver(&mut r, 4, false), vec![(4001, true)]);
        assert_eq!(deliver(&mut r, 5, false), vec![(6001, false)]);
    }

    #[test]
    fn dctcp_state_changes_without_an_extra_ack_when_nothing_is_delayed() {
        // every segment acknowledged at once: each ACK's ECE is its own segment's CE
        let mut r = TcpReceiver::new(ReceiverConfig { delayed_ack: None, sack: false, window: 1 << 20, dctcp_echo: true, ack_short_below: None, linux: None, timer_wheel: None });
        assert_eq!(deliver(&mut r, 0, true), vec![(1001, true)]);
        assert_eq!(deliver(&mut r, 1, false), vec![(2001, false)]);
        // and without DCTCP's echo, marks are not echoed
        let mut r = delayed();
        assert_eq!(deliver(&mut r, 0, true), vec![]);
        assert_eq!(deliver(&mut r, 1, true), vec![(2001, false)]);
    }

    #[test]
    fn sack_blocks_report_the_latest_segment_first() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 101, 100);
        r.on_segment(Time::ZERO, 501, 100);
        r.on_segment(Time::ZERO, 301, 100);
        let mut b = [(0, 0); 3];
        assert_eq!(r.sack_blocks(&mut b), 3);
        assert_eq!(b, [(301, 401), (501, 601), (101, 201)]);
    }

    #[test]
    fn no_sack_blocks_when_in_order_or_disabled() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 1, 100);
        let mut b = [(0, 0); 3];
        assert_eq!(r.sack_blocks(&mut b), 0);
        let mut d = delayed();
        d.on_segment(Time::ZERO, 101, 100);
        assert_eq!(d.sack_blocks(&mut b), 0);
    }

    #[test]
    fn timestamps_echo_the_hole_filler_not_the_out_of_order_segment_rfc7323() {
        let mut r = immediate();
        r.note_timestamp(1, Time(10));
        r.on_segment(Time::ZERO, 1, 100);
        r.on_ack_sent();
        assert_eq!(r.ts_echo(), Time(10));
        // 101 lost; 201 arrives out of order with a newer timestamp: not echoed
        r.note_timestamp(201, Time(30));
        r.on_segment(Time::ZERO, 201, 100);
        r.on_ack_sent();
        assert_eq!(r.ts_echo(), Time(10));
        // the retransmission of 101 fills the hole: its timestamp is echoed
        r.note_timestamp(101, Time(50));
        r.on_segment(Time::ZERO, 101, 100);
        assert_eq!(r.ts_echo(), Time(50));
    }

    #[test]
    fn holds_tells_whether_a_segment_was_received() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 1, 100);
        r.on_segment(Time::ZERO, 201, 100);
        assert!(r.holds(1, 100) && r.holds(201, 100));
        assert!(!r.holds(101, 100));
    }

    #[test]
    fn in_order_segment_advances_and_is_delivered() {
        let mut r = immediate();
        let got = r.on_segment(Time::ZERO, 1, 100);
        assert_eq!(got, Received { delivered: 100, ack_now: true });
        assert_eq!(r.ack_number(), 101);
    }

    #[test]
    fn gap_gives_duplicate_ack_and_filling_it_delivers_everything() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 1, 100);
        let ooo = r.on_segment(Time::ZERO, 201, 100);
        assert_eq!(ooo, Received { delivered: 0, ack_now: true });
        assert_eq!(r.ack_number(), 101, "duplicate ACK repeats the hole");
        let fill = r.on_segment(Time::ZERO, 101, 100);
        assert_eq!(fill.delivered, 200);
        assert_eq!(r.ack_number(), 301);
        assert_eq!(r.out_of_order_bytes(), 0);
    }

    #[test]
    fn overlapping_out_of_order_ranges_merge() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 501, 100);
        r.on_segment(Time::ZERO, 301, 100);
        r.on_segment(Time::ZERO, 401, 100); // bridges the two
        r.on_segment(Time::ZERO, 351, 100); // overlaps
        assert_eq!(r.out_of_order_bytes(), 300);
        assert_eq!(r.on_segment(Time::ZERO, 1, 300).delivered, 600);
    }

    #[test]
    fn duplicate_segment_delivers_nothing_twice() {
        let mut r = immediate();
        r.on_segment(Time::ZERO, 1, 100);
        let dup = r.on_segment(Time::ZERO, 1, 100);
        assert_eq!(dup, Received { delivered: 0, ack_now: true });
        assert_eq!(r.stats.duplicate_segments, 1);
    }

    #[test]
    fn delayed_ack_acknowledges_every_second_segment() {
        let mut r = delayed();
        assert!(!r.on_segment(Time::ZERO, 1, 100).ack_now);
        assert_eq!(r.take_timer_request(), Some(Time::from_ms(40)));
        assert!(r.on_segment(Time::ZERO, 101, 100).ack_now);
    }

    #[test]
    fn delayed_ack_timer_acks_a_lone_segment() {
        let mut r = delayed();
        r.on_segment(Time::ZERO, 1, 100);
        let t = r.take_timer_request().unwrap();
        assert!(r.on_timer_event(t));
        assert_eq!(r.stats.delayed_ack_timeouts, 1);
    }

    #[test]
    fn on_the_timer_wheel_the_delayed_ack_fires_on_the_tick_after_ato_in_jiffies() {
        // icsk_delack_timer: jiffies + ato (10 jiffies of 4 ms) then calc_index's extra tick:
        // a segment 1 ms into jiffy 100 is acknowledged at jiffy 111, 43 ms later (the
        // testbed's client: 40.1-48.0 ms, ACKs on the tick); exactly 40 ms later without
        let mut wheel = TcpReceiver::new(ReceiverConfig { timer_wheel: Some(Time::from_ms(4)), ..delayed().cfg });
        wheel.on_segment(Time::from_ms(401), 1, 100);
        assert_eq!(wheel.take_timer_request(), Some(Time::from_ms(444)));
        let mut exact = delayed();
        exact.on_segment(Time::from_ms(401), 1, 100);
        assert_eq!(exact.take_timer_request(), Some(Time::from_ms(441)));
    }

    #[test]
    fn delayed_ack_is_immediate_for_out_of_order_and_hole_filling() {
        let mut r = delayed();
        assert!(r.on_segment(Time::ZERO, 101, 100).ack_now);
        assert!(r.on_segment(Time::ZERO, 1, 100).ack_now);
    }

    #[test]
    fn a_short_in_order_segment_is_acknowledged_at_once_only_with_ack_short_segments() {
        // a response's last segment (56 of 1448 bytes) arriving alone: RFC 1122 waits for
        // the delayed-ACK timer; Linux's ICSK_ACK_PUSHED (tcp_measure_rcv_mss, then
        // tcp_cleanup_rbuf once the application read it) acknowledges it at once
        let mut rfc = delayed();
        assert!(!rfc.on_segment(Time::ZERO, 1, 56).ack_now);
        let mut linux = TcpReceiver::new(ReceiverConfig { ack_short_below: Some(1448), ..delayed().cfg });
        assert!(linux.on_segment(Time::ZERO, 1, 56).ack_now);
        assert_eq!(linux.take_timer_request(), None, "no delayed-ACK timer armed");
        linux.on_ack_sent();
        // a full segment alone still waits for its pair or the timer (RFC 1122 §4.2.3.2)
        assert!(!linux.on_segment(Time::ZERO, 57, 1448).ack_now);
        assert!(linux.take_timer_request().is_some());
        // and a short segment out of order is a duplicate ACK either way
        assert!(linux.on_segment(Time::ZERO, 3001, 56).ack_now);
    }

    #[test]
    fn sent_ack_cancels_the_delayed_ack_timer() {
        let mut r = delayed();
        r.on_segment(Time::ZERO, 1, 100);
        let t = r.take_timer_request().unwrap();
        r.on_ack_sent();
        assert!(!r.on_timer_event(t));
    }
}
