"""The Python API: ``Scenario``, ``simulate`` -> ``SimResult``, ``sweep`` -> DataFrame."""

import pytest

import incastlab
from incastlab import Scenario, SimResult, UsageError, simulate, sweep
from incastlab.sim import RESULT_COLUMNS, sweep_servers

SHORT = {"blocks": 4}


def test_exports():
    for name in ("Scenario", "simulate", "sweep", "SimResult"):
        assert hasattr(incastlab, name)


def test_simulate_returns_attribute_access_and_dict():
    r = simulate(Scenario(servers=2, **SHORT))
    assert isinstance(r, SimResult)
    d = r.to_dict()
    assert set(RESULT_COLUMNS) <= set(d)
    assert r.goodput_mbps == d["goodput_mbps"] and r["drops"] == d["drops"]
    assert r.servers == 2 and r.blocks == 4
    with pytest.raises(AttributeError):
        r.no_such_field
    with pytest.raises(Exception):
        r.data = {}  # frozen


def test_simulate_accepts_a_dict_of_fields():
    assert simulate({"servers": 1, "blocks": 2, "sru": "64KiB"}).sru_bytes == 64 * 1024


def test_sweep_rows_follow_input_order_and_columns_match_simulate():
    scenarios = [Scenario(servers=n, **SHORT) for n in (8, 1, 4, 2)]
    df = sweep(scenarios, jobs=2)
    assert list(df["servers"]) == [8, 1, 4, 2]
    assert list(df.columns) == list(simulate(scenarios[0]).to_dict())
    assert set(RESULT_COLUMNS) <= set(df.columns)


def test_sweep_parallel_equals_serial_apart_from_wall_time():
    scenarios = [Scenario(servers=n, duration="0.3s") for n in (1, 4, 16, 32)]
    a = sweep(scenarios, jobs=1).drop(columns="wall_seconds")
    b = sweep(scenarios, jobs=2).drop(columns="wall_seconds")
    assert a.equals(b)


def test_sweep_servers_keeps_everything_else():
    base = Scenario(servers=1, buffer="64KiB", rto_min="200us", **SHORT)
    df = sweep_servers(base, [1, 3])
    assert list(df["servers"]) == [1, 3]
    assert set(df["buffer_bytes"]) == {64 * 1024}
    assert df["rto_min_s"].tolist() == pytest.approx([200e-6, 200e-6])


def test_empty_sweep_has_the_documented_columns():
    assert list(sweep([]).columns) == RESULT_COLUMNS


def test_bad_jobs_is_a_usage_error():
    with pytest.raises(UsageError, match="^jobs"):
        sweep([Scenario(servers=1, **SHORT)], jobs=0)


def test_core_refusal_becomes_usage_error():
    # Bypass Python's validation to check that the core's own refusal
    # ("param: value is not allowed; expected ...", docs/native-api.md) reaches the user
    # as a UsageError naming the Scenario field.
    good = Scenario(servers=2, **SHORT)
    bad = Scenario.model_construct(**{**dict(good), "servers": 0})
    with pytest.raises(UsageError) as e:
        simulate(bad)
    assert e.value.param == "servers" and "expected" in str(e.value)


def test_with_servers_validates():
    with pytest.raises(UsageError, match="^servers"):
        Scenario(servers=1).with_servers(0)


def test_reprs_are_in_the_units_people_write():
    # issue 11: Scenario(rtt="100us") printed rtt=100000000 and SimResult its picoseconds
    from incastlab import Scenario, simulate

    s = Scenario(servers=4, rtt="40us", buffer="64KiB")
    assert repr(s) == "Scenario(servers=4, buffer='64KiB', rtt='40us')"
    assert eval(repr(s), {"Scenario": Scenario}) == s
    r = simulate(Scenario(servers=2, duration="50ms"))
    assert repr(r).startswith("SimResult(servers=2, goodput_mbps=") and "scenario=Scenario(servers=2, duration='50ms')" in repr(r)
