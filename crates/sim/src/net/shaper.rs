//! A token-bucket shaper in front of a port's link: Linux's `tbf` queueing discipline
//! (`net/sched/sch_tbf.c`), the bottleneck of the namespace testbed (docs/testbed.md).
//!
//! tbf keeps a bucket of tokens counted in time at its rate: it fills by one second per
//! second up to `burst` bytes' worth, and a packet of L bytes leaves only when the bucket
//! holds L bytes' worth, which it then takes (`tbf_dequeue`: `toks = min(now - t_c + toks,
//! buffer)`, then `toks -= L(len)` if that leaves it at or above zero). Until then the packet
//! waits in tbf's own queue, a byte FIFO (`bfifo`) that admits an arrival while its waiting
//! bytes plus the arrival's fit in `limit` (`tc ... tbf limit`); a packet tbf released has
//! left that queue, whatever the link behind it is still doing. tbf's watchdog timer wakes
//! the queue at the instant the tokens will suffice (an hrtimer with no slack), modelled
//! here as exact.
//!
//! So a shaper differs from a port at its rate in two ways, both seen in the testbed's
//! captures (docs/testbed.md, "What lets the kernel's probes through"): after an idle spell
//! it releases a whole bucket at the link's speed at once (4 full frames in well under a
//! microsecond on a veth), and its queue does not count the packet on the wire.

use crate::time::{serialization_time, Time};

/// tbf: a bucket of `burst` bytes at `rate_bps` gating a byte FIFO of `limit` bytes.
#[derive(Clone, Debug)]
pub struct Shaper {
    rate_bps: u64,
    /// The bucket's depth, in time at the rate (tbf's `buffer`).
    depth: Time,
    /// Tokens held at `as_of`, in time at the rate (tbf's `toks`, `t_c`).
    tokens: Time,
    as_of: Time,
    /// Bytes the queue may hold waiting (tbf's `limit`, its bfifo's).
    limit_bytes: u64,
}

impl Shaper {
    /// A shaper of `rate_bps` with a bucket of `burst_bytes`, full at time zero (tbf starts
    /// with `toks = buffer`), in front of a queue of `limit_bytes`.
    pub fn new(rate_bps: u64, burst_bytes: u64, limit_bytes: u64) -> Shaper {
        let depth = serialization_time(burst_bytes, rate_bps);
        Shaper { rate_bps, depth, tokens: depth, as_of: Time::ZERO, limit_bytes }
    }

    /// Tokens held at `now` (not before the last release).
    #[inline]
    fn level(&self, now: Time) -> Time {
        Time((self.tokens.0 + (now.0 - self.as_of.0)).min(self.depth.0))
    }

    /// What a packet of `wire` bytes costs, in time at the rate.
    #[inline]
    fn cost(&self, wire: u32) -> Time {
        serialization_time(wire as u64, self.rate_bps)
    }

    /// The earliest instant, `now` or later, at which a packet of `wire` bytes may leave.
    #[inline]
    pub fn ready_at(&self, now: Time, wire: u32) -> Time {
        let (have, need) = (self.level(now), self.cost(wire));
        debug_assert!(need <= self.depth, "a packet larger than the bucket would never leave (the scenario refuses it)");
        if have >= need {
            now
        } else {
            now + (need - have)
        }
    }

    /// A packet of `wire` bytes leaves at `now` (at or after [`Shaper::ready_at`]).
    #[inline]
    pub fn release(&mut self, now: Time, wire: u32) {
        let have = self.level(now);
        let need = self.cost(wire);
        debug_assert!(have >= need, "a shaper releases a packet only when its bucket holds the packet's tokens");
        self.tokens = Time(have.0.saturating_sub(need.0));
        self.as_of = now;
    }

    /// A packet of `wire` bytes fits beside `waiting` bytes in the queue.
    #[inline]
    pub fn admits(&self, waiting: u64, wire: u32) -> bool {
        waiting + wire as u64 <= self.limit_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MBPS_100: u64 = 100_000_000;
    /// A full Ethernet frame as tbf counts it (IP packet + 14-byte Ethernet header).
    const FRAME: u32 = 1514;

    fn frame_time() -> Time {
        serialization_time(FRAME as u64, MBPS_100) // 121.12 us
    }

    #[test]
    fn a_full_bucket_releases_burst_bytes_at_once_then_one_frame_per_frame_time() {
        // the testbed's tbf: burst 4 frames (6056 B) at 100 Mbit/s
        let mut s = Shaper::new(MBPS_100, 4 * FRAME as u64, 8192);
        for _ in 0..4 {
            assert_eq!(s.ready_at(Time::ZERO, FRAME), Time::ZERO);
            s.release(Time::ZERO, FRAME);
        }
        // the fifth waits for one frame's worth of tokens
        assert_eq!(s.ready_at(Time::ZERO, FRAME), frame_time());
        s.release(frame_time(), FRAME);
        assert_eq!(s.ready_at(frame_time(), FRAME), Time(2 * frame_time().0));
    }

    #[test]
    fn tokens_refill_at_the_rate_while_idle_and_stop_at_the_bucket() {
        let mut s = Shaper::new(MBPS_100, 2 * FRAME as u64, 8192);
        s.release(Time::ZERO, FRAME);
        s.release(Time::ZERO, FRAME);
        // half a frame time later, half a frame's tokens: a full frame waits the other half
        let half = Time(frame_time().0 / 2);
        assert_eq!(s.ready_at(half, FRAME), Time(frame_time().0));
        // a long idle spell fills the bucket to two frames, not more
        let later = Time::from_ms(10);
        s.release(later, FRAME);
        s.release(later, FRAME);
        assert_eq!(s.ready_at(later, FRAME), later + frame_time());
    }

    #[test]
    fn its_queue_counts_waiting_bytes_only_as_a_bfifo_does() {
        // tbf limit 8192: five 1514-byte frames wait (7570 B), a sixth does not fit
        let s = Shaper::new(MBPS_100, 4 * FRAME as u64, 8192);
        assert!(s.admits(4 * FRAME as u64, FRAME));
        assert!(!s.admits(5 * FRAME as u64, FRAME));
        // a short tail still fits beside five frames
        assert!(s.admits(5 * FRAME as u64, 600));
    }

    #[test]
    fn over_a_long_run_it_releases_bytes_at_its_rate() {
        // 1000 frames offered at once through a one-frame bucket: the last leaves
        // 999 frame times after the first
        let mut s = Shaper::new(MBPS_100, FRAME as u64, u64::MAX);
        let mut t = Time::ZERO;
        for _ in 0..1000 {
            t = s.ready_at(t, FRAME);
            s.release(t, FRAME);
        }
        assert_eq!(t, Time(999 * frame_time().0));
    }
}
