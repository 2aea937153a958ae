"""Evidence: the `incastlab sweep` commands that reproduce the doctor's points, and how far
the simulator was from ns-3, ns-2 and the Linux testbed in this regime in the project's
own validation runs (``validation.json``, transcribed from docs/model.md and
docs/testbed.md with the command behind each table)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .. import units
from .search import EXTRA_SEEDS, Point

#: An RTOmin at or above this is "coarse" (the 200 ms family), below it "fine".
COARSE_RTO_S = 0.010


@dataclass(frozen=True)
class Distance:
    peer: str
    metric: str
    rate_bps: int                 # the link rate the validation ran at
    setting: str
    source: str
    command: str
    nearest_servers: int | None
    ratio: float | None           # incastlab / peer at the nearest fan-in
    ratio_range: tuple[float, float]

    def text(self) -> str:
        at = (f"{self.ratio:.2f}x at {self.nearest_servers} servers, " if self.ratio is not None else "")
        return (f"vs {self.peer} ({self.metric}): {at}{self.ratio_range[0]:.2f}-{self.ratio_range[1]:.2f}x over "
                f"the table; {self.setting} [{self.source}]")


def load_validation() -> list[dict]:
    text = resources.files("incastlab.diagnosis").joinpath("validation.json").read_text()
    return json.loads(text)["sets"]


def distances(rto_min_s: float, fan_in: int, rate_bps: float | None = None) -> list[Distance]:
    """The validation sets of the same RTOmin class, each at its fan-in nearest the user's
    (on a log scale); of a peer's sets at several link rates, those at the rate nearest
    ``rate_bps`` (on a log scale; all of them without it)."""
    cls = "coarse" if rto_min_s >= COARSE_RTO_S else "fine"
    sets = [s for s in load_validation() if s["rto_class"] == cls]
    if rate_bps:
        far = lambda s: abs(math.log(s["rate_bps"] / rate_bps))  # noqa: E731
        nearest = {s["peer"]: min(far(t) for t in sets if t["peer"] == s["peer"]) for s in sets}
        sets = [s for s in sets if far(s) == nearest[s["peer"]]]
    out = []
    for s in sets:
        rows = s.get("rows") or []
        if rows:
            n, r = min(rows, key=lambda row: abs(math.log(row[0] / fan_in)))
            lo, hi = min(x[1] for x in rows), max(x[1] for x in rows)
        else:
            n, r = None, None
            lo, hi = s["span"]["ratio"]
        out.append(Distance(s["peer"], s["metric"], s["rate_bps"], s["setting"], s["source"], s["command"], n, r, (lo, hi)))
    return out


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def sweep_command(base: dict, points: list[Point], extra: dict | None = None) -> str:
    """`incastlab sweep` commands reproducing `points` (same fields, same seeds: the doctor's
    seed-1 rows, and at its chaotic points seeds 1-3 averaged). A point's length depends on
    its fan-in (``search.point_blocks``), so points of different lengths are one sweep per
    fan-in, in a shell loop over ``servers:blocks``."""
    fields = {**base, **(extra or {})}
    seeds = max((len(p.seeds) for p in points), default=1)
    common = []
    for k, v in fields.items():
        if k in ("servers", "blocks", "duration"):
            continue
        if k == "rate":
            v = units.format_rate(int(v)).replace(" ", "")
        elif k in ("rtt", "rto_min", "delayed_ack", "timer_granularity") and isinstance(v, float):
            v = f"{round(v * 1e6, 3):g}us"
        common.append(f"{k}={_value(v)}")
    seeds_part = f" --seeds {1 + len(EXTRA_SEEDS)}" if seeds > 1 else ""
    blocks = sorted({(p.servers, p.blocks) for p in points})
    tail = " ".join(common) + seeds_part + " --out doctor-evidence"
    if len({b for _, b in blocks}) == 1:
        return (f"incastlab sweep --grid servers={','.join(str(n) for n, _ in blocks)} blocks={blocks[0][1]} "
                + tail)
    # one sweep per fan-in, each with its own length, in one shell line
    pairs = " ".join(f"{n}:{b}" for n, b in blocks)
    return (f"for p in {pairs}; do incastlab sweep --grid servers=${{p%:*}} blocks=${{p#*:}} {tail} "
            "--name doctor-${p%:*}; done")
