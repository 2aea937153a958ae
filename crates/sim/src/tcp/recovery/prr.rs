//! Proportional Rate Reduction (RFC 6937 §3), PRR-SSRB: during SACK-based fast recovery,
//! each ACK lets the sender transmit `sndcnt` bytes, so that by the end of recovery it has
//! sent ssthresh / RecoverFS of what was delivered (the proportional part, while pipe is
//! above ssthresh), and, once pipe falls below ssthresh, grows back towards it no faster
//! than slow start (the slow-start reduction bound). RFC 6675 instead sets cwnd = ssthresh
//! at once, which sends nothing until pipe drains below it and then a burst.
//!
//! Quantities are bytes, as in the RFC; the sender transmits whole segments while the
//! ACK's allowance is not used up, so a part of a segment allows a whole one and the
//! excess is paid back through `prr_out` (what RFC 6937's CEIL does in segment units, and
//! Linux's `tcp_cwnd_reduction` in packets).
//!
//! Below ssthresh, RFC 6937's PRR-SSRB allows MAX(prr_delivered - prr_out, DeliveredData)
//! + 1 MSS on every ACK. Linux's `tcp_cwnd_reduction` (net/ipv4/tcp_input.c) adds that
//! one segment only when the ACK advanced SND.UNA (FLAG_SND_UNA_ADVANCED) and marked no
//! segment newly lost: an ACK that reveals another loss lets the sender repair it
//! without sending one more segment into the queue that dropped it. The caller says which
//! applies (`extra`; the `prr_extra_if_advanced` field).

/// PRR's state for one recovery episode.
#[derive(Clone, Debug, Default)]
pub struct Prr {
    /// Bytes delivered to the receiver since recovery began.
    prr_delivered: u64,
    /// Bytes sent since recovery began.
    prr_out: u64,
    /// FlightSize when recovery began.
    recover_fs: u64,
}

impl Prr {
    /// RFC 6937 §3 "on entering recovery" (ssthresh is set by the caller).
    pub fn enter(&mut self, flight_size: u64) {
        *self = Prr { prr_delivered: 0, prr_out: 0, recover_fs: flight_size.max(1) };
    }

    /// RFC 6937 §3 "on every ACK during recovery": an ACK delivered `delivered` bytes
    /// (change in SND.UNA plus change in SACKed bytes) and `pipe` bytes are in the
    /// network; returns sndcnt, the bytes this ACK allows to be sent. `extra`: whether
    /// PRR-SSRB's one MSS above what was delivered is allowed on this ACK (RFC 6937: always).
    pub fn sndcnt(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64, extra: bool) -> u64 {
        self.prr_delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            // proportional rate reduction
            let target = (self.prr_delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            target as i128 - self.prr_out as i128
        } else {
            // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS
            let behind = self.prr_delivered as i128 - self.prr_out as i128;
            let limit = behind.max(delivered as i128) + if extra { mss as i128 } else { 0 };
            (ssthresh as i128 - pipe as i128).min(limit)
        };
        sndcnt.max(0) as u64
    }

    /// RFC 6937 §3 "on any data transmission or retransmission".
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn proportional_part_sends_ssthresh_over_recoverfs_of_what_is_delivered() {
        // RFC 6937 §3 with RecoverFS = 20 segments and ssthresh = 10 (a halving): each ACK
        // delivers one segment while pipe stays above ssthresh. sndcnt =
        // CEIL(prr_delivered x 10 / 20) - prr_out: 500 B (one segment sent: prr_out = 1000),
        // then 1000 - 1000 = 0, 1500 - 1000 = 500 (send), 2000 - 2000 = 0: one segment on
        // every other ACK, the pacing the RFC's examples show for a halving.
        let mut p = Prr::default();
        p.enter(20 * MSS);
        let mut sent = vec![];
        for k in 1..=6u64 {
            let cnt = p.sndcnt(MSS, (20 - k) * MSS, 10 * MSS, MSS, true);
            let segs = cnt.div_ceil(MSS);
            p.on_sent(segs * MSS);
            sent.push(segs);
        }
        assert_eq!(sent, vec![1, 0, 1, 0, 1, 0]);
        assert_eq!(p.prr_out, 3 * MSS, "half of the 6 segments delivered");
    }

    #[test]
    fn the_fast_retransmit_counts_in_prr_out() {
        // the retransmission sent on entering recovery is data sent (RFC 6937 §3): the
        // first ACK's 500 B allowance is already used by it
        let mut p = Prr::default();
        p.enter(20 * MSS);
        p.on_sent(MSS);
        assert_eq!(p.sndcnt(MSS, 19 * MSS, 10 * MSS, MSS, true), 0);
        assert_eq!(p.sndcnt(MSS, 18 * MSS, 10 * MSS, MSS, true), 0, "CEIL(2000 x 10 / 20) - 1000");
        assert_eq!(p.sndcnt(MSS, 17 * MSS, 10 * MSS, MSS, true), 500);
    }

    #[test]
    fn ssrb_part_catches_up_with_ssthresh_no_faster_than_slow_start() {
        // pipe fell to 4 segments below ssthresh = 10 (more losses than expected): limit =
        // MAX(prr_delivered - prr_out, DeliveredData) + MSS
        let mut p = Prr::default();
        p.enter(20 * MSS);
        p.on_sent(3 * MSS);
        p.sndcnt(4 * MSS, 12 * MSS, 10 * MSS, MSS, true); // prr_delivered = 4 segments
        // this ACK delivers 2 more: behind = 6 - 3 = 3 > 2, limit = 4; ssthresh - pipe = 6
        assert_eq!(p.sndcnt(2 * MSS, 4 * MSS, 10 * MSS, MSS, true), 4 * MSS);
        p.on_sent(4 * MSS);
        // sent 7 against 7 delivered after one more: behind = 0 < DeliveredData = 1: 1 + 1
        assert_eq!(p.sndcnt(MSS, 5 * MSS, 10 * MSS, MSS, true), 2 * MSS, "DeliveredData + 1 MSS");
        // and never past ssthresh: pipe 9 leaves room for one segment whatever the limit
        assert_eq!(p.sndcnt(3 * MSS, 9 * MSS, 10 * MSS, MSS, true), MSS);
    }

    #[test]
    fn without_the_extra_segment_ssrb_sends_only_what_was_delivered() {
        // Linux's tcp_cwnd_reduction: the same ACK as RFC 6937's "DeliveredData + 1 MSS"
        // above, but one that marked a segment newly lost (or did not advance SND.UNA):
        // sndcnt = MAX(prr_delivered - prr_out, DeliveredData) = 1 segment, not 2
        let mut p = Prr::default();
        p.enter(20 * MSS);
        p.on_sent(3 * MSS);
        p.sndcnt(4 * MSS, 12 * MSS, 10 * MSS, MSS, true);
        p.sndcnt(2 * MSS, 4 * MSS, 10 * MSS, MSS, true);
        p.on_sent(4 * MSS);
        assert_eq!(p.sndcnt(MSS, 5 * MSS, 10 * MSS, MSS, false), MSS, "DeliveredData alone");
        // the proportional part (pipe > ssthresh) has no extra segment to drop
        let mut q = Prr::default();
        q.enter(20 * MSS);
        assert_eq!(q.sndcnt(MSS, 19 * MSS, 10 * MSS, MSS, false), 500);
    }
}
