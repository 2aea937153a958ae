"""A point's key: what the result store files a result under, and the runner plans by.

Kept apart from ``store`` (which needs pyarrow) so that a run without a store (``incastlab
simulate``, ``incastlab.simulate()``) loads nothing it does not use.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

#: The column a store row is keyed by.
KEY = "point_key"


def canonical_json(native: Mapping[str, Any]) -> str:
    """The one text of a scenario: sorted keys, no spaces (what is hashed and stored)."""
    return json.dumps(native, sort_keys=True, separators=(",", ":"), allow_nan=False)


def point_key(scenario_json: str, core: tuple[str, str]) -> str:
    """SHA-256 of the canonical scenario JSON and the core's (version, build)."""
    text = canonical_json({"scenario": json.loads(scenario_json), "core_version": core[0], "core_build": core[1]})
    return hashlib.sha256(text.encode()).hexdigest()
