//! Loss recovery: how a sender learns from the ACKs that data was lost and repairs it:
//! when it enters recovery, what each ACK does while in it, and when it leaves (ns-3's
//! `TcpRecoveryOps` with the loss detection that goes with it). One file per algorithm,
//! one arm each:
//! - `reno`: RFC 5681 §3.2 fast retransmit and fast recovery (FAST'08's "TCP Reno");
//! - `newreno`: RFC 6582, Reno's recovery carried on through partial ACKs;
//! - `sack`: RFC 6675 on the blocks of RFC 2018 (its scoreboard: `scoreboard`), optionally
//!   paced by PRR (`prr`, RFC 6937) and with RACK-TLP's loss detection (`rack`, RFC 8985);
//! - `ns3`: ns-3.44's classic recovery on SACKs emulated from duplicate ACKs
//!   (`TcpRules::Ns3`, for differential testing against the ns-3 peer).
//!
//! The sender keeps the sequence space, the timers and the RTT samples, and hands each ACK
//! here once it has moved SND.UNA; ssthresh comes from the congestion controller
//! (`tcp::congestion`). An enum, not a trait object: its match sits on the per-ACK path.

pub mod newreno;
pub mod ns3;
pub mod prr;
pub mod rack;
#[cfg(test)]
mod rack_tlp_tests;
pub mod reno;
pub mod sack;
pub mod scoreboard;

use crate::scenario::{TcpRules, TcpVariant};
use crate::tcp::sender::{Segment, SenderConfig, TcpSender};
use crate::time::Time;

/// The loss-recovery algorithm of one sender, with its state. The sender lends it out for
/// each ACK (`TcpSender::on_ack`), holding the default, stateless Reno meanwhile; the
/// larger states are boxed so that this moves two words, not six (0.5-0.9% of a run's
/// instructions, measured with cachegrind).
#[derive(Clone, Debug, Default)]
pub enum Recovery {
    /// RFC 5681 §3.2; no state beyond the sender's.
    #[default]
    Reno,
    /// RFC 6582.
    NewReno(newreno::NewReno),
    /// RFC 6675 with its scoreboard.
    Sack(Box<sack::Sack>),
    /// ns-3.44's, on its emulated scoreboard.
    Ns3(Box<ns3::Ns3>),
}

impl Recovery {
    pub fn new(cfg: &SenderConfig) -> Self {
        match (cfg.variant, cfg.rules) {
            (TcpVariant::Sack, _) => Recovery::Sack(Default::default()),
            (_, TcpRules::Ns3) => Recovery::Ns3(Default::default()),
            (TcpVariant::Reno, _) => Recovery::Reno,
            (TcpVariant::Newreno, _) => Recovery::NewReno(Default::default()),
        }
    }

    /// An ACK with cumulative acknowledgment `ack` and SACK blocks `sack` arrived, `acked`
    /// bytes of it new (0: none); `s` has already moved SND.UNA to it.
    #[inline]
    pub(crate) fn on_ack(
        &mut self,
        s: &mut TcpSender,
        now: Time,
        ack: u64,
        acked: u64,
        sack: &[(u64, u64)],
        out: &mut Vec<Segment>,
    ) {
        match self {
            Recovery::Reno => reno::on_ack(s, now, ack, acked, out),
            Recovery::NewReno(r) => r.on_ack(s, now, ack, acked, out),
            Recovery::Sack(r) => r.on_ack(s, now, ack, acked, sack, out),
            Recovery::Ns3(r) => r.on_ack(s, now, ack, acked, out),
        }
    }

    /// The bytes in flight a timeout's ssthresh is computed from: ns-3's pipe, else
    /// FlightSize.
    pub(crate) fn in_flight(&self, s: &TcpSender) -> u64 {
        match self {
            Recovery::Ns3(r) => r.pipe(s),
            _ => s.flight_size(),
        }
    }

    /// ns-3's CA_LOSS: a timeout happened and not everything sent before it is
    /// acknowledged; duplicate ACKs are not counted then.
    pub(crate) fn after_timeout(&self) -> bool {
        match self {
            Recovery::Ns3(r) => r.after_timeout,
            _ => false,
        }
    }

    /// RACK's reordering timer expired (RFC 8985 §6.2 step 5); only SACK arms it.
    pub(crate) fn on_rack_timer(&mut self, s: &mut TcpSender, now: Time, out: &mut Vec<Segment>) {
        if let Recovery::Sack(r) = self {
            r.on_rack_timer(s, now, out);
        }
    }

    /// The retransmission timer expired (after ssthresh was taken from [`Self::in_flight`]);
    /// `keep_sacked`: Linux's `tcp_timeout_mark_lost` keeps what was SACKed.
    pub(crate) fn on_timeout(&mut self, keep_sacked: bool) {
        match self {
            Recovery::Sack(r) => r.on_timeout(keep_sacked),
            Recovery::Ns3(r) => r.on_timeout(),
            Recovery::Reno | Recovery::NewReno(_) => {}
        }
    }
}

/// Steps every algorithm shares.
impl TcpSender {
    /// Fast retransmit's guard against a second recovery for one window (RFC 6582 §3.2
    /// step 1): the cumulative ACK covers `recover`. ns-2's `dupack_action` asks for one
    /// packet more (`highest_ack_ > recover_`), so after an idle expiry the next block's
    /// first loss is not fast-retransmitted (`tcp::ns2_rules`).
    pub(crate) fn covers_recover(&self) -> bool {
        match self.cfg.rules {
            TcpRules::Ns2 => self.snd_una > self.recover,
            _ => self.snd_una >= self.recover,
        }
    }

    /// ssthresh when duplicate ACKs reveal a loss: RFC 5681 eq. (4) on FlightSize.
    pub(crate) fn loss_ssthresh(&mut self) -> u64 {
        let (cwnd, flight, window) = (self.cwnd, self.flight_size(), self.cwnd.min(self.rwnd));
        self.congestion.on_loss(cwnd, flight, window)
    }

    /// Leave fast recovery with cwnd = ssthresh: RFC 6582 §3.2 step 3 option (2), as ns-2
    /// and ns-3's `TcpClassicRecovery::ExitRecovery` do; RFC 5681 §3.2 step 6 for Reno.
    pub(crate) fn leave_recovery(&mut self) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.cwnd = self.ssthresh;
    }

    /// An ACK of `acked` new bytes outside recovery: the duplicate-ACK count ends, the
    /// window grows (RFC 5681 §3.1) and the timer restarts (RFC 6298 §5.3).
    #[inline]
    pub(crate) fn on_new_ack_open(&mut self, now: Time, acked: u64) {
        self.dupacks = 0;
        let clock = self.ack_clock(now);
        self.congestion.on_ack(clock, &mut self.cwnd, self.ssthresh, acked);
        self.restart_timer(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::sender::tests::config;

    fn recovery(variant: TcpVariant, rules: TcpRules) -> Recovery {
        Recovery::new(&SenderConfig { variant, rules, ..config() })
    }

    #[test]
    fn each_variant_gets_its_own_arm_and_only_sack_keeps_a_scoreboard() {
        use TcpRules::{Ns2, Ns3, Rfc};
        use TcpVariant::{Newreno, Reno, Sack};
        for rules in [Rfc, Ns2] {
            assert!(matches!(recovery(Reno, rules), Recovery::Reno));
            assert!(matches!(recovery(Newreno, rules), Recovery::NewReno(_)));
            assert!(matches!(recovery(Sack, rules), Recovery::Sack(_)));
        }
        assert!(matches!(recovery(Newreno, Ns3), Recovery::Ns3(_)), "ns-3's rules are its recovery");
    }

    #[test]
    fn covering_recover_takes_one_packet_more_under_ns2_rules() {
        // RFC 6582 §3.2 step 1 with `recover` exclusive: SND.UNA at recover covers it;
        // ns-2's dupack_action wants highest_ack_ > recover_
        for (rules, covers) in [(TcpRules::Rfc, true), (TcpRules::Ns2, false), (TcpRules::Ns3, true)] {
            let mut s = TcpSender::new(SenderConfig { rules, ..config() });
            s.recover = s.snd_una;
            assert_eq!(s.covers_recover(), covers, "{rules:?}");
        }
    }
}
