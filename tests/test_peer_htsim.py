"""The htsim peer: the committed references, the mapping onto an aligned Scenario (and what
it refuses, by name), and small comparison runs."""

from __future__ import annotations

import json
import re

import pytest

from incastlab.errors import UsageError
from incastlab.peers import htsim
from incastlab.peers.htsim import HtsimSettings, load_references, scenario_for
from incastlab.scenario import Scenario

REFS = load_references()

SETTING_432_100 = HtsimSettings(protocol="tcp", nodes=432, conns=100, flow_bytes=450_000, packet_bytes=9000,
                                queue_packets=8, queue="ecn", scan_ms=10.0)


# --- the references file ----------------------------------------------------------------------


def test_the_references_name_htsims_commit_the_machine_and_every_runs_command():
    assert REFS.htsim["commit"] == "841d9e7be46bb968eece766aa4b6c044c7799f67"
    assert REFS.htsim["repository"] == "https://github.com/Broadcom/csg-htsim"
    assert REFS.machine["cpu"] and REFS.machine["cores"] >= 1
    ids = [r.id for r in REFS.refs]
    assert len(ids) == len(set(ids)), "ids are unique"
    for r in REFS.refs:
        assert r.title and r.date and re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\dZ", r.date), r.id
        driver = {"ndp": ("ndp_incast",), "swift": ("swift_incast",)}.get(r.settings.protocol,
                                                                        ("tcp_incast", "tcp_incast_diag"))
        assert r.command.split()[0] in driver, r.id
        assert ("SEED" in r.command.split()) and r.settings.protocol in ("tcp", "dctcp", "ndp", "swift"), r.id
        assert r.results and r.timing, r.id
        for t in r.timing:  # every timing names its load and its memory
            assert t["total_s"] > 0 and t["maxrss_kib"] > 0 and len(t["loadavg_before"]) == 3, r.id


def test_the_issues_must_show_settings_are_all_there():
    by = {r.id: r for r in REFS.refs}
    for n in (100, 431):  # issue 28: htsim's incast setting, 100- and 431-to-1, TCP and DCTCP
        for cc in ("tcp", "dctcp"):
            h = by[f"{cc}-432-{n}"].settings
            assert (h.protocol, h.nodes, h.conns, h.flow_bytes, h.queue_packets) == (cc, 432, n, 450_000, 8)
            assert h.duration_s is None, "run until every flow is done"
    big = by["tcp-8192-1000-q100"].settings  # issue 28: 1000-to-1 x 270 KB on 8192 hosts
    assert (big.nodes, big.conns, big.flow_bytes, big.duration_s) == (8192, 1000, 270_000, None)
    for n in (10, 100, 431):  # issue 29: htsim's NDP incast_shortflows, IW 23, with and without return-to-sender
        for rts in ("-rts", ""):
            h = by[f"ndp-driver{rts}-432-{n}"].settings
            assert (h.protocol, h.nodes, h.conns, h.flow_bytes, h.packet_bytes, h.queue_packets, h.queue,
                    h.iw_packets, h.return_to_sender) == ("ndp", 432, n, 450_000, 9000, 8, "composite", 23, rts == "-rts")


def test_every_tcp_reference_has_several_seeds_with_their_last_flow_and_timeouts():
    for r in REFS.refs:
        if r.settings.protocol == "ndp":
            # htsim's NDP takes no timeout; its records are flows finished, NACKs, returned headers
            assert len(r.seeds) >= 3, r.id
            for res in r.results:
                assert res["nacks"] > 0 and res["bounces"] >= 0 and 0 <= res["flows_finished"] <= r.settings.conns
                assert (res["last_flow_s"] is None) == (res["flows_finished"] < r.settings.conns), r.id
            continue
        if r.settings.protocol == "swift":
            # htsim's Swift strands most flows (never resends data lost before a go-back-N
            # timeout): its records are flows finished, drops and timeouts, to a fixed end
            assert len(r.seeds) >= 3 and r.settings.duration_s is not None, r.id
            for res in r.results:
                assert 0 <= res["flows_finished"] < r.settings.conns and res["last_flow_s"] is None, r.id
                assert res["drops"] > 0 and res["timeouts"] > 0 and res["events"] > 0, r.id
            continue
        # single runs are chaotic: at least 3 seeds, but dctcp-432-431 has 2 (its third was
        # stopped at a load of 17-24; peers/htsim/README.md)
        least = 2 if r.id == "dctcp-432-431" else 3
        assert len(r.seeds) >= least and len(set(r.seeds)) == len(r.seeds), r.id
        for res in r.results:
            if r.settings.duration_s is None:  # run until done: every flow is
                assert res["completed"] == r.settings.conns, r.id
            else:
                assert 0 < res["completed"] <= r.settings.conns, r.id
            # the receiver holds a flow's bytes before its source holds the ACK htsim calls finished
            assert 0 < res["last_flow_s"] <= res["last_flow_htsim_finished_s"], r.id
            assert res["timeouts"] >= 0 and res["events"] > 0, r.id


# --- the mapping ------------------------------------------------------------------------------


def test_htsims_incast_setting_maps_to_the_aligned_scenario_field_by_field():
    s = scenario_for(SETTING_432_100, seed=3)
    assert (s.workload, s.topology, s.fat_tree_k, s.servers, s.placement) == ("incast", "fat_tree", 12, 100, "tail")
    assert (s.sru, s.buffer, s.buffer_admission, s.mss, s.header) == (450_000, 72_000, "bytes", 9000, 0)
    assert s.rate == 10e9 and s.rtt == pytest.approx(4e-6)
    assert s.trunk_delay == pytest.approx(1e-6) and s.core_delay == pytest.approx(1e-6)
    assert (s.init_cwnd, s.rwnd, s.tcp, s.limited_transmit, s.dupack_threshold) == (10, 2**30, "newreno", False, 3)
    assert (s.rto_min, s.timer_granularity, s.timer_ticks, s.timestamps) == (0.25, 0.01, True, True)
    assert (s.rto_backoff, s.cc, s.ecn_threshold, s.load_balancing, s.seed) == ("new_ack", "newreno", None, "ecmp", 3)
    d = scenario_for(HtsimSettings(**{**SETTING_432_100.__dict__, "protocol": "dctcp"}))
    assert (d.cc, d.ecn_threshold) == ("dctcp", 15)


def test_every_aligned_field_is_a_scenario_field_and_says_where_htsim_does_it():
    for a in htsim.ALIGNMENT:
        assert a.field in Scenario.model_fields, a.field
        assert len(a.why) > 10, a.field
    assert "rto_min" in htsim.explain() and "= 250ms" in htsim.explain(SETTING_432_100)


@pytest.mark.parametrize("change, param, words", [
    ({"queue": "random"}, "queue", "drop only when full"),
    ({"queue": "composite"}, "queue", "composite with protocol ndp"),
    ({"protocol": "ndp"}, "queue", "composite with protocol ndp"),
    ({"protocol": "ndp", "queue": "composite"}, "iw_packets", "first window"),
    ({"diagnostic": "rtx_at_scan"}, "diagnostic", "not htsim's model"),
    ({"nodes": 400}, "nodes", "k^3/4"),
])
def test_what_incastlab_cannot_express_is_refused_by_the_htsim_setting_name(change, param, words):
    with pytest.raises(UsageError) as e:
        scenario_for(HtsimSettings(**{**SETTING_432_100.__dict__, **change}))
    assert e.value.param == param and words in str(e.value)


def test_ours_may_change_a_model_field_but_not_one_the_reference_defines():
    s = scenario_for(SETTING_432_100, ours={"tie_break": "random"})
    assert s.tie_break == "random"
    for name in ("servers", "sru", "fat_tree_k", "buffer", "seed"):
        with pytest.raises(UsageError) as e:
            scenario_for(SETTING_432_100, ours={name: "5"})
        assert e.value.param == "--ours" and name in str(e.value)


# --- comparisons ------------------------------------------------------------------------------


def _tiny_references(tmp_path, last_flow_s: float) -> str:
    """A k = 4 tree (16 hosts), 3 senders of 20 KB through 8 x 1500 B queues: a comparison
    that runs in a second; its 'htsim' numbers are made up for the test."""
    settings = dict(protocol="tcp", nodes=16, conns=3, flow_bytes=20_000, packet_bytes=1500, queue_packets=8,
                    queue="ecn", scan_ms=10.0)
    timing = [dict(total_s=0.5, elapsed_s=0.6, maxrss_kib=20_000, loadavg_before=["0.1", "0.1", "0.1"])]
    results = [dict(seed=s, completed=3, last_flow_s=last_flow_s, last_flow_htsim_finished_s=last_flow_s,
                    fct_p50_s=last_flow_s, timeouts=0, events=100) for s in (1, 2)]
    ndp = dict(settings, protocol="ndp", queue="composite", iw_packets=23, return_to_sender=True)
    data = dict(about="test", htsim=dict(repository="r", commit="c" * 40), machine=dict(cpu="none", cores=1),
                references=[dict(id="tiny", title="tiny", date="2026-11-26T00:00Z", settings=settings,
                                 command="tcp_incast -nodes 16", results=results, timing=timing),
                            dict(id="tiny-ndp", title="tiny NDP", date="2026-11-26T00:00Z", settings=ndp,
                                 command="ndp_incast -nodes 16", results=[dict(seed=1, last_flow_s=1e-4)],
                                 timing=timing)])
    path = tmp_path / "references.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_small_comparison_runs_ours_on_every_seed_tcp_and_ndp(tmp_path):
    refs = load_references(_tiny_references(tmp_path, last_flow_s=1.0))
    rows = htsim.compare(refs, refs.refs, seeds=None, timing_runs=2)
    tiny, ndp = (r.record() for r in rows)
    assert tiny["ours_seeds"] == 2 and len(rows[0].ours_timing) == 2, "two seeds, and seed 1 run twice for its time"
    assert all(x > 0 for x in tiny["ours_last_flow_s"]), "every flow completed"
    assert tiny["last_flow_ratio"] == pytest.approx(tiny["ours_last_flow_median_s"] / 1.0)
    assert tiny["speedup_fastest"] == pytest.approx(0.5 / tiny["ours_wall_fastest_s"])
    assert tiny["ours_max_rss_mib"] > 0 and tiny["same_machine"] is False
    assert ndp["ours_not_run"] is None and ndp["ours_flows_finished_median"] == 3, "NDP runs: every flow done"
    assert ndp["ours_nacks_median"] == ndp["ours_trims_median"] > 0, "3 first windows of 23 overflow 8-packet ports"
    assert ndp["htsim_nacks_median"] is None, "the made-up reference has no NACK count: shown as missing"
    text = htsim.render(rows, refs)
    assert "tiny-ndp" in text and "NACKs htsim -, ours" in text and "(other machine)" in text
    assert "Model differences that remain, NDP" in text and "Model differences that remain, TCP" in text


def test_the_command_line_compares_a_committed_reference_and_refuses_bad_input_in_one_line(capsys, tmp_path):
    assert htsim.main(["--only", "tcp-432-100", "--seeds", "1", "--timing-runs", "1", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rec["id"] == "tcp-432-100" and rec["ours_seeds"] == 1 and rec["htsim_seeds"] >= 3
    assert rec["ours_last_flow_s"][0] > 1.0, "the 100-to-1 incast waits out several 250 ms timeouts"
    assert htsim.main(["--only", "tcp-8192-1000-q100", "--print-scenario"]) == 0  # run_json's input
    native = json.loads(capsys.readouterr().out)
    assert (native["servers"], native["fat_tree_k"], native["sru_bytes"], native["seed"]) == (1000, 32, 270_000, 1)
    for argv, words in ((["--only", "nope"], "--only"), (["--only", "tcp-432-100", "--ours", "servers=3"], "servers"),
                        (["--references", str(tmp_path / "missing.json")], "cannot read")):
        assert htsim.main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err


# --- agreement with the committed htsim runs (no htsim needed) ---------------------------------


def _ours_beside(ref_id: str, seeds=None):
    ref = {r.id: r for r in REFS.refs}[ref_id]
    use = ref.seeds if seeds is None else seeds
    ours, _ = htsim.run_ours(ref.settings, use, timing_runs=1, runner=htsim.run_here)
    return ref, ours


def _median(xs):
    return sorted(xs)[len(xs) // 2]


@pytest.mark.parametrize("ref_id", ["tcp-432-100", "dctcp-432-100", "tcp-432-431"])
def test_the_last_flow_completes_within_ten_percent_of_htsims_on_its_own_incast_setting(ref_id):
    # Issue 28's target for aligned models: "the same completion times within 10 %". The
    # median over the reference's seeds (5): single runs are chaotic (peers/htsim/README.md:
    # at 431-to-1 the last flow ends after 19 or 20 doublings of the RTO, 131,072 or
    # 262,144 s, seed by seed, in both simulators). Measured: 0.98 (100-to-1), 1.00 (431).
    ref, ours = _ours_beside(ref_id)
    theirs = _median([r["last_flow_s"] for r in ref.results])
    mine = _median([r["last_flow_s"] for r in ours])
    assert all(r["flows_completed"] == ref.settings.conns for r in ours), "every flow done"
    assert mine == pytest.approx(theirs, rel=htsim.AGREEMENT), (mine, theirs)


def test_dctcp_at_htsims_eight_packet_queues_is_tcp_in_both_simulators():
    # htsim's ECN queues mark above 15 packets (K), which an 8-packet queue never holds: its
    # DCTCP references equal its TCP ones seed for seed, and so must ours
    by = {r.id: r for r in REFS.refs}
    for n in (100, 431):
        assert [r["last_flow_s"] for r in by[f"dctcp-432-{n}"].results] == \
            [r["last_flow_s"] for r in by[f"tcp-432-{n}"].results][:len(by[f"dctcp-432-{n}"].results)]
    _, tcp = _ours_beside("tcp-432-100", seeds=[1, 2])
    _, dctcp = _ours_beside("dctcp-432-100", seeds=[1, 2])
    assert [(r["last_flow_s"], r["timeouts"]) for r in tcp] == [(r["last_flow_s"], r["timeouts"]) for r in dctcp]


def test_the_100_to_1_median_fct_stays_within_the_two_timeout_steps_found():
    # FCTs here fall on a ladder of timeouts 0.26 s apart (RTOmin 250 ms found by a 10 ms
    # scan), so a median moves in whole steps. Measured: htsim 2.30 s, ours 2.80 s (median of
    # the 5 seeds' medians): two steps, not the issue's 10 %. One step is htsim's ssthresh
    # after a repeated timeout (diag-tcp-432-100-hold-ssthresh: 2.56 s); the other is not
    # found yet (peers/htsim/README.md). The bound is those two steps and a tenth of one: a
    # third would be a new difference; ours may not fall below htsim's either.
    ref, ours = _ours_beside("tcp-432-100")
    theirs = _median([r["fct_p50_s"] for r in ref.results])
    mine = _median([r["fct_p50_s"] for r in ours])
    assert 0 <= mine - theirs <= 2.1 * 0.26, (mine, theirs)


def test_the_8192_host_incast_ends_in_one_of_htsims_two_modes_with_its_median_fct():
    # 1000-to-1 x 270 KB on a k = 32 fat tree (issue 28). The last flow ends at about 33 s or
    # at 63.8 s, seed by seed, in both simulators: one more lost retransmission in a row
    # doubles the run (0.25 + 0.5 + ... + 32 s), so a median over a few seeds lands on either
    # mode (peers/htsim/README.md gives both simulators' counts). Each of ours must fall in one
    # of htsim's modes: 5 % apart at most (within a mode htsim's runs spread 32.60-32.86 s and
    # ours over 20 seeds 32.8-33.8 s, 3 %; the modes are 2x apart). The median FCT is the issue's 10 %
    # (measured: ours 4.36 s, htsim 4.15 s, 1.05).
    ref, ours = _ours_beside("tcp-8192-1000-q100", seeds=[1, 2, 3])
    theirs = [r["last_flow_s"] for r in ref.results]
    for r in ours:
        assert r["flows_completed"] == 1000
        assert min(abs(r["last_flow_s"] / t - 1) for t in theirs) <= 0.05, (r["last_flow_s"], theirs)
    mine = _median([r["fct_p50_s"] for r in ours])
    assert mine == pytest.approx(_median([r["fct_p50_s"] for r in ref.results]), rel=htsim.AGREEMENT)


# --- NDP (issue 29): htsim's incast_shortflows setting ------------------------------------------


@pytest.mark.parametrize("ref_id", ["ndp-driver-rts-432-10", "ndp-driver-rts-432-100", "ndp-driver-432-100"])
def test_ndps_last_flow_and_nacks_agree_with_htsims(ref_id):
    # Issue 29 asks "within 5 %" of htsim's completion; ours is held to 0.5 %. The one gap
    # found is when a flow counts as done: htsim's driver at its source's last ACK, ours at
    # the receiver's last byte, 6.3 us earlier across pods (0.17 % of the 10-to-1's 3.70 ms;
    # measured 0.998 and 1.000). A pull pacer spaced by the payload (9000 B) instead of the
    # packet (9064 B, htsim's _packet_drain_time) would move the 100-to-1 by 0.7 %: 0.5 %
    # catches such a change. The NACKs are htsim's exactly at 10 and 100 senders (218 and
    # 2,303 on every seed of both): the first windows overflow the last hop by a fixed count.
    ref, ours = _ours_beside(ref_id, seeds=[1, 2])
    n = ref.settings.conns
    assert all(r["flows_completed"] == n and r["timeouts"] == 0 for r in ours)
    theirs = _median([r["last_flow_s"] for r in ref.results])
    mine = _median([r["last_flow_s"] for r in ours])
    assert mine == pytest.approx(theirs, rel=0.005), (mine, theirs)
    assert {r["nacks"] for r in ours} == {r["nacks"] for r in ref.results}


def test_ndps_431_to_1_returns_the_headers_htsim_returns_and_ends_with_it():
    # With return-to-sender the headers the last hop cannot queue go back to their senders:
    # NACKs + returned headers are 9,950 on every seed in htsim (6,337-6,373 + 3,577-3,613)
    # and must be in ours (the first windows' excess at the last hop, a count); the split
    # between the two hangs on how the first windows were spread over the upstream paths,
    # which sets when trimmed headers reach the last hop's header queue: htsim's per-source
    # permutation of paths gives 6,347 NACKs (median of 5 seeds), ours 6,554 with each switch
    # spraying at random and 5,674 with each switch in turn (peers/htsim/README.md). The
    # check: htsim's count lies between ours with the two sprayings, and within 5 % of ours
    # with random spraying (the aligned one: 3.3 % measured).
    # The last flow, as for the smaller incasts, within 0.5 % (measured 1.000).
    ref, ours = _ours_beside("ndp-driver-rts-432-431", seeds=[1])
    r = ours[0]
    assert r["flows_completed"] == 431 and r["timeouts"] == 0
    assert {x["nacks"] + x["bounces"] for x in ref.results} == {9950}
    assert r["nacks"] + r["bounces"] == 9950
    theirs = _median([x["nacks"] for x in ref.results])
    assert r["nacks"] == pytest.approx(theirs, rel=0.05)
    _, rr = htsim.run_ours(ref.settings, [1], 1, {"load_balancing": "spray_rr"}, runner=htsim.run_here)
    assert rr[0]["nacks"] < theirs < r["nacks"], (rr[0]["nacks"], theirs, r["nacks"])
    assert r["last_flow_s"] == pytest.approx(_median([x["last_flow_s"] for x in ref.results]), rel=0.005)


# --- Swift (issue 29): htsim's SwiftSrc on swift-incast's setting and on its own -----------------


@pytest.mark.parametrize("ref_id", ["swift-driver-1024-128", "swift-driver-1024-1000"])
def test_swifts_drops_and_timeouts_are_htsims_within_a_quarter_on_the_swift_incast_setting(ref_id):
    # swift-incast's fabric (k = 16, 100-packet ports, 64 KB, IW 2) with htsim's Swift constants
    # and timer (peers/htsim/README.md, "Swift"). Completion is not compared: htsim's Swift never
    # resends data lost before a go-back-N timeout, so 175-187 of 1000 flows complete. Drops and
    # timeouts are: medians over 3 seeds, measured ours/htsim 1.11 and 1.16 at 128 senders, 0.87
    # and 0.82 at 1000. The margin, 25 %, is what htsim's missing resends (they would add packets
    # and losses to its counts) and the named differences (its floor of 10 B = 0.0067 packets
    # against 0.001, its fair host queues, its first RTO of 1 ms) leave; it catches the fault
    # this comparison found: pacing below a packet on the path's RTT before any delay sample
    # gave 32,449 drops at 1000 senders, 6.9x htsim's.
    ref, ours = _ours_beside(ref_id)
    assert all(r["flows_completed"] == ref.settings.conns for r in ours), "ours completes every flow"
    for k in ("drops", "timeouts"):
        theirs, mine = _median([r[k] for r in ref.results]), _median([r[k] for r in ours])
        assert mine == pytest.approx(theirs, rel=0.25), (k, mine, theirs)


@pytest.mark.parametrize("ref_id", ["swift-driver-432-100", "swift-driver-432-431"])
def test_swift_on_htsims_own_incast_setting_drops_no_less_than_htsim_and_at_most_half_again(ref_id):
    # htsim's 432-host setting (9000 B packets, 8-packet queues, IW 15 as main_swift): there htsim's
    # Swift strands 97-99 % of its flows within 3 ms (the go-back-N fault above), after which they
    # send nothing; ours resends their lost data, so ours must lose at least as many packets as
    # htsim. Measured (medians of 3 seeds): 2,352 against 1,784 (1.32) and 13,180 against 10,468
    # (1.26). At most 1.5x: the fault found (pacing before a delay sample) gave 1.95x and 3.4x.
    # Timeouts: ours 0.87 and 0.85 of htsim's, within 25 % as above.
    ref, ours = _ours_beside(ref_id)
    theirs, mine = _median([r["drops"] for r in ref.results]), _median([r["drops"] for r in ours])
    assert theirs <= mine <= 1.5 * theirs, (mine, theirs)
    theirs_t, mine_t = _median([r["timeouts"] for r in ref.results]), _median([r["timeouts"] for r in ours])
    assert mine_t == pytest.approx(theirs_t, rel=0.25), (mine_t, theirs_t)


def test_swifts_mapping_sets_htsims_target_and_explains_every_field():
    ref = {r.id: r for r in REFS.refs}["swift-driver-1024-1000"]
    s = scenario_for(ref.settings)
    assert (s.transport, s.fat_tree_k, s.servers, s.placement, s.init_cwnd) == ("swift", 16, 1000, "tail", 2)
    # ours counts switches, htsim links (one more): base + switches x h is htsim's 20 us + links x h
    h_ps = 20e6 / 6.55
    assert s.swift_h == pytest.approx(h_ps / 1e12, rel=1e-6)
    assert s.swift_base_target == pytest.approx((20e6 + h_ps) / 1e12, rel=1e-6)
    text = htsim.explain()
    assert "Swift (SwiftSrc" in text and "swift_fs_range" in text
    with pytest.raises(UsageError, match="queue"):
        scenario_for(HtsimSettings(**{**ref.settings.__dict__, "queue": "random"}))
