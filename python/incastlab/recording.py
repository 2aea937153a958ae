"""What a simulated run records besides its result: a pcap of the client's switch port,
a per-flow sender trace, a per-event trace of every flow in the ns-3 peer's format
(docs/capture.md), and every port's utilization per interval (docs/utilization.md).

The Rust core records; ``incast_simio`` (through ``_native.simulate_recording``) writes
the pcap and the trace CSV, each whole or not at all. A ``.parquet`` trace is the CSV
converted with pyarrow, also written atomically.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from .errors import EnvironmentProblem, UsageError

# Bound on captured packets: the capture is held in memory while simulating (~100 B a
# packet), so 5 million packets cost ~0.5 GB per point; the pcap itself is ~150 B a frame.
DEFAULT_CAPTURE_LIMIT = 5_000_000
# Without --trace-flows, every flow is traced up to this many servers (FAST'08's largest
# point, Fig. 4), flow 0 alone above it: a 20 s run at 1 Gbps traces ~100k rows per flow.
TRACE_ALL_FLOWS_UP_TO = 64
# Flows the pcap can address: one IPv4 address per server in 198.18.0.0/15 (250 hosts
# in each of 511 /24s; crates/simio/src/address.rs).
PCAP_MAX_SERVERS = 250 * 511

PCAP_SUFFIXES = ("pcap",)
_FILE_FIELDS = ("pcap", "trace", "events", "port_util", "millisampler")
TRACE_SUFFIXES = ("csv", "parquet")
EVENTS_SUFFIXES = ("csv",)


@dataclass(frozen=True)
class Recording:
    """Files one simulated point writes. Paths are taken as given (see ``for_point``)."""

    pcap: str | None = None
    trace: str | None = None
    #: Flows to trace; None = every flow up to TRACE_ALL_FLOWS_UP_TO servers, else flow 0.
    trace_flows: tuple[int, ...] | None = None
    capture_limit: int = DEFAULT_CAPTURE_LIMIT
    #: Leave out the data packets the switch dropped (what the client's NIC received)
    #: instead of mirroring everything offered to the port.
    pcap_received_only: bool = False
    #: The per-event trace of every flow (tx, rtx, ack, enq, deq, drop, cwnd, ssth, rto,
    #: state), CSV lines in the ns-3 peer's format.
    events: str | None = None
    #: Sample every port at this interval (picoseconds, 100 us .. 1 s; ``incastlab.utilization``):
    #: the result then carries ``port_util``.
    port_util_interval_ps: int | None = None
    #: ... and write the per-interval rows here (.csv or .parquet); at 100 us if no interval is given.
    port_util: str | None = None
    #: Record the ground truth of every loss and timeout (``incastlab.truth.Losses``).
    losses: bool = False
    #: Write every machine's Millisampler-style series here (.parquet; ``incastlab.millisampler``).
    millisampler: str | None = None

    @property
    def wanted(self) -> bool:
        return bool(self.pcap or self.trace or self.events or self.port_util or self.port_util_interval_ps
                    or self.losses or self.millisampler)

    def check(self, servers: int, names: dict[str, str] | None = None, clients: int = 1,
              workload: str = "sync_read", bulk_flows: int = 0) -> None:
        """Refuse what cannot be written for a point with ``servers`` servers (and
        ``clients`` clients, or the ``workload``).

        ``names`` maps field names to the flags the user typed (``pcap`` -> ``--pcap``).
        """
        from .outfiles import check_writable  # imports pandas: only when files are asked for

        name = (names or {}).get
        if self.pcap:
            check_writable(self.pcap, name("pcap", "pcap"), PCAP_SUFFIXES)
            if servers > PCAP_MAX_SERVERS:
                raise UsageError(name("pcap", "pcap"), self.pcap,
                                 f"runs of at most {PCAP_MAX_SERVERS} servers (one address each in "
                                 f"198.18.0.0/15), not {servers}")
        if self.trace:
            check_writable(self.trace, name("trace", "trace"), TRACE_SUFFIXES)
        if self.events:
            check_writable(self.events, name("events", "events"), EVENTS_SUFFIXES)
        if self.port_util:
            from .utilization import SUFFIXES

            check_writable(self.port_util, name("port_util", "port_util"), SUFFIXES)
        if self.millisampler:
            check_writable(self.millisampler, name("millisampler", "millisampler"), ("parquet",))
        if isinstance(self.capture_limit, bool) or not isinstance(self.capture_limit, int) \
                or self.capture_limit < 1:
            raise UsageError(name("capture_limit", "capture_limit"), self.capture_limit,
                             "a whole number of packets, at least 1")
        flows, why = flow_count(servers, clients, workload, bulk_flows)
        for f in self.trace_flows or ():
            if f < 0 or f >= flows:
                shown = ",".join(map(str, self.trace_flows))
                raise UsageError(name("trace_flows", "trace_flows"), shown,
                                 f"flow numbers from 0 to {flows - 1} ({why})")

    def flows_for(self, servers: int) -> list[int]:
        if self.trace_flows is not None:
            return list(self.trace_flows)
        return list(range(servers)) if servers <= TRACE_ALL_FLOWS_UP_TO else [0]

    def files(self) -> list[tuple[str, str]]:
        """The files this point writes, as ``(path, field)``: pcap, trace, events, port_util, millisampler."""
        return [(getattr(self, f), f) for f in _FILE_FIELDS if getattr(self, f)]

    def with_files(self, rename: Callable[[str, str], str]) -> Recording:
        """The same request writing ``rename(path, field)`` instead of each file's path
        (``outfiles.Outputs.reserve``: a temporary name, put in place with the others)."""
        return replace(self, **{f: rename(p, f) for p, f in self.files()})

    def for_point(self, servers: int) -> Recording:
        """The same request with the servers count before each extension
        (``fig.pcap`` -> ``fig-n16.pcap``): one file per point of a sweep."""
        return replace(self, pcap=_with_servers(self.pcap, servers), trace=_with_servers(self.trace, servers),
                       events=_with_servers(self.events, servers), port_util=_with_servers(self.port_util, servers),
                       millisampler=_with_servers(self.millisampler, servers))


def flow_count(servers: int, clients: int = 1, workload: str = "sync_read", bulk_flows: int = 0
               ) -> tuple[int, str]:
    """How many flows a point has (ids 0 .. count - 1), and why (as the core numbers them:
    ``incast_simio::run::flow_count``)."""
    if workload == "riak" and bulk_flows:
        return bulk_flows + servers * (servers - 1), (
            f"bulk_flows + servers x (servers - 1) = {bulk_flows} + {servers} x {servers - 1}: the bulk flows, "
            "then workload riak's, one per ordered pair of nodes")
    if workload == "riak":
        return servers * (servers - 1), (f"servers x (servers - 1) = {servers} x {servers - 1}: "
                                         "workload riak, one flow per ordered pair of nodes")
    return servers * clients, f"servers x clients = {servers} x {clients}: one flow per server and client"


def _with_servers(path: str | None, servers: int) -> str | None:
    if path is None:
        return None
    p = Path(path)
    return str(p.with_name(f"{p.stem}-n{servers}{p.suffix}"))


def simulate_recording(native_scenario: dict[str, Any], rec: Recording, progress: Any = None
                       ) -> tuple[dict[str, Any], Any, Any]:
    """Run the core with ``rec``'s files; return the result dict (with capture fields), the
    per-port series (``utilization.PortUtil``) when sampling was asked for, and the ground
    truth of losses and timeouts (``truth.Losses``) when asked for (else None each).
    ``progress``: an ``_native.Progress`` the run reports to while it runs."""
    from . import _native

    servers = native_scenario["servers"]
    rec.check(servers, clients=native_scenario.get("clients", 1),
              workload=native_scenario.get("workload", "sync_read"),
              bulk_flows=native_scenario.get("bulk_flows", 0))
    trace = Path(rec.trace) if rec.trace else None
    parquet = trace is not None and trace.suffix.lower() == ".parquet"
    csv_path = _sibling_temp(trace, ".csv") if parquet else trace
    try:
        out, columns, truth_columns = _native.simulate_recording(
            json.dumps(native_scenario),
            pcap_path=rec.pcap,
            trace_path=str(csv_path) if csv_path else None,
            capture_limit=rec.capture_limit,
            trace_flows=rec.flows_for(servers) if trace else [],
            pcap_include_dropped=not rec.pcap_received_only,
            events_path=rec.events,
            progress=progress,
            port_util_interval_ps=rec.port_util_interval_ps or (10**8 if rec.port_util or rec.millisampler else None),
            losses=rec.losses,
        )
        if parquet:
            _csv_to_parquet(csv_path, trace)
        util = None
        if columns is not None:
            from .utilization import PortUtil

            util = PortUtil.from_native(columns)
            if rec.port_util:
                util.write(rec.port_util)
            if rec.millisampler:
                from . import millisampler

                millisampler.write(millisampler.from_port_util(util), rec.millisampler)
        losses = None
        if truth_columns is not None:
            from .truth import Losses

            losses = Losses.from_native(truth_columns)
    except OSError as e:
        raise EnvironmentProblem(f"writing the capture or trace failed: {e}") from None
    finally:
        if parquet and csv_path.exists():
            csv_path.unlink()
    return json.loads(out), util, losses


def _sibling_temp(path: Path, suffix: str) -> Path:
    from .outfiles import temp_beside

    return temp_beside(path, suffix)


def _csv_to_parquet(csv_path: Path, target: Path) -> None:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from .outfiles import write_atomically

    table = pacsv.read_csv(csv_path)
    write_atomically(target, lambda tmp: pq.write_table(table, tmp))
