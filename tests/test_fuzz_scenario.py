"""Properties of ``incastlab.Scenario(**kwargs)`` over fuzzed keyword sets (issue 11):
any keywords end in a Scenario or a UsageError whose ``.param`` names a field the caller
passed (or one the passed fields conflict with), never another exception; a valid
Scenario's ``model_dump()`` rebuilds an equal Scenario and its ``repr`` is eval-able."""

from __future__ import annotations


import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from fuzz_support import HOSTILE_TEXT, TALLY, examples
from incastlab import Scenario
from incastlab.errors import UsageError
from incastlab.schema import BY_PUBLIC, PRESETS

# the words each choice takes, from the core's schema
TCP_VARIANTS, MITIGATIONS, CONDITION_I, BUFFER_ADMISSIONS, RTO_BACKOFFS, TIE_BREAKS, TCP_RULES = (
    BY_PUBLIC[f].choices for f in ("tcp", "mitigation", "condition_i", "buffer_admission", "rto_backoff", "tie_break",
                                   "tcp_rules"))

FIELDS = sorted(Scenario.model_fields)

# A refusal may name a field the caller did not pass when a passed field conflicts with
# it (Scenario._consistent and _scheme_defaults): a larger MSS against the default
# buffer or window, servers against block or active_servers, rto_max against rto_min, a
# mitigation's derived RTOmin or window, tcp against tcp_rules, blocks against duration,
# buffer_packets against buffer_admission.
CONFLICTS = {
    "mss": {"rwnd", "buffer"}, "header": {"buffer"}, "servers": {"block", "active_servers", "clients", "replicas"},
    # servers x clients connections at most; the schemes schedule one client's connections
    "clients": {"servers", "mitigation", "workload"},
    # Riak's fields need workload riak; riak refuses what belongs to synchronized reads;
    # replicas fit the servers, the quorum the replicas
    "workload": {"blocks", "sru", "block", "active_servers", "clients", "handshake", "mitigation", "udp", "jitter",
                 "victim", "replicas", "get_rate", "read_quorum", "reply_bytes", "reply_size_dist",
                 "time_breakdown"},
    # the time breakdown splits the synchronized reads' parts and the one-shot flows only
    "time_breakdown": {"workload"},
    "get_rate": {"workload"}, "reply_bytes": {"workload"}, "reply_size_dist": {"workload"},
    "replicas": {"workload", "servers", "read_quorum"}, "read_quorum": {"workload", "replicas"},
    "rto_max": {"rto_min"}, "rto_min": {"rto_max"}, "mitigation": {"rto_min", "rwnd", "rtt", "clients"},
    "tcp": {"tcp_rules"},
    "blocks": {"duration"}, "buffer_packets": {"buffer_admission"}, "sru": {"block"}, "block": {"sru"},
    # the derived window of ccs/nccs follows the rate, the RTT and the MSS (Osada et al. Eq. (1))
    "rate": {"rwnd"}, "rtt": {"rwnd"},
    # a fat tree without its k names the missing k (crates/sim/src/scenario.rs, fat_tree)
    "topology": {"fat_tree_k"},
    # a preset gives fields the caller did not pass (crates/sim/src/preset.rs), and what
    # conflicts with those (a larger MSS against the buffer, the window)
    "preset": {f for p in PRESETS.values() for f in p.values()} | {"buffer", "rwnd", "mss", "header"},
    # bulk flows: hosts that exist, a rate no faster than the link, nothing set without flows
    "bulk_flows": {"workload", "topology", "bulk_from", "bulk_to", "servers"},
    "bulk_from": {"bulk_flows", "bulk_to", "servers", "clients"}, "bulk_to": {"bulk_flows", "bulk_from", "servers", "clients"},
    "bulk_rate": {"bulk_flows", "rate"},
    "riak_transport": {"workload"}, "dist_buf_busy_limit": {"workload", "riak_transport"},
    # Swift's flow-based scaling needs fs_min_cwnd below fs_max_cwnd: the refusal names the min
    "swift_fs_max_cwnd": {"swift_fs_min_cwnd"},
}

ANY_VALUE = st.one_of(
    HOSTILE_TEXT,
    st.integers(-(10**25), 10**25),
    st.integers(-3, 70_000),
    st.floats(),  # NaN, infinities, subnormals
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 10), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.binary(max_size=4),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.fractions(),
    st.complex_numbers(max_magnitude=10),
    st.sampled_from([*TCP_VARIANTS, *MITIGATIONS, *CONDITION_I, *BUFFER_ADMISSIONS, *RTO_BACKOFFS, *TIE_BREAKS,
                     *TCP_RULES, "NewReno", "new-ack", "MTU-SLOTS"]),
)

UNKNOWN_NAMES = st.sampled_from(["server", "Servers", "rto-min", "rtomin", "bufer", "link_rate", "rate_bps",
                                 "duration_ps", "model_config", "__class__", "", " ", "0"])


def _blamable(passed: set[str]) -> set[str]:
    out = set(passed) | {"servers"}  # the one required field, named when missing
    if "" in passed:
        out.add("scenario")  # an empty keyword has no name to show; the error says "scenario"
    for name in passed:
        out |= CONFLICTS.get(name, set())
    return out


def _build(kwargs: dict):
    """Scenario(**kwargs) and its native form, or None after checking the refusal names a
    field it may blame."""
    try:
        s = Scenario(**kwargs)
    except UsageError as e:
        TALLY.add("scenario", "refused")
        blamable = _blamable(set(kwargs))
        assert e.param in blamable or e.param.partition(" ")[0] in blamable, f"{e.param!r} blamed for {kwargs!r}: {e}"
        assert "\n" not in str(e) and e.allowed
        return None
    except Exception:
        TALLY.add("scenario", "traceback")
        raise
    TALLY.add("scenario", "accepted")
    return s


def _round_trips(s: Scenario) -> None:
    again = Scenario(**s.model_dump())
    assert again == s and again.to_native() == s.to_native()
    shown = eval(repr(s), {"Scenario": Scenario})  # noqa: S307 - the property under test
    assert shown == s, repr(s)


@settings(max_examples=examples(4))
@given(kwargs=st.dictionaries(st.one_of(st.sampled_from(FIELDS), UNKNOWN_NAMES), ANY_VALUE, max_size=5),
       servers=st.one_of(st.none(), st.integers(1, 64)))
@example(kwargs={"rtt": float("inf")}, servers=1)
@example(kwargs={"rto_min": float("nan")}, servers=1)
@example(kwargs={"duration": "1e400s"}, servers=1)
def test_any_keywords_give_a_scenario_or_name_a_field(kwargs, servers):
    if servers is not None:
        kwargs = {"servers": servers, **kwargs}
    s = _build(kwargs)
    if s is not None:
        assert isinstance(s, Scenario) and s.to_native()["servers"] == s.servers


# --- valid scenarios: values the way people write them, mostly allowed --------------------

def _quantity(values, units_):
    return st.builds(lambda v, u: f"{v}{u}", st.sampled_from(values), st.sampled_from(units_))


SIZES = st.one_of(st.integers(1, 2**31), _quantity([1, 2, 3, 16, 32, 64, 100, 256, 1000], ["KiB", "KB", "MiB", "B", ""]))
RATES = st.one_of(st.integers(10**3, 10**13), _quantity([1, 10, 40, 100, 125, 2.5], ["Gbps", "Mbps", "GBps", "MB/s"]))
TIMES = st.one_of(st.integers(0, 5), st.floats(0, 5, allow_nan=False), _quantity([0, 1, 10, 40, 100, 200, 500, 1500],
                                                                                   ["us", "ms", "ns", "s", "ps"]))
FRACTIONS = st.one_of(st.floats(0, 1), st.sampled_from(["0.1%", "0", "0.5", "1%"]))
PLAUSIBLE = {
    "servers": st.integers(1, 2000), "sru": SIZES, "block": st.one_of(st.none(), SIZES), "buffer": SIZES,
    "rate": RATES, "rtt": TIMES, "rto_min": TIMES, "rto_max": TIMES, "timer_granularity": TIMES,
    "dupack_threshold": st.integers(0, 1001), "limited_transmit": st.booleans(), "timer_ticks": st.booleans(),
    "prr": st.booleans(), "rack_tlp": st.booleans(), "hystart": st.booleans(),
    "ssthresh_from_cwnd": st.booleans(), "count_acked_segments": st.booleans(), "cwnd_limited_growth": st.booleans(),
    "prr_extra_if_advanced": st.booleans(), "prr_counts_fast_retransmit": st.booleans(),
    "grow_on_recovery_exit": st.booleans(), "ack_short_segments": st.booleans(), "rack_timer_floor": st.booleans(),
    "recovery_from_loss": st.booleans(), "quickack_mode": st.booleans(),
    "loss_retransmit_queue": st.booleans(), "frto": st.booleans(),
    "receiver_rto_min": TIMES,
    "rearm_rto_from_head": st.booleans(), "tso_deferral": st.booleans(), "rack_rtt_sack_first": st.booleans(),
    "sacked_leave_flight": st.booleans(), "cwnd_limited_latch": st.booleans(), "cubic_linux": st.booleans(), "gso_half_cwnd": st.booleans(), "rto_min_on_rttvar": st.booleans(),
    "timer_wheel": st.booleans(),
    "rcv_window_growth": st.booleans(), "rcv_autotuning": st.booleans(), "rcv_rtt_from_window": st.booleans(), "ack_pingpong": st.booleans(),
    "rcv_scaling_ratio": st.integers(0, 256),
    "timestamps": st.booleans(), "rto_random": FRACTIONS, "slow_start": st.sampled_from([True, False, "on", "off"]),
    "delayed_ack": st.one_of(TIMES, st.sampled_from([True, False, None, "on", "off"])), "init_cwnd": st.integers(0, 20),
    "rwnd": SIZES, "jitter": TIMES, "send_jitter": TIMES, "slow_start_after_idle": st.booleans(),
    "duration": st.one_of(st.none(), TIMES), "blocks": st.one_of(st.none(), st.integers(0, 100)),
    "seed": st.integers(0, 2**64), "tcp": st.sampled_from(TCP_VARIANTS), "mss": st.integers(60, 9000),
    "buffer_packets": st.one_of(st.none(), st.integers(0, 300)),
    "buffer_admission": st.one_of(st.none(), st.sampled_from(BUFFER_ADMISSIONS)),
    "rto_backoff": st.sampled_from(RTO_BACKOFFS), "tcp_rules": st.sampled_from(TCP_RULES),
    "cc": st.sampled_from(BY_PUBLIC["cc"].choices), "ecn_threshold": st.one_of(st.none(), st.integers(0, 300)),
    "tie_break": st.sampled_from(TIE_BREAKS), "header": st.integers(0, 121),
    "active_servers": st.one_of(st.none(), st.integers(0, 100)), "handshake": st.booleans(), "syn_timeout": TIMES,
    "time_breakdown": st.booleans(),
    "mitigation": st.sampled_from(MITIGATIONS), "nccs_k": st.integers(0, 16),
    "condition_i": st.sampled_from(CONDITION_I), "udp": FRACTIONS, "udp_packet": SIZES,
    "topology": st.sampled_from(BY_PUBLIC["topology"].choices),
    "trunk_rate": st.one_of(st.none(), RATES), "leaves": st.one_of(st.none(), st.integers(0, 2000)),
    "shaper_rate": st.one_of(st.none(), RATES), "shaper_burst": st.one_of(st.none(), SIZES),
    "spines": st.one_of(st.none(), st.integers(0, 600)),
    "oversubscription": st.one_of(st.none(), FRACTIONS, st.floats(0, 300)),
    "pause": st.booleans(), "pause_xoff": SIZES, "pause_xon": SIZES, "pause_quanta": st.integers(0, 70_000),
    "victim": st.booleans(), "clients": st.integers(0, 5000),
    "workload": st.sampled_from(BY_PUBLIC["workload"].choices), "get_rate": st.one_of(st.floats(0, 2e7), st.integers(0, 10**4)),
    "replicas": st.integers(0, 70), "read_quorum": st.integers(0, 70), "reply_bytes": SIZES,
    "reply_size_dist": st.sampled_from(BY_PUBLIC["reply_size_dist"].choices),
    "buffer_sharing": st.sampled_from(BY_PUBLIC["buffer_sharing"].choices), "buffer_pool": st.one_of(st.none(), SIZES),
    "dt_alpha": st.one_of(FRACTIONS, st.floats(0, 100)), "qos_classes": st.integers(0, 9),
    "qos_scheduler": st.sampled_from([*BY_PUBLIC["qos_scheduler"].choices, "fifo"]),
    "qos_weights": st.one_of(st.none(), st.lists(st.integers(-1, 2**33), max_size=9),
                             st.text(",:0123456789 -", max_size=12)),
    "victim_class": st.integers(-1, 9), "pfc": st.booleans(),
    # fabrics (docs/fabrics.md)
    "fat_tree_k": st.one_of(st.none(), st.integers(0, 70)), "core_rate": st.one_of(st.none(), RATES),
    "trunk_delay": st.one_of(st.none(), TIMES), "core_delay": st.one_of(st.none(), TIMES),
    "load_balancing": st.sampled_from([*BY_PUBLIC["load_balancing"].choices, "hash"]),
    "incasts": st.integers(0, 300), "placement": st.sampled_from(BY_PUBLIC["placement"].choices),
    "start": TIMES, "start_spread": TIMES, "background_load": st.one_of(FRACTIONS, st.floats(0, 2)),
    "background_cdf": st.sampled_from(BY_PUBLIC["background_cdf"].choices),
    "background_hosts": st.integers(0, 3000),
    "preset": st.sampled_from([*BY_PUBLIC["preset"].choices, "ns4"]),
    # trimming and the receiver-driven transports (docs/transports.md)
    "transport": st.sampled_from(BY_PUBLIC["transport"].choices), "trimming": st.booleans(),
    "trim_bytes": st.one_of(st.none(), SIZES), "trim_header_queue": st.one_of(st.none(), SIZES),
    "return_to_sender": st.booleans(),
    # Swift (docs/transports.md)
    **{f: st.one_of(st.none(), TIMES) for f in ("swift_base_target", "swift_h", "swift_fs_range")},
    **{f: st.one_of(FRACTIONS, st.floats(0, 20_000)) for f in ("swift_fs_min_cwnd", "swift_fs_max_cwnd")},
    **{f: st.one_of(FRACTIONS, st.floats(0, 200)) for f in ("swift_ai", "swift_beta", "swift_max_mdf")},
    "swift_rto": st.sampled_from([*BY_PUBLIC["swift_rto"].choices, "karn"]),
    "swift_min_cwnd_floor": st.one_of(FRACTIONS, st.floats(0, 20_000)),
    # long-lived incast flows and the steady-state window (issue 29's fourth pass)
    "flows_per_sender": st.integers(0, 70_000), "measure_from": st.one_of(st.none(), TIMES),
    # bulk flows and Riak's transport (issue 26)
    "bulk_flows": st.integers(0, 5000),
    "bulk_from": st.one_of(st.none(), st.lists(st.integers(-1, 40), max_size=5), st.text(",0123456789 ", max_size=8)),
    "bulk_to": st.one_of(st.none(), st.lists(st.integers(-1, 40), max_size=5), st.text(",0123456789 ", max_size=8)),
    "bulk_rate": st.one_of(st.none(), RATES),
    "riak_transport": st.sampled_from([*BY_PUBLIC["riak_transport"].choices, "dist"]),
    "dist_buf_busy_limit": SIZES,
    # measured think times (validate --measured-think-times)
    "think_times": st.one_of(st.none(), st.lists(st.one_of(TIMES, st.integers(-1, 3)), max_size=5),
                             st.text(",0123456789usm -", max_size=14)),
}
assert set(PLAUSIBLE) == set(FIELDS), "a new Scenario field needs a strategy here"

PLAUSIBLE_KWARGS = st.lists(st.sampled_from(FIELDS), max_size=8, unique=True).flatmap(
    lambda names: st.fixed_dictionaries({n: PLAUSIBLE[n] for n in names}))


@settings(max_examples=examples(4))
@given(kwargs=PLAUSIBLE_KWARGS, servers=st.integers(1, 2000))
@example(kwargs={"rate": 9007199254740993}, servers=1)
@example(kwargs={"duration": 2.5, "rtt": "1500ns"}, servers=3)
# CCS's derived window (BaseBDP, 1.25 GB here) dumped beyond rwnd's 1 GiB limit until capped
@example(kwargs={"mitigation": "ccs", "rtt": 1, "rate": "10Gbps"}, servers=1)
def test_valid_scenarios_dump_and_repr_round_trip(kwargs, servers):
    s = _build({"servers": servers, **kwargs})
    assume(s is not None)
    _round_trips(s)


# --- cases found by this suite and fixed with the one schema (issue 11) ------------------

@pytest.mark.parametrize("kwargs", [
    {"servers": 2, "mitigation": "tcpfg", "rto_min": "200ms"},  # the plain default, given: repr keeps it
    {"servers": 2, "mitigation": "ccs", "rwnd": 29200},
])
def test_repr_keeps_a_default_value_the_scheme_would_override(kwargs):
    _round_trips(Scenario(**kwargs))


@pytest.mark.parametrize("kwargs, blamed", [
    ({"mitigation": "ccs", "rtt": "1us"}, "rtt"), ({"mitigation": "nccs", "rtt": "1us"}, "rtt"),
    ({"mitigation": "ocs", "rtt": "1us"}, "rtt"), ({"mitigation": "ccs", "rate": 1000}, "rate"),
    ({"mitigation": "ocs", "rate": "10Mbps"}, "rate"), ({"mitigation": "ocs"}, None),
])
def test_a_scheme_model_refusal_names_the_scenario_field(kwargs, blamed):
    # Osada et al.'s model needs BaseBDP above two packets; the core names the field given
    # (the derivation happens as the Scenario is built, no longer at to_native())
    if blamed is None:
        Scenario(servers=2, **kwargs)  # the defaults are inside the model
        return
    with pytest.raises(UsageError) as e:
        Scenario(servers=2, **kwargs)
    assert e.value.param == blamed, e.value
