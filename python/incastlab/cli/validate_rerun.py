"""`incastlab validate --rerun FILE ...`: the simulator side of saved `validate --json` rows run
again with this build, their testbed side kept (no root, no testbed).

A testbed run costs minutes and is one draw of a noisy distribution; a change to the
simulator should be judged on the same runs (docs/testbed.md, "The testbed against itself").
Each row names the scenario the simulator ran (`scenario`, and `scenario_think` with the
measured think times): re-run as saved, every field holds its saved value, so this build on
rows it wrote gives the same numbers, and a field added since takes the `linux` preset's
value. Rows written before rows carried their scenario are rebuilt from their preset table
(each modelled row's `field=value` text, the round trip and think times measured, the seed):
the same reading, for those rows, as the run that wrote them."""

from __future__ import annotations

import json
from typing import Any, Iterator

from ..errors import UsageError

FLAG = "--rerun"


def read_rows(paths: list[str]) -> Iterator[tuple[str, int, dict]]:
    """(path, line number, row) for every row of every file, refusing what is not one."""
    from pathlib import Path
    for path in paths:
        if Path(path).exists() and not Path(path).is_file():  # a FIFO or device would block or never end
            raise UsageError(FLAG, path, "a regular file of `incastlab validate --json` rows (not a directory, "
                                         "device or pipe)")
        try:
            with open(path) as f:
                lines = f.readlines()
        except OSError as e:
            raise UsageError(FLAG, path, f"a readable file of `incastlab validate --json` rows ({e.strerror})") from None
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                row["testbed"]["goodput_mbps"], row["simulator"]["seed"], row["servers"]
            except (ValueError, KeyError, TypeError):
                raise UsageError(FLAG, f"{path}:{n}", "a row of `incastlab validate --json`") from None
            yield path, n, row


def _value(text: str) -> Any:
    from ..units import number_or_text
    return text == "True" if text in ("True", "False") else number_or_text(text)


def fields_from_preset_text(row: dict) -> dict:
    """The fields a row's modelled preset rows set, read from their ``field=value`` text
    (rows written before `validate` saved its scenario)."""
    out = {}
    for item in row.get("preset", []):
        if not item["modelled"].startswith("yes"):
            continue
        for part in item["simulator"].split(", "):
            key, eq, value = part.partition("=")
            if eq and key.isidentifier():
                out[key] = _value(value)
    return out


def scenarios_of(row: dict) -> tuple[Any, Any | None]:
    """The row's plain scenario and its think-time one (None without measured think times)."""
    from ..scenario import Scenario
    from ..units import exact_duration
    if "scenario" in row:
        plain = Scenario(**row["scenario"])
    else:
        sim, tb = row["simulator"], row["testbed"]
        plain = Scenario(preset="linux", servers=row["servers"], block=tb["block_bytes"], blocks=tb["blocks"],
                         duration=None, seed=sim["seed"], rtt=exact_duration(round(sim["rtt_s"] * 1e12)),
                         **fields_from_preset_text(row))
    if not row.get("think_times"):
        return plain, None
    think = row.get("scenario_think") or {**plain.model_dump(), "think_times": row["think_times"]}
    return plain, Scenario(**think)


def checked_scenarios(row: dict, source: str) -> tuple[Any, Any | None]:
    """``scenarios_of``, a refusal naming the row."""
    try:
        return scenarios_of(row)
    except UsageError as e:  # a field this build does not have, or no longer allows
        raise UsageError(FLAG, source, f"a row whose scenario this build can run ({e})") from None
    except (KeyError, TypeError, AttributeError, ValueError):  # a scenario or preset table of the wrong shape
        raise UsageError(FLAG, source, "a row of `incastlab validate --json` (its scenario or preset table "
                                       "is damaged)") from None


def rerun_row(row: dict, plain: Any, think: Any | None, source: str) -> dict:
    """The row with its simulator results, ratios and seed spread from this build."""
    from ..seed_spread import inside, over_seeds
    from ..sim import simulate
    tb = row["testbed"]
    ratio = lambda a, b: None if not b else a / b
    sim = simulate(plain).to_dict()
    out = {**row, "rerun": source, "scenario": plain.model_dump(),
           "simulator": sim, "goodput_mbps_sim": sim["goodput_mbps"], "timeouts_sim": sim["timeouts"],
           "drops_sim": sim["drops"], "block_time_max_s_sim": sim["block_time_max_s"],
           "goodput_ratio": ratio(tb["goodput_mbps"], sim["goodput_mbps"])}
    if "traces" in row:  # the simulator's saved traces are not this run's
        out["traces"] = {k: v for k, v in row["traces"].items() if k == "testbed"}
    if think is not None:
        st = simulate(think).to_dict()
        out.update(scenario_think=think.model_dump(), simulator_think=st, goodput_mbps_sim_think=st["goodput_mbps"],
                   timeouts_sim_think=st["timeouts"], goodput_ratio_think=ratio(tb["goodput_mbps"], st["goodput_mbps"]))
        if row.get("think_seeds"):
            spread = over_seeds(think, len(row["think_seeds"]["seeds"]), first=st)
            spread["testbed_inside"] = inside(tb["goodput_mbps"], tb["timeouts"], spread)
            out["think_seeds"] = spread
    return out


def rerun(paths: list[str]) -> Iterator[dict]:
    """Every row of ``paths`` run again; every file read and every row's scenario built
    before the first simulation, so a bad row is refused before anything is printed."""
    todo = []
    for path, n, row in read_rows(paths):
        source = f"{path}:{n}"
        todo.append((row, *checked_scenarios(row, source), source))
    if not todo:
        raise UsageError(FLAG, " ".join(paths), "files holding at least one row of `incastlab validate --json`")
    for row, plain, think, source in todo:
        yield rerun_row(row, plain, think, source)
