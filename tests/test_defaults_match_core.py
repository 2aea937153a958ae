"""The Python Scenario states every default for users; the Rust core has its own. They
must be the same numbers (docs/defaults.md), or a run from Python and one from the core
would silently differ."""

import json

from incastlab import Scenario, _native


def test_python_defaults_are_the_core_defaults():
    core = json.loads(_native.default_scenario())
    ours = Scenario(servers=core["servers"]).to_native()
    assert ours.keys() <= core.keys(), f"fields unknown to the core: {ours.keys() - core.keys()}"
    differing = {k: (ours[k], core[k]) for k in ours if ours[k] != core[k]}
    assert differing == {}, f"(python, core) defaults differ: {differing}"
    missing = core.keys() - ours.keys()
    assert missing == set(), f"core knobs with no Python field: {missing}"
