"""``Scenario``: one simulated incast experiment, written the way people write it.

Fields take human units (``"32KiB"``, ``"1Gbps"``, ``"100us"``) or plain numbers (bytes,
bits per second, seconds) and are stored as integers in base units: sizes in bytes, rates
in bits per second, durations in picoseconds. ``to_native()`` gives the dict the Rust core
takes (``docs/native-api.md``); the core validates meaning again, this model catches
mistakes early and names them the way the user wrote them.

Defaults are FAST'08 Table 1 (``000_315d806dde942a9f.txt`` §3.1): 1 Gbps links, RTT
100 us, SRU 256 KB, NewReno, duplicate-ACK threshold 3, slow start enabled, RTOmin
200 ms, 20 s of simulated time per measurement. The paper varies the output buffer; we
default to 32 KiB, the buffer of its Fig. 4 collapse. Delayed ACK is off, as in the
paper's ns-2 runs (its §4.2 attributes delayed-ACK "mini-timeouts" to the real Procurve
cluster, not to the simulation).
"""

from __future__ import annotations

import functools

import math
import numbers
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_serializer, field_validator, model_validator

from . import units
from .errors import UsageError

KiB = 1024
PS_PER_US = 10**6
PS_PER_MS = 10**9
PS_PER_S = 10**12

# A round trip crosses four links in the star (server -> switch -> client, and the ACK
# back: client -> switch -> server), so the core's per-link delay is RTT / 4.
LINKS_PER_RTT = 4

# Delayed-ACK timeout when switched on without a value: Linux's minimum delayed-ACK timer
# (000_315d806dde942a9f.txt §4.2: "Most TCP implementations wait only 40ms").
DEFAULT_DELAYED_ACK_PS = 40 * PS_PER_MS

TCP_VARIANTS = ("reno", "newreno", "sack")

MITIGATIONS = ("ntcp", "tcpfg", "ictcp", "ccs", "nccs", "ocs")

# How NCCS and OCS read condition-I, "S - T1 V bits sent" (Osada et al. §4.3-4.4;
# docs/model.md, "Condition-I"): counted as the servers send, as the client receives, or
# as the servers send and also checked as a connection opens.
CONDITION_I = ("sent", "delivered", "open")

# How a switch port admits a packet (crates/sim/src/net/port.rs): by bytes held, the
# packet on the wire included; by packets held (ns-2's DropTail); or while one more MTU
# fits beside the waiting packets (ns-3's device queue).
BUFFER_ADMISSIONS = ("bytes", "packets", "mtu_slots")

# When the RTO's exponential backoff ends: at the next RTT sample (RFC 6298 with Karn's
# rule; ns-2) or at every ACK of new data (ns-3).
RTO_BACKOFFS = ("sample", "new_ack")

# How events at exactly the same instant are ordered (crates/sim/src/event.rs).
TIE_BREAKS = ("fifo", "random")

# Whose rules TCP follows where implementations differ: the RFCs as written, ns-2.35's
# Agent/TCP (crates/sim/src/tcp/ns2_rules.rs) or ns-3.44's TcpSocketBase
# (crates/sim/src/tcp/recovery/ns3.rs).
TCP_RULES = ("rfc", "ns2", "ns3")

# Fields that take one word out of a list.
_CHOICES = {"tcp": TCP_VARIANTS, "mitigation": MITIGATIONS, "condition_i": CONDITION_I,
            "buffer_admission": BUFFER_ADMISSIONS, "rto_backoff": RTO_BACKOFFS, "tie_break": TIE_BREAKS,
            "tcp_rules": TCP_RULES}

# TCPFG (Osada et al. §5.1): RTOmin 200 us with a fine-grained timer.
TCPFG_RTO_MIN_PS = 200 * PS_PER_US

_SIZE_FIELDS = ("sru", "block", "buffer", "rwnd", "udp_packet")
_DURATION_FIELDS = ("rtt", "rto_min", "rto_max", "timer_granularity", "delayed_ack", "jitter", "send_jitter", "duration",
                    "syn_timeout")
# Durations that may be zero (0 = off / none).
_ZERO_OK = ("delayed_ack", "jitter", "send_jitter")
# Integer fields and their smallest allowed value.
_INT_MINIMUM = {"servers": 1, "dupack_threshold": 1, "init_cwnd": 1, "blocks": 1, "seed": 0, "mss": 64,
                "buffer_packets": 1, "active_servers": 1, "nccs_k": 1, "header": 0}
# Integer fields that may be None (unset).
_OPTIONAL_INTS = ("blocks", "buffer_packets", "active_servers")
_INT_MAXIMUM = {"seed": 2**64 - 1, "servers": 1 << 20, "dupack_threshold": 1000, "init_cwnd": 1000, "mss": 65495, "header": 120}


_exact_duration = units.exact_duration


def _exact_size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def _exact_rate(bps: int) -> str:
    for unit, scale in (("Tbps", 10**12), ("Gbps", 10**9), ("Mbps", 10**6), ("kbps", 10**3)):
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bps"


@functools.cache
def _default_dump() -> dict:
    """Every field's default as ``model_dump`` writes it (for ``repr``)."""
    return Scenario(servers=1).model_dump()


class Scenario(BaseModel):
    """One synchronized-read incast experiment on a single-switch star.

    Every field has a documented default and unit (sizes: bytes; rates: bit/s;
    durations: picoseconds once validated). Build with keywords, e.g.
    ``Scenario(servers=16, buffer="64KiB", rto_min="200us", duration="2s")``.
    A value that is not allowed raises ``incastlab.errors.UsageError`` naming the field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)

    #: Number of storage servers N answering each block (FAST'08: the swept variable).
    servers: int
    #: Server Request Unit: bytes each server returns per block (FAST'08 Table 1: 256 KB).
    sru: int = 256 * KiB
    #: Fixed-block mode (001_e0dada207805edc8.txt: "1 MB / N" per server): block size in
    #: bytes split over the N servers; None = fixed-SRU mode (FAST'08).
    block: int | None = None
    #: Switch output-port buffer in bytes; 32 KiB is the buffer of FAST'08 Fig. 4.
    buffer: int = 32 * KiB
    #: Rate of every link in bit/s (FAST'08 Table 1: 1 Gbps).
    rate: int = 10**9
    #: Client-server round-trip propagation in ps (FAST'08 Table 1: 100 us).
    rtt: int = 100 * PS_PER_US
    #: RFC 6298 minimum RTO in ps (FAST'08 Table 1: 200 ms).
    rto_min: int = 200 * PS_PER_MS
    #: Cap on the backed-off RTO in ps (RFC 6298 §2.5: at least 60 s).
    rto_max: int = 60 * PS_PER_S
    #: RFC 6298 clock granularity G in ps (1 us: microsecond RTT tracking,
    #: 001_e0dada207805edc8.txt; the core's default).
    timer_granularity: int = PS_PER_US
    #: Fast retransmit after this many duplicate ACKs (FAST'08 Table 1: 3).
    dupack_threshold: int = 3
    #: RFC 3042 limited transmit: RFC 5681 §3.2 says a sender SHOULD use it; ns-2 (its
    #: default since 2001), ns-3 and Linux do. FAST'08 Table 1 says disabled, but its runs
    #: most likely had it (docs/model.md, "The ns-2 reading of FAST'08"); off is
    #: ``limited_transmit=False`` (``--no-limited-transmit``).
    limited_transmit: bool = True
    #: Timers fire on the next multiple of ``timer_granularity``, as jiffies timers do
    #: (WREN'09, 002_08b014e448da6385.txt: low-resolution timers); off = exact deadlines.
    timer_ticks: bool = False
    #: RFC 7323 timestamps: every ACK of new data is an RTT sample (also for retransmitted
    #: data) and clears the timer backoff, as in Linux; off = one timed segment per RTT and
    #: Karn's rule (RFC 6298, ns-2's Agent/TCP).
    timestamps: bool = False
    #: RTO x (1 + U(0, rto_random)) each time the timer is armed (001_e0dada207805edc8.txt:
    #: "RTO = est. RTO * (1 + RAND(0.5))"); 0 = off.
    rto_random: float = 0.0
    #: RFC 5681 slow start (FAST'08 Table 1: enabled).
    slow_start: bool = True
    #: Delayed-ACK timeout in ps, 0 = off (off in FAST'08's ns-2 runs, §4.2).
    delayed_ack: int = 0
    #: Initial congestion window in segments (the core's default, 2 segments: RFC 5681 §3.1
    #: for MSS 1460 allows up to 3; ns-2's default window_init is 2).
    init_cwnd: int = 2
    #: Advertised receive window in bytes: the per-flow window cap. Default 20 x 1460 B,
    #: ns-2's ``window_`` of 20 packets, the reading that reproduces FAST'08 Fig. 6
    #: (docs/defaults.md); ``rwnd="1GiB"`` is the uncapped reading.
    rwnd: int = 20 * 1460
    #: Server think time in ps, uniform in [0, jitter) per request (0: none, FAST'08 §4.1:
    #: "simulated source nodes serve data as rapidly as the network can handle").
    jitter: int = 0
    #: Host timing noise in ps: each data packet enters its server's NIC uniform in
    #: [0, send_jitter] late (ns-2's ``overhead_``, 0 by default); breaks drop-tail phase
    #: lock-out between equal-rate senders (docs/defaults.md).
    send_jitter: int = 0
    #: RFC 5681 §4.1: restart from the initial window after an idle RTO (off as in ns-2;
    #: Linux's tcp_slow_start_after_idle is on).
    slow_start_after_idle: bool = False
    #: Simulated time to run, in ps (FAST'08 §3.1: 20 s); None when ``blocks`` is given.
    duration: int | None = 20 * PS_PER_S
    #: Stop after this many blocks instead of after ``duration``.
    blocks: int | None = None
    #: RNG seed: same seed, same result.
    seed: int = 1
    #: TCP loss-recovery variant: reno, newreno or sack (FAST'08 Table 1: NewReno; Fig. 10).
    tcp: str = "newreno"
    #: TCP payload bytes per segment (MTU 1500 - 40 B of TCP/IP headers).
    mss: int = 1460
    #: The switch buffer's limit in packets (ns-2's ``qlim_``; Osada et al. Table 1: 40,
    #: 120, 200 packets); set, it implies ``buffer_admission="packets"``. None: ``buffer``.
    buffer_packets: int | None = None
    #: How a switch port admits a packet: "bytes" (its bytes fit beside every byte held,
    #: the packet on the wire included), "packets" (fewer than ``buffer_packets``, or
    #: ``buffer`` // MTU, are held: ns-2's DropTail) or "mtu_slots" (one more MTU fits
    #: beside the waiting bytes: ns-3's device queue). None: "packets" if
    #: ``buffer_packets`` is set, else "bytes".
    buffer_admission: str | None = None
    #: When the RTO's backoff ends: "sample" (at the next RTT sample, which Karn's rule takes
    #: only from a segment never retransmitted: RFC 6298, ns-2) or "new_ack" (at every ACK of
    #: new data, the RTO recomputed from SRTT and RTTVAR: ns-3).
    rto_backoff: str = "sample"
    #: Whose rules TCP follows where implementations differ: "rfc" (RFC 5681, 6582 and 6298
    #: as written), "ns2" (ns-2.35's Agent/TCP with its defaults: the retransmission timer
    #: keeps running on an idle connection and its expiry cuts cwnd to one segment; fast
    #: retransmit needs an ACK one packet beyond recover; ssthresh halves the window) or
    #: "ns3" (ns-3.44's TcpSocketBase without SACK: recovery on SACKs emulated from
    #: duplicate ACKs, ssthresh from the pipe, no timer restart at fast retransmit, cwnd
    #: grown per whole segment acknowledged). "ns3" needs tcp="newreno".
    tcp_rules: str = "rfc"
    #: How events at exactly the same instant are ordered: "fifo" (in the order they were
    #: scheduled, as ns-2 and ns-3 do) or "random" (seeded by ``seed``; measures how much a
    #: result hangs on exact ties, docs/model.md).
    tie_break: str = "fifo"
    #: Header bytes per packet on the wire: 40 (TCP/IP); ns-3's point-to-point links add 2
    #: of PPP framing (peers/ns3).
    header: int = 40
    #: Of the ``servers`` (N_s), this many (N_a) chosen at random answer each block
    #: (Osada et al. §5.1); None = all.
    active_servers: int | None = None
    #: Open a new connection (SYN, SYN-ACK, request) for every block, as Osada et al.'s
    #: missions do; off = persistent connections (FAST'08).
    handshake: bool = False
    #: SYN retransmission timeout in ps (Osada et al. §4.4: three seconds).
    syn_timeout: int = 3 * PS_PER_S
    #: How the client schedules its connections (Osada et al. §4-5): ntcp (all at once),
    #: tcpfg (all at once, RTOmin 200 us unless rto_min is given), ictcp, ccs, nccs, ocs.
    mitigation: str = "ntcp"
    #: NCCS: at most this many connections open at once (Osada et al. use 2, 4, 8).
    nccs_k: int = 4
    #: NCCS and OCS: how condition-I ("S - T1 V bits sent", §4.3) is read. "sent": the
    #: bits the newest connection's server has sent, checked as it sends (the paper's
    #: words; the default). "delivered": the bits that reached the client, checked as they
    #: arrive (what a real client sees). "open": as "sent", and also checked as a
    #: connection opens, so with S <= T1 V the next starts at once and K alone bounds the
    #: overlap. docs/model.md compares them.
    condition_i: str = "sent"
    #: UDP constant-bit-rate background, as a fraction of the link rate split over all
    #: servers (Osada et al. §5.1; "0.1%" = 0.001).
    udp: float = 0.0
    #: Size of a UDP background datagram on the wire, bytes. Osada et al. do not say;
    #: we use full-size packets (ns-2's CBR default is 210 B).
    udp_packet: int = 1500

    # --- construction: pydantic errors become one UsageError naming the field -------------

    def __init__(self, **data: Any):
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise _usage_error(e, data) from None

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> "Scenario":  # type: ignore[override]
        if isinstance(obj, dict):
            return cls(**obj)
        return super().model_validate(obj, **kwargs)

    # --- parsing of human units ------------------------------------------------------------

    @model_validator(mode="before")
    @classmethod
    def _duration_or_blocks(cls, data: Any) -> Any:
        # blocks and duration are two ways to say when to stop; the core lets blocks win,
        # here giving both is a mistake worth naming.
        if isinstance(data, dict) and data.get("blocks") is not None:
            if data.get("duration") is not None:
                raise UsageError("duration", data["duration"], "either a duration or a block count, not both")
            data = {**data, "duration": None}
        return data

    @field_validator(*_SIZE_FIELDS, mode="before")
    @classmethod
    def _parse_size(cls, v: Any, info) -> Any:
        if v is None and info.field_name == "block":
            return None
        minimum = {"buffer": 1500, "rwnd": 64, "udp_packet": 28}.get(info.field_name, 1)
        return units.parse_size(_plain(v, info.field_name), info.field_name, minimum=minimum)

    @field_validator("rate", mode="before")
    @classmethod
    def _parse_rate(cls, v: Any, info) -> Any:
        return units.parse_rate(_plain(v, info.field_name), info.field_name)

    @field_validator(*_DURATION_FIELDS, mode="before")
    @classmethod
    def _parse_duration(cls, v: Any, info) -> Any:
        name = info.field_name
        if name == "duration" and v is None:
            return None
        if name == "delayed_ack":
            if v is None or v is False or (isinstance(v, str) and v.strip().lower() in ("off", "none", "no")):
                return 0
            if v is True or (isinstance(v, str) and v.strip().lower() in ("on", "yes")):
                return DEFAULT_DELAYED_ACK_PS
        return units.parse_duration_ps(_plain(v, name), name, allow_zero=name in _ZERO_OK)

    @field_validator(*_INT_MINIMUM, mode="before")
    @classmethod
    def _parse_int(cls, v: Any, info) -> Any:
        name = info.field_name
        lo, hi = _INT_MINIMUM[name], _INT_MAXIMUM.get(name)
        bound = f"at least {lo}" + (f" and at most {hi}" if hi is not None else "")
        allowed = f"a whole number {bound}"
        if v is None and name in _OPTIONAL_INTS:
            return None
        if isinstance(v, bool):
            raise UsageError(name, v, allowed)
        if isinstance(v, numbers.Integral):  # numpy integers from a DataFrame, too
            v = int(v)
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if isinstance(v, str):
            try:
                v = int(v.strip())
            except ValueError:
                raise UsageError(name, v, allowed) from None
        if not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            raise UsageError(name, v, allowed)
        return v

    @field_validator("slow_start", "slow_start_after_idle", "limited_transmit", "timer_ticks", "handshake",
                     "timestamps", mode="before")
    @classmethod
    def _parse_bool(cls, v: Any, info) -> Any:
        if isinstance(v, bool):
            return v
        text = str(v).strip().lower()
        if text in ("1", "true", "on", "yes"):
            return True
        if text in ("0", "false", "off", "no"):
            return False
        raise UsageError(info.field_name, v, "on or off")

    @field_validator(*_CHOICES, mode="before")
    @classmethod
    def _parse_choice(cls, v: Any, info) -> Any:
        choices = _CHOICES[info.field_name]
        if v is None and info.field_name == "buffer_admission":
            return None
        text = str(v).strip().lower().replace("-", "_")
        if text not in choices:
            raise UsageError(info.field_name, v, "one of " + ", ".join(choices))
        return text

    @field_validator("udp", mode="before")
    @classmethod
    def _parse_udp(cls, v: Any) -> Any:
        allowed = "a fraction of the link rate from 0 to 0.5, e.g. 0.001 or 0.1%"
        text = str(v).strip()
        try:
            x = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            raise UsageError("udp", v, allowed) from None
        if not 0.0 <= x <= 0.5:
            raise UsageError("udp", v, allowed)
        return x

    @field_validator("rto_random", mode="before")
    @classmethod
    def _parse_fraction(cls, v: Any) -> Any:
        allowed = "a fraction from 0 (off) to 10, e.g. 0.5"
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise UsageError("rto_random", v, allowed) from None
        if not 0.0 <= x <= 10.0:  # also refuses NaN
            raise UsageError("rto_random", v, allowed)
        return x

    @model_validator(mode="after")
    def _scheme_defaults(self) -> "Scenario":
        # Osada et al.: TCPFG is RTOmin 200 us (§5.1); under CCS and NCCS the client
        # advertises BaseBDP as its window (§4.2, Eq. (1)). An explicit value wins.
        if self.mitigation == "tcpfg" and "rto_min" not in self.model_fields_set:
            object.__setattr__(self, "rto_min", TCPFG_RTO_MIN_PS)
        if self.mitigation in ("ccs", "nccs") and "rwnd" not in self.model_fields_set:
            object.__setattr__(self, "rwnd", math.ceil(self.serialization_model().base_bdp_bytes))
        return self

    @model_validator(mode="after")
    def _consistent(self) -> "Scenario":
        # Same ranges as the core (crates/sim/src/scenario.rs), checked here so the error
        # speaks in the units the user wrote.
        if not 10**3 <= self.rate <= 10**13:
            raise UsageError("rate", _exact_rate(self.rate), "1kbps to 10Tbps")
        if self.rtt > LINKS_PER_RTT * PS_PER_S:
            raise UsageError("rtt", _exact_duration(self.rtt), "at most 4s (1 s per link)")
        if self.delayed_ack > 500 * PS_PER_MS:
            raise UsageError("delayed_ack", _exact_duration(self.delayed_ack),
                             "off or at most 500ms (RFC 1122 §4.2.3.2)")
        if self.active_servers is not None and self.active_servers > self.servers:
            raise UsageError("active_servers", self.active_servers, f"1 to servers ({self.servers})")
        for name in ("jitter", "send_jitter"):
            if getattr(self, name) > PS_PER_S:
                raise UsageError(name, _exact_duration(getattr(self, name)), "0 to 1s")
        if self.rwnd < self.mss:
            raise UsageError("rwnd", _exact_size(self.rwnd), f"at least one MSS ({self.mss} B)")
        if self.rto_max < self.rto_min:
            # blame the one the user set: a large rto_min against the default rto_max is the
            # usual mistake (--rto-min 200 is 200 s)
            if "rto_max" in self.model_fields_set:
                raise UsageError("rto_max", _exact_duration(self.rto_max),
                                 f"at least rto_min ({_exact_duration(self.rto_min)})")
            raise UsageError("rto_min", _exact_duration(self.rto_min),
                             f"at most rto_max ({_exact_duration(self.rto_max)}; a bare number is seconds)")
        # (an sru equal to its default is what model_dump() writes beside a block)
        if self.block is not None and "sru" in self.model_fields_set and \
                self.sru != type(self).model_fields["sru"].get_default(call_default_factory=True):
            raise UsageError("block", _exact_size(self.block),
                             "either block (fixed-block mode) or sru (fixed-SRU mode), not both")
        if self.block is not None and self.block < self.servers:
            raise UsageError("block", _exact_size(self.block), f"at least one byte per server ({self.servers} B)")
        if self.buffer < self.mss + self.header:
            raise UsageError("buffer", _exact_size(self.buffer),
                             f"at least one full packet ({self.mss + self.header} B)")
        if self.tcp_rules == "ns3" and self.tcp != "newreno":
            raise UsageError("tcp_rules", self.tcp_rules, "rfc or ns2 unless tcp is newreno (ns-3's rules are modelled "
                             "for NewReno without SACK)")
        if self.buffer_packets is not None and self.buffer_admission not in (None, "packets"):
            raise UsageError("buffer_admission", self.buffer_admission,
                             "packets (or unset) when buffer_packets is set")
        return self

    # --- output ------------------------------------------------------------------------

    def __repr_args__(self):
        # the fields that differ from the defaults, in the units people write
        # (Scenario(servers=16, rtt='100us'), not rtt=100000000 picoseconds): eval-able
        defaults = _default_dump()
        for name, value in self.model_dump().items():
            if name == "servers" or defaults.get(name) != value:
                yield name, value

    # Dumps use exact human units, so Scenario(**s.model_dump()) == s.
    @field_serializer(*_SIZE_FIELDS)
    def _dump_size(self, v: int | None) -> str | None:
        return None if v is None else _exact_size(v)

    @field_serializer("rate")
    def _dump_rate(self, v: int) -> str:
        return _exact_rate(v)

    @field_serializer(*_DURATION_FIELDS)
    def _dump_duration(self, v: int | None) -> str | None:
        return None if v is None else _exact_duration(v)

    def to_native(self) -> dict[str, Any]:
        """The scenario in the core's base units (``docs/native-api.md``)."""
        return {
            "servers": self.servers,
            "sru_bytes": self.sru,
            "block_bytes": self.block,
            "buffer_bytes": self.buffer,
            "rate_bps": self.rate,
            # integer ps: RTT / 4 links; a remainder of < 4 ps is below any effect we model
            "link_delay_ps": self.rtt // LINKS_PER_RTT,
            "mss_bytes": self.mss,
            "header_bytes": self.header,
            "tcp": self.tcp,
            "rto_min_ps": self.rto_min,
            "rto_max_ps": self.rto_max,
            "timer_granularity_ps": self.timer_granularity,
            "dupack_threshold": self.dupack_threshold,
            "slow_start": self.slow_start,
            "delayed_ack_ps": self.delayed_ack,
            "init_cwnd_segments": self.init_cwnd,
            "rwnd_bytes": self.rwnd,
            "response_jitter_ps": self.jitter,
            "send_jitter_ps": self.send_jitter,
            "slow_start_after_idle": self.slow_start_after_idle,
            "limited_transmit": self.limited_transmit,
            "timer_ticks": self.timer_ticks,
            "timestamps": self.timestamps,
            "rto_random": self.rto_random,
            "buffer_packets": self.buffer_packets,
            "buffer_admission": self.buffer_admission,
            "rto_backoff": self.rto_backoff,
            "tcp_rules": self.tcp_rules,
            "tie_break": self.tie_break,
            "active_servers": self.active_servers,
            "handshake": self.handshake,
            "syn_timeout_ps": self.syn_timeout,
            "mitigation": self.native_mitigation(),
            "udp_fraction": self.udp,
            "udp_packet_bytes": self.udp_packet,
            "duration_ps": self.duration,
            "blocks": self.blocks,
            "seed": self.seed,
        }

    def serialization_model(self):
        """Osada et al.'s model (§4, Appendix A) for this scenario: BaseRTT is ``rtt``."""
        from .model.serialization import serialization_model

        return serialization_model(self.rate, self.rtt, self.mss, self.block_part_bytes(),
                                   header_bytes=self.header)

    def block_part_bytes(self) -> int:
        """Bytes one server returns per block (the SRU, or the block split over N)."""
        return self.block // self.servers if self.block is not None else self.sru

    def native_mitigation(self) -> dict[str, Any]:
        """The core's scheduling scheme, its thresholds from Osada et al.'s model:
        NCCS opens the next connection when the newest has T1 x V bits left (condition-I:
        S - T1 V sent, §4.3, read as ``condition_i`` says); OCS grants the next set of
        n_min connections its windows of wnd_pkt x MSS when the current set has T1 x V
        bits left, and widens the last connections' windows to share BaseBDP (§4.4)."""
        if self.mitigation in ("ntcp", "tcpfg"):
            return {"scheme": "none"}
        if self.mitigation in ("ictcp", "ccs"):
            return {"scheme": self.mitigation}
        m = self.serialization_model()
        t1_bytes = math.ceil(m.t1_ps * self.rate / (8 * PS_PER_S))
        reading = {"count_sent": self.condition_i != "delivered", "check_at_open": self.condition_i == "open"}
        if self.mitigation == "nccs":
            return {"scheme": "nccs", "k": self.nccs_k, "start_next_at_remaining": t1_bytes, **reading}
        return {"scheme": "ocs", "set_size": m.n_min, "window_bytes": m.wnd_pkt * self.mss,
                "start_next_at_remaining": t1_bytes, "bdp_bytes": math.ceil(m.base_bdp_bytes), **reading}

    def with_servers(self, servers: int) -> "Scenario":
        """This scenario with another number of servers (validated again)."""
        return Scenario(**{**self.model_dump(exclude_defaults=False), "servers": servers})

    def admission(self) -> str:
        """The buffer admission rule the core applies (an unset one follows buffer_packets)."""
        if self.buffer_admission is not None:
            return self.buffer_admission
        return "packets" if self.buffer_packets is not None else "bytes"

    def buffer_text(self) -> str:
        """The switch buffer as the core counts it: "32KiB", "31 packets", "32KiB (MTU slots)"."""
        rule = self.admission()
        if rule == "packets":
            limit = self.buffer_packets if self.buffer_packets is not None else self.buffer // (self.mss + self.header)
            return f"{limit} packets"
        return _exact_size(self.buffer) + (" (MTU slots)" if rule == "mtu_slots" else "")

    def label(self) -> str:
        """A short description for plot legends and table headings: the workload, the
        buffer, the timers, and the modelling rules in force (limited transmit, whose TCP
        rules, segment size), so two runs that differ in any of them read differently."""
        parts = []
        if self.block is not None:
            parts.append(f"block {_exact_size(self.block)}")
        else:
            parts.append(f"SRU {_exact_size(self.sru)}")
        parts.append(f"buffer {self.buffer_text()}")
        parts.append(f"RTOmin {_exact_duration(self.rto_min)}")
        parts.append(_exact_rate(self.rate))
        if self.delayed_ack:
            parts.append(f"delACK {_exact_duration(self.delayed_ack)}")
        parts.append(f"LT {'on' if self.limited_transmit else 'off'}")
        if self.tcp_rules != "rfc":
            parts.append({"ns2": "ns-2's TCP", "ns3": "ns-3's TCP"}[self.tcp_rules])
        if self.mss != 1460:
            parts.append(f"MSS {self.mss}B")
        return ", ".join(parts)


def _plain(v: Any, name: str) -> Any:
    """Refuse values that are neither text nor numbers before the unit parsers see them."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return int(v)
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        v = float(v)
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise UsageError(name, v, "a number or a quantity with a unit")
    if isinstance(v, float) and name not in _DURATION_FIELDS:
        if not v.is_integer():
            raise UsageError(name, v, "a whole number")
        return int(v)
    return v


def _usage_error(e: ValidationError, data: dict) -> UsageError:
    """The first problem pydantic found, as a UsageError naming the field."""
    err = e.errors()[0]
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, UsageError):
        return cause
    field = ".".join(str(p) for p in err.get("loc", ())) or "scenario"
    if err.get("type") == "extra_forbidden":
        allowed = "one of the Scenario fields: " + ", ".join(Scenario.model_fields)
        return UsageError(field, err.get("input"), allowed)
    if err.get("type") == "missing":
        return UsageError(field, None, "a value (this field is required)")
    return UsageError(field, err.get("input", data.get(field)), err.get("msg", "a valid value"))
