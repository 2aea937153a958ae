"""The connection-serialization model of Osada et al. (``004_f48ce568b38e0ea9.txt``).

Equations (1)-(12) of §4-§5.1 and Appendix A, one small function per equation, computed
exactly with :class:`fractions.Fraction` (no float rounding can move a floor or a
ceiling) and exposed as one frozen :class:`SerializationModel` so the simulator's CCS,
NCCS and OCS schemes can import ``n_min``, ``wnd_pkt`` and ``T1`` from here.

The paper writes ``[x]`` for both floor and ceiling and leaves units implicit. The
reading used for each equation is the one that reproduces the paper's worked examples;
each choice and the example it reproduces is in ``docs/model-serialization.md``:

- KB in the paper is 1024 bytes (§3 says ``K = 2^10``; the 115/116 KB example of Eq. (6)
  only holds with it). On the command line write ``64KiB`` for the paper's "64 KB".
- A packet on the wire is ``MSS + 40`` bytes (Eq. (2): 40 = fixed IP + TCP headers).
- ``[x]`` is a ceiling in Eqs. (3), (4), (6), (9), (10), (12) and in §5.1's
  ``BaseBDP_pkt = [...] = 9``; a floor in Eq. (5), and so in Eqs. (7)-(8) derived from it.

Times are integer picoseconds and rates bits per second, as everywhere in incastlab.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction

from ..errors import UsageError
from ..units import PS_PER_S, format_duration_ps

#: Fixed IP + TCP header bytes per packet (Eq. (2): "the value of 40 ... is the total
#: number of bytes of the fixed parts of IP and TCP headers").
HEADER_BYTES = 40
#: Initial congestion window in packets the derivation of Eqs. (3)-(6) assumes (§4.2).
INITIAL_CWND_PKT = 2
#: Smallest window that still lets three duplicate ACKs trigger fast retransmit (§4.4,
#: case (b) of Eq. (9)).
MIN_WND_PKT = 4


# --- one function per equation ---------------------------------------------------


def base_bdp_bytes(rate_bps: int, base_rtt_ps: int) -> Fraction:
    """BaseBDP = V/8 x BaseRTT, in bytes (§4.2, the advertised window of Eq. (1))."""
    return Fraction(rate_bps * base_rtt_ps, 8 * PS_PER_S)


def packet_time_ps(rate_bps: int, mss_bytes: int, header_bytes: int = HEADER_BYTES) -> Fraction:
    """(MSS + 40) x 8 / V: transmission time of one full packet, the factor in Eqs. (4), (5)."""
    return Fraction((mss_bytes + header_bytes) * 8 * PS_PER_S, rate_bps)


def base_bdp_pkt(bdp_bytes: Fraction, mss_bytes: int, header_bytes: int = HEADER_BYTES) -> Fraction:
    """Eq. (2): BaseBDP_pkt = BaseBDP / (MSS + 40), kept exact (Fig. 3 uses 6.5)."""
    return bdp_bytes / (mss_bytes + header_bytes)


def ceil_log2(x: Fraction) -> int:
    """Smallest k >= 0 with 2^k >= x, exactly (for x >= 1: [log2 x] read as a ceiling)."""
    # 2^k >= x  <=>  2^k >= ceil(x) because 2^k is an integer
    return max(0, (math.ceil(x) - 1).bit_length())


def slow_start_rounds(bdp_pkt: Fraction) -> int:
    """Eq. (3): m = [log2 BaseBDP_pkt] + 1, the ceiling (Fig. 3: 6.5 -> m = 4; §4.2: T1 = 412 us)."""
    return ceil_log2(bdp_pkt) + 1


def doubling_sum(first: int, last: int) -> int:
    """sum_{i=first}^{last} 2^(i-1): packets sent in BaseRTTs first..last of slow start."""
    return sum(2 ** (i - 1) for i in range(first, last + 1))


def t1_ps(m: int, bdp_pkt: Fraction, base_rtt_ps: int, pkt_time: Fraction) -> Fraction:
    """Eq. (4): T1 = (m-1) BaseRTT + ([BaseBDP_pkt] - 2^(m-2)) (MSS+40) 8 / V.

    [BaseBDP_pkt] is a ceiling: Fig. 3 takes [6.5] = 7.
    """
    return (m - 1) * base_rtt_ps + (math.ceil(bdp_pkt) - 2 ** (m - 2)) * pkt_time


def t2_ps(sru_bytes: int, mss_bytes: int, m: int, pkt_time: Fraction) -> Fraction:
    """Eq. (5): T2 = [(S - sum_{i=2}^{m-1} 2^(i-1) MSS) / MSS] (MSS+40) 8 / V, floor.

    Floor, because only it gives the paper's T2 ~ 360 us at 1 Gbps / 100 us / 64 KB
    (30 x 12 us; the ceiling gives 372 us). Negative when the SRU is smaller than the
    2^(m-1) - 2 packets the formula assumes slow start sent (see the docs).
    """
    slow_start_bytes = doubling_sum(2, m - 1) * mss_bytes
    return math.floor(Fraction(sru_bytes - slow_start_bytes, mss_bytes)) * pkt_time


def sru_packets(sru_bytes: int, mss_bytes: int) -> int:
    """[S/MSS] as a ceiling: the number of packets generated from the SRU (Eqs. (6), (12))."""
    return -(-sru_bytes // mss_bytes)


def eq6_lhs(sru_bytes: int, mss_bytes: int, m: int) -> int:
    """Left side of Eq. (6): [S/MSS] - sum_{i=2}^{m-2} 2^(i-1) + 2^(m-2).

    cwnd_pkt once every packet of the SRU is acknowledged (§4.2); it always equals
    [S/MSS] + 2 (the initial window plus one per ACK).
    """
    return sru_packets(sru_bytes, mss_bytes) - doubling_sum(2, m - 2) + 2 ** (m - 2)


def eq6_holds(sru_bytes: int, mss_bytes: int, m: int, bdp_pkt: Fraction) -> bool:
    """Eq. (6): T1 and T2 are defined iff cwnd can reach [BaseBDP_pkt] (ceiling) within the SRU."""
    return eq6_lhs(sru_bytes, mss_bytes, m) >= math.ceil(bdp_pkt)


def eq7_rhs(bdp_pkt: Fraction) -> Fraction:
    """Right side of Eqs. (7)-(8): 2 BaseBDP_pkt [log2 BaseBDP_pkt] + 2 [BaseBDP_pkt] - 2.

    Derived from T2 >= 2 T1 with Eqs. (4)-(5): [log2 .] is m - 1 (ceiling, Eq. (3)), the
    second bracket is Eq. (4)'s ceiling, and the first BaseBDP_pkt stays exact because it
    stands for BaseRTT / ((MSS+40) 8 / V).
    """
    return 2 * bdp_pkt * ceil_log2(bdp_pkt) + 2 * math.ceil(bdp_pkt) - 2


def eq7_sru_packets(sru_bytes: int, mss_bytes: int) -> int:
    """[S/MSS] in Eqs. (7)-(8): a floor, the same bracket as Eq. (5) they are derived from."""
    return sru_bytes // mss_bytes


def eq7_holds(sru_bytes: int, mss_bytes: int, bdp_pkt: Fraction) -> bool:
    """Eq. (7): T2 >= 2 T1, so plain NCCS (sets of one connection) fills the link."""
    return eq7_sru_packets(sru_bytes, mss_bytes) >= eq7_rhs(bdp_pkt)


def n_min_eq8(sru_bytes: int, mss_bytes: int, bdp_pkt: Fraction) -> int | None:
    """Eq. (8): the smallest n >= 1 with n [S/MSS] >= the right side of Eq. (7).

    1 when Eq. (7) holds (§4.4). None when S < MSS: [S/MSS] = 0 and no n satisfies it
    (then BaseBDP_pkt / n -> 0 < 4 and case (b) of Eq. (9) applies).
    """
    packets = eq7_sru_packets(sru_bytes, mss_bytes)
    if packets == 0:
        return None
    return max(1, math.ceil(eq7_rhs(bdp_pkt) / packets))


def window_case(bdp_pkt_int: int, n_min: int | None) -> str:
    """Eq. (9)'s case: "a" if BaseBDP_pkt / n_min >= 4, else "b" (fast retransmit needs 4)."""
    if n_min is not None and Fraction(bdp_pkt_int, n_min) >= MIN_WND_PKT:
        return "a"
    return "b"


def n_min_eq10(bdp_pkt_int: int) -> int:
    """Eq. (10): in case (b), n_min = [BaseBDP_pkt / 4], a ceiling (§5.1: [9/4] = 3)."""
    return -(-bdp_pkt_int // MIN_WND_PKT)


def wnd_pkt_eq9(bdp_pkt_int: int, n_min: int, case: str) -> int:
    """Eq. (9): wnd_pkt = [BaseBDP_pkt / n_min] (ceiling, Appendix A.2) in case (a), 4 in (b)."""
    if case == "a":
        return -(-bdp_pkt_int // n_min)
    return MIN_WND_PKT


def q_max_tcp_eq11(n_min: int, wnd_pkt: int, bdp_pkt_int: int) -> int:
    """Eq. (11): Q_max^TCP = 2 n_min wnd_pkt - BaseBDP_pkt, with BaseBDP_pkt = [.] as in §5.1."""
    return 2 * n_min * wnd_pkt - bdp_pkt_int


def mct_ps_eq12(servers: int, sru_bytes: int, mss_bytes: int, pkt_time: Fraction) -> Fraction:
    """Eq. (12): ideal MCT = N_a [S/MSS] (MSS+40) 8 / V (ceiling; the paper omits the x 8)."""
    return servers * sru_packets(sru_bytes, mss_bytes) * pkt_time


def condition_i_bytes(sru_bytes: int, t1: Fraction, rate_bps: int) -> Fraction:
    """§4.3 condition-I: NCCS starts the next connection once S - T1 V bits are sent (here bytes)."""
    return sru_bytes - t1 * rate_bps / (8 * PS_PER_S)


# --- the whole model as one value ---------------------------------------------------


@dataclass(frozen=True)
class SerializationModel:
    """Every quantity of the model for one (V, BaseRTT, MSS, S) point.

    Times are picoseconds (rounded to the nearest ps from exact values); ``None`` marks a
    value the paper leaves undefined at this point or an input that was not given.
    """

    rate_bps: int
    base_rtt_ps: int
    mss_bytes: int
    header_bytes: int
    sru_bytes: int
    servers: int | None
    buffer_packets: int | None
    #: BaseBDP = V/8 x BaseRTT (bytes, exact value as a float)
    base_bdp_bytes: float
    #: Eq. (2), exact (may be fractional, like Fig. 3's 6.5)
    base_bdp_pkt: float
    #: [BaseBDP_pkt], the ceiling; what §5.1 reports as "BaseBDP_pkt" (9 and 84)
    base_bdp_pkt_ceil: int
    #: (MSS + 40) x 8 / V
    packet_time_ps: int
    #: Eq. (3)
    m: int
    #: Eq. (4); independent of S, so given even where Eq. (6) fails
    t1_ps: int
    #: Eq. (5) literally (can be negative, see docs); None where Eq. (6) fails
    t2_ps: int | None
    #: [S/MSS], ceiling: packets per SRU
    sru_packets: int
    #: Eq. (6)
    eq6_holds: bool
    #: right side of Eqs. (7)-(8), in packets
    eq7_rhs_packets: float
    #: Eq. (7)
    eq7_holds: bool
    #: Eq. (8); None when S < MSS (no n satisfies it)
    n_min_eq8: int | None
    #: Eq. (9) case, "a" or "b"
    window_case: str
    #: the n_min OCS uses: Eq. (8) in case (a), Eq. (10) in case (b)
    n_min: int
    #: Eq. (9)
    wnd_pkt: int
    #: Eq. (11), packets
    q_max_tcp_packets: int
    #: Q_max^TCP <= buffer, if a buffer was given
    q_max_fits_buffer: bool | None
    #: Eq. (12), if the number of active servers was given
    mct_ps: int | None
    #: §4.3 condition-I: bytes of the current connection after which the next one starts
    #: (NCCS; OCS per set); zero or less means at once
    condition_i_bytes: float

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (the ``--json`` output), times in seconds."""
        return _in_seconds(asdict(self))


def _in_seconds(fields: dict) -> dict:
    """Public outputs carry SI units named in the key: ``t1_ps`` becomes ``t1_s``."""
    return {(k[:-3] + "_s" if k.endswith("_ps") else k): (v / PS_PER_S if k.endswith("_ps") and v is not None else v)
            for k, v in fields.items()}


def _check_positive(param: str, value: object, allowed: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UsageError(param, value, allowed)


def serialization_model(
    rate_bps: int,
    base_rtt_ps: int,
    mss_bytes: int,
    sru_bytes: int,
    *,
    servers: int | None = None,
    buffer_packets: int | None = None,
    header_bytes: int = HEADER_BYTES,
) -> SerializationModel:
    """Evaluate Eqs. (1)-(12) of Osada et al. for one point.

    Raises :class:`UsageError` for inputs outside the model: non-positive values, or a
    BaseBDP of 2 packets or less (the derivation starts from a 2-packet initial window,
    so Eq. (3)'s m would be below 3 and Eqs. (4)-(6) lose their meaning).
    """
    _check_positive("rate", rate_bps, "a rate above zero (bits per second)")
    _check_positive("base-rtt", base_rtt_ps, "a duration above zero (picoseconds)")
    _check_positive("mss", mss_bytes, "a whole number of bytes, at least 1")
    _check_positive("sru", sru_bytes, "a whole number of bytes, at least 1")
    if servers is not None:
        _check_positive("servers", servers, "a whole number, at least 1")
    if buffer_packets is not None:
        _check_positive("buffer-packets", buffer_packets, "a whole number of packets, at least 1")
    if not isinstance(header_bytes, int) or header_bytes < 0:
        raise UsageError("header-bytes", header_bytes, "a whole number of bytes, at least 0")

    bdp = base_bdp_bytes(rate_bps, base_rtt_ps)
    bdp_pkt = base_bdp_pkt(bdp, mss_bytes, header_bytes)
    if bdp_pkt <= INITIAL_CWND_PKT:
        raise UsageError(
            "base-rtt",
            format_duration_ps(base_rtt_ps),
            f"a BaseRTT for which BaseBDP = rate/8 x BaseRTT exceeds {INITIAL_CWND_PKT} packets of "
            f"MSS+{header_bytes} bytes (the model starts from a {INITIAL_CWND_PKT}-packet initial window); "
            f"here BaseBDP_pkt = {float(bdp_pkt):.3g}",
        )
    bdp_pkt_int = math.ceil(bdp_pkt)
    tau = packet_time_ps(rate_bps, mss_bytes, header_bytes)
    m = slow_start_rounds(bdp_pkt)
    t1 = t1_ps(m, bdp_pkt, base_rtt_ps, tau)
    holds6 = eq6_holds(sru_bytes, mss_bytes, m, bdp_pkt)
    t2 = t2_ps(sru_bytes, mss_bytes, m, tau) if holds6 else None

    n8 = n_min_eq8(sru_bytes, mss_bytes, bdp_pkt)
    case = window_case(bdp_pkt_int, n8)
    n_min = n8 if case == "a" else n_min_eq10(bdp_pkt_int)
    assert n_min is not None  # case "a" implies n8 is an int
    wnd = wnd_pkt_eq9(bdp_pkt_int, n_min, case)
    q_max = q_max_tcp_eq11(n_min, wnd, bdp_pkt_int)

    return SerializationModel(
        rate_bps=rate_bps,
        base_rtt_ps=base_rtt_ps,
        mss_bytes=mss_bytes,
        header_bytes=header_bytes,
        sru_bytes=sru_bytes,
        servers=servers,
        buffer_packets=buffer_packets,
        base_bdp_bytes=float(bdp),
        base_bdp_pkt=float(bdp_pkt),
        base_bdp_pkt_ceil=bdp_pkt_int,
        packet_time_ps=round(tau),
        m=m,
        t1_ps=round(t1),
        t2_ps=None if t2 is None else round(t2),
        sru_packets=sru_packets(sru_bytes, mss_bytes),
        eq6_holds=holds6,
        eq7_rhs_packets=float(eq7_rhs(bdp_pkt)),
        eq7_holds=eq7_holds(sru_bytes, mss_bytes, bdp_pkt),
        n_min_eq8=n8,
        window_case=case,
        n_min=n_min,
        wnd_pkt=wnd,
        q_max_tcp_packets=q_max,
        q_max_fits_buffer=None if buffer_packets is None else q_max <= buffer_packets,
        mct_ps=None if servers is None else round(mct_ps_eq12(servers, sru_bytes, mss_bytes, tau)),
        condition_i_bytes=float(condition_i_bytes(sru_bytes, t1, rate_bps)),
    )


# --- thresholds -----------------------------------------------------------------------

#: Largest SRU the threshold search tries (1 PiB): a bound so the search always stops.
_SEARCH_LIMIT_BYTES = 2**50


def smallest_sru(holds, limit: int = _SEARCH_LIMIT_BYTES) -> int | None:
    """Smallest S in bytes (1..limit) with ``holds(S)``, for a predicate monotone in S.

    Doubles an upper bound, then bisects: O(log limit) evaluations. None if even
    ``limit`` does not satisfy it.
    """
    hi = 1
    while not holds(hi):
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = hi // 2  # holds(lo) is false (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class SruThresholds:
    """Smallest SRU sizes (bytes) at which Eq. (6) and Eq. (7) start to hold."""

    rate_bps: int
    base_rtt_ps: int
    mss_bytes: int
    header_bytes: int
    base_bdp_pkt: float
    m: int
    #: T1 and T2 are defined (NCCS usable) from this SRU size on (Eq. (6))
    eq6_min_sru_bytes: int | None
    #: one connection per set suffices, n_min = 1 (Eq. (7))
    eq7_min_sru_bytes: int | None

    def to_dict(self) -> dict:
        """Plain JSON-ready dict (the ``--json`` output), times in seconds."""
        return _in_seconds(asdict(self))


def sru_thresholds(
    rate_bps: int, base_rtt_ps: int, mss_bytes: int, *, header_bytes: int = HEADER_BYTES
) -> SruThresholds:
    """Search the smallest S for which Eq. (6) and Eq. (7) hold (§4.2: 9 KB at 1 Gbps)."""
    base = serialization_model(rate_bps, base_rtt_ps, mss_bytes, 1, header_bytes=header_bytes)
    bdp_pkt = base_bdp_pkt(base_bdp_bytes(rate_bps, base_rtt_ps), mss_bytes, header_bytes)
    return SruThresholds(
        rate_bps=rate_bps,
        base_rtt_ps=base_rtt_ps,
        mss_bytes=mss_bytes,
        header_bytes=header_bytes,
        base_bdp_pkt=base.base_bdp_pkt,
        m=base.m,
        eq6_min_sru_bytes=smallest_sru(lambda s: eq6_holds(s, mss_bytes, base.m, bdp_pkt)),
        eq7_min_sru_bytes=smallest_sru(lambda s: eq7_holds(s, mss_bytes, bdp_pkt)),
    )
