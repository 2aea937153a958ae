//! Linux's receive window and quick ACKs at the data receiver (net/ipv4/tcp_input.c,
//! Linux 6.18), each rule switched on by its scenario field:
//!
//! - `rcv_window_growth`, `tcp_grow_window`: every in-order segment of 128 bytes or more
//!   (`tcp_event_data_recv`) raises `rcv_ssthresh` by max(2 advmss, 2 len) while it is
//!   below min(`window_clamp`, `tcp_space`), and sets `icsk_ack.quick |= 1`, so
//!   `__tcp_ack_snd_check` finds the connection in quick-ACK mode and acknowledges that
//!   segment at once (`tcp_dec_quickack_mode` spends it with the ACK). The window the
//!   ACKs advertise is `rcv_ssthresh` (`__tcp_select_window`; the window-scale rounding is
//!   not modelled).
//! - `rcv_autotuning`, `tcp_rcv_space_adjust` and `tcp_rcvbuf_grow` (Dynamic Right-Sizing):
//!   once per receiver RTT, if the application copied more bytes than in the last
//!   measurement (`rcvq_space.space`), the receive buffer becomes the space for
//!   rcvwin = 2 copied + 2 (2 copied (copied - space) / space) (+ the out-of-order
//!   data), at most `tcp_rmem[2]`, and `window_clamp` follows it. The receiver RTT is
//!   `tcp_rcv_rtt_measure_ts`'s: each full segment with a new TSecr gives now - TSecr on the
//!   millisecond timestamp clock (at least 1 ms); a smaller sample replaces the estimate,
//!   a larger one moves it by 1/8 (`tcp_rcv_rtt_update` since Linux 6.16). Without it the
//!   clamp stays at its initial value, so growth stops there.
//! - `rcv_rtt_from_window`, Linux 6.16's "tcp: remove zero TCP TS samples for autotuning"
//!   (commit a7ffb88bcbb1): a timestamp sample of 0 ms is dropped (`tcp_rtt_tsopt_us(tp, 0)`)
//!   instead of counting as 1 ms (the TSval being the sender's 1 ms clock, one sample per
//!   new value echoed: `rcv_rtt_last_tsecr`), and the window-based sample (`tcp_rcv_rtt_measure`, from
//!   `tcp_event_data_recv`: the time from one in-order segment until `rcv_nxt` passes it by
//!   the window then advertised) feeds the estimate, taken only when it is the first or
//!   lower (`win_dep`). Where every round trip is shorter than the 1 ms timestamp clock, a
//!   connection's first estimate is then the time its first window took to arrive, and DRS
//!   measures over that much longer interval. Off: Linux <= 6.15 (every timestamp sample, at
//!   least 1 ms; the window-based sample, then rarely the lower, left out).
//! - `ack_pingpong`, `inet_csk`'s ping-pong mode: a request sent less than `ato` after
//!   the last data received (`tcp_event_data_sent`) counts towards `tcp_pingpong_thresh`
//!   (1); in the mode, `tcp_in_quickack_mode` is false (the growth ACK waits) and
//!   `tcp_cleanup_rbuf` holds a short segment's ACK unless a second one came
//!   (ICSK_ACK_PUSHED2); a delayed-ACK timeout leaves the mode (`tcp_delack_timer_handler`).
//!   `ato` is taken as TCP_ATO_MIN (the delayed-ACK timeout); its adaptation is not
//!   modelled.
//! - `quickack_mode`, the other ways into quick-ACK mode: `tcp_event_data_recv` gives
//!   `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)` at a connection's first data and when
//!   in-order data comes more than the receiving socket's RTO after the last ("too long
//!   gap: apparently sender failed to restart window"), and `tcp_data_queue` enters the mode
//!   for a segment it already holds (`tcp_enter_quickack_mode`, which also leaves ping-pong
//!   mode). `tcp_incr_quickack` raises `icsk_ack.quick` to min(rcv_wnd / (2 rcv_mss), 16),
//!   at least 2: that many ACKs go at once, unless ping-pong mode holds them. The receiving
//!   socket's RTO (`icsk_rto`) is its RTOmin plus its smoothed RTT, which at the client (its
//!   requests' round trips) is far below a jiffy: with jiffies, RTOmin's whole ticks plus one
//!   (`usecs_to_jiffies` rounds up), compared with the whole ticks between the two
//!   segments, as `tcp_jiffies32` counts them.
//!
//! The initial values are the kernel's (`tcp_select_initial_window`,
//! `tcp_init_buffer_space`, `tcp_measure_rcv_mss`) from `tcp_rmem[1]` = 131072 bytes and
//! the skb's len/truesize ratio (`scaling_ratio`, in 1/256): window_clamp =
//! rcvbuf x ratio / 256, rcv_ssthresh = min(the initial window, window_clamp), the first
//! `rcvq_space.space` = TCP_INIT_CWND x advmss. Not modelled: memory pressure,
//! `tcp_clamp_window`.

use crate::time::Time;

/// `tcp_rmem[1]`, the initial receive buffer (the kernel's default, and this testbed's).
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`, autotuning's cap (32 MiB: the kernel's default since 6.15-ish; this
/// testbed's: docs/testbed.md).
pub const TCP_RMEM_MAX: u64 = 33_554_432;
/// TCP_DEFAULT_SCALING_RATIO (include/net/tcp.h): half the buffer is window, the ratio
/// `tcp_select_initial_window` uses before any segment was measured.
pub const TCP_DEFAULT_SCALING_RATIO: u64 = 128;
/// TCP_INIT_CWND (include/net/tcp.h), in `tcp_init_buffer_space`'s first `rcvq_space`.
const TCP_INIT_CWND: u64 = 10;
/// `tcp_event_data_recv` grows the window only for segments of at least this many bytes.
const GROW_MIN_LEN: u32 = 128;
/// TCP_MAX_QUICKACKS (include/net/tcp.h): at most this many ACKs at once per entry into
/// quick-ACK mode.
const TCP_MAX_QUICKACKS: u32 = 16;
/// `tcp_pingpong_thresh`'s default (net/ipv4/sysctl_net_ipv4.c; this testbed's: 1).
const PINGPONG_THRESH: u8 = 1;

/// Which rules run, and the numbers they start from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinuxRcvConfig {
    pub grow_window: bool,
    pub autotune: bool,
    pub pingpong: bool,
    /// advmss (the MSS), bytes.
    pub advmss: u64,
    /// `scaling_ratio`: window bytes per 256 bytes of receive buffer.
    pub scaling_ratio: u64,
    /// `ato`: TCP_ATO_MIN, the delayed-ACK timeout.
    pub ato: Time,
    /// `quickack_mode`: the quick ACKs at the first data, after a gap longer than the
    /// RTO, and for a segment already held.
    pub quickack: bool,
    /// The receiving socket's RTOmin, for the gap.
    pub rto_min: Time,
    /// The jiffy, when timers run on ticks (`timer_ticks`); None: exact times.
    pub tick: Option<Time>,
    /// `rcv_rtt_from_window`: Linux 6.16's receiver RTT (zero-ms timestamp samples
    /// dropped, the window-based sample in).
    pub rtt_from_window: bool,
}

/// One connection's receive-window state (struct tcp_sock's, struct inet_connection_sock's).
#[derive(Clone, Debug)]
pub struct LinuxRcv {
    cfg: LinuxRcvConfig,
    pub rcv_ssthresh: u64,
    pub window_clamp: u64,
    /// `sk_rcvbuf`.
    pub rcvbuf: u64,
    /// `rcvq_space`: bytes copied in the last measured RTT, and where that RTT began.
    pub space: u64,
    space_seq: u64,
    space_time: Time,
    /// `rcv_rtt_est.rtt_us`, in 1/8 microseconds (0: no sample yet).
    rtt_us8: u64,
    last_tsecr: Option<Time>,
    /// `rcv_rtt_est.seq` and `.time`: the window-based sample's target and start.
    win_rtt: Option<(u64, Time)>,
    /// `icsk_ack.quick`: ACKs to send at once.
    pub quick: u32,
    /// `icsk_ack.pingpong`.
    pub pingpong: u8,
    /// `icsk_ack.lrcvtime`: when in-order data last arrived (none yet: `ato` is 0).
    lrcvtime: Option<Time>,
    /// DRS steps taken (the kernel's `tcp:tcp_rcvbuf_grow` tracepoint fires at each).
    pub grow_steps: u32,
}

/// `tcp_win_from_space`.
fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> 8
}

/// `tcp_space_from_win`.
fn space_from_win(win: u64, ratio: u64) -> u64 {
    (win << 8) / ratio
}

impl LinuxRcv {
    pub fn new(cfg: LinuxRcvConfig) -> LinuxRcv {
        let mss = cfg.advmss;
        // tcp_select_initial_window: the window of the default buffer at the default
        // ratio, rounded down to whole segments; tcp_init_buffer_space's clamp keeps one
        // segment in reserve (tcp_app_win)
        let full = win_from_space(TCP_RMEM_DEFAULT, TCP_DEFAULT_SCALING_RATIO);
        let rcv_wnd = full / mss * mss;
        let mut window_clamp = (2 * mss).max(full - mss);
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        let space = rcv_ssthresh.min(TCP_INIT_CWND * mss); // rcv_ssthresh <= rcv_wnd already
        if cfg.scaling_ratio != TCP_DEFAULT_SCALING_RATIO {
            // tcp_measure_rcv_mss measured the first full segment's ratio and set the
            // clamp to the buffer's window at it (tcp_set_window_clamp)
            window_clamp = win_from_space(TCP_RMEM_DEFAULT, cfg.scaling_ratio);
        }
        LinuxRcv {
            cfg,
            rcv_ssthresh: rcv_ssthresh.min(window_clamp),
            window_clamp,
            rcvbuf: TCP_RMEM_DEFAULT,
            space,
            space_seq: 1,
            space_time: Time::ZERO,
            rtt_us8: 0,
            last_tsecr: None,
            win_rtt: None,
            quick: 0,
            pingpong: 0,
            lrcvtime: None,
            grow_steps: 0,
        }
    }

    /// The window to advertise, the owner's being `window`.
    #[inline]
    pub fn advertised(&self, window: u64) -> u64 {
        if self.cfg.grow_window {
            window.min(self.rcv_ssthresh)
        } else {
            window
        }
    }

    /// `tcp_in_quickack_mode`.
    #[inline]
    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0 && !self.in_pingpong_mode()
    }

    /// `inet_csk_in_pingpong_mode`.
    #[inline]
    pub fn in_pingpong_mode(&self) -> bool {
        self.cfg.pingpong && self.pingpong >= PINGPONG_THRESH
    }

    /// `tcp_event_data_recv` for an in-order segment of `len` bytes, with `ooo` bytes held
    /// out of order (charged to the buffer, so not free space), `rcv_wnd` the window last
    /// advertised.
    pub fn on_in_order(&mut self, now: Time, len: u32, ooo: u64, rcv_wnd: u64) {
        if self.cfg.quickack && self.lrcvtime.is_none_or(|t| self.longer_than_rto(t, now)) {
            self.incr_quickack(rcv_wnd); // the first data, or a gap longer than the RTO
        }
        self.lrcvtime = Some(now);
        if !self.cfg.grow_window || len < GROW_MIN_LEN {
            return;
        }
        // tcp_grow_window: room below min(window_clamp, tcp_space)
        let space = win_from_space(self.rcvbuf, self.cfg.scaling_ratio).saturating_sub(ooo);
        let room = self.window_clamp.min(space).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return;
        }
        let incr = (2 * self.cfg.advmss).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        self.quick |= 1;
    }

    /// `tcp_event_data_recv`'s `m > icsk_rto`: more than the receiving socket's RTO from
    /// `last` to `now`, in whole jiffies when timers tick.
    fn longer_than_rto(&self, last: Time, now: Time) -> bool {
        match self.cfg.tick {
            Some(tick) => {
                let rto_ticks = self.cfg.rto_min.0 / tick.0 + 1; // usecs_to_jiffies(RTOmin + SRTT)
                now.0 / tick.0 - last.0 / tick.0 > rto_ticks
            }
            None => now - last > self.cfg.rto_min,
        }
    }

    /// `tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)` with `rcv_wnd` the window last advertised.
    fn incr_quickack(&mut self, rcv_wnd: u64) {
        let quickacks = match (rcv_wnd / (2 * self.cfg.advmss)) as u32 {
            0 => 2,
            n => n.min(TCP_MAX_QUICKACKS),
        };
        self.quick = self.quick.max(quickacks);
    }

    /// `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`: `tcp_data_queue` received a segment
    /// it already holds (a retransmission): quick ACKs, and out of ping-pong mode.
    pub fn on_duplicate(&mut self, rcv_wnd: u64) {
        if self.cfg.quickack {
            self.incr_quickack(rcv_wnd);
            self.pingpong = 0;
        }
    }

    /// `tcp_rcv_rtt_measure_ts`: a segment of `len` bytes echoing `tsecr`, at `now`.
    pub fn rtt_measure_ts(&mut self, now: Time, tsecr: Time, len: u32) {
        let ms = |t: Time| t.0 / Time::from_ms(1).0;
        // The TSval is the sender's 1 ms clock (TCP_TS_HZ): every ACK sent within one tick
        // carries the same one, so only the first segment echoing a new tick is a sample
        // (`rcv_rtt_last_tsecr`). Off, the echo is the ACK's exact time.
        let tsecr = if self.cfg.rtt_from_window { Time::from_ms(ms(tsecr)) } else { tsecr };
        if !self.cfg.autotune || self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if (len as u64) < self.cfg.advmss {
            return;
        }
        // tcp_rtt_tsopt_us: ticks of the millisecond timestamp clock; a 0 ms delta counted as
        // 1 ms until Linux 6.16, and is no sample since (min_delta 0, then `delta > 0`)
        let delta_ms = ms(now) - ms(tsecr);
        if delta_ms == 0 && self.cfg.rtt_from_window {
            return;
        }
        // A timeout's retransmission echoes an ACK from before the timeout: its sample lifts
        // the estimate by tens of ms until the next smaller one, and the DRS interval with it
        self.rcv_rtt_update(delta_ms.max(1) * 1000, false);
    }

    /// `tcp_rcv_rtt_measure`, for an in-order segment that took `rcv_nxt` to where it is,
    /// `rcv_wnd` the window last advertised: a sample when `rcv_nxt` reached the target set
    /// one window ahead at the last sample, then a new target. `rcv_rtt_from_window` only.
    pub fn rtt_measure_window(&mut self, now: Time, rcv_nxt: u64, rcv_wnd: u64) {
        if !self.cfg.autotune || !self.cfg.rtt_from_window {
            return;
        }
        if let Some((seq, start)) = self.win_rtt {
            if rcv_nxt < seq {
                return;
            }
            let delta_us = ((now - start).0 / Time::from_us(1).0).max(1);
            self.rcv_rtt_update(delta_us, true);
        }
        self.win_rtt = Some((rcv_nxt + rcv_wnd, now));
    }

    /// `tcp_rcv_rtt_update` (since Linux 6.16, "latch the incoming value if it is lower"): a
    /// smaller sample replaces the estimate, a larger timestamp sample moves it by 1/8, a
    /// larger window-based (`win_dep`) one is ignored.
    fn rcv_rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        if self.rtt_us8 == 0 || m < self.rtt_us8 {
            self.rtt_us8 = m;
        } else if !win_dep {
            self.rtt_us8 = self.rtt_us8 - (self.rtt_us8 >> 3) + sample_us;
        }
    }

    /// The receiver RTT estimate, microseconds (0: none yet).
    pub fn rcv_rtt_us(&self) -> u64 {
        self.rtt_us8 >> 3
    }

    /// `tcp_rcv_space_adjust` after the application read up to `rcv_nxt` at `now`;
    /// `ooo_end`: the end of the highest out-of-order data.
    pub fn rcv_space_adjust(&mut self, now: Time, rcv_nxt: u64, ooo_end: Option<u64>) {
        if !self.cfg.autotune || self.rtt_us8 == 0 {
            return;
        }
        let time_us = (now - self.space_time).0 / Time::from_us(1).0;
        if time_us < self.rtt_us8 >> 3 {
            return;
        }
        let copied = rcv_nxt - self.space_seq;
        if copied > self.space {
            self.rcvbuf_grow(copied, rcv_nxt, ooo_end);
        }
        self.space_seq = rcv_nxt;
        self.space_time = now;
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (tcp_moderate_rcvbuf = 1).
    fn rcvbuf_grow(&mut self, newval: u64, rcv_nxt: u64, ooo_end: Option<u64>) {
        let old = self.space;
        self.space = newval;
        self.grow_steps += 1;
        // DRS is always one RTT late; slow start: allow the sender to double its rate
        let mut rcvwin = newval << 1;
        let grow = rcvwin * (newval - old) / old;
        rcvwin += grow << 1;
        if let Some(end) = ooo_end {
            rcvwin += end - rcv_nxt;
        }
        let rcvbuf = space_from_win(rcvwin, self.cfg.scaling_ratio).min(TCP_RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(rcvbuf, self.cfg.scaling_ratio);
        }
    }

    /// `tcp_event_data_sent`: the receiving end sent data (a request) at `now`.
    pub fn on_data_sent(&mut self, now: Time) {
        if let Some(t) = self.lrcvtime {
            if now - t < self.cfg.ato {
                self.pingpong = self.pingpong.saturating_add(1);
            }
        }
    }

    /// `tcp_event_ack_sent`'s `tcp_dec_quickack_mode`.
    pub fn on_ack_sent(&mut self) {
        self.quick = self.quick.saturating_sub(1);
    }

    /// `tcp_delack_timer_handler`: a delayed ACK was missed; ping-pong mode ends.
    pub fn on_delack_timeout(&mut self) {
        if self.in_pingpong_mode() {
            self.pingpong = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ratio: u64) -> LinuxRcvConfig {
        LinuxRcvConfig {
            grow_window: true,
            autotune: true,
            pingpong: true,
            advmss: 1448,
            scaling_ratio: ratio,
            ato: Time::from_ms(40),
            quickack: false,
            rto_min: Time::from_ms(200),
            tick: Some(Time::from_ms(4)),
            rtt_from_window: false,
        }
    }

    #[test]
    fn initial_values_are_the_kernels() {
        // default ratio: tcp_select_initial_window's 65536 rounded down to 45 segments =
        // 65160; tcp_init_buffer_space's clamp 65536 - 1448 = 64088; rcvq_space 10 x 1448
        let lx = LinuxRcv::new(cfg(128));
        assert_eq!((lx.window_clamp, lx.rcv_ssthresh, lx.space, lx.rcvbuf), (64_088, 64_088, 14_480, 131_072));
        // the testbed's veth ratio 162 (its tcp:tcp_rcvbuf_grow trace): the clamp becomes
        // 131072 x 162 / 256 = 82944, the traced window_clamp; rcv_ssthresh starts below
        let lx = LinuxRcv::new(cfg(162));
        assert_eq!((lx.window_clamp, lx.rcv_ssthresh), (82_944, 64_088));
    }

    #[test]
    fn a_segment_grows_rcv_ssthresh_by_two_segments_up_to_the_clamp() {
        let mut lx = LinuxRcv::new(cfg(162));
        lx.on_in_order(Time::ZERO, 1448, 0, 64_088);
        assert_eq!((lx.rcv_ssthresh, lx.quick), (64_088 + 2896, 1));
        lx.on_ack_sent();
        assert_eq!(lx.quick, 0);
        // (82944 - 64088) / 2896 = 6.5: six whole steps, then the last 1480 bytes, then none
        for _ in 0..6 {
            lx.on_in_order(Time::ZERO, 1448, 0, 64_088);
        }
        assert_eq!(lx.rcv_ssthresh, 82_944);
        lx.quick = 0;
        lx.on_in_order(Time::ZERO, 1448, 0, 64_088);
        assert_eq!((lx.rcv_ssthresh, lx.quick), (82_944, 0), "room 0: no growth, no quick ACK");
        // a segment under 128 bytes never grows it
        let mut lx = LinuxRcv::new(cfg(162));
        lx.on_in_order(Time::ZERO, 100, 0, 64_088);
        assert_eq!((lx.rcv_ssthresh, lx.quick), (64_088, 0));
    }

    #[test]
    fn drs_follows_tcp_rcvbuf_grow_on_the_traced_step() {
        // a step of the testbed's tcp:tcp_rcvbuf_grow trace (docs/testbed.md): space 14480,
        // copied 68056 in one receiver RTT: rcvwin = 2 x 68056 = 136112, grow = 136112 x
        // 53576 / 14480 = 503614, rcvwin + 2 grow = 1143340; rcvbuf = 1143340 x 256 / 162 =
        // 1806759, clamp = 1806759 x 162 / 256 = 1143339: the trace's next rcvbuf and
        // window_clamp, to the byte
        let mut lx = LinuxRcv::new(cfg(162));
        lx.rtt_measure_ts(Time::from_ms(5), Time::from_ms(2), 1448);
        assert_eq!(lx.rcv_rtt_us(), 3000);
        lx.rcv_space_adjust(Time::from_ms(10), 1 + 68_056, None);
        assert_eq!((lx.space, lx.rcvbuf, lx.window_clamp, lx.grow_steps), (68_056, 1_806_759, 1_143_339, 1));
        // less than one receiver RTT (3 ms) later: no measurement
        lx.rcv_space_adjust(Time::from_ms(12), 1 + 100_000, None);
        assert_eq!(lx.grow_steps, 1);
        // copied no more than space: a new measurement starts, the clamp stays
        lx.rcv_space_adjust(Time::from_ms(14), 1 + 2 * 68_056, None);
        assert_eq!((lx.grow_steps, lx.window_clamp), (1, 1_143_339));
    }

    #[test]
    fn drs_doubles_what_one_rtt_carried_more_as_copied_grows_and_caps_at_tcp_rmem_max() {
        // copied == space + 1: rcvwin = 2 copied + 2 (2 copied x 1 / space): about twice what
        // one RTT carried
        let mut lx = LinuxRcv::new(cfg(128));
        lx.rtt_measure_ts(Time::from_ms(1), Time::ZERO, 1448);
        lx.rcv_space_adjust(Time::from_ms(2), 1 + 14_481, None);
        assert_eq!((lx.rcvbuf, lx.window_clamp), (131_072, 64_088), "2 x 14481 is below the 131072 buffer's window");
        let mut lx = LinuxRcv::new(cfg(128));
        lx.space = 100_000;
        lx.rtt_measure_ts(Time::from_ms(1), Time::ZERO, 1448);
        lx.rcv_space_adjust(Time::from_ms(2), 1 + 100_001, None);
        assert_eq!(lx.window_clamp, 200_002 + 2 * 2, "2 x copied + 2 x (200002 x 1 / 100000)");
        // copied == 2 space: rcvwin = 2 copied + 2 (2 copied x space / space) = 6 copied
        let mut lx = LinuxRcv::new(cfg(128));
        lx.space = 100_000;
        lx.rtt_measure_ts(Time::from_ms(1), Time::ZERO, 1448);
        lx.rcv_space_adjust(Time::from_ms(2), 1 + 200_000, None);
        assert_eq!(lx.window_clamp, 1_200_000);
        let mut lx = LinuxRcv::new(cfg(128));
        lx.space = 10_000_000;
        lx.rtt_measure_ts(Time::from_ms(1), Time::ZERO, 1448);
        lx.rcv_space_adjust(Time::from_ms(2), 1 + 20_000_000, None);
        assert_eq!((lx.rcvbuf, lx.window_clamp), (TCP_RMEM_MAX, TCP_RMEM_MAX / 2));
    }

    #[test]
    fn the_receiver_rtt_takes_a_smaller_sample_and_moves_an_eighth_towards_a_larger() {
        let mut lx = LinuxRcv::new(cfg(128));
        lx.rtt_measure_ts(Time::from_us(1500), Time::from_us(900), 1448);
        assert_eq!(lx.rcv_rtt_us(), 1000, "600 us apart across a millisecond tick: one tick of the ms clock");
        lx.rtt_measure_ts(Time::from_ms(300), Time::from_ms(100), 1448);
        assert_eq!(lx.rcv_rtt_us(), (8000 - 1000 + 200_000) / 8, "a timeout's 200 ms sample: 25875 us");
        lx.rtt_measure_ts(Time::from_ms(400), Time::from_ms(100), 1448);
        assert_eq!(lx.rcv_rtt_us(), 25_875, "the same TSecr: no sample");
        lx.rtt_measure_ts(Time::from_ms(401), Time::from_ms(400), 1448);
        assert_eq!(lx.rcv_rtt_us(), 1000, "a smaller sample is latched at once");
        lx.rtt_measure_ts(Time::from_ms(420), Time::from_ms(401), 500);
        assert_eq!(lx.rcv_rtt_us(), 1000, "a segment shorter than the MSS: no sample");
    }

    #[test]
    fn since_6_16_a_zero_ms_timestamp_sample_is_none_and_one_per_new_tick_echoed() {
        let on = LinuxRcvConfig { rtt_from_window: true, ..cfg(162) };
        let mut lx = LinuxRcv::new(on);
        lx.rtt_measure_ts(Time::from_us(1300), Time::from_us(1100), 1448);
        assert_eq!(lx.rcv_rtt_us(), 0, "the same ms tick: no sample (tcp_rtt_tsopt_us(tp, 0), delta > 0)");
        lx.rtt_measure_ts(Time::from_us(2100), Time::from_us(1900), 1448);
        assert_eq!(lx.rcv_rtt_us(), 0, "an ACK of tick 1 again: its TSval already sampled (rcv_rtt_last_tsecr)");
        lx.rtt_measure_ts(Time::from_us(3100), Time::from_us(2900), 1448);
        assert_eq!(lx.rcv_rtt_us(), 1000, "a new tick echoed, one tick later: 1 ms");
        // off (Linux <= 6.15): the exact echo, and the same-tick delta counts as 1 ms
        let mut old = LinuxRcv::new(cfg(162));
        old.rtt_measure_ts(Time::from_us(1300), Time::from_us(1100), 1448);
        assert_eq!(old.rcv_rtt_us(), 1000);
    }

    #[test]
    fn the_window_based_sample_is_the_time_one_advertised_window_took_and_only_lowers() {
        // tcp_rcv_rtt_measure: the first in-order segment starts a measurement one window
        // (64 KiB here) ahead; the segment that reaches it gives the sample (the testbed's
        // first tcp_rcvbuf_grow at 4 servers read rtt_us=5615 this way)
        let on = LinuxRcvConfig { rtt_from_window: true, ..cfg(162) };
        let mut lx = LinuxRcv::new(on);
        lx.rtt_measure_window(Time::from_ms(10), 1 + 1448, 65_536);
        assert_eq!(lx.rcv_rtt_us(), 0);
        lx.rtt_measure_window(Time::from_us(15_000), 1 + 60 * 1024, 65_536);
        assert_eq!(lx.rcv_rtt_us(), 0, "not yet one window further");
        lx.rtt_measure_window(Time::from_us(15_615), 1 + 1448 + 65_536, 65_536);
        assert_eq!(lx.rcv_rtt_us(), 5615, "the first estimate: 5615 us");
        lx.rtt_measure_window(Time::from_ms(30), 1 + 1448 + 2 * 65_536, 65_536);
        assert_eq!(lx.rcv_rtt_us(), 5615, "a larger window-based sample is ignored (win_dep)");
        lx.rtt_measure_window(Time::from_us(32_000), 1 + 1448 + 3 * 65_536, 65_536);
        assert_eq!(lx.rcv_rtt_us(), 2000, "a smaller one is latched");
        // then DRS measures over that interval: 47 segments in 6.5 ms raise the buffer (the
        // trace's copied=68056 step) where a 1 ms estimate would have seen about 8 at a time
        let mut lx = LinuxRcv::new(on);
        lx.rtt_measure_window(Time::ZERO, 1, 65_536);
        lx.rtt_measure_window(Time::from_us(5615), 1 + 65_536, 65_536);
        lx.rcv_space_adjust(Time::from_us(6562), 1 + 68_056, None);
        assert_eq!((lx.space, lx.grow_steps), (68_056, 1));
        // off: no window-based sample at all
        let mut old = LinuxRcv::new(cfg(162));
        old.rtt_measure_window(Time::ZERO, 1, 65_536);
        old.rtt_measure_window(Time::from_us(5615), 1 + 65_536, 65_536);
        assert_eq!(old.rcv_rtt_us(), 0);
    }

    #[test]
    fn pingpong_mode_is_entered_by_a_request_within_ato_and_left_by_a_delayed_ack_timeout() {
        let mut lx = LinuxRcv::new(cfg(162));
        lx.on_data_sent(Time::ZERO);
        assert!(!lx.in_pingpong_mode(), "no data received yet: ato is 0");
        lx.on_in_order(Time::from_ms(10), 1448, 0, 64_088);
        lx.on_data_sent(Time::from_ms(50));
        assert!(!lx.in_pingpong_mode(), "40 ms after the data: not within ato");
        lx.on_data_sent(Time::from_ms(49));
        assert!(lx.in_pingpong_mode());
        assert!(lx.quick > 0 && !lx.in_quickack_mode(), "the growth's quick ACK is held");
        lx.on_delack_timeout();
        assert!(!lx.in_pingpong_mode() && lx.in_quickack_mode());
    }

    fn quick_cfg() -> LinuxRcvConfig {
        LinuxRcvConfig { grow_window: false, autotune: false, pingpong: true, quickack: true, ..cfg(162) }
    }

    #[test]
    fn the_first_data_gives_min_rcv_wnd_over_two_mss_and_16_quick_acks_tcp_incr_quickack() {
        // 64088 / 2896 = 22, capped at TCP_MAX_QUICKACKS = 16; a window under 2 MSS gives 2
        for (wnd, quick) in [(64_088, 16), (20_000, 6), (2000, 2)] {
            let mut lx = LinuxRcv::new(quick_cfg());
            lx.on_in_order(Time::from_ms(1), 1448, 0, wnd);
            assert_eq!(lx.quick, quick, "rcv_wnd {wnd}");
            assert!(lx.in_quickack_mode());
        }
        let mut off = LinuxRcv::new(LinuxRcvConfig { quickack: false, ..quick_cfg() });
        off.on_in_order(Time::from_ms(1), 1448, 0, 64_088);
        assert_eq!(off.quick, 0, "quickack_mode off: RFC 1122's delayed ACK");
    }

    #[test]
    fn data_more_than_the_rto_after_the_last_in_whole_jiffies_gives_quick_acks() {
        // RTOmin 200 ms, HZ 250: icsk_rto = usecs_to_jiffies(200 ms + SRTT) = 51 jiffies;
        // tcp_event_data_recv wants m > 51 jiffies. Last data at 1 ms (jiffy 0): jiffy 51
        // (204-207.99 ms) is not more, jiffy 52 (from 208 ms) is
        for (at_us, quick) in [(207_999, 0), (208_000, 16)] {
            let mut lx = LinuxRcv::new(quick_cfg());
            lx.on_in_order(Time::from_ms(1), 1448, 0, 64_088);
            lx.quick = 0;
            lx.on_in_order(Time::from_us(at_us), 1448, 0, 64_088);
            assert_eq!(lx.quick, quick, "at {at_us} us");
        }
        // exact times (no ticks): more than RTOmin
        let exact = LinuxRcvConfig { tick: None, ..quick_cfg() };
        for (at_us, quick) in [(201_000, 0), (201_001, 16)] {
            let mut lx = LinuxRcv::new(exact);
            lx.on_in_order(Time::from_ms(1), 1448, 0, 64_088);
            lx.quick = 0;
            lx.on_in_order(Time::from_us(at_us), 1448, 0, 64_088);
            assert_eq!(lx.quick, quick, "exact, at {at_us} us");
        }
    }

    #[test]
    fn ping_pong_mode_holds_the_gaps_quick_acks_and_a_segment_already_held_leaves_it() {
        // tcp_in_quickack_mode is false in ping-pong mode; tcp_enter_quickack_mode (old
        // data) leaves the mode, so the quick ACKs go
        let mut lx = LinuxRcv::new(quick_cfg());
        lx.on_in_order(Time::from_ms(1), 1448, 0, 64_088);
        lx.on_data_sent(Time::from_ms(2)); // a request within ato: ping-pong
        lx.quick = 0;
        lx.on_in_order(Time::from_ms(300), 1448, 0, 64_088);
        assert!(lx.quick == 16 && lx.in_pingpong_mode() && !lx.in_quickack_mode());
        lx.on_duplicate(64_088);
        assert!(!lx.in_pingpong_mode() && lx.in_quickack_mode());
        let mut off = LinuxRcv::new(LinuxRcvConfig { quickack: false, ..quick_cfg() });
        off.on_in_order(Time::from_ms(1), 1448, 0, 64_088);
        off.on_data_sent(Time::from_ms(2));
        off.on_duplicate(64_088);
        assert!(off.in_pingpong_mode() && off.quick == 0, "quickack_mode off: a duplicate changes nothing here");
    }
}
