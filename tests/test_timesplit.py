"""Where the time went (``time_breakdown``): the result fields, their reading
(``incastlab.timesplit``), the CSV and the doctor's table (docs/simulate.md, "Where the time
went"; docs/doctor.md)."""

import csv
import json
import math
import subprocess
import sys

import pytest

import incastlab
from incastlab.timesplit import COMPONENTS, where_the_time_went

# FAST'08's collapse: 16 servers, 256 KB blocks, 32 KB buffer, 200 ms RTOmin
COLLAPSE = dict(servers=16, blocks=20)


@pytest.fixture(scope="module")
def with_and_without():
    on = incastlab.simulate({**COLLAPSE, "time_breakdown": True})
    off = incastlab.simulate(COLLAPSE)
    return on, off


def test_the_components_add_up_to_the_mean_part_and_block_times(with_and_without):
    on, _ = with_and_without
    for over in ("flow", "block"):
        split = where_the_time_went(on, over=over)
        total = sum(split.seconds.values())
        # the core sums picoseconds exactly; the means are one division each (float rounding)
        assert math.isclose(total, split.mean_s, rel_tol=1e-12), (over, split)
        assert split.seconds["other"] == 0.0
        assert math.isclose(sum(r["share"] for r in split.rows()), 1.0, rel_tol=1e-12)
    blocks = where_the_time_went(on)
    assert blocks.parts == on.blocks == 20
    assert math.isclose(blocks.mean_s, on.block_time_mean_s, rel_tol=1e-12), "each block's last part is the block"
    assert where_the_time_went(on, over="flow").parts == 16 * 20


def test_a_collapse_waits_out_rto_timers_most_of_its_block_time(with_and_without):
    on, _ = with_and_without
    split = where_the_time_went(on)
    # FAST'08 §5.1: a block with a timeout idles ~RTOmin (200 ms) against ~2 ms of transfer
    assert split.share("rto_wait") > 0.5, split
    assert split.sentence().startswith(f"{split.share('rto_wait'):.0%} waiting out RTO timers")


def test_the_breakdown_is_opt_in_and_moves_no_other_field(with_and_without):
    on, off = with_and_without
    assert where_the_time_went(off) is None
    assert not any(k.startswith("time_") and k != "time_breakdown" for k in off.to_dict())
    skip = {"wall_seconds", "time_breakdown"}
    same = lambda r: {k: v for k, v in r.to_dict().items() if k not in skip and not k.startswith("time_")}  # noqa: E731
    assert same(on) == same(off)
    fields = {f"time_{o}_{k}_s" for o in ("flow", "block") for k, _ in COMPONENTS}
    assert fields <= set(on.to_dict())


def test_a_lone_flow_without_loss_spends_its_time_transmitting():
    # one server, a window that covers its part (8 segments): no queue, no loss; all but
    # the request's 51 us trip is transmission at the whole link (world/tests.rs pins the
    # picoseconds); the 2nd and 3rd blocks' requests leave the client's NIC behind the last
    # ACK of the block before (40 B: 0.32 us)
    r = incastlab.simulate(dict(servers=1, blocks=3, sru="11680B", init_cwnd=8, time_breakdown=True))
    split = where_the_time_went(r)
    assert split.seconds["transmission"] == pytest.approx(158e-6, abs=1e-12)
    assert split.seconds["request"] == pytest.approx((51.024e-6 + 2 * 51.344e-6) / 3, abs=1e-12)
    assert split.seconds["queueing"] == split.seconds["rto_wait"] == split.seconds["recovery"] == 0.0


def test_bad_over_is_refused_by_name(with_and_without):
    with pytest.raises(ValueError, match="over"):
        where_the_time_went(with_and_without[0], over="port")


def test_simulate_csv_and_json_carry_the_fields(tmp_path):
    out = tmp_path / "r.csv"
    p = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "8", "--blocks", "5",
                        "--time-breakdown", "--json", "--csv", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout.splitlines()[0])
    assert row["time_blocks"] == 5
    (line,) = list(csv.DictReader(out.open()))
    assert float(line["time_block_s"]) == pytest.approx(row["time_block_s"])
    assert float(line["time_block_rto_wait_s"]) == pytest.approx(row["time_block_rto_wait_s"])


@pytest.fixture(scope="module")
def doctor_report():
    return incastlab.doctor(rate="1Gbps", rtt="100us", buffer="32KiB", fan_in=16, response="256KiB", stack="fast08")


def test_the_doctor_shows_where_the_time_went_in_text_json_and_html(doctor_report):
    t = doctor_report.verdict.time_split
    assert t is not None and t["over"] == "block" and t["parts"] > 0
    assert math.isclose(sum(r["seconds"] for r in t["rows"]), t["mean_s"], rel_tol=1e-12)
    top = max(t["rows"], key=lambda r: r["share"])
    assert top["component"] == "rto_wait", t  # the collapse's 200 ms timers
    text = doctor_report.text()
    assert f"where the time went: {t['sentence']}" in text
    assert "waiting out RTO timers" in text
    assert json.loads(json.dumps(doctor_report.to_dict()))["verdict"]["time_split"]["rows"][0]["component"] == "transmission"
    assert "Where the time went at 16 servers" in doctor_report.html()


def test_an_ndp_incast_splits_its_time_with_trims_and_nacks_and_adds_up():
    # 64 senders x 10 jumbo packets into one 10 Gbps host over trimming ports of 8 packets
    # (NDP SIGCOMM'17 §6's incast, small): the first windows overflow the port, the trimmed
    # packets' time to their resend is "trims and NACKs"; every part adds up, the incast's
    # last flow is the incast's completion time, and the run is the run without the split
    kw = dict(servers=64, workload="incast", rate="10Gbps", rtt="10us", sru="90000B", mss="9000B",
              transport="ndp", trimming=True, buffer_packets=8)
    on = incastlab.simulate({**kw, "time_breakdown": True})
    off = incastlab.simulate(kw)
    for over in ("flow", "block"):
        split = where_the_time_went(on, over=over)
        assert math.isclose(sum(split.seconds.values()), split.mean_s, rel_tol=1e-12), (over, split)
        assert split.seconds["other"] == 0.0
        assert split.seconds["trim_recovery"] > 0 and split.seconds["rto_wait"] == 0.0, split
    block = where_the_time_went(on)
    assert block.parts == 1 and where_the_time_went(on, over="flow").parts == 64
    assert math.isclose(block.mean_s, on.incast_completion_s, rel_tol=1e-12)
    assert "trims and NACKs" in block.sentence()
    same = lambda r: {k: v for k, v in r.to_dict().items()  # noqa: E731
                      if k not in ("wall_seconds", "time_breakdown") and not k.startswith("time_")}
    assert same(on) == same(off)


# A small Riak cluster at the blog's load (8 nodes, 125 gets/s each of 3 x 100 KB, 30 % of a
# 1 Gbps link, 32 KiB ports) for 0.5 s: its gets' replies meet at full ports and time out
RIAK = dict(workload="riak", servers=8, duration="0.5s")


def test_riaks_gets_are_the_blocks_and_every_reply_a_part():
    on = incastlab.simulate({**RIAK, "time_breakdown": True})
    off = incastlab.simulate(RIAK)
    assert on.timeouts > 0, "the blog's timeouts: the split has an RTO wait to show"
    gets, replies = where_the_time_went(on), where_the_time_went(on, over="flow")
    # a get's block part is the reply that completed it (the quorum's, R = 2 of 3): one per
    # completed get; every reply delivered is a part
    assert gets.parts == on.gets_completed > 0
    assert replies.parts >= 2 * gets.parts
    for split in (gets, replies):
        assert math.isclose(sum(split.seconds.values()), split.mean_s, rel_tol=1e-12), split
        assert split.seconds["other"] == 0.0
        assert split.seconds["transmission"] > 0 and split.seconds["request"] > 0
    assert replies.seconds["rto_wait"] > 0, replies
    # the block parts are the gets (world/tests.rs pins them to the picosecond): their mean
    # lies between the fastest and the slowest get the result reports
    assert gets.mean_s <= on.get_latency_max_s
    same = lambda r: {k: v for k, v in r.to_dict().items()  # noqa: E731
                      if k not in ("wall_seconds", "time_breakdown") and not k.startswith("time_")}
    assert same(on) == same(off)


def test_the_breakdown_over_erlang_distribution_is_one_line_exit_2():
    p = subprocess.run([sys.executable, "-m", "incastlab.cli.main", "simulate", "--servers", "4", "--workload", "riak",
                        "--riak-transport", "erlang_dist", "--time-breakdown"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2
    assert "time-breakdown" in p.stderr and "per_pair" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
