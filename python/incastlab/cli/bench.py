"""``incastlab bench``: how fast the simulator core runs, and how much memory it needs.

Points (issue 2, issue 15):
- the FAST'08 scenario (``000_315d806dde942a9f.txt`` §3.1, Table 1, 32 KiB buffer) at 64
  servers for 20 s of simulated time, and for 2 s: memory should not grow with time;
- the same at 1 server for 2 s, beside ns-3.44's time for it (an optimized build of
  ``../shared/peers/ns3/incast.cc``): the target is 100x that;
- a one-shot 10 Gbps incast: ``blocks=1``, N servers x 1 MiB each (1,048,576 B; the
  issue says "1 MB"), a 100-packet output buffer (150,000 B = 100 x 1500 B), 10 us per
  link (RTT 40 us), N = 64, 256, 1024, run until the last byte is acknowledged, beside
  htsim's time (Broadcom csg-htsim, the same topology with its stock TcpSrc/TcpSink,
  Queue and Pipe): the target is 2x that.

A speed-up is a ratio of two times taken on one machine, so the other simulators' times
are kept per machine (``REFERENCE_MACHINES``, by the CPU model /proc/cpuinfo names); on a
machine without its own, the bench shows the latest ones and no verdict.

Each point runs alone in a fresh Python process, one after another, so its wall time is
single-threaded and its peak resident memory (``ru_maxrss``) is its own.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EnvironmentProblem
from ..table import render

if TYPE_CHECKING:
    from ..scenario import Scenario

TARGET_EVENTS_PER_S = 10e6  # issue 2: at least 10 million events/s, single threaded
ONESHOT_EVENTS_PER_S = 25e6  # issue 15: at least 25 million events/s on the one-shot points


@dataclass(frozen=True)
class Reference:
    """Another simulator's wall time for the same point, measured single threaded on an
    idle machine (``machine``: its CPU model), and how many times faster ours should be."""
    tool: str
    wall_s: float
    speedup: float
    machine: str
    #: The machine running the bench is the one the reference was measured on: the
    #: speed-up is a like-for-like ratio and gets a verdict.
    same_machine: bool

    @property
    def target_wall_s(self) -> float:
        return self.wall_s / self.speedup


@dataclass(frozen=True)
class ReferenceMachine:
    """The other simulators' times for the bench points, measured on one machine (issue 15):
    the fastest of many runs, idle, single threaded (docs/simulate.md, "incastlab bench")."""
    cpu: str  # /proc/cpuinfo "model name"
    ns3_fast08_1_s: float  # ns-3.44 optimized build, the FAST'08 1-server 2 s point (its Simulator::Run)
    htsim_oneshot_s: dict[int, float]  # csg-htsim, the one-shot points by servers (its event loop)


REFERENCE_MACHINES = (
    # the project's earlier machine (issue 15's figures, 2026-11-22)
    ReferenceMachine("Intel(R) Xeon(R) Processor", 2.17, {64: 0.032, 256: 0.094, 1024: 0.65}),
    # ns-3.44 from its ns-3.44 tag, `./ns3 configure -d optimized` (-O3 -march=native, logging and
    # asserts off), incast.cc built in scratch/; csg-htsim 841d9e7, its sim/ library at -O3
    # -DNDEBUG under a driver of stock components (docs/simulate.md, "incastlab bench"); 2026-11-25
    ReferenceMachine("AMD EPYC", 2.06, {64: 0.0204, 256: 0.0841, 1024: 0.793}),
)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """This machine's CPU model as /proc/cpuinfo names it, if it says."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return None


def reference_machine(cpu: str | None) -> tuple[ReferenceMachine, bool]:
    """The references measured on this CPU model, or the latest ones; and whether they are
    this machine's."""
    for m in reversed(REFERENCE_MACHINES):
        if cpu == m.cpu:
            return m, True
    return REFERENCE_MACHINES[-1], False


@dataclass(frozen=True)
class BenchPoint:
    name: str
    scenario: Scenario
    target_wall_s: float | None  # issue 2 targets on a 2-core machine; None: no wall target
    reference: Reference | None = None
    target_events_per_s: float = TARGET_EVENTS_PER_S


def _oneshot(n: int, target: float | None, refs: ReferenceMachine, same: bool) -> BenchPoint:
    from ..scenario import Scenario

    return BenchPoint(f"oneshot-10g-{n}",
                      Scenario(servers=n, sru="1MiB", buffer=150_000, rate="10Gbps", rtt="40us", blocks=1),
                      target, Reference("htsim", refs.htsim_oneshot_s[n], 2.0, refs.cpu, same), ONESHOT_EVENTS_PER_S)


def bench_points(quick: bool, cpu: str | None = None) -> list[BenchPoint]:
    """The benchmark set, with the references of CPU model ``cpu`` (default: this machine's);
    ``quick`` keeps the points that take well under a second."""
    from ..scenario import Scenario

    refs, same = reference_machine(cpu_model() if cpu is None else cpu)
    fast08_2s = BenchPoint("fast08-64-2s", Scenario(servers=64, duration="2s"), None)
    fast08_1 = BenchPoint("fast08-1-2s", Scenario(servers=1, duration="2s"), None,
                          Reference("ns-3", refs.ns3_fast08_1_s, 100.0, refs.cpu, same))
    if quick:
        return [fast08_1, fast08_2s, _oneshot(64, 0.05, refs, same), _oneshot(256, 0.1, refs, same)]
    return [
        BenchPoint("fast08-64-20s", Scenario(servers=64, duration="20s"), 2.0),
        fast08_2s,
        fast08_1,
        _oneshot(64, 0.05, refs, same),
        _oneshot(256, 0.1, refs, same),
        _oneshot(1024, 0.7, refs, same),
    ]


# Runs in the child: simulate one point, report the result and the peak resident memory
# before (imports only) and after the simulation, in KiB. VmHWM is this process image's
# own high-water mark; ru_maxrss would also count the parent's memory at fork, which
# Linux carries across exec.
_CHILD = """
import json, resource, sys
def peak_kib():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from incastlab.scenario import Scenario
from incastlab.sim import simulate
from incastlab.study import api, worker
# the engine's modules and the core loaded (and the core's build hashed) before the
# high-water mark is read: sim RSS is what the simulation adds, not the start-up
worker.core_identity()
scenario = Scenario(**json.loads(sys.argv[1]))
before = peak_kib()
r = simulate(scenario)
after = peak_kib()
print(json.dumps({"result": r.to_dict(), "rss_before_kib": before, "rss_after_kib": after}))
"""


def run_point(point: BenchPoint) -> dict:
    """Simulate ``point`` in a fresh interpreter; return the bench record."""
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(point.scenario.model_dump())],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise EnvironmentProblem(f"bench point {point.name} failed: {last}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    r = child["result"]
    wall = r["wall_seconds"]  # the core's own timer: simulation only, not interpreter start-up
    events_per_s = r["events"] / wall if wall > 0 else float("inf")
    rec = {
        "name": point.name,
        "servers": r["servers"],
        "events_per_s": events_per_s,
        "packet_hops_per_s": r["packet_hops"] / wall if wall > 0 else float("inf"),
        "wall_seconds": wall,
        "sim_seconds": r["sim_seconds"],
        "events": r["events"],
        "packet_hops": r["packet_hops"],
        "max_rss_mib": child["rss_after_kib"] / 1024,
        # growth of the high-water mark during the run: the simulator's own memory (the
        # interpreter, numpy and pandas account for the rest)
        "sim_rss_mib": (child["rss_after_kib"] - child["rss_before_kib"]) / 1024,
        # the core's high-water marks: what its memory scales with
        "peak_packets": r.get("peak_packets"),
        "peak_events": r.get("peak_events"),
        "goodput_mbps": r["goodput_mbps"],
        "blocks": r["blocks"],
        "target_events_per_s": point.target_events_per_s,
        "events_ok": events_per_s >= point.target_events_per_s,
        "target_wall_s": point.target_wall_s,
        "wall_ok": None if point.target_wall_s is None else wall < point.target_wall_s,
    }
    ref = point.reference
    rec.update({
        "reference_tool": None if ref is None else ref.tool,
        "reference_wall_s": None if ref is None else ref.wall_s,
        "reference_machine": None if ref is None else ref.machine,
        "reference_same_machine": None if ref is None else ref.same_machine,
        "speedup": None if ref is None else (ref.wall_s / wall if wall > 0 else float("inf")),
        "target_speedup": None if ref is None else ref.speedup,
        "speedup_target_wall_s": None if ref is None else ref.target_wall_s,
        # a ratio to a time taken on another machine is no verdict
        "speedup_ok": None if ref is None or not ref.same_machine else wall <= ref.target_wall_s,
    })
    return rec


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "bench",
        help="simulated events and packet hops per second, wall time and memory per point",
        description="Benchmark the simulator core, one point per fresh process, single threaded: "
        "FAST'08 at 64 servers (20 s and 2 s simulated) and at 1 server (2 s, beside ns-3's time) "
        "and a one-shot 10 Gbps incast of 64, 256 and 1024 servers x 1 MiB (beside htsim's time).",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line per point")
    p.add_argument("--quick", action="store_true",
                   help="only the short points (FAST'08 2 s at 1 and 64 servers, one-shot 64 and 256 servers)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    points = bench_points(args.quick)
    records = []
    for point in points:
        if not args.json and sys.stderr.isatty():
            sys.stderr.write(f"\rbench: {point.name} ...".ljust(40))
            sys.stderr.flush()
        rec = run_point(point)
        records.append(rec)
        if args.json:
            print(json.dumps(rec), flush=True)
    if not args.json:
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 40 + "\r")
        print(render_bench(records))
    return 0


def _verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("pass" if ok else "MISS")


def render_bench(records: list[dict]) -> str:
    headings = ["point", "servers", "sim s", "wall s", "target", "", "vs", "speed-up", "target", "",
                "Mevents/s", "target", "", "Mhops/s",
                "events", "maxRSS MiB", "sim RSS MiB", "peak pkts", "peak events"]
    rows = []
    for r in records:
        has_ref = r.get("reference_tool") is not None
        rows.append([
            r["name"], str(r["servers"]), f"{r['sim_seconds']:g}", f"{r['wall_seconds']:.3f}",
            "-" if r["target_wall_s"] is None else f"<{r['target_wall_s']:g}", _verdict(r["wall_ok"]),
            f"{r['reference_tool']} {r['reference_wall_s']:g} s" if has_ref else "-",
            f"{r['speedup']:.1f}x" if has_ref else "-",
            f">={r['target_speedup']:g}x (<={r['speedup_target_wall_s']:.3f} s)" if has_ref else "-",
            _verdict(r.get("speedup_ok")),
            f"{r['events_per_s'] / 1e6:.1f}", f">={r['target_events_per_s'] / 1e6:g}", _verdict(r["events_ok"]),
            f"{r['packet_hops_per_s'] / 1e6:.1f}",
            str(r["events"]), f"{r['max_rss_mib']:.1f}", f"{r['sim_rss_mib']:.1f}",
            str(r["peak_packets"]) if r["peak_packets"] is not None else "-",
            str(r["peak_events"]) if r["peak_events"] is not None else "-",
        ])
    note = ("each point alone in a fresh process, single threaded; wall s = the core's simulation time; "
            "sim RSS = peak resident memory added by the simulation;\n"
            "first target: the project's wall-time goal on a 2-core machine; vs: the other simulator's time for "
            "the same point, idle, and the speed-up the project aims for (docs/simulate.md, \"incastlab bench\")")
    machines = {(r["reference_machine"], r["reference_same_machine"]) for r in records if r.get("reference_tool")}
    for machine, same in sorted(machines, key=str):
        note += (f"\nthe other simulators' times were measured on this machine's CPU model ({machine})" if same else
                 f"\nthe other simulators' times were measured on another CPU model ({machine}): the speed-ups "
                 "compare two machines, so they get no verdict (measure them here: docs/simulate.md, "
                 "\"incastlab bench\")")
    return render(headings, rows) + "\n" + note
