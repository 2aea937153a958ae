"""Presets. The core's named presets (``crates/sim/src/preset.rs``): a scenario names one,
its fields stand where none is given, a given field wins, every row names it, and the
tables that show them are generated. The "linux" reading of the running kernel: it reads
the kernel values it claims, the scenario follows them, and a behaviour whose scenario
field this build lacks is shown as not modelled (no root needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from incastlab import presets
from incastlab.cli.main import main
from incastlab.testbed import kernel
from incastlab.errors import UsageError
from incastlab.scenario import Scenario

CLI = [sys.executable, "-m", "incastlab.cli.main"]
PROC = Path("/proc/sys/net/ipv4")


def fake_kernel(tmp_path, routes="default via 10.0.0.1 dev eth0\n", jiffy=0.004, release="6.18.0-1-amd64",
                **sysctls) -> presets.Kernel:
    values = dict(tcp_congestion_control="cubic", tcp_sack="1", tcp_recovery="1", tcp_early_retrans="3",
                  tcp_timestamps="1", tcp_slow_start_after_idle="1", tcp_rmem="4096\t131072\t6291456",
                  tcp_frto="2", tcp_rto_min_us="200000")
    values.update(sysctls)
    (tmp_path / "ipv4").mkdir(parents=True)
    for name, v in values.items():
        if v is not None:
            (tmp_path / "ipv4" / name).write_text(v + "\n")
    return presets.Kernel(sysctl_dir=tmp_path / "ipv4", module_dir=tmp_path / "modules",
                          routes=lambda: routes, jiffy=lambda: jiffy, release=lambda: release)


def row(items, what: str) -> presets.Item:
    return next(it for it in items if it.what.startswith(what))


@pytest.mark.skipif(not (PROC / "tcp_sack").exists(), reason="needs Linux's /proc/sys/net/ipv4")
def test_the_rows_show_what_the_running_kernel_says():
    items = presets.linux(cc="reno")
    for what, sysctl in [("SACK", "tcp_sack"), ("timestamps", "tcp_timestamps"), ("RACK", "tcp_recovery"),
                         ("tail loss probe", "tcp_early_retrans"), ("restart", "tcp_slow_start_after_idle")]:
        value = (PROC / sysctl).read_text().strip()
        assert f"net.ipv4.{sysctl} = {value}" in row(items, what).kernel
    fields = presets.scenario_fields(items)
    assert fields["tcp"] == ("sack" if (PROC / "tcp_sack").read_text().strip() != "0" else "newreno")
    Scenario(servers=2, **fields)  # a scenario this build accepts


def test_the_scenario_follows_the_kernel_values(tmp_path):
    k = fake_kernel(tmp_path, routes="default via 10.0.0.1 dev eth0 initcwnd 4 rto_min lock 5ms\n",
                    tcp_sack="0", tcp_timestamps="0", tcp_slow_start_after_idle="0", tcp_rto_min_us="1000")
    items = presets.linux(cc="cubic", kernel=k)
    f = presets.scenario_fields(items)
    assert (f["cc"], f["tcp"], f["timestamps"], f["mss"]) == ("cubic", "newreno", False, 1460)
    assert f["init_cwnd"] == 4 and "initcwnd 4" in row(items, "initial window").kernel
    assert f["slow_start_after_idle"] is False
    # the route wins, and the kernel keeps it in whole jiffies (msecs_to_jiffies rounds 5 ms
    # up to 2 ticks of 4 ms)
    assert f["rto_min"] == 0.008 and "rto_min 5ms" in row(items, "minimum RTO").kernel, "the route wins"
    assert (f["timer_granularity"], f["timer_ticks"]) == (0.004, True)
    assert "HZ = 250" in row(items, "timers").kernel
    assert row(items, "receive window").kernel.endswith("4096 131072 6291456")


def test_kernel_defaults_where_the_machine_sets_nothing(tmp_path):
    k = fake_kernel(tmp_path, jiffy=None, tcp_rto_min_us=None)  # before Linux 6.15: no such sysctl
    items = presets.linux(cc="reno", kernel=k, quickack=True, rwnd_clamp=65536)
    f = presets.scenario_fields(items)
    assert (f["cc"], f["init_cwnd"], f["rto_min"], f["delayed_ack"], f["rwnd"]) == ("newreno", 10, 0.2, 0, 65536)
    assert "TCP_INIT_CWND = 10" in row(items, "initial window").kernel
    timers = row(items, "timers")
    # no tick detected: exact timers, said so, and set over the core's linux preset (its
    # stock 4 ms jiffies), as validate ran before the preset existed
    assert not timers.is_modelled and f["timer_ticks"] is False and f["timer_granularity"] == 1e-6
    assert f["timer_wheel"] is False and not any(it.what.startswith("timer wheel") for it in items)
    assert not any(it.what.startswith("quick-ACK") for it in items), "--quickack: no quick-ACK row"


def test_a_field_this_build_lacks_is_not_modelled_and_not_set(tmp_path):
    k = fake_kernel(tmp_path)
    without = presets.linux(cc="cubic", kernel=k, fields=set())
    for what in ("RACK", "tail loss probe", "PRR"):
        it = row(without, what)
        assert not it.is_modelled and "not in this build" in it.modelled and not it.fields
    # the same table once the fields exist: modelled, and set in the scenario
    with_them = presets.linux(cc="cubic", kernel=k, fields={"rack_tlp", "prr"})
    assert row(with_them, "RACK").is_modelled and row(with_them, "PRR").is_modelled
    f = presets.scenario_fields(with_them)
    assert f["rack_tlp"] is True and f["prr"] is True


def test_the_feature_check_reads_the_schema_of_this_build():
    assert presets.in_this_build("timestamps") and not presets.in_this_build("no_such_field")


def test_rack_without_tlp_is_not_claimed_as_modelled(tmp_path):
    k = fake_kernel(tmp_path, tcp_early_retrans="0")
    items = presets.linux(cc="cubic", kernel=k, fields={"rack_tlp", "prr"})
    assert presets.scenario_fields(items)["rack_tlp"] is False
    assert not row(items, "RACK").is_modelled and row(items, "tail loss probe").is_modelled


def test_cc_maps_and_an_unmodelled_one_is_refused(tmp_path):
    k = fake_kernel(tmp_path, tcp_congestion_control="bbr")
    assert presets.scenario_fields(presets.linux(cc="reno", kernel=k))["cc"] == "newreno"
    assert any(it.what.startswith("CUBIC slow start") for it in presets.linux(cc="cubic", kernel=k))
    with pytest.raises(UsageError, match="--cc: 'bbr'"):
        presets.linux(cc="bbr", kernel=k)
    with pytest.raises(UsageError, match="kernel's default"):
        presets.linux(cc=None, kernel=k)


def test_validate_prints_the_preset_table_without_root():
    out = subprocess.run(CLI + ["validate", "--preset-table", "--cc", "cubic", "--markdown"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "| item | kernel | simulator | modelled |"
    assert any("| cc=cubic | yes |" in l for l in lines)
    assert any(l.startswith("| PRR") for l in lines)


def test_validate_refuses_a_cc_the_simulator_lacks_in_one_line(tmp_path, monkeypatch, capsys):
    # a cc this kernel offers but the simulator does not model: a fake kernel that offers bbr,
    # so the testbed's own check (a cc the kernel lacks, refused with the kernel's list) lets
    # it through and the preset refuses it, whatever the machine running the tests offers
    proc = tmp_path / "tcp_available_congestion_control"
    proc.write_text("reno cubic bbr\n")
    read = kernel.available_congestion_controls
    monkeypatch.setattr(kernel, "available_congestion_controls", lambda: read(proc, tmp_path / "no-modules"))
    assert "bbr" not in presets.CC_OF_KERNEL
    kernel.check_congestion("bbr")  # offered by the fake kernel: not the refusal asserted below
    assert main(["validate", "--servers", "1", "--cc", "bbr"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("incastlab: error: --cc: 'bbr' is not allowed") and len(err.strip().splitlines()) == 1
    assert "cubic or reno: the congestion controls the simulator models" in err


def test_the_rto_min_sysctl_is_read_where_no_route_sets_one(tmp_path):
    # 1 ms of sysctl is kept as one 4 ms jiffy (usecs_to_jiffies rounds up)
    items = presets.linux(cc="reno", kernel=fake_kernel(tmp_path, tcp_rto_min_us="1000"))
    assert presets.scenario_fields(items)["rto_min"] == 0.004
    assert row(items, "minimum RTO").kernel.startswith("net.ipv4.tcp_rto_min_us = 1000 in the root namespace")


# --- the core's presets -------------------------------------------------------------------


def test_fast08_is_the_reading_the_reproductions_ran_before_it_had_a_name():
    # the five fields experiments/sources.py set by hand as NS2_FAST08 until the preset
    # existed (docs/model.md, "The ns-2 reading of FAST'08"): a change here moves every
    # FAST'08 reproduction
    s = Scenario(servers=16, preset="fast08")
    assert (s.tcp_rules, s.limited_transmit, s.buffer_admission, s.mss, s.rwnd) == ("ns2", True, "packets", 1000,
                                                                                      20_000)
    assert s.buffer_text() == "31 packets", "32 KiB of 1040 B packets, as ns-2's DropTail counts them"


def test_a_given_field_wins_over_the_preset_and_the_rest_keep_their_defaults():
    s = Scenario(servers=4, preset="fast08", mss=1460, rwnd="64KiB")
    assert (s.mss, s.rwnd, s.tcp_rules) == (1460, 65536, "ns2")
    assert s.given() == {"servers": 4, "preset": "fast08", "mss": "1460B", "rwnd": "64KiB"}
    plain = Scenario(servers=4)
    assert plain.preset == "rfc" and (plain.mss, plain.tcp_rules) == (1460, "rfc")
    assert Scenario(servers=4, preset="rfc") == plain.model_copy(update={"preset": "rfc"})


def test_every_preset_reads_back_its_own_values_and_builds():
    from incastlab.schema import PRESETS

    assert list(PRESETS) == ["rfc", "fast08", "ns2", "ns3", "linux"]
    for name, p in PRESETS.items():
        s = Scenario(servers=8, preset=name)
        for field, value in p.values().items():
            assert getattr(s, field) == value, (name, field)
        assert Scenario(**s.model_dump()) == s, name  # a row's fields give the same scenario back


def test_every_result_row_names_its_preset():
    from incastlab import simulate, sweep

    assert simulate(Scenario(servers=2, preset="ns2", duration="20ms"))["preset"] == "ns2"
    df = sweep(grid={"servers": "2", "preset": ["rfc", "fast08"]}, base={"duration": "20ms"})
    assert list(df["preset"]) == ["rfc", "fast08"] and list(df["mss_bytes"]) == [1460, 1000]
    assert df.columns[0] == "preset", "the first thing a row says"


def test_a_refusal_caused_by_a_preset_value_says_where_it_came_from():
    with pytest.raises(UsageError, match=r"tcp: 'sack'.*tcp_rules=ns3 comes from preset ns3"):
        Scenario(servers=2, preset="ns3", tcp="sack")


def test_the_preset_flag_and_table_on_the_command_line(capsys):
    assert main(["simulate", "--servers", "2", "--preset", "fast08", "--mss", "1460", "--duration", "20ms",
                 "--json"]) == 0
    import json
    row = json.loads(capsys.readouterr().out)
    assert (row["preset"], row["mss_bytes"], row["tcp_rules"]) == ("fast08", 1460, "ns2"), "the flag wins"
    assert main(["simulate", "--preset-table"]) == 0
    table = capsys.readouterr().out
    for name in ("rfc", "fast08", "ns2", "ns3", "linux"):
        assert f"\n{name}: " in "\n" + table
    assert "  mss=1000B" in table and "  rwnd=20000B" in table
    assert "this host: " in table
    assert main(["simulate", "--servers", "2", "--preset", "ns4"]) == 2
    capsys.readouterr()
    assert main(["simulate", "--preset-table", "--preset", "NS3"]) == 0
    one = capsys.readouterr().out
    assert one.startswith("ns3: ") and "\nfast08: " not in one and "  header=42B" in one, "that preset alone"
    assert main(["simulate", "--preset-table", "--preset", "ns4"]) == 2
    assert "--preset: 'ns4' is not allowed" in capsys.readouterr().err


def test_where_this_host_differs_from_the_stock_linux_preset(tmp_path):
    k = fake_kernel(tmp_path, routes="default via 10.0.0.1 dev eth0 initcwnd 4\n", tcp_timestamps="0")
    text = presets.host_differences(k)
    assert "init_cwnd=4 (stock 10)" in text and "timestamps=off (stock on)" in text and "mss=1460B (stock 1448B)" in text
    (tmp_path / "stock").mkdir()
    assert presets.host_differences(fake_kernel(tmp_path / "stock")) == "the same as the stock values"


def test_validate_runs_the_linux_preset_with_the_kernels_values_over_it(tmp_path):
    items = presets.linux(cc="reno", kernel=fake_kernel(tmp_path))
    s = presets.linux_scenario(items, servers=4, sru=65536, block=None, buffer=8192, rate=10**8, rtt_s=1e-4,
                               blocks=5)
    assert s.preset == "linux" and s.cc == "newreno", "--cc reno over the preset's cubic"
    assert (s.tcp, s.rack_tlp, s.mss, s.timer_granularity) == ("sack", True, 1448, 0.004)


def test_the_ns2_and_ns3_presets_are_the_rules_their_peers_hard_wire():
    # `--preset ns2` / `--preset ns3` must mean what the differential harnesses' --ns2-rules /
    # --ns3-rules give our side (peers/ns2.py, peers/ns3.py HARD_WIRED), for NewReno without
    # timestamps, where ns-3's header is 42 B (its PPP framing; 54 with the timestamp option)
    from incastlab.peers import ns2, ns3
    from incastlab.schema import PRESETS

    plain = Scenario(servers=4)
    assert ns2.ns2_rules(plain) == PRESETS["ns2"].values()
    assert ns3.ns3_rules(plain) == PRESETS["ns3"].values()


def test_a_study_file_names_a_preset_like_any_field(tmp_path):
    from incastlab.study import spec

    study = tmp_path / "presets.toml"
    study.write_text('[base]\npreset = "fast08"\nduration = "20ms"\n\n[grid]\nservers = [2, 4]\n\n'
                     '[[series]]\nlabel = "ns-2 reading"\n\n[[series]]\nlabel = "1460 B packets"\nmss = 1460\n')
    points = spec.load(study).points()
    assert [(p.series, p.scenario.preset, p.scenario.mss) for p in points] == [
        ("ns-2 reading", "fast08", 1000), ("ns-2 reading", "fast08", 1000),
        ("1460 B packets", "fast08", 1460), ("1460 B packets", "fast08", 1460)]
    study.write_text('[base]\npreset = "fast09"\n[grid]\nservers = [2]\n')
    with pytest.raises(UsageError, match="preset"):
        spec.load(study).points()


def test_a_label_says_where_a_given_field_overrides_its_preset():
    # `--preset fast08 --mss 1460` once read as fast08 with ns-2's 1000 B packets unsaid
    assert "MSS 1000B" in Scenario(servers=2, preset="fast08").label()
    assert "MSS 1460B" in Scenario(servers=2, preset="fast08", mss=1460).label()
    assert "header 40B" in Scenario(servers=2, preset="ns3", header=40).label(), "the default, over ns3's 42 B"
    assert "MSS" not in Scenario(servers=2).label() and "header" not in Scenario(servers=2, header=40).label()




def test_the_rto_min_follows_the_kernels_precedence_route_then_socket_option_then_sysctl(tmp_path):
    # tcp_rto_min(): a locked route metric first, then icsk_rto_min, which TCP_RTO_MIN_US sets
    # and which starts as the namespace's tcp_rto_min_us (include/net/tcp.h, Linux 6.15)
    routed = fake_kernel(tmp_path / "a", routes="default via 10.0.0.1 dev eth0 rto_min lock 20ms\n",
                         tcp_rto_min_us="100000")
    rto = lambda k, **kw: presets.rto_min(k, 0.004, **kw)
    assert rto(routed, socket_s=0.012)[0] == 0.02, "the route beats the socket option"
    plain = fake_kernel(tmp_path / "b", tcp_rto_min_us="100000")
    value, text = rto(plain, socket_s=0.012)
    assert value == 0.012 and text.startswith("TCP_RTO_MIN_US 12000"), "the option beats the sysctl"
    assert rto(plain)[0] == 0.1, "the sysctl, where nothing else is set"
    assert rto(fake_kernel(tmp_path / "c", tcp_rto_min_us=None))[0] == 0.2, "TCP_RTO_MIN before Linux 6.11"
    # the testbed's own setting, given before the testbed exists, takes the same places
    assert rto(plain, route_s=0.002)[0] == 0.004, "2 ms on a route is kept as one 4 ms jiffy"
    assert rto(plain, sysctl_s=0.03)[0] == 0.032


def test_the_delayed_ack_is_40ms_bounded_by_the_option_and_the_receivers_rto_min(tmp_path):
    # tcp_send_delayed_ack: ato (TCP_ATO_MIN, 40 ms) at most tcp_delack_max() = min(icsk_delack_max,
    # RTOmin - 1 jiffy) (net/ipv4/tcp_output.c, Linux 6.15)
    f = lambda **kw: presets.scenario_fields([presets.delayed_ack(kw.pop("k"), 0.004, False, kw.get("cap"))])
    plain = fake_kernel(tmp_path / "a")
    assert f(k=plain)["delayed_ack"] == 0.04
    assert f(k=plain, cap=0.010)["delayed_ack"] == 0.012, "10 ms is kept as 3 jiffies"
    low_rto = fake_kernel(tmp_path / "b", routes="default via 10.0.0.1 dev eth0 rto_min lock 20ms\n")
    assert f(k=low_rto)["delayed_ack"] == 0.016, "the receiver's RTOmin of 20 ms less a 4 ms jiffy"
    items = presets.linux(cc="reno", kernel=plain, quickack=True)
    assert presets.scenario_fields(items)["delayed_ack"] == 0


def test_the_testbed_rows_put_the_rate_on_a_shaper_in_front_of_fast_links():
    rows = presets.testbed(rate_bps=100_000_000, buffer_bytes=8192, burst_bytes=6056)
    f = presets.scenario_fields(rows)
    assert (f["shaper_rate"], f["shaper_burst"], f["rate"], f["header"]) == (100_000_000, 6056, 4_000_000_000, 66)
    scn = presets.linux_scenario(rows, servers=4, sru=256 * 1024, block=None, buffer=8192, rate=100_000_000,
                                 rtt_s=100e-6, blocks=2)
    assert (scn.rate, scn.shaper_rate, scn.buffer) == (4_000_000_000, 100_000_000, 8192)
    assert presets.scenario_fields(presets.testbed(rate_bps=10**8, buffer_bytes=8192, burst_bytes=6056,
                                                   timestamps=False))["header"] == 54
    # the servers' start is a row either way; it sets no field (the think times are per point)
    for measured, modelled in ((False, "no: --measured-think-times measures it"), (True, "yes: measured per point")):
        start = presets.testbed(rate_bps=10**8, buffer_bytes=8192, burst_bytes=6056, measured_think_times=measured)[-3]
        assert (start.what, start.modelled, start.fields) == ("when the servers answer a block's requests", modelled, {})
    # so is the round trip: validate's --rtt as given, or measured per point (--rtt measured)
    given = presets.testbed(rate_bps=10**8, buffer_bytes=8192, burst_bytes=6056, rtt_s=7e-6)[-2]
    assert (given.simulator, given.modelled, given.fields) == ("rtt=7us", "no: --rtt measured measures it", {})
    measured = presets.testbed(rate_bps=10**8, buffer_bytes=8192, burst_bytes=6056, rtt_s=None)[-2]
    assert measured.modelled.startswith("yes: measured per point") and "testbed.round_trip" in measured.simulator
    # and what the idle CPUs do: polling leaves the simulator nothing to model, halting does
    for mode, modelled in (("poll", "yes: nothing to model (--cpu-idle poll)"),
                           ("system", "no: 35-80 us on about half of the hops, not modelled (--cpu-idle poll removes it)")):
        idle = presets.testbed(rate_bps=10**8, buffer_bytes=8192, burst_bytes=6056, cpu_idle=mode)[-1]
        assert (idle.modelled, idle.fields) == (modelled, {})


def _cubic_params(tmp_path, **params):
    d = tmp_path / "modules" / "tcp_cubic" / "parameters"
    d.mkdir(parents=True)
    for name, v in params.items():
        (d / name).write_text(v + "\n")


def test_hystart_follows_tcp_cubic_and_is_modelled_only_at_its_defaults(tmp_path):
    # the testbed's kernel (6.18): hystart 1, detect 3, low window 16, ack delta 2000 us
    k = fake_kernel(tmp_path)
    _cubic_params(tmp_path, hystart="1", hystart_detect="3", hystart_low_window="16", hystart_ack_delta_us="2000")
    it = row(presets.linux(cc="cubic", kernel=k), "CUBIC slow start")
    assert it.is_modelled and it.fields == {"hystart": True} and "hystart_low_window = 16" in it.kernel
    Scenario(servers=2, **presets.scenario_fields(presets.linux(cc="cubic", kernel=k)))
    # hystart = 0: RFC 5681 slow start, modelled; another low window: not claimed
    params = tmp_path / "modules" / "tcp_cubic" / "parameters"
    for hystart, low, modelled, on in [("0", "16", True, False), ("1", "8", False, True)]:
        (params / "hystart").write_text(hystart + "\n")
        (params / "hystart_low_window").write_text(low + "\n")
        it = row(presets.linux(cc="cubic", kernel=k), "CUBIC slow start")
        assert it.is_modelled == modelled and it.fields == {"hystart": on}, (hystart, low, it)
    # reno sockets run no HyStart: no row
    assert not any(it.what.startswith("CUBIC slow start") for it in presets.linux(cc="reno", kernel=k))


def test_cubic_arithmetic_follows_tcp_cubic_and_is_claimed_only_at_its_defaults(tmp_path):
    # the testbed's kernel (6.18): beta 717, bic_scale 41, fast_convergence 1, tcp_friendliness 1
    k = fake_kernel(tmp_path)
    _cubic_params(tmp_path, beta="717", bic_scale="41", fast_convergence="1", tcp_friendliness="1")
    it = row(presets.linux(cc="cubic", kernel=k), "CUBIC's window arithmetic")
    assert it.is_modelled and it.fields == {"cubic_linux": True} and "beta = 717" in it.kernel
    Scenario(servers=2, **presets.scenario_fields(presets.linux(cc="cubic", kernel=k)))
    # another beta: the rules stay Linux's, but the row does not claim the kernel's values
    (tmp_path / "modules" / "tcp_cubic" / "parameters" / "beta").write_text("819\n")
    it = row(presets.linux(cc="cubic", kernel=k), "CUBIC's window arithmetic")
    assert not it.is_modelled and "beta = 819" in it.modelled and it.fields == {"cubic_linux": True}
    # a build without the field says so; reno sockets have no such row
    it = presets.cubic_rules_item(k, fields={"hystart"})
    assert not it.is_modelled and "not in this build" in it.modelled and it.fields == {}
    assert not any(it.what.startswith("CUBIC's window") for it in presets.linux(cc="reno", kernel=k))


def test_reno_row_claims_linux_renos_three_rules_only_for_reno_and_only_when_built(tmp_path):
    # tcp_reno_ssthresh, tcp_slow_start / tcp_cong_avoid_ai and tcp_is_cwnd_limited are
    # compiled in (no sysctl): the row is modelled whenever the schema has the three flags
    k = fake_kernel(tmp_path)
    it = row(presets.linux(cc="reno", kernel=k), "reno's window")
    assert it.is_modelled and it.fields == dict.fromkeys(presets.RENO_RULES, True)
    assert "tcp_reno_ssthresh" in it.kernel
    Scenario(servers=2, **presets.scenario_fields(presets.linux(cc="reno", kernel=k)))
    older = row(presets.linux(cc="reno", kernel=k, fields={"count_acked_segments", "cwnd_limited_growth"}),
                "reno's window")
    assert not older.is_modelled and older.fields == {} and "ssthresh_from_cwnd" in older.modelled
    # CUBIC sockets run tcp_cubic's own rules: no reno row
    assert not any(it.what.startswith("reno's window") for it in presets.linux(cc="cubic", kernel=k))


def test_the_compiled_in_receiver_prr_and_timer_rules_are_rows_modelled_only_when_built(tmp_path):
    # tcp_measure_rcv_mss's ICSK_ACK_PUSHED, tcp_cwnd_reduction's condition on PRR's extra
    # segment and TCP_TIMEOUT_MIN_US have no knob: a row each, modelled whenever the schema
    # has the flag, for reno and cubic alike
    k = fake_kernel(tmp_path)
    flags = {"a segment shorter than the MSS": "ack_short_segments",
             "PRR's extra segment": "prr_extra_if_advanced", "2 ms more": "rack_timer_floor",
             "fast retransmit sent within": "prr_counts_fast_retransmit",
             "ends fast recovery grows": "grow_on_recovery_exit",
             "RACK finds lost again": "recovery_from_loss",
             "SACKed segments kept": "loss_retransmit_queue",
             "an ACK after a lost probe does not push it back": "rearm_rto_from_head",
             "RACK's RTT from the last segment": "rack_rtt_sack_first",
             "SACKed segments leave the flight": "sacked_leave_flight",
             "a window that once filled cwnd grows": "cwnd_limited_latch",
             "GSO skbs of at most half cwnd": "gso_half_cwnd",
             "rttvar never below RTOmin": "rto_min_on_rttvar", "timer wheel": "timer_wheel"}
    for cc in ("reno", "cubic"):
        items = presets.linux(cc=cc, kernel=k)
        for what, flag in flags.items():
            it = next(i for i in items if what in i.what)
            assert it.is_modelled and it.fields == {flag: True}, (cc, it)
        assert all(presets.scenario_fields(items)[f] is True for f in flags.values())
    older = presets.linux(cc="reno", kernel=k, fields={"prr", "rack_tlp"})
    for what, flag in flags.items():
        it = next(i for i in older if what in i.what)
        assert not it.is_modelled and it.fields == {} and flag in it.modelled


def test_the_receive_window_rows_follow_the_clients_sysctls(tmp_path):
    # tcp_grow_window has no knob; autotuning follows tcp_moderate_rcvbuf (off: the clamp
    # stays), and a tcp_rmem other than the model's is named; ping-pong reads its threshold
    k = fake_kernel(tmp_path, tcp_rmem="4096\t131072\t33554432", tcp_moderate_rcvbuf="1", tcp_pingpong_thresh="1")
    items = presets.linux(cc="reno", kernel=k)
    fields = presets.scenario_fields(items)
    assert (fields["rcv_window_growth"], fields["rcv_autotuning"], fields["ack_pingpong"]) == (True, True, True)
    assert fields["rcv_scaling_ratio"] == presets.VETH_SCALING_RATIO
    assert row(items, "receive-buffer autotuning").modelled == "yes"
    assert row(items, "ping-pong mode").modelled == "yes"
    off = presets.linux(cc="reno", kernel=fake_kernel(tmp_path / "off", tcp_moderate_rcvbuf="0", tcp_pingpong_thresh="3"))
    assert presets.scenario_fields(off)["rcv_autotuning"] is False
    assert "not this host's" in row(off, "ping-pong mode").modelled
    other = presets.linux(cc="reno", kernel=fake_kernel(tmp_path / "other", tcp_moderate_rcvbuf="1"))  # 6 MiB tcp_rmem[2]
    assert "not this host's" in row(other, "receive-buffer autotuning").modelled
    # a build without the fields: the rows say so and set nothing
    older = presets.linux(cc="reno", kernel=k, fields={"prr", "rack_tlp"})
    assert "rcv_window_growth" not in presets.scenario_fields(older)
    assert row(older, "receive-buffer autotuning").modelled.startswith("no")


def test_the_receiver_rtt_row_follows_the_kernel_release(tmp_path):
    # Linux 6.16 dropped zero-ms timestamp samples from the receiver RTT (commit a7ffb88bcbb1):
    # from 6.16 on the row sets rcv_rtt_from_window, before it not; autotuning off: no row
    for release, on in (("6.18.0-1-amd64", True), ("6.16.0", True), ("6.15.9-200.fc42.x86_64", False),
                        ("5.15.0-91-generic", False)):
        k = fake_kernel(tmp_path / release, release=release, tcp_moderate_rcvbuf="1")
        it = row(presets.linux(cc="reno", kernel=k), "receiver RTT for autotuning")
        assert it.is_modelled and it.fields == {"rcv_rtt_from_window": on}, (release, it)
        assert release in it.kernel
    odd = row(presets.linux(cc="reno", kernel=fake_kernel(tmp_path / "odd", release="custom", tcp_moderate_rcvbuf="1")),
              "receiver RTT for autotuning")
    assert odd.fields == {"rcv_rtt_from_window": True} and "names no version" in odd.modelled
    off = presets.linux(cc="reno", kernel=fake_kernel(tmp_path / "off", tcp_moderate_rcvbuf="0"))
    assert not any(i.what.startswith("receiver RTT") for i in off)
    older = presets.linux(cc="reno", kernel=fake_kernel(tmp_path / "older", tcp_moderate_rcvbuf="1"),
                          fields={"rcv_window_growth", "rcv_autotuning"})
    assert row(older, "receiver RTT for autotuning").modelled.startswith("no") and \
        "rcv_rtt_from_window" not in presets.scenario_fields(older)


def test_the_tso_deferral_row_follows_tcp_tso_win_divisor(tmp_path):
    # every TCP socket builds GSO skbs (sk_setup_caps), so tcp_tso_should_defer runs; the
    # simulator's rule is the default divisor 3's; 0 is another rule, not modelled
    for divisor, on, modelled in (("3", True, "yes"), (None, True, "yes"), ("2", True, "not this host's"),
                                  ("0", False, "not modelled")):
        k = fake_kernel(tmp_path / str(divisor), tcp_tso_win_divisor=divisor)
        it = row(presets.linux(cc="cubic", kernel=k), "a small send allowance waits")
        assert it.fields == {"tso_deferral": on} and modelled in it.modelled, (divisor, it)
    older = presets.linux(cc="cubic", kernel=fake_kernel(tmp_path / "older"), fields={"rack_tlp"})
    assert row(older, "a small send allowance waits").modelled.startswith("no") and \
        "tso_deferral" not in presets.scenario_fields(older)


def test_frto_follows_the_kernels_tcp_frto(tmp_path):
    # net.ipv4.tcp_frto: 2 (the default) and 1 run F-RTO after a timeout (tcp_enter_loss),
    # 0 does not; the row sets the simulator's frto to match
    for value, on in (("2", True), ("1", True), ("0", False)):
        k = fake_kernel(tmp_path / value, tcp_frto=value)
        it = next(i for i in presets.linux(cc="reno", kernel=k) if i.what.startswith("F-RTO"))
        assert it.is_modelled and it.fields == {"frto": on}, (value, it)
        assert f"tcp_frto = {value}" in it.kernel
