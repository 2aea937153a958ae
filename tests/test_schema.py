"""The one scenario schema (issue 11): the core defines every field once; Python, the CLI
and the docs are built from it, and these tests fail when a copy is stale or a face
forgets a field."""

from __future__ import annotations

import argparse
import json

import pytest

from incastlab import Scenario, UsageError, _native, schema, schema_gen, simulate
from incastlab.cli.main import build_parser
from incastlab.cli.scenario_args import NOT_FLAGS


def test_the_committed_schema_is_the_cores():
    # stale after a change to crates/sim/src/schema.rs: python -m incastlab.schema_gen --write
    assert schema.SCHEMA_PATH.read_text() == schema_gen.core_schema_text()


def test_the_docs_table_is_generated_from_the_schema():
    core = schema_gen.core_schema_text()
    assert schema.DOCS_TABLE_PATH.read_text() == schema_gen.docs_table(schema.load(core), schema.load_presets(core))


def test_every_core_field_is_a_scenario_keyword_with_the_cores_default():
    core_defaults = json.loads(_native.default_scenario())
    assert set(core_defaults) == {f.name for f in schema.FIELDS}
    for f in schema.FIELDS:
        assert f.public in Scenario.model_fields
        if f.public != "servers":  # the one field a Scenario must be given
            assert Scenario.model_fields[f.public].default == f.to_public(core_defaults[f.name]), f.public


def test_every_scenario_field_has_a_simulate_flag_that_reaches_it():
    simulate_parser = _subcommands(build_parser())["simulate"]
    flags = {a.dest: a for a in simulate_parser._actions}
    samples = {"count": "3", "bytes": "64KiB", "bits_per_second": "10Gbps", "picoseconds": "3ms",
               "fraction": "0.25", "per_second": "50", "choice": None, "flag": None, "weights": "3,1",
               "durations": "20us,70us"}
    for f in schema.FIELDS:
        if f.public in NOT_FLAGS:
            continue
        action = flags[f.public]
        assert f.flag in action.option_strings
        assert f.doc in action.help, f"{f.flag}'s help is not the schema's doc"
        value = f.choices[-1] if f.unit == "choice" else samples[f.unit]
        argv = ["--servers", "1", f.flag] + ([] if value is None else [value])
        args = simulate_parser.parse_args(argv)
        assert getattr(args, f.public) == (True if value is None else value)


def test_get_rate_is_a_rate_per_second_not_a_fraction():
    f = schema.BY_PUBLIC["get_rate"]
    assert (f.unit, f.metavar, schema.UNIT_WORDS[f.unit]) == ("per_second", "PER_S", "/s")
    assert f.parse("2500") == 2500.0 and f.allowed().startswith("a number from 0.001 to 1e+07 per second")
    with pytest.raises(UsageError, match="get_rate"):
        f.parse("0")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser by its path ("simulate", "monitor plot"), walked as
    augur's tests/test_argparse_linting.py walks its commands."""
    out = {}

    def walk(p: argparse.ArgumentParser, path: str) -> None:
        if path:
            out[path] = p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}".strip())

    walk(parser, "")
    return out


def _all_options():
    for path, p in _subcommands(build_parser()).items():
        for action in p._actions:
            if action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                yield path, action


@pytest.mark.parametrize("path, action", list(_all_options()), ids=lambda x: x if isinstance(x, str) else
                         "/".join(x.option_strings))
def test_every_option_of_every_command_is_documented(path, action):
    # an option a user cannot learn about from --help is a defect; "%" must be escaped
    assert action.help and action.help.strip(), f"incastlab {path} {action.option_strings} has no help"
    for flag in action.option_strings:
        assert flag == flag.lower() and "_" not in flag, f"{flag}: flags are lower-case-with-dashes"


def test_every_command_renders_its_help():
    for path, p in _subcommands(build_parser()).items():
        assert p.format_help(), path


def test_a_refusal_crosses_the_binding_as_a_structured_error():
    spec = {"servers": 4, "rto_min_ps": 2 * 10**12, "rto_max_ps": 10**12}
    with pytest.raises(_native.ScenarioError) as e:
        _native.validate_scenario(json.dumps(spec))
    param, value, allowed, related = e.value.args
    assert (param, value, related) == ("rto_min_ps", "2s", ["rto_max_ps"])
    assert "rto_max (1s)" in allowed


@pytest.mark.parametrize("given, blamed", [
    ({"rto_max": "1ms"}, "rto_max"),  # RTOmin at its default 200 ms: blame the one typed
    ({"rto_min": "200s"}, "rto_min"),  # above the default RTOmax of 60 s
    ({"rto_min": "2s", "rto_max": "1s"}, "rto_min"),  # both given: the core's own choice
])
def test_a_conflict_blames_the_field_given(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(servers=1, **given)
    assert e.value.param == blamed
    assert "at most rto_max" in e.value.allowed


def test_every_result_row_carries_every_scenario_field_and_the_version():
    r = simulate(Scenario(servers=2, blocks=1, buffer_packets=5, mitigation="ictcp", udp="0.1%", handshake=True,
                          delayed_ack="1ms"))
    row = r.to_dict()
    missing = [f.result_name for f in schema.FIELDS if f.result_name not in row]
    assert missing == []
    assert row["incastlab_version"] and row["buffer_packets"] == 5 and row["mitigation"] == "ictcp"
    assert row["delayed_ack_s"] == 0.001 and row["udp_fraction"] == 0.001 and row["handshake"] is True


def test_a_field_out_of_its_own_range_is_refused_in_the_units_written():
    with pytest.raises(UsageError) as e:
        Scenario(servers=1, delayed_ack="600ms")
    assert (e.value.param, e.value.value) == ("delayed_ack", "600ms")
    assert e.value.allowed == "0s to 500ms (RFC 1122 §4.2.3.2)"
