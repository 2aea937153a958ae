"""Hypothesis profiles for the fuzz tests (tests/test_fuzz_*.py) and their session summary.

"ci" (the default) is deterministic: every property draws the same inputs on every run
(``derandomize``), keeps no example database, and is sized so the fuzz files together take
well under a minute on a 2-core machine. "long" draws 10 times as many inputs, from a new
random seed each run, for a deeper local search:

    INCASTLAB_FUZZ=long python -m pytest -q tests/test_fuzz_*.py
    python -m pytest -q tests/test_fuzz_*.py --hypothesis-profile=long --hypothesis-seed=7

At the end of a session that ran any, a line says how many inputs were tried, how many were
refused as usage errors and how many ended in a traceback (fuzz_support.TALLY); after the
fault-injection suite (tests/test_faults.py), how many faults were tried and how many left
a traceback, an orphaned process or a partial output (fault_support.TALLY).
"""

import os

from hypothesis import HealthCheck, settings

import fault_support
import fuzz_support

# The per-example time limit is fuzz_support's hang alarm, not hypothesis' deadline: a
# deadline measured on a shared 2-core machine flags load, not slow code.
_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=fuzz_support.CI_EXAMPLES, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=fuzz_support.CI_EXAMPLES * fuzz_support.LONG_FACTOR,
                          derandomize=False, **_COMMON)
settings.load_profile("long" if os.environ.get("INCASTLAB_FUZZ") == "long" else "ci")


def pytest_terminal_summary(terminalreporter):
    line = fuzz_support.TALLY.summary()
    if line:
        terminalreporter.write_sep("-", "fuzz")
        terminalreporter.write_line(line)
    line = fault_support.TALLY.summary()
    if line:
        terminalreporter.write_sep("-", "faults")
        terminalreporter.write_line(line)
