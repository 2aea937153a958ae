//! Differences of monotonic counters that may wrap or reset.
//!
//! Linux exposes interface and SNMP counters as 64-bit values, but some drivers keep
//! 32-bit hardware counters underneath and wrap at 2^32. A counter can also go back to
//! zero (driver reload, interface re-created). A rate computed from a plain subtraction
//! would then be negative or absurd; [`delta`] classifies each decrease instead.

/// What happened between two readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterEvent {
    /// The counter went up (or stayed): the delta is exact.
    None,
    /// The counter passed 2^32 - 1 and started again from 0 (a 32-bit counter).
    Wrap32,
    /// The counter passed 2^64 - 1 and started again from 0.
    Wrap64,
    /// The counter went down by more than a wrap explains: it was reset. The delta of
    /// this interval is unknown and reported as 0 (never negative, never invented).
    Reset,
}

/// A counter difference and how it was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delta {
    pub value: u64,
    pub event: CounterEvent,
}

const TWO_32: u64 = 1 << 32;

/// The increase from `prev` to `cur`.
///
/// Rules for a decrease (`cur < prev`):
/// - `prev` in the top half of the u64 range: a 64-bit wrap (only a counter that got
///   that far can wrap at 64 bits);
/// - both readings below 2^32 and `prev` in the top half of the 32-bit range: a 32-bit
///   wrap (a 32-bit counter near its end started again from 0);
/// - anything else: a reset, reported as 0.
pub fn delta(prev: u64, cur: u64) -> Delta {
    if cur >= prev {
        return Delta { value: cur - prev, event: CounterEvent::None };
    }
    if prev >= 1 << 63 {
        return Delta { value: cur.wrapping_sub(prev), event: CounterEvent::Wrap64 };
    }
    if prev < TWO_32 && cur < TWO_32 && prev >= 1 << 31 {
        return Delta { value: TWO_32 - prev + cur, event: CounterEvent::Wrap32 };
    }
    Delta { value: 0, event: CounterEvent::Reset }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increasing_counter_gives_plain_difference() {
        assert_eq!(delta(100, 250), Delta { value: 150, event: CounterEvent::None });
        assert_eq!(delta(7, 7).value, 0);
    }

    #[test]
    fn wrap_at_64_bits_counts_bytes_across_the_wrap() {
        let d = delta(u64::MAX - 9, 5);
        assert_eq!(d, Delta { value: 15, event: CounterEvent::Wrap64 });
    }

    #[test]
    fn wrap_at_32_bits_counts_bytes_across_the_wrap() {
        let d = delta((1u64 << 32) - 1000, 500);
        assert_eq!(d, Delta { value: 1500, event: CounterEvent::Wrap32 });
    }

    #[test]
    fn decrease_from_low_value_is_a_reset_not_a_negative_rate() {
        // 5000 -> 10 cannot be a wrap of either width: report 0 and flag it
        assert_eq!(delta(5000, 10), Delta { value: 0, event: CounterEvent::Reset });
    }

    #[test]
    fn decrease_above_32_bit_range_is_a_reset() {
        // a 64-bit counter at 10 GB that drops to 1 MB was reset, not wrapped
        assert_eq!(delta(10_000_000_000, 1_000_000).event, CounterEvent::Reset);
    }
}
