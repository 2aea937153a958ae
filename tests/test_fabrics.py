"""Fabrics from the Python front (issue 13): a leaf-spine's shape and derived uplink rate
reach the results, and fabric fields that cannot apply are refused naming them
(docs/model.md, "Topology"; the routing and rate tests are in crates/sim/src/net/topology.rs
and crates/sim/src/scenario.rs)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from incastlab import Scenario, UsageError, simulate


def test_a_leaf_spine_result_reports_its_shape_and_derived_uplink_rate():
    # 8 servers on 2 leaves: 4 per leaf at 1 Gbps over 2 spines at 2:1 -> 4 / (2 x 2) = 1 Gbps
    r = simulate(Scenario(servers=8, topology="leaf_spine", spines=2, oversubscription=2, duration="100ms")).to_dict()
    assert (r["topology"], r["leaves"], r["spines"]) == ("leaf_spine", 2, 2)
    assert (r["trunk_rate_bps"], r["oversubscription"]) == (1_000_000_000, 2.0)


def test_a_given_trunk_rate_is_echoed_with_the_ratio_it_makes():
    two = simulate(Scenario(servers=4, topology="two_switch", trunk_rate="10Gbps", duration="100ms")).to_dict()
    assert two["trunk_rate_bps"] == 10_000_000_000
    # 2 per leaf at 1 Gbps over 1 spine at 4 Gbps: 0.5
    ls = simulate(Scenario(servers=4, topology="leaf_spine", trunk_rate="4Gbps", duration="100ms")).to_dict()
    assert (ls["trunk_rate_bps"], ls["oversubscription"]) == (4_000_000_000, 0.5)


@pytest.mark.parametrize("given, blamed", [
    ({"trunk_rate": "10Gbps"}, "trunk_rate"),  # the star has no switch-to-switch link
    ({"topology": "two_switch", "leaves": 3}, "leaves"),
    ({"topology": "leaf_spine", "oversubscription": 2, "trunk_rate": "10Gbps"}, "oversubscription"),
    ({"topology": "leaf_spine", "oversubscription": 5}, "oversubscription"),  # uplinks below 1 Gbps
    ({"topology": "two_switch", "trunk_rate": "100Mbps"}, "trunk_rate"),
])
def test_fabric_fields_that_cannot_apply_are_refused_naming_them(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(servers=8, **given)
    assert e.value.param == blamed


def test_the_cli_refuses_both_a_trunk_rate_and_a_ratio_in_one_line_exit_2():
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "8", "--topology",
                        "leaf_spine", "--oversubscription", "2", "--trunk-rate", "10Gbps"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--oversubscription" in r.stderr and "trunk_rate" in r.stderr
