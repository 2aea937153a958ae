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


# --- fat trees, load balancing, one-shot flows and background (issue 28, docs/fabrics.md) ---

def _incast(**given):
    base = dict(topology="fat_tree", fat_tree_k=8, rate="10Gbps", rtt="4us", workload="incast", sru="64KB",
                rto_min="200us")
    return simulate(Scenario(**{**base, **given})).to_dict()


def test_an_incast_never_beats_the_receivers_line_rate_and_its_last_flow_is_its_slowest():
    # 16 x 64 KB through one 10 Gbps port: the payload alone takes 0.82 ms, whatever the fabric
    r = _incast(servers=16, load_balancing="ecmp")
    assert (r["flows"], r["flows_completed"], r["fat_tree_k"]) == (16, 16, 8)
    assert r["incast_completion_s"] >= 16 * 64_000 * 8 / 10e9
    assert r["fct_p50_s"] <= r["fct_p99_s"] <= r["fct_max_s"] <= r["incast_completion_s"]
    assert r["slowdown_p50"] >= 1.0, "no flow beats its own time on the idle fabric"


def test_routing_by_destination_funnels_an_incast_above_the_receivers_edge_and_ecmp_does_not():
    # by destination (Al-Fares' two-level tables) every sender of a pod takes the same
    # uplink towards one receiver, so the drops are above the edge; hashed per flow, the
    # senders spread and the receiver's own port is where they meet
    funnel = _incast(servers=16)
    spread = _incast(servers=16, load_balancing="ecmp")
    assert not funnel["busiest_port"].startswith("edge") and funnel["busiest_port_drops"] > 0
    # the receiver's port: an edge's port to a host, as full as the watched port ever was
    assert spread["busiest_port"].startswith("edge") and " -> host " in spread["busiest_port"]
    assert spread["busiest_port_max_queue_bytes"] == spread["max_queue_bytes"] > funnel["max_queue_bytes"]
    assert spread["busiest_port_drops"] > spread["drops"] / 2


def test_the_same_seed_gives_the_same_fabric_result_and_another_seed_another_placement():
    strip = lambda r: {k: v for k, v in r.items() if k != "wall_seconds"}  # noqa: E731
    a, b = _incast(servers=8, load_balancing="spray", seed=3), _incast(servers=8, load_balancing="spray", seed=3)
    assert strip(a) == strip(b)
    c = _incast(servers=8, load_balancing="spray", seed=4)
    assert strip(c) != strip(a)


def test_background_flows_arrive_and_are_reported_apart_from_the_incast():
    r = _incast(servers=8, fat_tree_k=4, rate="1Gbps", rtt="20us", background_load=0.3, rto_min="1ms")
    assert r["background_flows"] > 0 and 0 < r["background_flows_completed"] <= r["background_flows"]
    assert r["background_slowdown_p50"] >= 1.0 and r["flows"] == 8


@pytest.mark.parametrize("given, blamed", [
    ({"topology": "fat_tree", "fat_tree_k": 5}, "fat_tree_k"),  # k must be even
    ({"topology": "fat_tree", "fat_tree_k": 4, "servers": 16}, "servers"),  # 16 hosts: 15 senders at most
    ({"topology": "fat_tree", "fat_tree_k": 4, "background_load": 0.3, "background_hosts": 4}, "background_hosts"),
    ({"fat_tree_k": 4}, "fat_tree_k"),  # on a star
    ({"load_balancing": "bogus"}, "load_balancing"),
    ({"workload": "incast", "background_load": 1.5}, "background_load"),
])
def test_fat_tree_fields_that_cannot_apply_are_refused_naming_them(given, blamed):
    with pytest.raises(UsageError) as e:
        Scenario(**{"servers": 8, "workload": "incast", **given})
    assert e.value.param == blamed


def test_simulate_prints_completion_times_for_an_incast_and_plots_them(tmp_path):
    png = tmp_path / "ft.png"
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--topology", "fat_tree",
                        "--fat-tree-k", "4", "--workload", "incast", "--servers", "2,8", "--sru", "64KB",
                        "--rto-min", "1ms", "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    header = r.stdout.splitlines()[1].split()
    assert header[:4] == ["senders", "flows", "done", "last"] and "busiest" in header
    assert "until its flows are delivered" in r.stdout.splitlines()[0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cli_refuses_an_odd_fat_tree_k_in_one_line_exit_2():
    r = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "8", "--topology",
                        "fat_tree", "--fat-tree-k", "5", "--workload", "incast"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--fat-tree-k" in r.stderr
