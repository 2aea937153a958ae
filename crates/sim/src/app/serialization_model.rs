//! Osada et al.'s connection-serialization model (`004_f48ce568b38e0ea9.txt`, §4, §5.1 and
//! Appendix A): the numbers the NCCS and OCS schedulers run with, derived once, here, from
//! the link rate V, the BaseRTT, the MSS, the header bytes and the SRU size S.
//!
//! One function per equation, in exact rational arithmetic (a float could move a value
//! across a floor or a ceiling). The paper writes `[x]` for both floor and ceiling; the
//! readings are those of the Python reference `incastlab.model.serialization` (checked
//! against this module over a grid, tests/test_model_serialization_core.py), each
//! explained in docs/model-serialization.md with the worked example it reproduces:
//! KB = 1024 bytes, a packet is MSS + header bytes on the wire, `[x]` a ceiling except in
//! Eq. (5) and the S/MSS of Eqs. (7)-(8), which are floors.
//!
//! Times are picoseconds, sizes bytes, rates bits per second.

use num_rational::Ratio;
use serde::Serialize;

use crate::scenario::ScenarioError;
use crate::time::PS_PER_S;

/// An exact rational value (a time in ps, a size in bytes or packets).
pub type Exact = Ratio<i128>;

/// Initial congestion window in packets that the derivation of Eqs. (3)-(6) assumes (§4.2:
/// "the initial cwnd value is 2 x MSS").
pub const INITIAL_CWND_PKT: i128 = 2;
/// Smallest window that still lets three duplicate ACKs trigger fast retransmit (§4.4, case
/// (b) of Eq. (9)).
pub const MIN_WND_PKT: i128 = 4;

/// Largest inputs taken: within them no intermediate value exceeds about 2^111 (the largest is
/// Eq. (5)'s, below 2^50 packets x a packet time with a numerator below 2^61), far from
/// i128's 2^127. 10 Tbps is the scenario's top rate; 10 s is above its 4 s RTT; 1 PiB
/// is the Python threshold search's limit; MSS and header are 16-bit quantities.
pub const MAX_RATE_BPS: u64 = 10_000_000_000_000;
pub const MAX_BASE_RTT_PS: u64 = 10 * PS_PER_S;
pub const MAX_SRU_BYTES: u64 = 1 << 50;
pub const MAX_MSS_BYTES: u32 = 65_535;
pub const MAX_HEADER_BYTES: u32 = 65_535;

const PS: i128 = PS_PER_S as i128;

fn int(x: i128) -> Exact {
    Exact::from_integer(x)
}

fn ceil(x: Exact) -> i128 {
    x.ceil().to_integer()
}

fn floor(x: Exact) -> i128 {
    x.floor().to_integer()
}

// --- one function per equation ------------------------------------------------------

/// BaseBDP = V/8 x BaseRTT, in bytes (§4.2; the advertised window of Eq. (1)).
pub fn base_bdp_bytes(rate_bps: u64, base_rtt_ps: u64) -> Exact {
    Exact::new(rate_bps as i128 * base_rtt_ps as i128, 8 * PS)
}

/// (MSS + 40) x 8 / V in ps: the transmission time of one full packet, the factor of Eqs.
/// (4), (5) and (12) (40 = `header_bytes`, "the fixed parts of IP and TCP headers").
pub fn packet_time_ps(rate_bps: u64, mss_bytes: u32, header_bytes: u32) -> Exact {
    Exact::new((mss_bytes as i128 + header_bytes as i128) * 8 * PS, rate_bps as i128)
}

/// Eq. (2): BaseBDP_pkt = BaseBDP / (MSS + 40), kept exact (Fig. 3 uses 6.5).
pub fn base_bdp_pkt(bdp_bytes: Exact, mss_bytes: u32, header_bytes: u32) -> Exact {
    bdp_bytes / (mss_bytes as i128 + header_bytes as i128)
}

/// Smallest k >= 0 with 2^k >= x, exactly: `[log2 x]` read as a ceiling.
pub fn ceil_log2(x: Exact) -> u32 {
    // 2^k >= x  <=>  2^k >= ceil(x), because 2^k is an integer
    let c = ceil(x);
    if c <= 1 {
        0
    } else {
        128 - (c - 1).leading_zeros()
    }
}

/// Eq. (3): m = [log2 BaseBDP_pkt] + 1, the ceiling (Fig. 3: 6.5 -> m = 4; §4.2's
/// T1 = 412 us needs m = 5 for 8.33).
pub fn slow_start_rounds(bdp_pkt: Exact) -> u32 {
    ceil_log2(bdp_pkt) + 1
}

/// sum_{i=first}^{last} 2^(i-1): packets sent in BaseRTTs first..last of slow start
/// (0 when last < first).
pub fn doubling_sum(first: u32, last: u32) -> i128 {
    if last < first {
        return 0;
    }
    (1i128 << last) - (1i128 << (first - 1))
}

/// Eq. (4): T1 = (m-1) BaseRTT + ([BaseBDP_pkt] - 2^(m-2)) (MSS+40) 8 / V, in ps (m >= 3,
/// as [`serialization_model`] ensures).
///
/// [BaseBDP_pkt] is a ceiling: Fig. 3 takes [6.5] = 7.
pub fn t1_ps(m: u32, bdp_pkt: Exact, base_rtt_ps: u64, pkt_time: Exact) -> Exact {
    int((m as i128 - 1) * base_rtt_ps as i128) + pkt_time * (ceil(bdp_pkt) - (1i128 << (m - 2)))
}

/// Eq. (5): T2 = [(S - sum_{i=2}^{m-1} 2^(i-1) MSS) / MSS] (MSS+40) 8 / V, a floor, in ps.
///
/// Floor, because only it gives §4.2's T2 ~ 360 us at 1 Gbps / 100 us / 64 KB (30 x 12 us;
/// the ceiling gives 372 us). Negative when the SRU is smaller than the 2^(m-1) - 2
/// packets the formula assumes slow start sent (docs/model-serialization.md).
pub fn t2_ps(sru_bytes: u64, mss_bytes: u32, m: u32, pkt_time: Exact) -> Exact {
    let slow_start_bytes = doubling_sum(2, m - 1) * mss_bytes as i128;
    pkt_time * floor(Exact::new(sru_bytes as i128 - slow_start_bytes, mss_bytes as i128))
}

/// [S/MSS] as a ceiling: the number of packets generated from the SRU (Eqs. (6), (12)).
pub fn sru_packets(sru_bytes: u64, mss_bytes: u32) -> i128 {
    (sru_bytes as i128 + mss_bytes as i128 - 1) / mss_bytes as i128
}

/// Left side of Eq. (6): [S/MSS] - sum_{i=2}^{m-2} 2^(i-1) + 2^(m-2).
///
/// cwnd_pkt once every packet of the SRU is acknowledged (§4.2); it always equals
/// [S/MSS] + 2 (the initial window plus one per ACK).
pub fn eq6_lhs(sru_bytes: u64, mss_bytes: u32, m: u32) -> i128 {
    sru_packets(sru_bytes, mss_bytes) - doubling_sum(2, m - 2) + (1i128 << (m - 2))
}

/// Eq. (6): T1 and T2 are defined iff cwnd can reach [BaseBDP_pkt] (ceiling) within the SRU.
pub fn eq6_holds(sru_bytes: u64, mss_bytes: u32, m: u32, bdp_pkt: Exact) -> bool {
    eq6_lhs(sru_bytes, mss_bytes, m) >= ceil(bdp_pkt)
}

/// Right side of Eqs. (7)-(8): 2 BaseBDP_pkt [log2 BaseBDP_pkt] + 2 [BaseBDP_pkt] - 2.
///
/// Derived from T2 >= 2 T1 with Eqs. (4)-(5): [log2 .] is m - 1 (ceiling, Eq. (3)), the
/// second bracket is Eq. (4)'s ceiling, and the first BaseBDP_pkt stays exact because it
/// stands for BaseRTT / ((MSS+40) 8 / V).
pub fn eq7_rhs(bdp_pkt: Exact) -> Exact {
    bdp_pkt * (2 * ceil_log2(bdp_pkt) as i128) + int(2 * ceil(bdp_pkt) - 2)
}

/// [S/MSS] in Eqs. (7)-(8): a floor, the same bracket as Eq. (5) they are derived from.
pub fn eq7_sru_packets(sru_bytes: u64, mss_bytes: u32) -> i128 {
    sru_bytes as i128 / mss_bytes as i128
}

/// Eq. (7): T2 >= 2 T1, so plain NCCS (sets of one connection) fills the link.
pub fn eq7_holds(sru_bytes: u64, mss_bytes: u32, bdp_pkt: Exact) -> bool {
    int(eq7_sru_packets(sru_bytes, mss_bytes)) >= eq7_rhs(bdp_pkt)
}

/// Eq. (8): the smallest n >= 1 with n [S/MSS] >= the right side of Eq. (7).
///
/// 1 when Eq. (7) holds (§4.4). None when S < MSS: [S/MSS] = 0 and no n satisfies it
/// (then BaseBDP_pkt / n -> 0 < 4 and case (b) of Eq. (9) applies).
pub fn n_min_eq8(sru_bytes: u64, mss_bytes: u32, bdp_pkt: Exact) -> Option<i128> {
    let packets = eq7_sru_packets(sru_bytes, mss_bytes);
    if packets == 0 {
        return None;
    }
    Some(ceil(eq7_rhs(bdp_pkt) / packets).max(1))
}

/// The two cases of Eq. (9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowCase {
    /// BaseBDP_pkt / n_min >= 4: n_min from Eq. (8), windows of [BaseBDP_pkt / n_min].
    A,
    /// Smaller: windows of 4 packets (fast retransmit needs them), n_min from Eq. (10).
    B,
}

/// Eq. (9)'s case: (a) if BaseBDP_pkt / n_min >= 4, else (b) (fast retransmit needs 4).
pub fn window_case(bdp_pkt_ceil: i128, n_min: Option<i128>) -> WindowCase {
    match n_min {
        Some(n) if Exact::new(bdp_pkt_ceil, n) >= int(MIN_WND_PKT) => WindowCase::A,
        _ => WindowCase::B,
    }
}

/// Eq. (10): in case (b), n_min = [BaseBDP_pkt / 4], a ceiling (§5.1: [9/4] = 3).
pub fn n_min_eq10(bdp_pkt_ceil: i128) -> i128 {
    ceil(Exact::new(bdp_pkt_ceil, MIN_WND_PKT))
}

/// Eq. (9): wnd_pkt = [BaseBDP_pkt / n_min] (ceiling, Appendix A.2) in case (a), 4 in (b).
pub fn wnd_pkt_eq9(bdp_pkt_ceil: i128, n_min: i128, case: WindowCase) -> i128 {
    match case {
        WindowCase::A => ceil(Exact::new(bdp_pkt_ceil, n_min)),
        WindowCase::B => MIN_WND_PKT,
    }
}

/// Eq. (11): Q_max^TCP = 2 n_min wnd_pkt - BaseBDP_pkt, with BaseBDP_pkt = [.] as in §5.1.
pub fn q_max_tcp_eq11(n_min: i128, wnd_pkt: i128, bdp_pkt_ceil: i128) -> i128 {
    2 * n_min * wnd_pkt - bdp_pkt_ceil
}

/// Eq. (12): ideal MCT = N_a [S/MSS] (MSS+40) 8 / V in ps (ceiling; the paper omits the x 8).
/// None if the exact value does not fit 128 bits (only at extreme corners: billions of
/// servers, each sending a 1 PiB SRU in tiny segments).
pub fn mct_ps_eq12(servers: u32, sru_bytes: u64, mss_bytes: u32, pkt_time: Exact) -> Option<Exact> {
    let packets = (servers as i128).checked_mul(sru_packets(sru_bytes, mss_bytes))?;
    Some(Exact::new(pkt_time.numer().checked_mul(packets)?, *pkt_time.denom()))
}

/// T1 x V / 8: the bytes a connection sends at the full rate V during T1, exactly (T1 in
/// ps, V in bits per second).
pub fn t1_bytes(t1: Exact, rate_bps: u64) -> Exact {
    t1 * rate_bps as i128 / (8 * PS)
}

/// §4.3 condition-I: NCCS starts the next connection once S - T1 V bits are sent (here
/// bytes); zero or less means at once.
pub fn condition_i_bytes(sru_bytes: u64, t1: Exact, rate_bps: u64) -> Exact {
    int(sru_bytes as i128) - t1_bytes(t1, rate_bps)
}

// --- the whole model as one value -------------------------------------------------------

/// Every quantity of the model for one (V, BaseRTT, MSS, header, S) point, exact. Field
/// names and meanings are those of the Python `SerializationModel`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SerializationModel {
    pub rate_bps: u64,
    pub base_rtt_ps: u64,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub sru_bytes: u64,
    /// BaseBDP = V/8 x BaseRTT, bytes
    pub base_bdp_bytes: Exact,
    /// Eq. (2), exact (may be fractional, like Fig. 3's 6.5)
    pub base_bdp_pkt: Exact,
    /// [BaseBDP_pkt], the ceiling; what §5.1 reports as "BaseBDP_pkt" (9 and 84)
    pub base_bdp_pkt_ceil: u64,
    /// (MSS + 40) x 8 / V
    pub packet_time_ps: Exact,
    /// Eq. (3)
    pub m: u32,
    /// Eq. (4); independent of S, so given even where Eq. (6) fails
    pub t1_ps: Exact,
    /// Eq. (5) as written (can be negative); None where Eq. (6) fails
    pub t2_ps: Option<Exact>,
    /// [S/MSS], ceiling: packets per SRU
    pub sru_packets: u64,
    /// Eq. (6)
    pub eq6_holds: bool,
    /// Right side of Eqs. (7)-(8), packets
    pub eq7_rhs_packets: Exact,
    /// Eq. (7)
    pub eq7_holds: bool,
    /// Eq. (8); None when S < MSS
    pub n_min_eq8: Option<u64>,
    /// Eq. (9)'s case
    pub window_case: WindowCase,
    /// The set size OCS uses: Eq. (8) in case (a), Eq. (10) in case (b)
    pub n_min: u64,
    /// Eq. (9)
    pub wnd_pkt: u64,
    /// Eq. (11), packets
    pub q_max_tcp_packets: u64,
    /// §4.3 condition-I: bytes of the current connection after which the next one starts
    pub condition_i_bytes: Exact,
}

/// What the client's schedulers take from the model (`scenario::Mitigation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SchedulerThresholds {
    /// NCCS and OCS: start the next connection (set) when the newest has this many bytes
    /// left: ceil(T1 x V / 8) (§4.3 condition-I, S - T1 V sent)
    pub start_next_at_remaining: u64,
    /// OCS: connections per set, n_min (Eqs. (8), (10)); saturates at u32::MAX (only
    /// with BaseBDP above 2^34 packets), which means all of a block's connections at once
    pub set_size: u32,
    /// OCS: each connection's advertised window, wnd_pkt x MSS (Eq. (9))
    pub window_bytes: u64,
    /// ceil(BaseBDP): the window OCS's last connections share, and the advertised window
    /// of CCS and NCCS (§4.2, Eq. (1))
    pub bdp_bytes: u64,
}

fn refuse(param: &'static str, value: impl ToString, allowed: &str) -> ScenarioError {
    ScenarioError::new(param, value, allowed)
}

fn check_range<T: PartialOrd + Copy + ToString>(
    param: &'static str,
    value: T,
    lo: T,
    hi: T,
    allowed: &str,
) -> Result<(), ScenarioError> {
    if value < lo || value > hi {
        return Err(refuse(param, value, allowed));
    }
    Ok(())
}

/// Evaluate Eqs. (1)-(11) of Osada et al. for one point; pure, no allocation unless it
/// fails. Errors name the parameter: zero or out-of-range inputs (the `MAX_` constants),
/// or a BaseBDP of 2 packets or less (the derivation starts from a 2-packet initial
/// window, so Eq. (3)'s m would be below 3 and Eqs. (4)-(6) lose their meaning).
pub fn serialization_model(
    rate_bps: u64,
    base_rtt_ps: u64,
    mss_bytes: u32,
    sru_bytes: u64,
    header_bytes: u32,
) -> Result<SerializationModel, ScenarioError> {
    check_range("rate_bps", rate_bps, 1, MAX_RATE_BPS, "1 bps to 10 Tbps")?;
    check_range("base_rtt_ps", base_rtt_ps, 1, MAX_BASE_RTT_PS, "1 ps to 10 s")?;
    check_range("mss_bytes", mss_bytes, 1, MAX_MSS_BYTES, "1 to 65535 bytes")?;
    check_range("sru_bytes", sru_bytes, 1, MAX_SRU_BYTES, "1 byte to 1 PiB")?;
    check_range("header_bytes", header_bytes, 0, MAX_HEADER_BYTES, "0 to 65535 bytes")?;

    let bdp = base_bdp_bytes(rate_bps, base_rtt_ps);
    let bdp_pkt = base_bdp_pkt(bdp, mss_bytes, header_bytes);
    if bdp_pkt <= int(INITIAL_CWND_PKT) {
        return Err(ScenarioError::new(
            "base_rtt_ps",
            crate::schema::format_ps(base_rtt_ps),
            format!(
                "a rate and BaseRTT for which BaseBDP = rate/8 x BaseRTT exceeds {INITIAL_CWND_PKT} packets of \
                 MSS+{header_bytes} bytes (the model starts from a {INITIAL_CWND_PKT}-packet initial window); here \
                 BaseBDP_pkt = {:.3}",
                *bdp_pkt.numer() as f64 / *bdp_pkt.denom() as f64
            ),
        ));
    }
    let bdp_pkt_ceil = ceil(bdp_pkt);
    let tau = packet_time_ps(rate_bps, mss_bytes, header_bytes);
    let m = slow_start_rounds(bdp_pkt);
    let t1 = t1_ps(m, bdp_pkt, base_rtt_ps, tau);
    let holds6 = eq6_holds(sru_bytes, mss_bytes, m, bdp_pkt);

    let n8 = n_min_eq8(sru_bytes, mss_bytes, bdp_pkt);
    let case = window_case(bdp_pkt_ceil, n8);
    let n_min = match (case, n8) {
        (WindowCase::A, Some(n)) => n,
        _ => n_min_eq10(bdp_pkt_ceil),
    };
    let wnd = wnd_pkt_eq9(bdp_pkt_ceil, n_min, case);

    // the casts below are of values bounded by the input limits (BaseBDP_pkt < 2^44)
    Ok(SerializationModel {
        rate_bps,
        base_rtt_ps,
        mss_bytes,
        header_bytes,
        sru_bytes,
        base_bdp_bytes: bdp,
        base_bdp_pkt: bdp_pkt,
        base_bdp_pkt_ceil: bdp_pkt_ceil as u64,
        packet_time_ps: tau,
        m,
        t1_ps: t1,
        t2_ps: holds6.then(|| t2_ps(sru_bytes, mss_bytes, m, tau)),
        sru_packets: sru_packets(sru_bytes, mss_bytes) as u64,
        eq6_holds: holds6,
        eq7_rhs_packets: eq7_rhs(bdp_pkt),
        eq7_holds: eq7_holds(sru_bytes, mss_bytes, bdp_pkt),
        n_min_eq8: n8.map(|n| n as u64),
        window_case: case,
        n_min: n_min as u64,
        wnd_pkt: wnd as u64,
        q_max_tcp_packets: q_max_tcp_eq11(n_min, wnd, bdp_pkt_ceil) as u64,
        condition_i_bytes: condition_i_bytes(sru_bytes, t1, rate_bps),
    })
}

impl SerializationModel {
    /// Eq. (12): the ideal mission complete time of `servers` active servers, in ps (None
    /// only beyond 128 bits, see [`mct_ps_eq12`]).
    pub fn mct_ps(&self, servers: u32) -> Option<Exact> {
        mct_ps_eq12(servers, self.sru_bytes, self.mss_bytes, self.packet_time_ps)
    }

    /// The thresholds NCCS and OCS run with (§4.3, §4.4), and CCS's advertised window.
    pub fn scheduler_thresholds(&self) -> SchedulerThresholds {
        SchedulerThresholds {
            start_next_at_remaining: ceil(t1_bytes(self.t1_ps, self.rate_bps)) as u64,
            set_size: u32::try_from(self.n_min).unwrap_or(u32::MAX),
            window_bytes: self.wnd_pkt * self.mss_bytes as u64,
            bdp_bytes: ceil(self.base_bdp_bytes) as u64,
        }
    }
}

/// The paper's worked examples (§4.2-§4.4, §5.1, Appendix A), the same inputs and expected
/// values as tests/test_model_serialization.py and tests/test_osada_sim.py.
#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024; // the paper's "KB" (§3: K = 2^10)
    const US: u64 = 1_000_000; // ps per us
    const GBPS: u64 = 1_000_000_000;

    /// The paper's setting: BaseRTT 100 us, MSS 1460 B, 40 B of headers (§4.2, §5.1 Table 1).
    fn paper(rate_gbps: u64, sru_bytes: u64) -> SerializationModel {
        serialization_model(rate_gbps * GBPS, 100 * US, 1460, sru_bytes, 40).unwrap()
    }

    fn us(x: i128) -> Exact {
        int(x * US as i128)
    }

    // --- §4.2: T1, T2 ------------------------------------------------------------------

    #[test]
    fn t1_is_412us_at_1gbps_100us_mss1460_64kb() {
        // §4.2: "when V = 1 Gbps, BaseRTT = 100 usec, MSS = 1460 Bytes and S = 64 KBytes, T1 = 412 usec"
        let m = paper(1, 64 * KIB);
        assert_eq!(m.base_bdp_bytes, int(12_500)); // "BaseBDP is about 12500 Bytes"
        assert_eq!(m.m, 5);
        assert_eq!(m.t1_ps, us(412)); // 4 x 100 us + (9 - 8) x 12 us, exactly
    }

    #[test]
    fn t2_is_360us_at_1gbps_100us_mss1460_64kb() {
        // §4.2: "T2 ~ 360 usec"; Eq. (5) read as a floor gives exactly 30 packets x 12 us
        assert_eq!(paper(1, 64 * KIB).t2_ps, Some(us(360)));
    }

    #[test]
    fn t2_reading_rules_out_ceiling_and_no_rounding() {
        // (65536 - 14 x 1460) / 1460 = 30.89 packets: a ceiling would give 31 x 12 = 372 us
        assert_eq!(doubling_sum(2, 4), 14);
        let packets = Exact::new(64 * 1024 - 14 * 1460, 1460);
        assert!(int(30) < packets && packets < int(31));
        assert!(packets * 12 > int(370));
    }

    #[test]
    fn fig3_example_bdp_6_5_packets() {
        // §4.2, Fig. 3: BaseBDP_pkt = 6.5 -> m = 4, [6.5] - 2^(m-2) = 7 - 4 = 3 ACKs of the
        // fourth BaseRTT. 6.5 x 1500 B at 1 Gbps is 78 us.
        let m = serialization_model(GBPS, 78 * US, 1460, 5 * 1460, 40).unwrap();
        assert_eq!(m.base_bdp_pkt, Exact::new(13, 2));
        assert_eq!(m.m, 4);
        assert_eq!(m.base_bdp_pkt_ceil - (1 << (m.m - 2)), 3);
        assert_eq!(m.t1_ps, us(3 * 78 + 3 * 12));
    }

    #[test]
    fn fig3_example_eq6_fails_with_4_packets_and_holds_with_5() {
        // §4.2: [S/MSS] = 4 leaves cwnd_pkt at 6 (< 7): undefined; 5 reaches the third ACK
        let four = serialization_model(GBPS, 78 * US, 1460, 4 * 1460, 40).unwrap();
        let five = serialization_model(GBPS, 78 * US, 1460, 5 * 1460, 40).unwrap();
        assert_eq!(eq6_lhs(4 * 1460, 1460, 4), 6);
        assert!(!four.eq6_holds && four.t2_ps.is_none());
        assert!(five.eq6_holds && five.t2_ps.is_some());
    }

    // --- §4.2: Eq. (6) thresholds ------------------------------------------------------

    #[test]
    fn eq6_fails_and_holds_where_the_paper_says() {
        // §4.2, last paragraph before Fig. 4: 8 KB fails and 9 KB holds at 1 Gbps; 115 and
        // 116 KB at 10 Gbps
        for (rate_gbps, fails_kb, holds_kb) in [(1, 8, 9), (10, 115, 116)] {
            assert!(!paper(rate_gbps, fails_kb * KIB).eq6_holds, "{rate_gbps} Gbps, {fails_kb} KB");
            assert!(paper(rate_gbps, holds_kb * KIB).eq6_holds, "{rate_gbps} Gbps, {holds_kb} KB");
        }
    }

    #[test]
    fn eq6_reading_rules_out_kb_as_1000_bytes() {
        // 116000 B is 79.45 packets -> 80, and 80 + 2 < 84: §4.2's 10 Gbps example would fail
        assert!(!paper(10, 116_000).eq6_holds);
    }

    #[test]
    fn eq6_reading_rules_out_floor_of_s_over_mss() {
        // a floor makes 9 KB 6 packets, and 6 + 2 < 9: §4.2's 1 Gbps example would fail
        assert!(eq7_sru_packets(9 * KIB, 1460) + 2 < paper(1, 9 * KIB).base_bdp_pkt_ceil as i128);
    }

    #[test]
    fn eq6_starts_to_hold_at_the_first_byte_of_the_next_packet() {
        // what the Python threshold search finds (docs): 6 x 1460 + 1 = 8761 B at 1 Gbps,
        // 81 x 1460 + 1 = 118261 B at 10 Gbps, between the paper's 8/9 and 115/116 KB
        for (rate_gbps, first) in [(1, 6 * 1460 + 1), (10, 81 * 1460 + 1)] {
            assert!(paper(rate_gbps, first).eq6_holds);
            assert!(!paper(rate_gbps, first - 1).eq6_holds);
        }
    }

    #[test]
    fn eq7_starts_to_hold_at_121180_bytes_at_1gbps_with_n_min_1() {
        // docs/model-serialization.md: Eq. (7) holds from 121180 B (1 Gbps) and 1946180 B
        // (10 Gbps); §4.4: then n_min = 1
        for (rate_gbps, first) in [(1, 121_180), (10, 1_946_180)] {
            assert!(paper(rate_gbps, first).eq7_holds);
            assert!(!paper(rate_gbps, first - 1).eq7_holds);
            assert_eq!(paper(rate_gbps, first).n_min_eq8, Some(1));
        }
    }

    #[test]
    fn t2_of_eq5_is_negative_just_above_the_eq6_threshold() {
        // the documented inconsistency of §4.2: Eq. (6) holds at 9 KB (1 Gbps), Eq. (5)
        // gives (6 - 14) x 12 us = -96 us
        let m = paper(1, 9 * KIB);
        assert!(m.eq6_holds);
        assert_eq!(m.t2_ps, Some(us(-96)));
    }

    // --- §4.4 Eqs. (7)-(11), §5.1 worked values ---------------------------------------

    #[test]
    fn eq7_is_t2_at_least_twice_t1() {
        // §4.4: "From Eqs. (4) and (5), the inequality T2 >= 2 T1 is expressed as" Eq. (7)
        let mut checked = 0;
        for rate in [GBPS, 10 * GBPS, 25 * GBPS, 40 * GBPS] {
            for rtt_us in [50, 78, 100, 250] {
                let bdp = base_bdp_pkt(base_bdp_bytes(rate, rtt_us * US), 1460, 40);
                let tau = packet_time_ps(rate, 1460, 40);
                let m = slow_start_rounds(bdp);
                let t1 = t1_ps(m, bdp, rtt_us * US, tau);
                for sru in (1460..4 << 20).step_by(7919) {
                    if eq6_holds(sru, 1460, m, bdp) {
                        let t2_at_least_2_t1 = t2_ps(sru, 1460, m, tau) >= t1 * 2;
                        assert_eq!(eq7_holds(sru, 1460, bdp), t2_at_least_2_t1, "{rate} {rtt_us} {sru}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn section_5_1_values_at_1gbps() {
        // §5.1, S = 32 KB: "BaseBDP_pkt = [1Gbps x 100usec/(1500 x 8)] = 9, wnd_pkt = 4,
        // n_min = 3 and Q_max^TCP = 8 x 3 - 9 = 15"
        let m = paper(1, 32 * KIB);
        assert_eq!(m.base_bdp_pkt_ceil, 9);
        assert_eq!(m.n_min_eq8, Some(4)); // Eq. (8): 4 x 22 >= 82.67; 9/4 < 4 ...
        assert_eq!(m.window_case, WindowCase::B); // ... so case (b) of Eq. (9)
        assert_eq!(m.wnd_pkt, 4);
        assert_eq!(m.n_min, 3); // Eq. (10): [9/4] = 3
        assert_eq!(m.q_max_tcp_packets, 15);
    }

    #[test]
    fn section_5_1_values_at_10gbps_512kb() {
        // §5.1: "Q_max^TCP = 84 (= 2 x 4 x 21 - 84) ... BaseBDP_pkt = 84, n_min = 4 and wnd_pkt = 21";
        // T1 = 7 x 100 us + (84 - 64) x 1.2 us = 724 us (the CLI test's t1_s)
        let m = paper(10, 512 * KIB);
        assert_eq!(m.base_bdp_pkt_ceil, 84);
        assert_eq!((m.n_min, m.window_case, m.wnd_pkt, m.q_max_tcp_packets), (4, WindowCase::A, 21, 84));
        assert_eq!(m.t1_ps, us(724));
    }

    #[test]
    fn q_max_reading_rules_out_exact_bdp_pkt() {
        // the exact BaseBDP_pkt would give 15.67 and 84.67, not §5.1's 15 and 84
        assert_ne!(int(2 * 3 * 4) - paper(1, 32 * KIB).base_bdp_pkt, int(15));
        assert_ne!(int(2 * 4 * 21) - paper(10, 512 * KIB).base_bdp_pkt, int(84));
    }

    #[test]
    fn ideal_mct_is_2_2ms_for_32kb_8_servers_1gbps() {
        // §5.1, Eq. (12): "when S = 32 KB, V = 1 Gbps and N_a = 8, MCT becomes 2.2 msec":
        // 8 x 23 packets x 12 us = 2.208 ms (a floor would give 2.112 ms)
        assert_eq!(paper(1, 32 * KIB).mct_ps(8), Some(us(2208)));
    }

    #[test]
    fn eq8_has_no_solution_below_one_mss_and_falls_back_to_case_b() {
        let m = paper(1, 1000);
        assert_eq!(m.n_min_eq8, None);
        assert_eq!((m.window_case, m.n_min, m.wnd_pkt), (WindowCase::B, 3, 4));
    }

    // --- Appendix A ----------------------------------------------------------------------

    #[test]
    fn appendix_a_q_max_is_at_most_three_bdp_pkt() {
        // Appendix A: "Q_max^TCP becomes at most three BaseBDP_pkts"
        for rate in [GBPS, 10 * GBPS, 40 * GBPS, 100 * GBPS] {
            for rtt_us in [30, 50, 100, 200, 500] {
                for sru in [KIB, 4 * KIB, 32 * KIB, 64 * KIB, 512 * KIB, 4 << 20] {
                    let m = serialization_model(rate, rtt_us * US, 1460, sru, 40).unwrap();
                    assert!(m.q_max_tcp_packets <= 3 * m.base_bdp_pkt_ceil, "{m:?}");
                }
            }
        }
    }

    #[test]
    fn appendix_a5_a9_divisible_bdp_gives_q_max_equal_to_bdp() {
        // (A.5): BaseBDP_pkt = k n_min -> Q = BaseBDP_pkt; (A.9): BaseBDP_pkt = 4k -> Q = BaseBDP_pkt
        for (bdp_pkt, n_min, case) in [(12, 3, WindowCase::A), (20, 2, WindowCase::A), (84, 4, WindowCase::A)] {
            assert_eq!(q_max_tcp_eq11(n_min, wnd_pkt_eq9(bdp_pkt, n_min, case), bdp_pkt), bdp_pkt);
        }
        let n = n_min_eq10(12);
        assert_eq!(q_max_tcp_eq11(n, wnd_pkt_eq9(12, n, WindowCase::B), 12), 12);
    }

    // --- what the schedulers take (tests/test_osada_sim.py) ------------------------------

    #[test]
    fn scheduler_thresholds_at_1gbps_32kb() {
        // §5.1: OCS sets of n_min = 3 with windows of 4 packets; CCS/NCCS advertise BaseBDP =
        // 12500 B; condition-I at T1 V = 412 us x 1 Gbps / 8 = 51500 B, above S = 32 KB (so
        // NCCS K = 8 starts the next connection at once, test_nccs_k8_at_1gbps_does_not_incast)
        let t = paper(1, 32 * KIB).scheduler_thresholds();
        let (window_bytes, bdp_bytes) = (4 * 1460, 12_500);
        let expected = SchedulerThresholds { start_next_at_remaining: 51_500, set_size: 3, window_bytes, bdp_bytes };
        assert_eq!(t, expected);
        assert!(t.start_next_at_remaining > 32 * KIB);
    }

    #[test]
    fn scheduler_thresholds_at_10gbps_512kb() {
        // Fig. 13-16 setting: T1 V = 724 us x 10 Gbps / 8 = 905000 B, above S = 512 KB
        let t = paper(10, 512 * KIB).scheduler_thresholds();
        let (window_bytes, bdp_bytes) = (21 * 1460, 125_000);
        let expected = SchedulerThresholds { start_next_at_remaining: 905_000, set_size: 4, window_bytes, bdp_bytes };
        assert_eq!(t, expected);
        assert_eq!(paper(10, 512 * KIB).condition_i_bytes, int(512 * 1024 - 905_000));
    }

    #[test]
    fn start_next_is_the_ceiling_of_t1_v_over_8() {
        // 78 us at 1 Gbps: T1 = 3 x 78 + 3 x 12 = 270 us, 33750 B exactly; at 3 Gbps a packet
        // takes 4 us and BaseBDP is 29250 B = 19.5 packets: m = 6, T1 = 5 x 78 + (20 - 16) x 4
        // = 406 us = 152250 B; at 7 Gbps T1 V/8 is fractional and rounds up
        let at = |rate| serialization_model(rate, 78 * US, 1460, KIB, 40).unwrap();
        assert_eq!(at(GBPS).scheduler_thresholds().start_next_at_remaining, 33_750);
        assert_eq!(at(3 * GBPS).t1_ps, us(406));
        assert_eq!(at(3 * GBPS).scheduler_thresholds().start_next_at_remaining, 152_250);
        let m = serialization_model(7 * GBPS, 77 * US + 1, 1460, KIB, 40).unwrap();
        let exact = t1_bytes(m.t1_ps, m.rate_bps);
        assert!(!exact.is_integer());
        assert_eq!(m.scheduler_thresholds().start_next_at_remaining as i128, exact.to_integer() + 1);
    }

    // --- bad input -----------------------------------------------------------------------

    #[test]
    fn bdp_of_two_packets_or_less_is_refused_naming_the_base_rtt() {
        // the derivation starts from a 2-packet initial window (§4.2); 10 us at 1 Gbps is
        // 0.83 packets; 24 us is exactly 2 (refused), 24 us + 1 ps just above (taken)
        let e = serialization_model(GBPS, 10 * US, 1460, 64 * KIB, 40).unwrap_err();
        assert_eq!(e.param, "base_rtt_ps");
        assert!(e.to_string().contains("BaseBDP_pkt = 0.833"), "{e}");
        assert!(serialization_model(GBPS, 24 * US, 1460, 64 * KIB, 40).is_err());
        assert_eq!(serialization_model(GBPS, 24 * US + 1, 1460, 64 * KIB, 40).unwrap().m, 3);
    }

    #[test]
    fn zero_and_out_of_range_inputs_are_refused_naming_the_parameter() {
        type Args = (u64, u64, u32, u64, u32);
        let ok: Args = (GBPS, 100 * US, 1460, KIB, 40);
        let cases: [(Args, &str); 8] = [
            ((0, ok.1, ok.2, ok.3, ok.4), "rate_bps"),
            ((MAX_RATE_BPS + 1, ok.1, ok.2, ok.3, ok.4), "rate_bps"),
            ((ok.0, 0, ok.2, ok.3, ok.4), "base_rtt_ps"),
            ((ok.0, MAX_BASE_RTT_PS + 1, ok.2, ok.3, ok.4), "base_rtt_ps"),
            ((ok.0, ok.1, 0, ok.3, ok.4), "mss_bytes"),
            ((ok.0, ok.1, ok.2, 0, ok.4), "sru_bytes"),
            ((ok.0, ok.1, ok.2, MAX_SRU_BYTES + 1, ok.4), "sru_bytes"),
            ((ok.0, ok.1, ok.2, ok.3, MAX_HEADER_BYTES + 1), "header_bytes"),
        ];
        for ((rate, rtt, mss, sru, header), param) in cases {
            let e = serialization_model(rate, rtt, mss, sru, header).unwrap_err();
            assert_eq!(e.param, param, "{e}");
        }
    }

    #[test]
    fn extreme_inputs_stay_exact_without_overflow() {
        // the corners of the accepted ranges; in a debug build an i128 overflow would panic
        for rate in [1, 1_000, MAX_RATE_BPS] {
            for rtt in [1, MAX_BASE_RTT_PS] {
                for mss in [1, 536, MAX_MSS_BYTES] {
                    for header in [0, 40, MAX_HEADER_BYTES] {
                        for sru in [1, 1460, MAX_SRU_BYTES] {
                            let Ok(m) = serialization_model(rate, rtt, mss, sru, header) else { continue };
                            let t = m.scheduler_thresholds();
                            assert!(t.bdp_bytes >= 1 && t.window_bytes >= mss as u64 && t.set_size >= 1);
                            assert!(m.mct_ps(1 << 20).is_some());
                        }
                    }
                }
            }
        }
        assert!(paper(1, MAX_SRU_BYTES).mct_ps(u32::MAX).is_some());
    }
}
