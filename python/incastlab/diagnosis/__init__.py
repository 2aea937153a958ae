"""``incastlab doctor`` and ``incastlab.doctor()``: will this cluster collapse, why, and which fix.

The parts, each one job: ``cluster`` (``describe``: the user's terms -> a cluster, defaults
shown; not named after the function, so importing it never hides ``describe`` on this package),
``screen`` (closed-form bounds: N x window vs buffer + BDP, Osada et al.'s model),
``search`` (the measured point and the onset bisection), ``fixes`` (what to change, how,
at what cost), ``mechanism`` (the forensics in one line), ``evidence`` (the sweep command,
the validation distances), ``report`` (the typed report and its faces), ``recording``
(a ``monitor --record`` or Millisampler file as a description), ``riak`` (a get rate and
reply size instead of a fan-in: the Riak workload), ``run`` (the doctor itself). docs/doctor.md.

Names are imported when first used (PEP 562), so ``incastlab doctor --help`` stays light.
"""

from __future__ import annotations

_LAZY = {"doctor": "run", "diagnose": "run", "runnable_fixes": "run", "search_limit": "run",
         "describe": "cluster", "Cluster": "cluster", "DoctorReport": "report",
         "DEFAULTS": "defaults", "MAX_FAN_IN": "defaults", "describe_riak": "riak", "diagnose_riak": "riak",
         "RiakReport": "riak"}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
