//! The data sender: the sequence space of a byte stream that the application extends block
//! by block, the retransmission timer (RFC 6298) and its timeouts, RTT samples, and the
//! windows. It classifies each ACK and hands it to its loss recovery (`tcp::recovery`),
//! which asks the congestion controller (`tcp::congestion`) for ssthresh; the controller
//! grows cwnd with the ACKs of new data.
//!
//! Sequence numbers count bytes and the first data byte is 1 (the SYN used 0).
//! `recover` is kept as an exclusive bound (one past the highest byte sent when
//! recovery began); RFC 6582 initialises it to ISS, which is 1 in that form. The sender never touches the
//! network: it appends the segments to transmit to an output vector and reports the
//! time its retransmission timer must fire (see [`TcpSender::take_timer_request`]).

use crate::scenario::{RtoBackoff, TcpRules, TcpVariant};
use crate::tcp::congestion::hystart::Sample;
use crate::tcp::congestion::{AckClock, Cc, Congestion};
use crate::tcp::recovery::rack::Rack;
use crate::tcp::recovery::Recovery;
use crate::tcp::rto::RtoEstimator;
use crate::tcp::rtt_history::RttHistory;
use crate::tcp::timer::{wheel_expiry, Fired, LazyTimer};
use crate::time::Time;

/// Per-connection sender parameters.
/// Linux's TCP_TIMEOUT_MIN_US (include/net/tcp.h): 2 ms added to the tail-loss probe's
/// timeout (`tcp_schedule_loss_probe`, more than one segment out) and to RACK's reordering
/// timer (`tcp_rack_mark_lost`) before they are rounded to jiffies.
pub const RACK_TIMER_FLOOR: Time = Time(2_000_000_000);

#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub variant: TcpVariant,
    pub mss: u64,
    /// Initial window in bytes (RFC 5681 §3.1 IW).
    pub init_cwnd: u64,
    /// Receiver's advertised window in bytes until the first ACK says otherwise.
    pub rwnd: u64,
    pub dupack_threshold: u32,
    /// RFC 3042: send a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Off: the window only grows additively (FAST'08 §5.1.2, "no slow start").
    pub slow_start: bool,
    /// RFC 5681 §4.1: after an idle period longer than the RTO, restart from the IW.
    pub slow_start_after_idle: bool,
    pub rto_min: Time,
    pub rto_max: Time,
    pub granularity: Time,
    /// RFC 7323 timestamps: every ACK of new data gives an RTT sample from its echo, also
    /// for retransmitted data, and a valid sample clears the timer backoff (RFC 6298
    /// §5.7; Linux's tcp_ack_update_rtt). Off: one timed segment per RTT and Karn's rule.
    pub timestamps: bool,
    /// Timers fire on the next multiple of `granularity`, as jiffies timers do (WREN'09
    /// `002_08b014e448da6385.txt`: low-resolution timers); off = exact deadlines.
    pub timer_ticks: bool,
    /// RTO x (1 + U(0, x)) each time the timer is armed (`001_e0dada207805edc8.txt`:
    /// "RTO = est. RTO * (1 + RAND(0.5))"); 0 = off.
    pub rto_random: f64,
    /// When the RTO's backoff ends: at an RTT sample (RFC 6298, ns-2) or at every ACK of
    /// new data (ns-3).
    pub rto_backoff: RtoBackoff,
    /// Whose rules TCP follows where implementations differ: the RFCs, ns-2's
    /// (`tcp::ns2_rules`) or ns-3's (`tcp::recovery::ns3`).
    pub rules: TcpRules,
    /// Congestion control (`tcp::congestion`).
    pub cc: Cc,
    /// RFC 6937 PRR in SACK recovery (`tcp::recovery::prr`).
    pub prr: bool,
    /// RFC 8985 RACK-TLP with SACK (`tcp::recovery::rack`).
    pub rack_tlp: bool,
    /// Linux's HyStart in CUBIC's slow start (`tcp::congestion::hystart`); other ccs ignore it.
    pub hystart: bool,
    /// Linux's condition on PRR-SSRB's extra segment (`tcp::recovery::prr`).
    pub prr_extra_if_advanced: bool,
    /// Linux's and RFC 9937's fast retransmit within sndcnt (`tcp::recovery::sack`).
    pub prr_counts_fast_retransmit: bool,
    /// Linux's growth on the ACK that ends recovery (`tcp::recovery::sack`).
    pub grow_on_recovery_exit: bool,
    /// Linux's TCP_TIMEOUT_MIN_US on the probe and reordering timers ([`RACK_TIMER_FLOOR`]).
    pub rack_timer_floor: bool,
    /// Linux's way out of the Loss state: a loss RACK finds after a timeout enters fast
    /// recovery (`tcp::recovery::sack`).
    pub recovery_from_loss: bool,
    /// Linux's Loss state: after a timeout, resend what is marked lost from the retransmit
    /// queue, SACKed segments kept, instead of going back N (`tcp::recovery::sack`).
    pub loss_retransmit_queue: bool,
    /// F-RTO (RFC 5682 §3, Linux's `tcp_frto` = 2): the first ACK after a timeout sends
    /// new data (`tcp::recovery::sack`); with `loss_retransmit_queue` only.
    pub frto: bool,
    /// Linux's `tcp_rearm_rto` with the probe or reordering timer pending: the RTO counts
    /// from the first unacknowledged segment's last transmission (`tcp_rto_delta_us`), and
    /// with a probe outstanding an ACK of new data re-arms the probe timer
    /// (`tcp_set_xmit_timer` -> `tcp_schedule_loss_probe`), whose expiry sends nothing
    /// (`tcp_send_loss_probe`: one probe at a time, `tlp_high_seq`) and only re-arms the
    /// RTO that way. Off: RFC 6298 §5.3, the RTO restarts at every ACK of new data.
    pub rearm_rto_from_head: bool,
    /// Linux's RTO estimator (`tcp_rtt_estimator`, `__tcp_set_rto`: srtt + rttvar, rttvar
    /// at least RTOmin, whole jiffies; `tcp::rto`). Off: RFC 6298's.
    pub rto_min_on_rttvar: bool,
    /// The retransmission, probe and reordering timers are Linux `timer_list`s on jiffies of
    /// `granularity` (`tcp::timer::wheel_expiry`). Off: `timer_ticks`' next tick, or exact.
    pub timer_wheel: bool,
    /// Linux's `tcp_reno_ssthresh`: a loss leaves ssthresh at half of cwnd, not of
    /// FlightSize (`tcp::congestion::newreno`); reno and DCTCP's loss response only.
    pub ssthresh_from_cwnd: bool,
    /// Linux's `tcp_slow_start` / `tcp_cong_avoid_ai`: cwnd grows per segment acknowledged,
    /// not per ACK (`tcp::congestion::newreno`); reno and DCTCP only.
    pub count_acked_segments: bool,
    /// Linux's `tcp_is_cwnd_limited` gate on reno's growth (`tcp::congestion::newreno`).
    pub cwnd_limited_growth: bool,
    /// Linux's TSO deferral (`tcp_tso_should_defer`) on an ACK outside recovery: a small
    /// send allowance waits for the next ACK ([`Sender::tso_defers`]); rack_tlp only.
    pub tso_deferral: bool,
    /// Linux's `tcp_cwnd_test`: one GSO skb carries at most half of cwnd, and `tcp_write_xmit`
    /// tests each further skb for TSO deferral, so a remainder under a third of cwnd waits for
    /// the next ACK ([`Sender::send_new_data_on_ack`]); with `tso_deferral` only.
    pub gso_half_cwnd: bool,
    /// Linux's order of RACK's RTT updates: an ACK's SACKed segments first, then those it
    /// acknowledges cumulatively ([`crate::tcp::recovery::rack::Rack::on_ack`]); rack_tlp only.
    pub rack_rtt_sack_first: bool,
    /// Linux's `tcp_packets_in_flight` outside recovery: SACKed segments are not in flight,
    /// so every ACK that SACKs lets as much new data go ([`Sender::out_of_flight`]), in
    /// place of RFC 3042's limited transmit; rack_tlp only.
    pub sacked_leave_flight: bool,
    /// Linux's `tcp_cwnd_validate`: whether the window was cwnd-limited, and its largest
    /// flight, are kept until that window is acknowledged, so every ACK of a window that once
    /// filled cwnd may grow it ([`CwndUsage`]); off: judged from the flight before each ACK.
    pub cwnd_limited_latch: bool,
    /// CUBIC as Linux's tcp_cubic.c computes it (`tcp::congestion::cubic_linux`): whole
    /// packets, t in jiffies, ssthresh from cwnd; off: RFC 9438. cc = cubic only.
    pub cubic_linux: bool,
}

/// Linux's memory of how a window was used (`tcp_cwnd_validate`, net/ipv4/tcp_output.c;
/// `tcp_is_cwnd_limited`, include/net/tcp.h): `tcp_write_xmit` records, after each call that
/// sent or was held by cwnd, whether cwnd limited it and the segments then out; a later call
/// overwrites the record only once SND.UNA has passed the SND.NXT it was taken at, or when
/// cwnd limits it, or (not yet limited) with a larger flight. So the ACKs after a window's
/// last send still see it as cwnd-limited, as the tail of every block of a response does.
#[derive(Clone, Copy, Debug, Default)]
struct CwndUsage {
    /// `is_cwnd_limited`
    limited: bool,
    /// `max_packets_out`, in bytes
    max_out: u64,
    /// `cwnd_usage_seq`: the SND.NXT the record was taken at
    usage_seq: u64,
}

/// A segment to put on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    /// Some byte of it was sent before.
    pub retransmit: bool,
    /// The retransmission a timeout triggered (used to spot spurious timeouts).
    pub after_timeout: bool,
}

/// Why a retransmission timeout happened: FAST'08 §5.1 (Table 3) categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutKind {
    /// No duplicate ACK came back for the window (DART = 0).
    FullWindow,
    /// The lost segment was the last one written: nothing behind it to produce dupACKs.
    LastPacket,
    /// The segment had already been retransmitted, and that retransmission was lost.
    LostRetransmit,
    /// Some feedback came back, but not enough for data-driven recovery.
    Other,
}

/// DART histogram bins: 0..DART_BINS-1; the last bin holds that many or more.
pub const DART_BINS: usize = 16;

/// Counters of one sender.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub timeouts: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub limited_transmits: u64,
    /// ACKs whose send allowance `tso_deferral` held for the next ACK.
    pub tso_deferrals: u64,
    pub segments: u64,
    pub payload_bytes: u64,
    /// Timeouts by [`TimeoutKind`], in declaration order.
    pub timeouts_by_kind: [u64; 4],
    /// Lost retransmits split as in FAST'08 Table 3: DART >= dupack threshold or not.
    pub lost_retransmits_dart_ge_threshold: u64,
    pub lost_retransmits_dart_lt_threshold: u64,
    /// Duplicate ACKs received at the time of each timeout (FAST'08 Fig. 11).
    pub dart_histogram: [u64; DART_BINS],
    /// Expiries of the retransmission timer with nothing outstanding (ns-2's rules only).
    pub idle_restarts: u64,
    /// Tail loss probes sent (RFC 8985 §7.3).
    pub tail_loss_probes: u64,
    /// Segments RACK marked lost (RFC 8985 §6.2 step 5), not counting an RTO's marks.
    pub rack_marked_lost: u64,
    /// RTT samples taken (the timer's: one timed segment per RTT, or every ACK of new data
    /// with timestamps, Swift's delay samples) and their sum, picoseconds: the results'
    /// steady-state mean RTT.
    pub rtt_samples: u64,
    pub rtt_sum_ps: u64,
}

/// What the one retransmission timer is armed for: Linux, too, runs the RTO, the loss
/// probe and RACK's reordering timer on one timer (RFC 8985 §7.2: the PTO takes the RTO's
/// place until the probe is sent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerMode {
    #[default]
    Rto,
    /// RFC 8985 §7.2 probe timeout.
    Probe,
    /// RFC 8985 §6.2 step 5 reordering timer.
    Reorder,
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
    /// The receiver's latest advertised window (RFC 9293 SND.WND).
    pub rwnd: u64,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// RFC 6582 `recover`, exclusive: `snd_max` when recovery (or a timeout) began. An
    /// ACK "covers recover" when it is at least this.
    pub recover: u64,
    pub rto: RtoEstimator,
    timer: LazyTimer,
    pub(crate) timer_mode: TimerMode,
    timer_request: Option<Time>,
    /// The one segment being timed for an RTT sample: (end sequence, send time).
    timed: Option<(u64, Time)>,
    /// Under ns-3's rules, every segment's send time instead (`tcp::rtt_history`).
    pub(crate) rtt_history: RttHistory,
    last_activity: Time,
    /// When a data segment was last put on the wire (Linux's `tcp_wstamp_ns` without pacing).
    last_send: Time,
    /// The flight before the ACK being processed filled cwnd (`AckClock::cwnd_limited`).
    cwnd_limited: bool,
    /// `tso_deferral` held the last ACK's allowance with more data than it to send: Linux's
    /// `tcp_tso_should_defer` sets `is_cwnd_limited` then, so the next ACK may grow cwnd
    /// although the flight is below it.
    held_cwnd_limited: bool,
    /// The flight before the ACK being processed (`AckClock::prior_flight`).
    prior_flight: u64,
    /// With `cwnd_limited_latch`, what `tcp_cwnd_validate` remembers of the window.
    usage: CwndUsage,
    /// The TSecr of the ACK being processed (timestamps on).
    pub(crate) echo: Option<Time>,
    /// The RTT sample the ACK being processed gave, if it gave one, unrounded (the RTO
    /// estimator's counts in `granularity` ticks; Linux's RTT samples are microseconds).
    rtt_sample: Option<Time>,
    /// Duplicate ACKs received since `snd_una` last advanced (the DART of FAST'08 §5.1).
    pub dart: u32,
    /// End of the highest byte ever retransmitted: below it, data was sent twice.
    pub(crate) retransmitted_end: u64,
    /// An F-RTO episode is on (RFC 5682 §3; Linux's `tp->frto`), from a timeout until its
    /// loss is found real or the Loss state ends.
    pub(crate) frto: bool,
    /// How losses are detected and repaired, with that algorithm's state.
    recovery: Recovery,
    /// RACK-TLP's per-segment log and state: only SACK senders with `rack_tlp` carry it.
    pub(crate) rack: Option<Box<Rack>>,
    /// How cwnd grows and what ssthresh a loss leaves.
    pub(crate) congestion: Congestion,
    /// The ACK being processed carries ECN-Echo.
    ece: bool,
    /// Draws for RTO randomization (seeded per flow, so runs are reproducible).
    rng: rand_pcg::Pcg32,
    pub stats: SenderStats,
}

impl TcpSender {
    pub fn new(cfg: SenderConfig) -> Self {
        Self::with_seed(cfg, 0)
    }

    /// A sender whose random draws (RTO randomization) come from `seed`.
    pub fn with_seed(cfg: SenderConfig, seed: u64) -> Self {
        use rand::SeedableRng;
        let mut rto = RtoEstimator::new(cfg.rto_min, cfg.rto_max, cfg.granularity);
        if cfg.rto_min_on_rttvar {
            rto.use_linux();
        }
        // RFC 5681 §3.1: initial ssthresh "arbitrarily high"; the receive window bounds it.
        let ssthresh = if cfg.slow_start { cfg.rwnd } else { cfg.init_cwnd };
        TcpSender {
            snd_una: 1,
            snd_nxt: 1,
            snd_max: 1,
            app_limit: 1,
            cwnd: cfg.init_cwnd,
            ssthresh,
            rwnd: cfg.rwnd,
            dupacks: 0,
            in_recovery: false,
            recover: 1,
            rto,
            timer: LazyTimer::default(),
            timer_mode: TimerMode::Rto,
            timer_request: None,
            timed: None,
            rtt_history: Default::default(),
            last_activity: Time::ZERO,
            last_send: Time::ZERO,
            cwnd_limited: false,
            held_cwnd_limited: false,
            prior_flight: 0,
            usage: CwndUsage::default(),
            echo: None,
            rtt_sample: None,
            dart: 0,
            retransmitted_end: 0,
            frto: false,
            recovery: Recovery::new(&cfg),
            rack: (cfg.rack_tlp && cfg.variant == TcpVariant::Sack)
                .then(|| Box::new(Rack::new(cfg.rack_rtt_sack_first))),
            congestion: Congestion::new(&cfg),
            ece: false,
            rng: rand_pcg::Pcg32::seed_from_u64(seed),
            stats: SenderStats::default(),
            cfg,
        }
    }

    /// Bytes sent and not yet acknowledged (RFC 5681 FlightSize).
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// The time an ACK's window growth may look at (CUBIC's curve).
    #[inline]
    pub(crate) fn ack_clock(&self, now: Time) -> AckClock {
        AckClock { now, srtt: self.rto.srtt, cwnd_limited: self.cwnd_limited, prior_flight: self.prior_flight }
    }

    /// Everything written has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.snd_una == self.app_limit
    }

    /// The congestion state as ns-3 names it: fast recovery; after a timeout until what
    /// was sent before it is acknowledged (`recover` is set then; leaving fast recovery
    /// leaves `snd_una` at or above it); duplicate ACKs below the threshold, or with RACK
    /// SACKed data outstanding (Linux's `tcp_try_keep_open`: `tcp_left_out`); or open.
    pub fn cong_state(&self) -> crate::trace::CongState {
        use crate::trace::CongState;
        if self.in_recovery {
            CongState::Recovery
        } else if self.snd_una < self.recover || self.recovery.after_timeout() {
            CongState::Loss
        } else if self.dupacks > 0 || self.rack.as_deref().is_some_and(|r| r.any_sacked()) {
            CongState::Disorder
        } else {
            CongState::Open
        }
    }

    /// When the retransmission timer fires, if it is running.
    #[cfg(test)]
    pub(crate) fn timer_deadline(&self) -> Option<Time> {
        self.timer.is_armed().then(|| self.timer.deadline())
    }

    /// A time at which the owner must deliver a timer event, if one is needed.
    pub fn take_timer_request(&mut self) -> Option<Time> {
        self.timer_request.take()
    }

    pub(crate) fn arm_timer(&mut self, now: Time) {
        let mut rto = self.rto.rto.0;
        if self.cfg.rto_random > 0.0 {
            use rand::Rng;
            let factor = 1.0 + self.rng.random::<f64>() * self.cfg.rto_random;
            rto = (rto as f64 * factor) as u64;
        }
        self.arm_rto_after(now, Time(rto));
    }

    /// The RTO `dur` after `now`.
    fn arm_rto_after(&mut self, now: Time, dur: Time) {
        self.timer_mode = TimerMode::Rto;
        self.arm_after(now, dur);
    }

    /// Arm the timer `dur` after `now`: on Linux's timer wheel with `timer_wheel`, else on
    /// the next tick with jiffies timers, else exactly.
    #[inline]
    fn arm_after(&mut self, now: Time, dur: Time) {
        let deadline = if self.cfg.timer_wheel {
            wheel_expiry(now, dur, self.cfg.granularity)
        } else if self.cfg.timer_ticks {
            Time((now.0 + dur.0).next_multiple_of(self.cfg.granularity.0))
        } else {
            Time(now.0 + dur.0)
        };
        if let Some(t) = self.timer.arm(deadline) {
            self.timer_request = Some(t);
        }
    }

    /// The reordering timer `wait` after `now`, if RACK left a segment that may yet be lost
    /// (RFC 8985 §6.2 step 5: look for losses again then, in place of the RTO).
    pub(crate) fn arm_reorder_wait(&mut self, now: Time, wait: Option<Time>) {
        if let Some(w) = wait {
            self.timer_mode = TimerMode::Reorder;
            self.arm_after(now, Time(w.0 + self.rack_timer_floor().0));
        }
    }

    /// Linux's `tcp_rearm_rto` with the probe or reordering timer pending
    /// (`rearm_rto_from_head`): the RTO from the first unacknowledged segment's last
    /// transmission (`tcp_rto_delta_us`), at least 1 us away (`max(delta_us, 1)`). Without
    /// the rule, or without RACK's log, the RTO from now (RFC 6298 §5.3).
    fn rearm_rto(&mut self, now: Time) {
        match self.rto_left_from_head(now) {
            Some(left) => self.arm_rto_after(now, left.max(Time(crate::time::PS_PER_US))),
            None => self.arm_timer(now),
        }
    }

    /// With `rearm_rto_from_head`: how long until the RTO expires counted from the first
    /// unacknowledged segment's last transmission (`tcp_rto_delta_us`; zero if past).
    fn rto_left_from_head(&self, now: Time) -> Option<Time> {
        if !self.cfg.rearm_rto_from_head {
            return None;
        }
        let head = self.rack.as_deref()?.first_xmit()?;
        Some(Time((head.0 + self.rto.rto.0).saturating_sub(now.0)))
    }

    /// What Linux adds to the probe and reordering timers: TCP_TIMEOUT_MIN_US with
    /// `rack_timer_floor`, nothing by RFC 8985.
    #[inline]
    fn rack_timer_floor(&self) -> Time {
        if self.cfg.rack_timer_floor { RACK_TIMER_FLOOR } else { Time::ZERO }
    }

    /// RFC 8985 §7.2: after new data went out or an ACK acknowledged new data, in the open
    /// state (no recovery, nothing SACKed, no probe outstanding), arm the probe timeout in
    /// the RTO's place: PTO = 2 SRTT (+ WCDelAckT for a lone segment), at most until the
    /// RTO would fire. `advanced`: an ACK acknowledged data and nothing new went out after.
    /// With `rearm_rto_from_head`, as Linux's `tcp_schedule_loss_probe`: a probe outstanding
    /// does not stop it, and the RTO it is capped by is a whole RTO after an ACK that
    /// advanced, else the RTO counted from the first unacknowledged segment's transmission
    /// (`tcp_rto_delta_us`; no cap once that has passed).
    fn schedule_probe(&mut self, now: Time, advanced: bool) {
        let Some(r) = self.rack.as_deref() else { return };
        let open = !self.in_recovery && self.snd_una >= self.recover && self.dupacks == 0;
        let probe_out = r.tlp_end.is_some() && !self.cfg.rearm_rto_from_head;
        if !open || self.snd_una >= self.snd_max || probe_out || r.any_sacked() {
            return;
        }
        if self.timer_mode == TimerMode::Reorder {
            return;
        }
        let pto = r.pto(self.rto.srtt, self.rack_timer_floor());
        let rto_left = match self.cfg.rearm_rto_from_head {
            true if advanced => Some(self.rto.rto),
            true => self.rto_left_from_head(now),
            false => None,
        };
        let rto_left = match rto_left {
            Some(left) if left > Time::ZERO => left,
            Some(_) => pto, // tcp_schedule_loss_probe: no cap from an RTO already past
            None => match (self.timer_mode, self.timer.is_armed()) {
                (TimerMode::Rto, true) => Time(self.timer.deadline().0.saturating_sub(now.0)),
                _ => self.rto.rto,
            },
        };
        self.timer_mode = TimerMode::Probe;
        self.arm_after(now, pto.min(rto_left));
    }

    /// RFC 6298 §5.2-5.3: after an ACK of new data, restart the timer, or stop it when
    /// nothing is outstanding. With `rearm_rto_from_head`, while the probe or reordering
    /// timer is pending, Linux's `tcp_set_xmit_timer` -> `tcp_rearm_rto` (`rearm_rto`).
    #[inline]
    pub(crate) fn restart_timer(&mut self, now: Time) {
        if self.snd_una >= self.snd_max && !self.timer_runs_when_idle() {
            self.timer.cancel();
        } else if self.cfg.rearm_rto_from_head && self.timer_mode != TimerMode::Rto && self.timer.is_armed() {
            self.rearm_rto(now);
        } else {
            self.arm_timer(now);
        }
    }

    /// The ACK about to be processed echoes timestamp `ts` (RFC 7323 TSecr).
    fn set_echo(&mut self, ts: Time) {
        self.echo = Some(ts);
    }

    /// The ACK about to be processed carries ECN-Echo (RFC 3168 §6.1.3).
    pub fn set_ece(&mut self, ece: bool) {
        self.ece = ece;
    }

    /// The peer advertised `wnd` bytes. Returns true if that changed the window.
    pub fn set_peer_window(&mut self, wnd: u64) -> bool {
        let changed = wnd != self.rwnd;
        self.rwnd = wnd;
        changed
    }

    /// A segment without data arrived: cumulative ACK `ack`, window `wnd`, timestamp echo
    /// `ts`, SACK blocks `sack`. If it changes the window and acknowledges nothing new, it
    /// is a window update, never a duplicate ACK (RFC 5681 §2, condition (e)): it only
    /// lets more data go.
    #[inline]
    pub fn on_ack_segment(
        &mut self,
        now: Time,
        ack: u64,
        wnd: u64,
        ts: Time,
        sack: &[(u64, u64)],
        out: &mut Vec<Segment>,
    ) {
        if ack > self.snd_max {
            // RFC 9293 §3.10.7.4: an ACK of something not yet sent is dropped (the ACK a
            // real stack sends back is not modelled); only a test's injected data makes one
            return;
        }
        let window_update = self.set_peer_window(wnd);
        self.set_echo(ts);
        if window_update && ack == self.snd_una {
            self.ece = false; // a window update is no ACK for DCTCP's counting either
            self.send_new_data(now, out);
        } else {
            self.on_ack(now, ack, sack, out);
        }
    }

    /// RFC 8985 §7.3: the probe timeout expired: send one segment, new data if the receive
    /// window allows, else the highest segment sent again, whatever cwnd says; then the
    /// RTO runs again. The probe's retransmission is not a recovery's: it leaves
    /// `retransmitted_end`, so FAST'08's timeout categories still see a lost last packet.
    fn on_probe_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.snd_una >= self.snd_max {
            return;
        }
        if self.cfg.rearm_rto_from_head && self.rack.as_deref().is_some_and(|r| r.tlp_end.is_some()) {
            // only with rearm_rto_from_head (schedule_probe arms no probe timer with a probe
            // outstanding otherwise): tcp_send_loss_probe with tlp_high_seq set sends nothing
            // ("at most one outstanding TLP") and goes to tcp_rearm_rto, the probe timer pending
            self.rearm_rto(now);
            return;
        }
        let new_len = self.cfg.mss.min(self.app_limit - self.snd_nxt);
        let is_retrans = !(new_len > 0 && self.snd_nxt + new_len <= self.snd_una + self.rwnd);
        if is_retrans {
            let last = self.rack.as_deref().and_then(|r| r.last_segment()).expect("data outstanding");
            let recovery_mark = self.retransmitted_end;
            self.emit(now, last.start, last.end - last.start, out);
            self.retransmitted_end = recovery_mark;
        } else {
            let seq = self.snd_nxt;
            self.emit(now, seq, new_len, out);
            self.snd_nxt += new_len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        let end = self.snd_nxt;
        if let Some(r) = self.rack.as_deref_mut() {
            r.tlp_end = Some(end);
            r.tlp_is_retrans = is_retrans;
        }
        self.stats.tail_loss_probes += 1;
        self.arm_timer(now);
    }

    /// RFC 8985 §6.2 step 5: the reordering timer expired: RACK looks for losses again.
    fn on_reorder_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        let mut recovery = std::mem::take(&mut self.recovery);
        recovery.on_rack_timer(self, now, out);
        self.recovery = recovery;
        if !self.timer.is_armed() && self.snd_una < self.snd_max {
            self.rearm_rto(now); // Linux's tcp_rearm_rto after its reordering timer
        }
    }

    /// A segment carrying data from the peer (the client's request) acknowledged `ack`:
    /// only new data counts, as it is never a duplicate ACK (RFC 5681 §2, condition (b)).
    pub fn on_data_segment_ack(&mut self, now: Time, ack: u64, wnd: u64, ts: Time, out: &mut Vec<Segment>) {
        if ack > self.snd_max {
            return; // RFC 9293 §3.10.7.4, as in on_ack_segment
        }
        self.set_peer_window(wnd);
        self.set_echo(ts);
        if ack > self.snd_una {
            self.on_ack(now, ack, &[], out);
        }
    }

    /// The application wrote `bytes` more.
    pub fn write(&mut self, now: Time, bytes: u64, out: &mut Vec<Segment>) {
        if self.snd_una == self.snd_max {
            // the sender was idle, waiting for the application, since its last ACK or send
            self.congestion.on_idle(Time(now.0.saturating_sub(self.last_activity.0)), now, self.last_send);
        }
        if self.cfg.slow_start_after_idle
            && self.snd_una == self.snd_max
            && now.0.saturating_sub(self.last_activity.0) > self.rto.rto.0
        {
            self.cwnd = self.cwnd.min(self.cfg.init_cwnd);
        }
        self.app_limit += bytes;
        let sent_before = self.snd_max;
        self.send_new_data(now, out);
        if self.snd_max > sent_before {
            self.schedule_probe(now, false);
        }
    }

    /// Put one segment on the wire and do the bookkeeping every transmission needs.
    pub(crate) fn emit(&mut self, now: Time, seq: u64, len: u64, out: &mut Vec<Segment>) {
        self.emit_flagged(now, seq, len, false, out);
    }

    fn emit_flagged(&mut self, now: Time, seq: u64, len: u64, after_timeout: bool, out: &mut Vec<Segment>) {
        let retransmit = seq < self.snd_max;
        if self.cfg.rules == TcpRules::Ns3 {
            self.rtt_history.on_send(seq, len, now, retransmit);
        }
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_send(seq, len, now);
        }
        if retransmit {
            self.stats.retransmits += 1;
            self.retransmitted_end = self.retransmitted_end.max(seq + len);
            // Karn's algorithm (RFC 6298 §3): no sample from a retransmitted segment.
            self.timed = None;
        } else if self.timed.is_none() {
            self.timed = Some((seq + len, now));
        }
        self.stats.segments += 1;
        self.stats.payload_bytes += len;
        out.push(Segment { seq, len: len as u32, retransmit, after_timeout });
        self.last_activity = now;
        self.last_send = now;
        // RFC 6298 §5.1: start the timer when data is sent and it is not running.
        if !self.timer.is_armed() {
            self.arm_timer(now);
        }
    }

    /// New data on an ACK outside recovery: as [`Sender::send_new_data`], unless Linux's TSO
    /// deferral holds the allowance for the next ACK ([`Sender::tso_defers`]).
    pub(crate) fn send_new_data_on_ack(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.hold_for_tso(now) {
            return;
        }
        if !(self.cfg.gso_half_cwnd && self.cfg.tso_deferral) {
            return self.send_new_data(now, out);
        }
        // tcp_write_xmit: GSO skbs of at most max(cwnd / 2, 1) segments (tcp_cwnd_test), each
        // after the first tested for deferral as the first was (its last send is now recent)
        let half = (self.cwnd / self.cfg.mss / 2).max(1);
        // tcp_cwnd_test: when nothing more fits, the loop ends without a deferral
        while self.send_segments(now, out, half) && !self.hold_for_tso(now) {}
    }

    /// Linux's TSO deferral of what this ACK allows ([`Sender::tso_defers`]): true when it is
    /// held for the next ACK.
    fn hold_for_tso(&mut self, now: Time) -> bool {
        let Some(allowance) = self.tso_defers(now) else { return false };
        self.stats.tso_deferrals += 1;
        // cwnd-limited when the window, not the data, is what is held (cong_win <= skb->len)
        self.held_cwnd_limited = allowance <= self.app_limit - self.snd_nxt;
        if self.held_cwnd_limited {
            self.validate_cwnd(true); // tcp_write_xmit: held, is_cwnd_limited set
        }
        true
    }

    /// With `tso_deferral`, Linux's `tcp_tso_should_defer` (net/ipv4/tcp_output.c, 6.18) for
    /// the unsent data an ACK lets go outside recovery: every TCP socket builds GSO skbs of
    /// several segments (`sk_setup_caps`), and `tcp_write_xmit` holds one back when all of
    ///
    /// - it is more than one segment (a one-segment skb is never deferred), and the last
    ///   send was less than 1 ms ago (`tcp_wstamp_ns`, no pacing here);
    /// - the allowance (cwnd - flight, within the peer's window) is under a third of
    ///   min(cwnd, the peer's window) (`tcp_tso_win_divisor` = 3);
    /// - the first unacknowledged segment's ACK is due within min(SRTT / 2, 1 ms) (its last
    ///   send + SRTT).
    ///
    /// Not checked, never the deciding test here: the allowance reaching `tcp_tso_autosize`'s
    /// segments (gso_max_size / MSS = 45 while min_rtt < 512 us), and a head skb smaller
    /// than the allowance short of the queue's tail (the response is written at once). A
    /// held allowance goes with the next ACK's, or as the loss probe, which never defers.
    /// Returns the allowance held, in bytes; None: send now.
    pub(crate) fn tso_defers(&self, now: Time) -> Option<u64> {
        // below TCP_CA_Recovery only: not in recovery, nor after a timeout (Linux's Loss state)
        if !self.cfg.tso_deferral || self.in_recovery || self.snd_una < self.recover {
            return None;
        }
        let Some(head_sent) = self.rack.as_deref().and_then(|r| r.first_xmit()) else {
            return None; // nothing in flight: no ACK to wait for
        };
        let window = self.cwnd.min(self.rwnd);
        let outstanding = self.snd_nxt - self.snd_una;
        // cong_win on the segments Linux counts in flight, send_win on sequence space
        let allowance = (self.cwnd.saturating_sub(outstanding - self.out_of_flight()))
            .min(self.rwnd.saturating_sub(outstanding));
        if allowance == 0 || self.app_limit - self.snd_nxt <= self.cfg.mss {
            return None;
        }
        if now.0.saturating_sub(self.last_send.0) > Time::from_ms(1).0 {
            return None;
        }
        if 3 * allowance >= window {
            return None;
        }
        let srtt = self.rto.srtt.unwrap_or(Time::ZERO);
        let due = (head_sent.0 + srtt.0).saturating_sub(now.0);
        (due <= (srtt.0 / 2).min(Time::from_ms(1).0)).then_some(allowance)
    }

    /// With `sacked_leave_flight`, the bytes below SND.NXT that Linux's
    /// `tcp_packets_in_flight` (packets_out - sacked_out - lost_out + retrans_out) leaves out
    /// while the sender is in Open or Disorder: those SACKed, or marked lost by RACK and not
    /// sent again. `tcp_cwnd_test` and `tcp_tso_should_defer` weigh cwnd against the rest.
    /// Zero otherwise, and in recovery and after a timeout (their own paths count `pipe`).
    pub(crate) fn out_of_flight(&self) -> u64 {
        if !self.cfg.sacked_leave_flight || self.in_recovery || self.snd_una < self.recover {
            return 0;
        }
        match self.rack.as_deref() {
            Some(r) if r.any_out_of_flight() => (self.snd_nxt - self.snd_una).saturating_sub(r.pipe()),
            _ => 0,
        }
    }

    /// Send as much unsent (or, after a timeout, unacknowledged) data as the window allows.
    pub(crate) fn send_new_data(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.send_segments(now, out, u64::MAX);
    }

    /// [`Sender::send_new_data`], at most `max_segments` segments. True when that cap
    /// stopped it and the next segment fits both windows.
    fn send_segments(&mut self, now: Time, out: &mut Vec<Segment>, max_segments: u64) -> bool {
        // only Swift's window falls below a packet (TCP's floor is one MSS): a compare on
        // the window, not on the controller, keeps TCP's per-ACK path as it was
        if self.cwnd < self.cfg.mss && self.send_paced_if_swift(now, out) {
            return false;
        }
        // cwnd limits what is in flight, the peer's window the sequence space
        let (cwnd_end, rwnd_end) = (self.cwnd + self.out_of_flight(), self.rwnd);
        let (sent_from, had_unsent) = (self.snd_nxt, self.snd_nxt < self.app_limit);
        let (mut cwnd_full, mut capped) = (false, false);
        let mut room = max_segments;
        while self.snd_nxt < self.app_limit {
            let len = self.cfg.mss.min(self.app_limit - self.snd_nxt);
            let end = self.snd_nxt + self.packet_bytes(len);
            if room == 0 {
                capped = end <= self.snd_una + cwnd_end && end <= self.snd_una + rwnd_end;
                break;
            }
            room -= 1;
            if end > self.snd_una + cwnd_end {
                cwnd_full = true;
                break;
            }
            if end > self.snd_una + rwnd_end {
                break;
            }
            let seq = self.snd_nxt;
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
        // tcp_write_xmit runs only with unsent data (tcp_push_pending_frames), and records
        // the window's use when it sent or cwnd held it (is_cwnd_limited |= in flight >= cwnd)
        if self.cfg.cwnd_limited_latch && had_unsent {
            let limited = cwnd_full || self.snd_nxt - self.snd_una - self.out_of_flight() >= self.cwnd;
            if self.snd_nxt > sent_from || limited {
                self.validate_cwnd(limited);
            }
        }
        capped
    }

    /// Linux's `tcp_cwnd_validate` bookkeeping ([`CwndUsage`]).
    fn validate_cwnd(&mut self, limited: bool) {
        let out = self.snd_nxt - self.snd_una; // packets_out: SACKed segments too
        let u = &mut self.usage;
        if self.snd_una >= u.usage_seq || limited || (!u.limited && out > u.max_out) {
            *u = CwndUsage { limited, max_out: out, usage_seq: self.snd_nxt };
        }
    }

    /// Run Swift (`transport = swift`) in place of the configured congestion control, on a
    /// path of `hops` hops: the window starts at the initial window and moves with every
    /// ACK's delay from now on.
    pub fn use_swift(&mut self, params: crate::tcp::congestion::swift::SwiftParams, hops: u32) {
        let sw = crate::tcp::congestion::swift::Swift::new(params, hops, self.cfg.mss, self.cwnd);
        self.congestion = Congestion::Swift(Box::new(sw));
        self.ssthresh = self.cwnd; // no slow start: Swift alone moves the window
    }

    /// Swift's state, if the sender runs Swift.
    pub fn swift(&self) -> Option<&crate::tcp::congestion::swift::Swift> {
        match &self.congestion {
            Congestion::Swift(sw) => Some(sw),
            _ => None,
        }
    }

    /// Swift: every ACK's delay, from the send time its segment's echo carries (§3.1); in
    /// fast recovery the recovery holds the window (NewReno inflates it). Out of line, so
    /// that TCP's `on_ack` keeps its size (and what the compiler inlines into it).
    #[cold]
    #[inline(never)]
    fn swift_on_ack(&mut self, now: Time, acked: u64) {
        let Congestion::Swift(sw) = &mut self.congestion else { return };
        if !self.in_recovery {
            let delay = self.echo.map(|sent| Time(now.0.saturating_sub(sent.0)));
            sw.on_ack(now, acked, delay, &mut self.cwnd);
        }
    }

    /// Swift below one packet: pace (`send_paced`); false if the sender does not run Swift.
    /// Before the flow's first delay sample there is no RTT to pace by: nothing goes while
    /// data is in flight (its ACK or the retransmission timer brings the next), and one
    /// segment when nothing is, so that a window below a packet never leaves a flow with
    /// nothing in flight and no timer (`docs/transports.md`).
    #[cold]
    #[inline(never)]
    fn send_paced_if_swift(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let Congestion::Swift(sw) = &self.congestion else { return false };
        match sw.pacing_delay(self.cwnd) {
            Some(gap) => self.send_paced(now, gap, out),
            // one segment, no pacing event after it (a gap of zero); the same path as a paced
            // one, so that `emit` keeps its call sites (and the TCP path its inlining)
            None if self.snd_nxt == self.snd_una => self.send_paced(now, Time::ZERO, out),
            None => {}
        }
        true
    }

    /// Swift below one packet (§3.4): one segment every `gap` (RTT / cwnd), new data or,
    /// after a timeout, data sent before, whatever is in flight, as the receive window
    /// allows; a pacing event (`take_pace_request`) brings the next.
    fn send_paced(&mut self, now: Time, gap: Time, out: &mut Vec<Segment>) {
        let Congestion::Swift(sw) = &self.congestion else { unreachable!("only Swift paces") };
        let pace_at = sw.pace_at;
        let mut sent = false;
        if self.snd_nxt < self.app_limit && now >= pace_at {
            let len = self.cfg.mss.min(self.app_limit - self.snd_nxt);
            if self.snd_nxt + self.packet_bytes(len) <= self.snd_una + self.rwnd {
                let seq = self.snd_nxt;
                self.emit(now, seq, len, out);
                self.snd_nxt += len;
                self.snd_max = self.snd_max.max(self.snd_nxt);
                sent = true;
            }
        }
        let more = self.snd_nxt < self.app_limit;
        let Congestion::Swift(sw) = &mut self.congestion else { unreachable!() };
        if sent {
            sw.pace_at = now + gap;
        }
        sw.request_pace(now, more);
    }

    /// Swift below one packet: a timeout's retransmission is the paced packet of now (§3.4
    /// paces every packet), so the next may go only a pacing delay later. Without this,
    /// a thousand flows timing out together would each send two packets at once.
    fn paced_retransmission(&mut self, now: Time) {
        if let Congestion::Swift(sw) = &mut self.congestion {
            if let Some(gap) = sw.pacing_delay(self.cwnd) {
                sw.pace_at = now + gap;
                let more = self.snd_nxt < self.app_limit;
                sw.request_pace(now, more);
            }
        }
    }

    /// A pacing event the owner must deliver (`on_pace_event`), if one is needed.
    #[inline]
    pub fn take_pace_request(&mut self) -> Option<Time> {
        match &mut self.congestion {
            Congestion::Swift(sw) => sw.pace_request.take(),
            _ => None,
        }
    }

    /// A pacing event fired at `now`: the next paced segment may go.
    pub fn on_pace_event(&mut self, now: Time, out: &mut Vec<Segment>) {
        let Congestion::Swift(sw) = &mut self.congestion else { return };
        if !sw.pace_fired(now) {
            return; // superseded
        }
        self.send_new_data(now, out);
    }

    /// Retransmit the segment at `snd_una` (fast retransmit, partial ACK).
    pub(crate) fn retransmit_first_unacked(&mut self, now: Time, out: &mut Vec<Segment>) {
        let len = self.cfg.mss.min(self.snd_max - self.snd_una);
        let seq = self.snd_una;
        self.emit(now, seq, len, out);
    }

    /// An ACK with cumulative acknowledgment `ack` and SACK blocks `sack` arrived: SND.UNA
    /// moves (with its RTT sample), then loss recovery decides what the ACK means.
    pub fn on_ack(&mut self, now: Time, ack: u64, sack: &[(u64, u64)], out: &mut Vec<Segment>) {
        self.last_activity = now;
        self.prior_flight = self.flight_size();
        let held = std::mem::take(&mut self.held_cwnd_limited);
        self.cwnd_limited = self.prior_flight + self.cfg.mss > self.cwnd || held;
        if self.cfg.cwnd_limited_latch {
            // tcp_is_cwnd_limited reads the record, not this ACK's flight
            self.cwnd_limited = self.usage.limited;
            self.prior_flight = self.usage.max_out;
        }
        let acked = if ack > self.snd_una { self.advance_una(now, ack) } else { 0 };
        if let Some(rtt) = self.rtt_sample.take() {
            self.stats.rtt_samples += 1;
            self.stats.rtt_sum_ps += rtt.0;
            let sample = Sample { now, rtt, snd_una: self.snd_una, snd_max: self.snd_max, flight: self.flight_size() + acked };
            self.congestion.on_sample(sample, self.cwnd, &mut self.ssthresh);
        }
        let ece = std::mem::take(&mut self.ece);
        let recovering = self.in_recovery || self.snd_una < self.recover;
        match &mut self.congestion {
            Congestion::Dctcp(c) => {
                c.on_ack_ecn(&mut self.cwnd, &mut self.ssthresh, acked, ece, self.snd_una, self.snd_nxt, recovering)
            }
            Congestion::Swift(_) => self.swift_on_ack(now, acked),
            _ => {}
        }
        // the recovery acts on the sender that holds it: lend it out for the call
        let sent_before = self.snd_max;
        let mut recovery = std::mem::take(&mut self.recovery);
        recovery.on_ack(self, now, ack, acked, sack, out);
        self.recovery = recovery;
        if acked > 0 || self.snd_max > sent_before {
            // tcp_set_xmit_timer's (advanced) unless new data went out after: tcp_write_xmit's
            self.schedule_probe(now, self.snd_max == sent_before);
        }
    }

    /// Bookkeeping for an ACK of new data: RTT sample (Karn), snd_una, DART. Returns the
    /// number of bytes newly acknowledged.
    pub(crate) fn advance_una(&mut self, now: Time, ack: u64) -> u64 {
        let acked = ack - self.snd_una;
        if let (true, Some(sent)) = (self.cfg.timestamps, self.echo) {
            let r = self.rto.measure(sent, now);
            self.rto.sample_at(r, ack, self.snd_max);
            self.rtt_sample = Some(Time(now.0.saturating_sub(sent.0)));
        } else if self.cfg.rules == TcpRules::Ns3 {
            if let Some(sent) = self.rtt_history.on_ack(ack) {
                let r = self.rto.measure(sent, now);
                self.rto.sample_at(r, ack, self.snd_max);
                self.rtt_sample = Some(Time(now.0.saturating_sub(sent.0)));
            }
        } else if let Some((end, sent)) = self.timed {
            if ack >= end {
                let r = self.rto.measure(sent, now);
                self.rto.sample_at(r, ack, self.snd_max);
                self.rtt_sample = Some(Time(now.0.saturating_sub(sent.0)));
                self.timed = None;
            }
        }
        if self.cfg.rto_backoff == RtoBackoff::NewAck {
            self.rto.clear_backoff(); // ns-3's NewAck: RTO from SRTT and RTTVAR again
        }
        self.snd_una = ack;
        self.dart = 0;
        if self.snd_nxt < ack {
            self.snd_nxt = ack; // the receiver already had data we were about to resend
        }
        acked
    }

    /// RFC 3042 limited transmit: on the first and second duplicate ACK, send one new
    /// segment if the receive window allows and no more than cwnd + 2 SMSS would be
    /// outstanding; cwnd is unchanged.
    pub(crate) fn limited_transmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        if !self.cfg.limited_transmit || self.dupacks > 2 || self.snd_nxt >= self.app_limit {
            return;
        }
        let len = self.cfg.mss.min(self.app_limit - self.snd_nxt);
        let allowed = (self.cwnd + 2 * self.cfg.mss).min(self.rwnd);
        if self.snd_nxt + self.packet_bytes(len) <= self.snd_una + allowed {
            let seq = self.snd_nxt;
            self.emit(now, seq, len, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            self.stats.limited_transmits += 1;
        }
    }

    /// Deliver a retransmission-timer event; returns true if it was a retransmission
    /// timeout (not an expiry with nothing outstanding, which only ns-2's rules have).
    pub fn on_timer_event(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        match self.timer.on_event(now) {
            Fired::Expired => match self.timer_mode {
                TimerMode::Rto => self.on_timeout(now, out),
                TimerMode::Probe => {
                    self.on_probe_timeout(now, out);
                    false
                }
                TimerMode::Reorder => {
                    self.on_reorder_timeout(now, out);
                    false
                }
            },
            Fired::Reschedule(t) => {
                self.timer_request = Some(t);
                false
            }
            Fired::Ignore => false,
        }
    }

    /// RFC 6298 §5.4-5.6 and RFC 5681 §3.1 eq. (4): the timer expired. Returns false
    /// when nothing was outstanding (under the RFCs the timer is off then).
    fn on_timeout(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        if self.snd_una >= self.snd_max {
            if self.timer_runs_when_idle() {
                self.idle_expiry(now);
            }
            return false;
        }
        self.stats.timeouts += 1;
        self.classify_timeout();
        // tcp_enter_loss: F-RTO unless the timeout came in Recovery or Loss, when only a
        // repeated one on the same data takes it (RFC 5682 §3.2; `icsk_retransmits`)
        let new_recovery = !self.in_recovery && self.snd_una >= self.recover;
        let queue = self.cfg.loss_retransmit_queue && self.rack.is_some();
        self.frto = queue && self.cfg.frto && (new_recovery || self.rto.backoffs > 0);
        let mss = self.cfg.mss;
        // RFC 5681 §3.1: ssthresh is not reduced again when the segment was already
        // retransmitted by a timeout; ns-2 halves it at every timeout, and ns-3 holds it
        // while the head it resent after the last timeout is unacknowledged
        let repeated = match self.cfg.rules {
            // Linux's tcp_enter_loss also holds it in fast recovery, where it was reduced
            // for this window already ("if it has not yet been made inside this window");
            // modelled with Linux's ssthresh rules only: reno's and cubic_linux's
            TcpRules::Rfc => {
                let linux_rule = match self.congestion {
                    Congestion::NewReno(_) => self.cfg.ssthresh_from_cwnd,
                    Congestion::Cubic(_) => self.cfg.cubic_linux,
                    _ => false,
                };
                self.rto.backoffs > 0 || (linux_rule && self.in_recovery)
            }
            TcpRules::Ns2 => false,
            TcpRules::Ns3 => self.recovery.after_timeout() && self.snd_una < self.retransmitted_end,
        };
        let in_flight = self.recovery.in_flight(self);
        let window = self.cwnd.min(self.rwnd);
        self.congestion.on_timeout(now, &mut self.cwnd, &mut self.ssthresh, in_flight, window, repeated);
        self.congestion.on_timeout_state(now, self.snd_max);
        self.recovery.on_timeout(queue);
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_timeout(queue);
        }
        self.in_recovery = false;
        self.recover = self.snd_max; // RFC 6582 §3.2 step 4 (after a timeout)
        self.dupacks = 0;
        self.timed = None;
        self.rtt_history.clear();
        self.dart = 0;
        self.rto.back_off();
        // retransmit the first segment (flagged, to recognise spurious timeouts), then
        // go back N, as ns-2 and BSD do; Linux's Loss state instead resends what is marked
        // lost as ACKs come (`loss_retransmit_queue`: tcp_retransmit_timer's head only)
        let len = mss.min(self.snd_max - self.snd_una);
        let seq = self.snd_una;
        self.emit_flagged(now, seq, len, true, out);
        if !queue {
            self.snd_nxt = self.snd_una + len;
            self.paced_retransmission(now);
            self.send_new_data(now, out);
        }
        self.arm_timer(now);
        true
    }

    /// Record why this timeout happened (FAST'08 §5.1, Table 3, Fig. 11).
    fn classify_timeout(&mut self) {
        let dart = self.dart as usize;
        self.stats.dart_histogram[dart.min(DART_BINS - 1)] += 1;
        let kind = if self.snd_una < self.retransmitted_end {
            if self.dart >= self.cfg.dupack_threshold {
                self.stats.lost_retransmits_dart_ge_threshold += 1;
            } else {
                self.stats.lost_retransmits_dart_lt_threshold += 1;
            }
            TimeoutKind::LostRetransmit
        } else if self.app_limit - self.snd_una <= self.cfg.mss {
            TimeoutKind::LastPacket
        } else if self.dart == 0 {
            TimeoutKind::FullWindow
        } else {
            TimeoutKind::Other
        };
        self.stats.timeouts_by_kind[kind as usize] += 1;
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
            limited_transmit: false,
            slow_start: true,
            slow_start_after_idle: false,
            rto_min: Time::from_ms(200),
            rto_max: Time::from_ms(60_000),
            granularity: Time::from_us(1),
            timestamps: false,
            timer_ticks: false,
            rto_random: 0.0,
            rto_backoff: RtoBackoff::Sample,
            rules: TcpRules::Rfc,
            cc: Cc::Newreno,
            prr: false,
            rack_tlp: false,
            hystart: false,
            prr_extra_if_advanced: false,
            prr_counts_fast_retransmit: false,
            grow_on_recovery_exit: false,
            rack_timer_floor: false,
            recovery_from_loss: false,
            loss_retransmit_queue: false,
            frto: false,
            rearm_rto_from_head: false,
            rto_min_on_rttvar: false,
            timer_wheel: false,
            ssthresh_from_cwnd: false,
            count_acked_segments: false,
            cwnd_limited_growth: false,
            tso_deferral: false,
            gso_half_cwnd: false,
            rack_rtt_sack_first: false,
            sacked_leave_flight: false,
            cwnd_limited_latch: false,
            cubic_linux: false,
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
    fn an_rto_armed_at_a_tick_with_srtt_5_9_ms_under_linuxs_estimator_and_timer_wheel() {
        // SRTT 5.9 ms (one sample), 4 ms jiffies, data sent at 400 ms (jiffy 100, a tick).
        // RFC 6298: max(200 ms, 5.9 + 4 x 2.95 ms) = 200 ms, on the tick 50 jiffies on.
        // rto_min_on_rttvar (__tcp_set_rto): 5.9 + max(2 x 5.9, 200) ms = 205.9 ms, 52 jiffies
        // (usecs_to_jiffies rounds up). timer_wheel: a timer of n jiffies fires n + 1 ticks
        // after the tick it was armed in (calc_index)
        for (linux_rto, wheel, ticks) in [(false, false, 50), (true, false, 52), (false, true, 51), (true, true, 53)] {
            let cfg = SenderConfig {
                granularity: Time::from_ms(4),
                timer_ticks: true,
                rto_min_on_rttvar: linux_rto,
                timer_wheel: wheel,
                ..config()
            };
            let mut s = TcpSender::new(cfg);
            s.rto.sample(Time::from_us(5900));
            s.write(Time::from_ms(400), MSS, &mut vec![]);
            let expected = Time::from_ms(400 + 4 * ticks);
            assert_eq!(s.timer_deadline(), Some(expected), "rto_min_on_rttvar {linux_rto}, timer_wheel {wheel}");
            // armed 3 ms into the jiffy: the same tick with the wheel; 3 ms later without
            let mut late = TcpSender::new(SenderConfig { ..s.cfg.clone() });
            late.rto.sample(Time::from_us(5900));
            late.write(Time::from_ms(403), MSS, &mut vec![]);
            let shift = if wheel { Time::ZERO } else { Time::from_ms(4) };
            assert_eq!(late.timer_deadline(), Some(expected + shift), "armed mid-jiffy: {linux_rto}, {wheel}");
        }
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
        s.on_ack(Time::from_us(100), ack_of(1), &[], &mut out);
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
            s.on_ack(Time::from_us(100), ack_of(i), &[], &mut out);
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
    fn a_flight_held_by_the_receive_window_does_not_grow_cubic_rfc9438_5_8() {
        // rwnd 3 segments, cwnd 10 in congestion avoidance: every ACK finds the flight 7
        // segments short of cwnd, so CUBIC leaves cwnd alone; NewReno (RFC 5681) grows it
        let grown = |cc: Cc| {
            let mut cfg = SenderConfig { cc, ..config() };
            cfg.rwnd = 3 * MSS;
            let mut s = TcpSender::new(cfg);
            s.cwnd = 10 * MSS;
            s.ssthresh = 5 * MSS;
            let mut out = vec![];
            s.write(Time::ZERO, 100 * MSS, &mut out);
            for n in 1..=20 {
                s.on_ack(Time(n * 1_000_000), ack_of(n), &[], &mut out);
            }
            assert_eq!(s.snd_una, ack_of(20), "the flow went on at the receive window");
            s.cwnd
        };
        assert_eq!(grown(Cc::Cubic), 10 * MSS);
        assert!(grown(Cc::Newreno) > 11 * MSS);
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

    /// ssthresh after: 8 segments sent at cwnd 8, the first lost, three duplicate ACKs
    /// (fast recovery), then the retransmission timer.
    fn ssthresh_after_timeout_in_recovery(ssthresh_from_cwnd: bool) -> (u64, u64) {
        ssthresh_after_timeout_in_recovery_with(SenderConfig { variant: TcpVariant::Newreno, ssthresh_from_cwnd, ..config() })
    }

    fn ssthresh_after_timeout_in_recovery_with(cfg: SenderConfig) -> (u64, u64) {
        let mut s = TcpSender::new(cfg);
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 8 * MSS, &mut out);
        let mut fire = s.take_timer_request().unwrap();
        for _ in 0..3 {
            s.on_ack(Time::from_ms(1), ack_of(0), &[], &mut out);
        }
        assert!(s.in_recovery);
        let at_entry = s.ssthresh;
        // the fast retransmit restarted the timer: the first event reschedules it
        while !s.on_timer_event(fire, &mut out) {
            fire = s.take_timer_request().expect("the timer is armed");
        }
        assert_eq!(s.stats.timeouts, 1);
        (at_entry, s.ssthresh)
    }

    #[test]
    fn a_timeout_in_recovery_keeps_linux_ssthresh_tcp_enter_loss() {
        // RFC 5681 §3.1 takes eq. (4) again at the timeout: FlightSize 8 -> 4, though cwnd
        // was inflated by the duplicate ACKs; Linux reduces ssthresh "if it has not yet
        // been made inside this window" (tcp_enter_loss), so recovery's 4 stays
        assert_eq!(ssthresh_after_timeout_in_recovery(false), (4 * MSS, 4 * MSS));
        let (entry, after) = ssthresh_after_timeout_in_recovery(true);
        assert_eq!(entry, 4 * MSS, "tcp_reno_ssthresh at entry: cwnd 8 >> 1");
        assert_eq!(after, entry, "held: the cwnd the recovery inflated is not halved again");
    }

    #[test]
    fn linux_cubic_takes_ssthresh_from_cwnd_in_packets_and_keeps_it_at_a_timeout_in_recovery() {
        // cubictcp_recalc_ssthresh: 8 x 717 / 1024 = 5.6 -> 5 packets; RFC 9438 §4.6: FlightSize
        // (8 segments) x 0.7 in bytes. tcp_enter_loss in Recovery keeps the 5
        let cubic = |cubic_linux| SenderConfig { variant: TcpVariant::Newreno, cc: Cc::Cubic, cubic_linux, ..config() };
        assert_eq!(ssthresh_after_timeout_in_recovery_with(cubic(true)), (5 * MSS, 5 * MSS));
        let (entry, _) = ssthresh_after_timeout_in_recovery_with(cubic(false));
        assert_eq!(entry, 8 * MSS * 7 / 10);
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
        s.on_ack(fire + Time::from_us(100), ack_of(8), &[], &mut out);
        assert!(out.is_empty());
        assert!(s.all_acked());
    }

    #[test]
    fn rtt_sample_from_acked_segment_sets_srtt() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, 2 * MSS, &mut out);
        s.on_ack(Time::from_us(100), ack_of(1), &[], &mut out);
        assert_eq!(s.rto.srtt, Some(Time::from_us(100)));
    }

    #[test]
    fn no_rtt_sample_from_a_retransmitted_segment_karn() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        s.on_timer_event(fire, &mut out);
        s.on_ack(fire + Time::from_us(100), ack_of(1), &[], &mut out);
        assert_eq!(s.rto.srtt, None);
    }

    #[test]
    fn all_acked_stops_the_timer() {
        let mut s = TcpSender::new(config());
        let mut out = vec![];
        s.write(Time::ZERO, MSS, &mut out);
        let fire = s.take_timer_request().unwrap();
        s.on_ack(Time::from_us(100), ack_of(1), &[], &mut out);
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
        s.on_ack(fire + Time::from_us(100), ack_of(1), &[], &mut out);
        // additive: +MSS*MSS/cwnd = +1 MSS at cwnd = 1 MSS; then +1/2 MSS, not doubling
        assert_eq!(s.cwnd, 2 * MSS);
        s.on_ack(fire + Time::from_us(200), ack_of(2), &[], &mut out);
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

#[cfg(test)]
mod knob_tests {
    use super::tests::{ack_of, config, seg_numbers, MSS};
    use super::*;

    #[test]
    fn limited_transmit_sends_new_data_on_the_first_two_dupacks_rfc3042() {
        let mut cfg = config();
        cfg.limited_transmit = true;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 4 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        out.clear();
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        assert_eq!(seg_numbers(&out), vec![4, 5], "one new segment per dupACK");
        assert_eq!(s.cwnd, 4 * MSS, "cwnd unchanged");
        assert_eq!(s.stats.limited_transmits, 2);
        out.clear();
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        assert_eq!(seg_numbers(&out)[0], 0, "third dupACK: fast retransmit as usual");
    }

    #[test]
    fn without_limited_transmit_dupacks_below_threshold_send_nothing() {
        let mut s = TcpSender::new(config());
        s.cwnd = 4 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        out.clear();
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn tick_timers_fire_on_the_next_tick_boundary() {
        let mut cfg = config();
        cfg.granularity = Time::from_ms(4);
        cfg.timer_ticks = true;
        cfg.rto_min = Time::from_ms(1);
        let mut s = TcpSender::new(cfg);
        s.rto.sample(Time::ZERO); // RTO = max(G, 0) = 4 ms with a 4 ms clock
        let mut out = vec![];
        s.write(Time::from_us(1500), MSS, &mut out);
        // deadline 5.5 ms rounds up to the 8 ms tick
        assert_eq!(s.take_timer_request(), Some(Time::from_ms(8)));
    }

    #[test]
    fn randomized_rto_stays_within_one_to_one_and_a_half_times() {
        let mut cfg = config();
        cfg.rto_random = 0.5;
        cfg.rto_min = Time::from_ms(1);
        let mut seen = vec![];
        for seed in 0..50 {
            let mut s = TcpSender::with_seed(cfg.clone(), seed);
            s.rto.sample(Time::from_us(100)); // RTO = 1 ms (RTOmin)
            let mut out = vec![];
            s.write(Time::ZERO, MSS, &mut out);
            let t = s.take_timer_request().unwrap();
            assert!(t >= Time::from_ms(1) && t <= Time::from_us(1500), "{t:?}");
            seen.push(t);
        }
        seen.sort();
        seen.dedup();
        assert!(seen.len() > 40, "draws differ across seeds");
    }

    /// A sender that has sent `w` segments of a longer write, for timeout forensics.
    fn with_window(w: u64, total: u64) -> (TcpSender, Vec<Segment>) {
        let mut s = TcpSender::new(config());
        s.cwnd = w * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, total * MSS, &mut out);
        (s, out)
    }

    fn expire(s: &mut TcpSender) {
        let mut out = vec![];
        loop {
            let t = s.take_timer_request().expect("armed");
            if s.on_timer_event(t, &mut out) {
                return;
            }
        }
    }

    #[test]
    fn timeout_with_no_dupack_is_a_full_window_loss() {
        let (mut s, _) = with_window(5, 50);
        expire(&mut s);
        assert_eq!(s.stats.timeouts_by_kind[TimeoutKind::FullWindow as usize], 1);
        assert_eq!(s.stats.dart_histogram[0], 1);
    }

    #[test]
    fn timeout_after_two_dupacks_is_other_with_dart_two() {
        let (mut s, _) = with_window(5, 50);
        let mut out = vec![];
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        expire(&mut s);
        assert_eq!(s.stats.timeouts_by_kind[TimeoutKind::Other as usize], 1);
        assert_eq!(s.stats.dart_histogram[2], 1);
    }

    #[test]
    fn timeout_on_the_last_segment_of_the_write_is_a_last_packet_loss() {
        let (mut s, _) = with_window(5, 5);
        let mut out = vec![];
        s.on_ack(Time::from_us(100), ack_of(4), &[], &mut out);
        expire(&mut s);
        assert_eq!(s.stats.timeouts_by_kind[TimeoutKind::LastPacket as usize], 1);
    }

    #[test]
    fn timeout_of_a_fast_retransmitted_segment_is_a_lost_retransmit() {
        let (mut s, _) = with_window(8, 50);
        let mut out = vec![];
        for _ in 0..3 {
            s.on_ack(Time::from_us(100), ack_of(0), &[], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
        expire(&mut s); // the fast retransmission was lost too
        assert_eq!(s.stats.timeouts_by_kind[TimeoutKind::LostRetransmit as usize], 1);
        assert_eq!(s.stats.lost_retransmits_dart_ge_threshold, 1);
        // and the retransmission after that timeout, lost again: DART is 0 < 3
        expire(&mut s);
        assert_eq!(s.stats.lost_retransmits_dart_lt_threshold, 1);
    }

    #[test]
    fn with_timestamps_an_ack_of_retransmitted_data_clears_the_backoff() {
        let mut cfg = config();
        cfg.timestamps = true;
        let mut s = TcpSender::new(cfg);
        s.rto.sample(Time::from_us(100));
        let mut out = vec![];
        s.write(Time::ZERO, 10 * MSS, &mut out);
        let t = s.take_timer_request().unwrap();
        s.on_timer_event(t, &mut out);
        assert_eq!(s.rto.backoffs, 1);
        // the retransmission sent at t is acknowledged; the ACK echoes its timestamp
        s.set_echo(t);
        s.on_ack(t + Time::from_us(100), ack_of(1), &[], &mut out);
        assert_eq!(s.rto.backoffs, 0, "a valid sample ends the backoff");
        assert_eq!(s.rto.rto, Time::from_ms(200));
    }

    #[test]
    fn without_timestamps_the_backoff_survives_acks_of_retransmitted_data_karn() {
        let mut s = TcpSender::new(config());
        s.rto.sample(Time::from_us(100));
        let mut out = vec![];
        s.write(Time::ZERO, 10 * MSS, &mut out);
        let t = s.take_timer_request().unwrap();
        s.on_timer_event(t, &mut out);
        s.on_ack(t + Time::from_us(100), ack_of(1), &[], &mut out);
        assert_eq!(s.rto.backoffs, 1);
        assert_eq!(s.rto.rto, Time::from_ms(400));
    }

    #[test]
    fn with_the_ns3_backoff_rule_any_new_ack_ends_the_backoff() {
        // ns-3's TcpSocketBase::NewAck recomputes the RTO from SRTT/RTTVAR on every new
        // ACK, even one for retransmitted data (no RTT sample under Karn's rule)
        let mut cfg = config();
        cfg.rto_backoff = RtoBackoff::NewAck;
        let mut s = TcpSender::new(cfg);
        s.rto.sample(Time::from_us(100));
        let mut out = vec![];
        s.write(Time::ZERO, 10 * MSS, &mut out);
        let t = s.take_timer_request().unwrap();
        s.on_timer_event(t, &mut out);
        assert_eq!(s.rto.rto, Time::from_ms(400));
        s.on_ack(t + Time::from_us(100), ack_of(1), &[], &mut out);
        assert_eq!(s.rto.backoffs, 0);
        assert_eq!(s.rto.rto, Time::from_ms(200));
        assert_eq!(s.rto.srtt, Some(Time::from_us(100)), "no sample was taken (Karn)");
    }

    #[test]
    fn an_ack_that_only_changes_the_window_is_a_window_update_not_a_duplicate_rfc5681_2() {
        let mut cfg = config();
        cfg.rwnd = 4 * MSS;
        let mut s = TcpSender::new(cfg);
        s.cwnd = 8 * MSS;
        let mut out = vec![];
        s.write(Time::ZERO, 100 * MSS, &mut out);
        assert_eq!(out.len(), 4, "the receive window caps the flight");
        out.clear();
        let t = Time::from_us(100);
        for k in 1..=3 {
            s.on_ack_segment(t, ack_of(0), (4 + k) * MSS, t, &[], &mut out);
        }
        assert_eq!(seg_numbers(&out), vec![4, 5, 6], "each update lets one more segment go");
        assert_eq!((s.dupacks, s.stats.fast_retransmits), (0, 0));
        // the same ACK with the window unchanged is a duplicate
        s.on_ack_segment(t, ack_of(0), 7 * MSS, t, &[], &mut out);
        assert_eq!(s.dupacks, 1);
    }

    #[test]
    fn an_ack_of_data_never_sent_is_dropped_rfc9293_3_10_7_4() {
        let (mut s, _) = with_window(4, 50);
        let mut out = vec![];
        let t = Time::from_us(100);
        let (una, max, cwnd) = (s.snd_una, s.snd_max, s.cwnd);
        s.on_ack_segment(t, max + MSS, 1 << 30, t, &[], &mut out);
        s.on_data_segment_ack(t, max + MSS, 1 << 30, t, &mut out);
        assert!(out.is_empty());
        assert_eq!((s.snd_una, s.snd_max, s.cwnd, s.flight_size()), (una, max, cwnd, max - una));
    }

    #[test]
    fn a_data_segment_acknowledging_nothing_new_is_not_a_duplicate_ack_rfc5681_2() {
        let (mut s, _) = with_window(4, 50);
        let mut out = vec![];
        let t = Time::from_us(100);
        for _ in 0..3 {
            s.on_data_segment_ack(t, ack_of(0), 1 << 30, t, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(s.dupacks, 0);
        s.on_data_segment_ack(t, ack_of(2), 1 << 30, t, &mut out);
        assert_eq!(s.snd_una, ack_of(2), "its ACK of new data counts");
    }

    #[test]
    fn the_acks_after_a_windows_last_send_grow_it_with_linuxs_cwnd_validate_record() {
        // Reno in congestion avoidance (cwnd 4, ssthresh 2) with exactly 4 segments to send:
        // they fill cwnd, and their 4 ACKs come one by one. tcp_cong_avoid_ai adds a segment
        // per cwnd segments acknowledged, when tcp_is_cwnd_limited. Linux's record
        // (tcp_cwnd_validate: is_cwnd_limited kept until snd_una passes cwnd_usage_seq) lets
        // all 4 count: cwnd 5 for the next response. Judged from each ACK's prior flight,
        // only the first does (flight 4 fills cwnd; 3, 2, 1 do not): cwnd stays 4.
        for (latch, cwnd_after) in [(false, 4), (true, 5)] {
            let cfg = SenderConfig {
                count_acked_segments: true,
                cwnd_limited_growth: true,
                cwnd_limited_latch: latch,
                ..config()
            };
            let mut s = TcpSender::new(cfg);
            s.cwnd = 4 * MSS;
            s.ssthresh = 2 * MSS;
            let mut out = vec![];
            s.write(Time::ZERO, 4 * MSS, &mut out);
            assert_eq!(out.len(), 4);
            for k in 1..=4 {
                s.on_ack(Time::from_us(100 * k), ack_of(k), &[], &mut out);
            }
            assert_eq!((s.cwnd / MSS, out.len()), (cwnd_after, 4), "cwnd_limited_latch={latch}");
        }
    }

    #[test]
    fn the_retransmission_a_timeout_triggers_is_flagged() {
        let (mut s, _) = with_window(4, 50);
        let mut out = vec![];
        let t = s.take_timer_request().unwrap();
        s.on_timer_event(t, &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].after_timeout && out[0].retransmit);
    }
}
