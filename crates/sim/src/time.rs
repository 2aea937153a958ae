//! Simulated time: integer picoseconds, so 1500 B at 100 Gbps (120 ns) and one byte at
//! 400 Gbps (20 ps) are exact (DESIGN.md, "Modelling notes").

/// An instant or a span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const NEVER: Time = Time(u64::MAX);

    pub fn from_us(us: u64) -> Time {
        Time(us * PS_PER_US)
    }
    pub fn from_ms(ms: u64) -> Time {
        Time(ms * PS_PER_MS)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }
}

impl std::ops::Add for Time {
    type Output = Time;
    fn add(self, o: Time) -> Time {
        Time(self.0 + o.0)
    }
}

impl std::ops::Sub for Time {
    type Output = Time;
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

/// Time to serialize `bytes` onto a link of `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn serialization_time(bytes: u64, rate_bps: u64) -> Time {
    // bytes x 8e12 fits in u64 up to ~2.3 MB, far above any packet; u64 division is
    // several times cheaper than u128 on the per-packet path.
    match bytes.checked_mul(8 * PS_PER_S) {
        Some(bit_ps) => Time(bit_ps.div_ceil(rate_bps)),
        None => Time((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128) as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_packet_at_100g_is_exactly_120ns() {
        assert_eq!(serialization_time(1500, 100_000_000_000), Time(120 * PS_PER_NS));
    }

    #[test]
    fn one_byte_at_400g_is_exactly_20ps() {
        assert_eq!(serialization_time(1, 400_000_000_000), Time(20));
    }

    #[test]
    fn huge_sizes_do_not_overflow() {
        assert_eq!(serialization_time(1 << 40, 8_000_000_000_000), Time(1 << 40));
    }

    #[test]
    fn full_packet_at_1g_is_12us() {
        assert_eq!(serialization_time(1500, 1_000_000_000), Time::from_us(12));
    }
}
