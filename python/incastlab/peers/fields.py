"""How a peer simulator treats each Scenario field: mapped to its options, hard-wired, or
inexpressible.

A peer is written without our code, so a Scenario field is one of three things to it:

- **mapped**: the peer takes it as options (``servers`` -> ``--servers=16``);
- **hard-wired**: the peer has one fixed rule where our model has a knob (ns-2's DropTail
  counts packets, ns-3 recomputes the RTO on every new ACK). Left at our default, such a
  field describes our model alone; set for both simulators, it must be the peer's rule;
  ``rules`` gives the fields that make our model follow the peer's;
- **inexpressible**: the peer cannot do it, so a value other than Scenario's default is
  refused rather than silently dropped.

A field classified nowhere (one added to Scenario after the peer's table was written) is
refused unless at its default, and each peer's tests fail until it is classified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import UsageError
from ..scenario import Scenario
from ..schema import BY_PUBLIC

# What neither peer's one-switch star of drop-tail FIFOs can express: its fabric and buffers.
STAR_OF_FIFOS_LACKS: dict[str, str] = {
    "topology": "a fabric other than its one-switch star",
    "trunk_rate": "a switch-to-switch link (it has one switch)",
    "leaves": "a leaf-spine's leaves (it has one switch)",
    "spines": "a leaf-spine's spines (it has one switch)",
    "oversubscription": "a leaf-spine's oversubscription (it has one switch)",
    "pause": "802.3x PAUSE (its links have no flow control)",
    "pause_xoff": "a PAUSE threshold (its links have no flow control)",
    "pause_xon": "a PAUSE threshold (its links have no flow control)",
    "pause_quanta": "PAUSE quanta (its links have no flow control)",
    "victim": "a background bulk flow beside the incast",
    "buffer_sharing": "a shared buffer pool (its queues each have their own limit)",
    "buffer_pool": "a shared buffer pool's size (its queues have their own limits)",
    "dt_alpha": "dynamic thresholds (its queues have their own limits)",
    "qos_classes": "QoS classes (its queues are single FIFOs)",
    "qos_scheduler": "a QoS scheduler (its queues are single FIFOs)",
    "qos_weights": "WRR weights (its queues are single FIFOs)",
    "victim_class": "a QoS class for the victim flow (it has no victim and no classes)",
    "pfc": "802.1Qbb priority flow control (its links have no flow control)",
    "fat_tree_k": "a fat tree (it has one switch)",
    "core_rate": "a fat tree's core links (it has one switch)",
    "trunk_delay": "a switch-to-switch link's delay (it has one switch)",
    "core_delay": "a fat tree's core links (it has one switch)",
    "load_balancing": "a choice among uplinks (it has one switch)",
    "trimming": "packet trimming (its ports drop what does not fit)",
    "trim_bytes": "packet trimming (its ports drop what does not fit)",
    "trim_header_queue": "packet trimming (its ports drop what does not fit)",
    "return_to_sender": "packet trimming (its ports drop what does not fit)",
    "shaper_rate": "a token-bucket shaper at the client's port (its ports send at their link's rate)",
    "shaper_burst": "a token-bucket shaper's bucket (its ports have no shaper)",
}

# What neither peer's one client reading from every server can express: other workloads.
ONE_SYNC_READ_CLIENT_LACKS: dict[str, str] = {
    "clients": "more than one client (its one sink reads from every server)",
    "workload": "a workload other than one client's synchronized reads",
    "get_rate": "Riak-style gets (it runs synchronized reads only)",
    "replicas": "Riak-style gets' replicas (it runs synchronized reads only)",
    "read_quorum": "Riak-style gets' read quorum (it runs synchronized reads only)",
    "reply_bytes": "Riak-style replies (it runs synchronized reads only)",
    "reply_size_dist": "Riak-style reply sizes (it runs synchronized reads only)",
    "incasts": "several incasts at once (it runs synchronized reads only)",
    "placement": "a placement of one-shot flows (it runs synchronized reads only)",
    "start": "a start time of one-shot flows (it runs synchronized reads only)",
    "start_spread": "staggered starts of one-shot flows (it runs synchronized reads only)",
    "background_load": "Poisson background flows (it runs synchronized reads only)",
    "background_cdf": "background flow sizes (it has no background flows)",
    "background_hosts": "background hosts (it has no background flows)",
    "transport": "a transport other than TCP (its flows are TCP's)",
    **{f: "Swift's delay-based window (its flows are TCP's, with its own cc)"
       for f in ("swift_base_target", "swift_h", "swift_fs_range", "swift_fs_min_cwnd", "swift_fs_max_cwnd",
                 "swift_ai", "swift_beta", "swift_max_mdf", "swift_rto", "swift_min_cwnd_floor")},
    "flows_per_sender": "several connections per incast sender (it runs synchronized reads only)",
    "measure_from": "a steady-state window (it reports the whole run)",
    "bulk_flows": "long-lived bulk flows beside the reads (it runs synchronized reads only)",
    "bulk_from": "bulk flows' senders (it has no bulk flows)",
    "bulk_to": "bulk flows' receivers (it has no bulk flows)",
    "bulk_rate": "bulk flows' rate (it has no bulk flows)",
    "riak_transport": "Riak over Erlang distribution (it runs synchronized reads only)",
    "dist_buf_busy_limit": "Erlang distribution's busy limit (it runs synchronized reads only)",
}

# A mapped field's options for one scenario.
ToArgs = Callable[[Scenario], list[str]]
# A hard-wired rule: the peer's value of the field for a scenario (None: our model has no
# counterpart for that scenario), and where the peer fixes it.
Rule = tuple[Callable[[Scenario], Any], str]


@dataclass(frozen=True, eq=False)
class FieldMap:
    """One peer's classification of every Scenario field."""

    peer: str  # "ns-3": named in refusals
    module: str  # "peers/ns3.py": where an unclassified field must be added
    mapped: dict[str, ToArgs]
    hard_wired: dict[str, Rule]
    inexpressible: dict[str, str]  # field -> what the peer cannot express

    def classify(self, name: str) -> str | None:
        """mapped, hard-wired, inexpressible, or None for a field the tables miss."""
        for kind, table in (("mapped", self.mapped), ("hard-wired", self.hard_wired),
                            ("inexpressible", self.inexpressible)):
            if name in table:
                return kind
        return None

    def rules(self, s: Scenario) -> dict[str, Any]:
        """The Scenario fields that make our model follow the peer's hard-wired rules."""
        return {f: value for f, (rule, _) in self.hard_wired.items() if (value := rule(s)) is not None}

    def args(self, s: Scenario) -> list[str]:
        """The peer's options for ``s``; ``UsageError`` naming the first field it cannot
        express."""
        self._refuse_inexpressible(s)
        self._refuse_other_rules(s)
        return [arg for to_args in self.mapped.values() for arg in to_args(s)]

    def _refuse_inexpressible(self, s: Scenario) -> None:
        shown = s.model_dump()
        for name, spec in Scenario.model_fields.items():
            if self.classify(name) in ("mapped", "hard-wired"):
                continue
            why = self.inexpressible.get(name, f"a Scenario field newer than {self.module}")
            # unset, a field is at its default, or at what the core resolved it to from
            # the others (rto_min under tcpfg): nothing for the peer to express
            if name in s.model_fields_set and getattr(s, name) != spec.default:
                raise UsageError(name, shown[name],
                                 f"{_shown(name, spec.default)}: the {self.peer} peer cannot express {why}")

    def _refuse_other_rules(self, s: Scenario) -> None:
        # left at our default, these describe our model alone; set explicitly for both
        # simulators, they must be what the peer does
        for name, (rule, where) in self.hard_wired.items():
            value, theirs = getattr(s, name), rule(s)
            if name in s.model_fields_set and value != theirs:
                wanted = "unset" if theirs is None else f"{theirs} or unset"
                raise UsageError(name, value, f"{wanted}: the {self.peer} peer hard-wires this ({where}); "
                                 f"set it for incastlab alone with --ours {name}=VALUE")


def _shown(name: str, default: Any) -> str:
    if default is None:
        return "unset"
    return f"{BY_PUBLIC[name].format(default)} (the default)"
