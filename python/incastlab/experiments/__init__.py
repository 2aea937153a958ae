"""Reproductions of the source documents' figures and tables, as data.

Each module here reproduces one figure or table and defines ``EXPERIMENT`` (an
``incastlab.experiments.spec.Experiment``): its series (Scenario parameters), its sweep
axis, its plot and its checks (the source's claims, measured on our results).
``incastlab reproduce NAME --out DIR`` runs one (``incastlab.experiments.run``).

To add a reproduction: write ``python/incastlab/experiments/<module>.py`` defining
``EXPERIMENT`` and add one line ``"<name>": "<module>"`` to ``REGISTRY`` below.
"""

from __future__ import annotations

import importlib

from ..errors import UsageError
from .spec import Check, Experiment, Observe, Plot, Series

# reproduction name -> module under incastlab.experiments (one line per reproduction)
REGISTRY: dict[str, str] = {
    "fast08-fig3": "fast08_fig3",
    "fast08-fig4": "fast08_fig4",
    "fast08-fig6": "fast08_fig6",
    "fast08-fig7": "fast08_fig7",
    "fast08-fig9": "fast08_fig9",
    "fast08-fig10": "fast08_fig10",
    "fast08-fig11": "fast08_fig11",
    "fast08-table3": "fast08_table3",
    "fast08-fig12": "fast08_fig12",
    "fast08-fig13": "fast08_fig13",
    "fast08-fig14": "fast08_fig14",
    "sigcomm09-fixed-block": "sigcomm09_fixed_block",
    "wren09-delack": "wren09_delack",
    "wren09-timers": "wren09_timers",
    "osada-fig9": "osada_fig9",
    "osada-fig13": "osada_fig13",
    "osada-fig17": "osada_fig17",
    "dctcp-incast-1g": "dctcp_incast_1g",
    "dctcp-incast-10g": "dctcp_incast_10g",
    "rack-tlp-tail": "rack_tlp_tail",
    "riak-microburst": "riak_microburst",
    "dctcp-background": "dctcp_background",
    "fattree-incast": "fattree_incast",
    "ndp-incast": "ndp_incast",
    "ndp-collateral": "ndp_collateral",
    "swift-incast": "swift_incast",
    "swift-steady-incast": "swift_steady_incast",
}


def names() -> list[str]:
    """Every registered reproduction, in the registry's order."""
    return list(REGISTRY)


def load(name: str, param: str = "NAME") -> Experiment:
    """The Experiment registered as ``name``; a UsageError naming the known ones otherwise."""
    module = REGISTRY.get(name)
    if module is None:
        raise UsageError(param, name, "one of " + ", ".join(names()) + " (or 'all'; see --list)")
    exp = importlib.import_module(f"{__name__}.{module}").EXPERIMENT
    if exp.name != name:  # a registry typo would otherwise write files under another name
        raise RuntimeError(f"registry entry {name!r} points at {module}, which defines {exp.name!r}")
    return exp


__all__ = ["REGISTRY", "names", "load", "Experiment", "Series", "Check", "Plot", "Observe"]
