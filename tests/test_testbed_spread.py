"""scripts/testbed-spread.py on hand-made validate rows whose pairs and medians are known."""

import json
import os

from script_support import load_script


def load():
    return load_script("testbed-spread")


def row(servers, goodput, timeouts, sim=None, cc="reno"):
    r = {"servers": servers, "goodput_mbps_testbed": goodput, "timeouts_testbed": timeouts,
         "testbed": {"congestion": cc, "buffer_bytes": 8192, "rate_bps": 100_000_000, "blocks": 20,
                     "block_bytes": 262144 * servers, "servers": servers}}
    if sim is not None:
        r["think_seeds"] = {"goodput_mbps_p50": sim[0], "timeouts_p50": sim[1]}
    return r


def write(tmp_path, name, rows):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(p)


def test_the_bars_judge_goodput_by_a_quarter_and_timeouts_by_twice_with_two_or_fewer_passing():
    within = load().within_bars
    assert within(75, 10, 100, 10) and not within(74, 10, 100, 10)
    assert within(100, 20, 100, 10) and not within(100, 21, 100, 10)
    assert within(100, 5, 100, 10) and not within(100, 4, 100, 10)
    assert within(100, 2, 100, 0) and not within(100, 3, 100, 0)


def test_pairs_within_and_the_simulator_against_the_testbeds_median(tmp_path):
    mod = load()
    # 4 servers: three runs. (60, 30) and (62, 28) agree; (40, 70) agrees with neither (goodput
    # off by a third, timeouts by 2.3-2.5x): 2 of 6 ordered pairs. Median 60 / 30; the simulator
    # (mean of the rows' seeds' medians 50 / 40) is inside both bars of it.
    # 2 servers: one run, so no pairs; the simulator 96 / 0 against 50 / 3 is out.
    a = write(tmp_path, "r1.jsonl", [row(4, 60, 30, (52, 38)), row(2, 50, 3, (96, 0))])
    b = write(tmp_path, "r2.jsonl", [row(4, 62, 28, (48, 42))])
    c = write(tmp_path, "r3.jsonl", [row(4, 40, 70)])
    points = mod.spread(mod.read_rows([a, b, c]))
    two, four = points
    assert (two["servers"], two["runs"], two["testbed_pairs_within"]) == (2, 1, None)
    assert two["sim_within_testbed_median"] is False
    assert (four["runs"], four["testbed_goodput_p50"], four["testbed_timeouts_p50"]) == (3, 60, 30)
    assert four["testbed_pairs_within"] == 2 / 6
    assert (four["sim_goodput"], four["sim_timeouts"], four["sim_within_testbed_median"]) == (50, 40, True)
    text = mod.render(points)
    assert "testbed run pairs within the bars: 2 of 6" in text
    assert "simulator within the bars of the testbed's median: 1 of 2 points" in text


def test_points_differ_by_congestion_control(tmp_path):
    mod = load()
    p = write(tmp_path, "r.jsonl", [row(4, 60, 30), row(4, 30, 60, cc="cubic")])
    assert [x["cc"] for x in mod.spread(mod.read_rows([p]))] == ["cubic", "reno"]


def test_bad_input_is_one_line_and_status_2(tmp_path, capsys):
    mod = load()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"servers": 4}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    assert mod.main([str(tmp_path / "absent.jsonl")]) == 2
    assert mod.main([str(bad)]) == 2
    assert mod.main([str(empty)]) == 2
    assert mod.main([]) == 2
    assert mod.main([str(fifo)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5
    assert "absent.jsonl" in err[0] and "bad.jsonl:1" in err[1] and "no rows" in err[2] and "usage" in err[3]
    assert "fifo: not a regular file" in err[4]
