"""What the differential harnesses share (``incastlab.peers.compare`` and
``incastlab.peers.fields``), with a toy peer: no simulator runs here, each side is a
function returning numbers. The ns-3 and ns-2 harnesses are tested for what is their own
in test_peer_ns3.py and test_peer_ns2.py.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from incastlab import EnvironmentProblem, Scenario, UsageError
from incastlab.peers import compare
from incastlab.peers.compare import Axis, Comparison
from incastlab.peers.fields import FieldMap
from incastlab.sim import SimResult
from peer_support import ONE_LOST_RETRANSMIT

TOY_FIELDS = FieldMap(
    "toy", "tests/test_peer_compare.py",
    mapped={"servers": lambda s: [f"--n={s.servers}"], "seed": lambda s: [f"--seed={s.seed}"],
            **{f: lambda s: [] for f in ("duration", "jitter", "limited_transmit", "tcp", "rto_min")}},
    hard_wired={"rto_backoff": (lambda s: "new_ack", "it recomputes the RTO on every ACK"),
                "tie_break": (lambda s: "fifo", "it runs ties in order")},
    inexpressible={"udp": "UDP"},
)
TOY = compare.Peer(name="toy", key="toy", arg_word="flags", metrics=(*compare.METRICS, compare.LOST_RETRANSMITS),
                   fields=TOY_FIELDS, args=TOY_FIELDS.args,
                   warnings=lambda s: ["jitter: drawn otherwise"] if s.jitter else [])
LT = Axis("limited_transmit", "LT", (("on", True), ("off", False)))

def grid(servers=(4,), axes=(LT,), shared=None, ours=None, **kw) -> list[compare.Point]:
    return compare.build_grid(TOY, list(servers), list(axes), shared or {"duration": "1s"}, ours or {}, **kw)


def numbers(blocks, goodput=1.0, timeouts=1, drops=1) -> dict:
    return {"blocks": blocks, "goodput_mbps": goodput, "timeouts": timeouts, "drops": drops}


def comparison(point: compare.Point, ours: dict, theirs: dict) -> Comparison:
    return Comparison(point, ours, theirs, 0.01, 1.0)


# --- the grid --------------------------------------------------------------------------------


def test_grid_points_share_a_scenario_and_ours_adds_its_own_fields():
    points = grid([4, 16], shared={"duration": "1s", "rto_min": "1ms"}, ours={"rwnd": "1GiB"})
    assert [(p.shared.servers, p.shared.limited_transmit) for p in points] == [
        (4, True), (4, False), (16, True), (16, False)]
    assert all(p.ours.rto_min == p.shared.rto_min == 1e-3 for p in points)
    assert points[0].ours.rwnd == 2**30 and points[0].shared.rwnd == 29200
    assert compare.ours_only(points) == {"rwnd": "1GiB"}
    assert points[0].peer_args == ("--n=4", "--seed=1") and points[0].tag == "n4-lt-on"


def test_axes_multiply_and_name_the_point_in_file_names():
    tcp = Axis("tcp", "tcp", (("reno", "reno"), ("sack", "sack")))
    points = grid([2], axes=[LT, tcp])
    assert [p.shown for p in points] == [("on", "reno"), ("on", "sack"), ("off", "reno"), ("off", "sack")]
    assert points[1].shared.tcp == "sack" and points[1].tag == "n2-lt-on-tcp-sack"
    odd = grid([2], axes=[Axis("rto_min", "rto_min", (("1 ms/x", "1ms"),))])
    assert odd[0].tag == "n2-rto_min-1_ms_x"


def test_the_peers_rules_apply_to_ours_only_and_ours_wins_over_them():
    [p] = grid(axes=[], ours={"tie_break": "random"}, with_rules=True)
    assert p.ours.rto_backoff == "new_ack" and p.ours.tie_break == "random"
    assert p.shared.rto_backoff == "sample"


def test_extra_peer_arguments_follow_the_mapped_ones():
    [p] = grid(axes=[], extra_args=["--n=5"])
    assert p.peer_args == ("--n=4", "--seed=1", "--n=5")


def test_a_block_count_for_ours_replaces_the_shared_duration():
    [p] = grid(axes=[], ours={"blocks": 3})
    assert p.ours.blocks == 3 and p.ours.duration is None and p.shared.duration == 1


def test_a_point_the_peer_cannot_express_is_refused_before_anything_runs():
    with pytest.raises(UsageError) as e:
        grid([4], axes=[Axis("udp", "udp", (("0", 0.0), ("0.1", 0.1)))])
    assert e.value.param == "udp" and "toy peer cannot express UDP" in e.value.allowed


def test_several_seeds_need_a_random_draw_both_simulators_make():
    with pytest.raises(UsageError) as e:
        grid(seeds=3)
    assert e.value.param == "--seeds" and "jitter" in e.value.allowed
    points = grid(axes=[], shared={"duration": "1s", "jitter": "3us"}, seeds=3)
    assert [p.shared.seed for p in points] == [1, 2, 3] == [p.ours.seed for p in points]
    assert [p.tag for p in points] == ["n4-seed1", "n4-seed2", "n4-seed3"]
    assert points[2].peer_args == ("--n=4", "--seed=3")
    assert len({p.identity for p in points}) == 1


def test_own_flags_are_refused_in_assignments():
    assert compare.assignments(["rto-min=1ms", "tcp = sack"], "--set", {}) == {"rto_min": "1ms", "tcp": "sack"}
    with pytest.raises(UsageError) as e:
        compare.assignments(["servers=3"], "--set", {"servers": "--servers"})
    assert e.value.param == "--set" and "its own flag, --servers" in e.value.allowed
    with pytest.raises(UsageError):
        compare.assignments(["bogus=1"], "--set", {})


# --- a field map -----------------------------------------------------------------------------


def test_a_field_map_classifies_maps_and_refuses():
    assert TOY_FIELDS.classify("servers") == "mapped" and TOY_FIELDS.classify("udp") == "inexpressible"
    assert TOY_FIELDS.classify("tie_break") == "hard-wired" and TOY_FIELDS.classify("rwnd") is None
    assert TOY_FIELDS.args(Scenario(servers=3, tcp="sack")) == ["--n=3", "--seed=1"]
    with pytest.raises(UsageError) as e:
        TOY_FIELDS.args(Scenario(servers=3, rwnd=1460))  # classified nowhere: newer than the table
    assert e.value.param == "rwnd" and "newer than tests/test_peer_compare.py" in e.value.allowed


def test_a_hard_wired_rule_is_refused_only_when_set_otherwise_for_both():
    assert TOY_FIELDS.rules(Scenario(servers=3)) == {"rto_backoff": "new_ack", "tie_break": "fifo"}
    TOY_FIELDS.args(Scenario(servers=3, tie_break="fifo"))  # the peer's own: accepted
    with pytest.raises(UsageError) as e:
        TOY_FIELDS.args(Scenario(servers=3, tie_break="random"))
    assert e.value.param == "tie_break" and "hard-wires" in e.value.allowed and "--ours" in e.value.allowed


# --- ratios, agreement, tables ---------------------------------------------------------------


def test_ratios_are_ours_over_the_peers_and_undefined_at_zero():
    c = comparison(grid(axes=[])[0], numbers(30, 120.0, 0, 5), numbers(20, 80.0, 0, 10))
    assert c.ratio("blocks") == 1.5 and c.ratio("drops") == 0.5 and c.ratio("timeouts") is None
    assert c.ratio("lost_retransmits") is None  # not traced


def test_blocks_agree_within_25_percent_either_way():
    assert compare.agrees(125, 100) and compare.agrees(75, 100) and compare.agrees(0, 0)
    assert not compare.agrees(126, 100) and not compare.agrees(74, 100) and not compare.agrees(1, 0)


def two_points() -> list[Comparison]:
    p4, p16 = grid([4, 16], axes=[Axis("limited_transmit", "LT", (("on", True),))])
    return [comparison(p4, numbers(30, 120.0, 3, 5), numbers(20, 80.0, 0, 10)),
            comparison(p16, numbers(8, 150.0, 35, 3185), numbers(8, 151.0, 38, 3190))]


def test_the_table_has_both_simulators_a_ratio_and_an_agreement_count():
    results = two_points()
    header, _, first, second = compare.render_table(results).splitlines()
    assert header.split() == ["servers", "LT", "blocks", "toy", "ratio", "Mbps", "toy", "ratio", "timeouts",
                              "toy", "ratio", "drops", "toy", "ratio"]
    assert first.split() == ["4", "on", "30", "20", "1.50", "120.0", "80.0", "1.50", "3", "0", "-", "5", "10", "0.50"]
    assert second.split()[:5] == ["16", "on", "8", "8", "1.00"]
    assert compare.agreement_line(results) == "blocks within ±25% of toy: 1 of 2 points"


def test_metrics_from_traces_are_shown_only_when_every_point_was_traced():
    results = two_points()
    traced = [Comparison(c.point, {**c.ours, "lost_retransmits": 2}, {**c.theirs, "lost_retransmits": 4}, 0.1, 1.0)
              for c in results]
    assert "lost rtx" in compare.render_table(traced) and "lost rtx" not in compare.render_table(results)
    assert "lost rtx" not in compare.render_table([traced[0], results[1]])


def test_means_over_seeds_compare_the_means_and_keep_fractions():
    points = grid(shared={"duration": "1s", "jitter": "3us"}, seeds=3)
    runs = [comparison(p, numbers(b), numbers(100, timeouts=t)) for p, b, t in zip(points, (110, 150, 140, 0, 0, 0),
                                                                                    (1, 1, 2, 1, 1, 1))]
    table, line = compare.render_means(runs)
    head, _, on, off = table.splitlines()
    assert head.split()[:6] == ["servers", "LT", "seeds", "blocks", "toy", "ratio"]
    assert "133.3 (110-150)" in on and "1.33" in on  # mean 133.3 against 100
    assert "1.3 (1-2)" in on  # a mean count keeps its fraction
    assert off.split()[:4] == ["4", "off", "3", "0"]
    assert line == "mean blocks within ±25% of toy's mean: 0 of 2 points"


def test_records_name_the_peer_and_carry_ratios_and_both_wall_times():
    c = two_points()[0]
    record = json.loads(json.dumps(compare.to_record(c)))
    assert record["servers"] == 4 and record["limited_transmit"] is True
    assert record["incastlab"]["blocks"] == 30 and record["toy"]["blocks"] == 20
    assert record["ratio"]["blocks"] == 1.5 and record["ratio"]["timeouts"] is None
    assert record["blocks_within_25pct"] is False
    assert (record["incastlab_wall_seconds"], record["toy_wall_seconds"]) == (0.01, 1.0)
    assert record["toy_args"] == ["--n=4", "--seed=1"] and record["incastlab_only"] == {}
    flat = compare.to_flat(c)
    assert flat["blocks_incastlab"] == 30 and flat["blocks_toy"] == 20 and flat["blocks_ratio"] == 1.5
    assert flat["limited_transmit"] is True and flat["toy_wall_seconds"] == 1.0


def test_the_heading_says_how_ours_departs_from_the_peers_rules():
    lines = compare.heading(grid(shared={"duration": "1s", "jitter": "3us"}), "/bin/toy")
    assert lines[0].startswith("# incastlab vs toy (/bin/toy): ") and lines[0].endswith("1s simulated per point")
    assert lines[1] == "# toy flags (first point): --n=4 --seed=1"
    assert "rto_backoff=sample (toy: new_ack)" in lines[2] and "--toy-rules to match" in lines[2]
    assert "# note: jitter: drawn otherwise" in lines and lines[-1] == "# each metric: incastlab, toy, incastlab/toy"
    same = compare.heading(grid(with_rules=True), "/bin/toy")
    assert "# incastlab only: rto_backoff=new_ack" in same
    assert "# incastlab follows the rules toy hard-wires: rto_backoff=new_ack, tie_break=fifo" in same


# --- running both sides ----------------------------------------------------------------------


def toy_peer(p: compare.Point, trace: Path | None) -> dict:
    """The peer's side: larger points finish first; a trace with one lost retransmission."""
    time.sleep(0.01 * (8 - p.shared.servers))
    if trace:
        trace.write_text(ONE_LOST_RETRANSMIT)
    return {"blocks_completed": p.shared.servers, "goodput_mbps": 1.5, "tcp_timeouts": 0,
            "drops_at_bottleneck": 7, "wall_seconds": 0.5}


def toy_ours(s: Scenario, trace: Path | None) -> SimResult:
    if trace:
        trace.write_text(ONE_LOST_RETRANSMIT.replace("0.000230000,drop", "0.000230000,ack"))
    return SimResult({**numbers(10 * s.servers), "wall_seconds": 0.25}, s)


def test_the_grid_comes_back_in_grid_order_with_both_sides(tmp_path):
    done = []
    points = grid([2, 8, 4], axes=[])
    results = compare.run_grid(points, toy_peer, toy_ours, jobs=3, trace_dir=tmp_path,
                               progress=lambda n, total: done.append((n, total)))
    assert [c.point.shared.servers for c in results] == [2, 8, 4]
    assert [(c.ours["blocks"], c.theirs["blocks"]) for c in results] == [(20, 2), (80, 8), (40, 4)]
    assert (results[0].ours_wall_s, results[0].theirs_wall_s) == (0.25, 0.5)
    assert done[-1] == (6, 6)
    # traced: each side's file, and the dropped retransmissions counted from it
    assert results[0].traces == (tmp_path / "toy-n2.csv", tmp_path / "incastlab-n2.csv")
    assert (results[0].ours["lost_retransmits"], results[0].theirs["lost_retransmits"]) == (0, 1)


def test_untraced_runs_have_no_trace_metrics():
    [c] = compare.run_grid(grid(axes=[]), toy_peer, toy_ours)
    assert "lost_retransmits" not in c.ours and "lost_retransmits" not in c.theirs and c.traces is None


def test_a_failing_side_stops_the_grid_and_drops_the_runs_not_started():
    started = []
    lock = threading.Lock()

    def failing(p: compare.Point, trace: Path | None) -> dict:
        with lock:
            started.append(p.shared.servers)
        raise EnvironmentProblem("toy failed")

    with pytest.raises(EnvironmentProblem):
        compare.run_grid(grid(range(1, 30), axes=[]), failing, toy_ours, jobs=1)
    # one worker: the first run (the largest point) fails and no other starts after it
    assert started == [29]


# --- the peer's process ----------------------------------------------------------------------


def test_a_result_line_parses_into_numbers_and_words():
    row = compare.parse_result("warning: x\nN,blocks_completed,goodput_mbps,tcp\n4,19,82.858,TcpNewReno\n", "toy")
    assert row == {"N": 4, "blocks_completed": 19, "goodput_mbps": 82.858, "tcp": "TcpNewReno"}


@pytest.mark.parametrize("text", ["", "General Arguments:\n  --PrintHelp\n", "N,blocks\n", "N,blocks\n4,19,3\n"])
def test_output_without_a_result_line_is_an_environment_problem_naming_the_peer(text):
    with pytest.raises(EnvironmentProblem) as e:
        compare.parse_result(text, "toy")
    assert str(e.value).startswith("toy")


def test_a_failing_peer_names_its_last_word_and_the_command():
    with pytest.raises(EnvironmentProblem) as e:
        compare.run_process(["sh", "-c", "echo starting >&2; echo 'bad --seed 0' >&2; exit 3"], "toy")
    message = str(e.value)
    assert "toy failed (exit status 3: bad --seed 0)" in message and "sh -c" in message
    with pytest.raises(EnvironmentProblem) as e:
        compare.run_process(["sh", "-c", "echo no result"], "toy")
    assert "printed no result line" in str(e.value) and "sh -c" in str(e.value)
