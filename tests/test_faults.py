"""Faults, signals and files (issue 25): what incastlab does when the machine or the user
gets in the way. Each case injects one fault and checks what a user relies on:

- an output path that is a device, a FIFO, a directory or a link to one is refused in one
  line (exit 2) and left as it was; a link to a regular file is written through;
- a full disk (a tiny tmpfs) is one line, exit 2, and no file of the command is left, not
  even the ones that fitted: a command's outputs appear together or not at all;
- a damaged file of a result store is named, set aside and its points simulated again (the
  result equals the undamaged run's); damaged report inputs are skipped; a read-only store
  is reported on;
- SIGTERM, SIGHUP and SIGINT stop a command with 128 + the signal, a message and no
  partial output; no process it started outlives it, also after ``kill -9``;
- ``read`` gives up on a server that accepts and never answers.

fault_support.TALLY counts every fault and what went wrong; the session ends with one line
(tests/conftest.py). Device nodes, links and the tmpfs live in pytest's temporary
directories, never at a system path. Needs root for mknod and mount (CI runs as root); a
case that cannot set its fault up is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

from fault_support import (CLI, TALLY, finish, group_processes, orphans_after, partial_outputs, run_in_process,
                           snapshot, start)

# --- shared inputs ----------------------------------------------------------------------

GRID = ["servers=1,2,4,8", "duration=10ms"]


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory) -> Path:
    """A sweep's output directory: sweep.csv, sweep.study.json and a store of 4 files."""
    d = tmp_path_factory.mktemp("study") / "out"
    o = run_in_process(["sweep", "--grid", *GRID, "--executor", "threads", "--batch", "1", "--out", d], d.parent)
    assert o.code == 0, o.err
    assert len(list((d / "store" / "data").glob("part-*.parquet"))) == 4
    return d


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> Path:
    """A small monitor recording (what `monitor --record` writes)."""
    from incastlab.monitor.record import Recorder

    path = tmp_path_factory.mktemp("rec") / "run.parquet"
    rec = Recorder(str(path))
    n = 2000
    rec.write([1e-4 * (i + 1) for i in range(n)], [1e-4] * n, [1500 * (i % 7) for i in range(n)], [0] * n,
              [i % 7 for i in range(n)], [0] * n)
    rec.close()
    return path


def one_line_refusal(o, *words: str) -> None:
    assert o.code == 2 and not o.traceback, (o.code, o.err)
    assert len(o.lines) == 1 and o.lines[0].startswith("incastlab: error:"), o.err
    for w in words:
        assert w in o.lines[0], (w, o.lines[0])


# --- output targets: devices, FIFOs, directories, links ------------------------------------

def _simulate(flag: str, *extra: str):
    return lambda target, _: ["simulate", "--servers", "1", "--duration", "10ms", *extra, flag, target]


# name -> (the target's file name, argv for it, the flag a refusal names)
WRITERS = {
    "simulate --csv": ("t.csv", _simulate("--csv"), "--csv"),
    "simulate --plot": ("t.png", _simulate("--plot"), "--plot"),
    "simulate --pcap": ("t.pcap", _simulate("--pcap"), "--pcap"),
    "simulate --trace": ("t.parquet", _simulate("--trace"), "--trace"),
    "simulate --events": ("t.csv", _simulate("--events"), "--events"),
    "simulate --port-util": ("t.csv", _simulate("--port-util"), "--port-util"),
    "demo": ("demo/demo.png", lambda t, _: ["demo", "--servers", "1", "--duration", "10ms", "--out", t.parent],
             "--out"),
    "reproduce": ("rep/fast08-fig4.csv",
                  lambda t, _: ["reproduce", "fast08-fig4", "--quick", "--no-store", "--out", t.parent], "--out"),
    "sweep": ("sw/sweep.study.json",
              lambda t, _: ["sweep", "--grid", "servers=1,2", "duration=10ms", "--executor", "threads", "--out",
                            t.parent], "--out"),
    "report --html": ("t.html", lambda t, inputs: ["report", inputs["study"], "--html", t], "--html"),
    "monitor plot": ("t.png", lambda t, inputs: ["monitor", "plot", inputs["recording"], "--out", t], "--out"),
    "monitor --record": ("t.parquet", lambda t, _: ["monitor", "--iface", "lo", "--source", "sysfs", "--duration",
                                                   "1s", "--record", t], "--record"),
}

REFUSED_KINDS = ["device", "link to a device", "directory", "fifo", "dangling link"]
KEPT_KINDS = ["link to a file", "regular file"]


def _make_target(kind: str, target: Path, side_dir: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    side_dir.mkdir(exist_ok=True)
    side = side_dir / f"real-{target.name}"  # what a link points to, outside any output directory
    if kind in ("device", "link to a device"):
        node = target if kind == "device" else side
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers, here
        except PermissionError:
            pytest.skip("mknod needs root (CAP_MKNOD)")
        if kind == "link to a device":
            target.symlink_to(node)
    elif kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dangling link":
        target.symlink_to(target.parent / "missing" / target.name)
    elif kind == "link to a file":
        side.write_bytes(b"old")
        side.chmod(0o600)
        target.symlink_to(side)
    elif kind == "regular file":
        target.write_bytes(b"old")
        target.chmod(0o600)


def _node(path: Path) -> tuple:
    st = path.lstat()
    return (stat.S_IFMT(st.st_mode), st.st_rdev, os.readlink(path) if path.is_symlink() else None)


@pytest.mark.parametrize("kind", REFUSED_KINDS + KEPT_KINDS)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_an_output_path_is_a_new_path_or_a_regular_file_and_a_link_is_written_through(
        writer, kind, tmp_path, study_dir, recording):
    name, argv, flag = WRITERS[writer]
    target = tmp_path / name
    _make_target(kind, target, tmp_path / "side")
    node = _node(target)
    before = snapshot(tmp_path)
    o = run_in_process(argv(target, {"study": study_dir, "recording": recording}), tmp_path)
    replaced = _node(target) != node  # a device, FIFO or directory replaced, or a link by a file
    if kind in REFUSED_KINDS:
        left = partial_outputs(tmp_path, before)
    else:  # a run's other files are allowed (demo.csv next to demo.png, a sweep's store)
        left = [p for p in partial_outputs(tmp_path, before, allowed={str(Path(name).parent)})
                if "temporary" in p or "empty" in p]
    TALLY.record("output target", traceback=o.traceback, partial=len(left), replaced=replaced)
    assert not replaced, "the node was replaced"
    if kind in REFUSED_KINDS:
        one_line_refusal(o, flag)
    else:
        assert o.code == 0 and not o.traceback, o.err
        real = target.resolve()
        assert real.read_bytes() != b"old" and real.stat().st_size > 0, "written through to the file"
        assert stat.S_IMODE(real.stat().st_mode) == 0o600, "the file keeps its mode"
    assert left == [], left


# --- a full disk --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def full_disk(tmp_path_factory):
    """A 64 KiB tmpfs filled to the last page: every write to it fails with ENOSPC."""
    mount = tmp_path_factory.mktemp("full")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        with open(mount / "filler", "wb", buffering=0) as f:  # unbuffered: nothing left to flush
            try:
                while True:
                    f.write(b"\0" * 512)
            except OSError:
                pass
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _full_cases():
    sim = ["simulate", "--servers", "1,2", "--duration", "10ms"]
    return {
        "simulate --csv": lambda full, ok, inputs: sim + ["--csv", full / "a.csv"],
        "simulate --csv (fits) with --plot (does not)": lambda full, ok, inputs: sim + ["--csv", ok / "a.csv",
                                                                                       "--plot", full / "a.png"],
        "simulate --pcap": lambda full, ok, inputs: sim + ["--pcap", full / "a.pcap"],
        "simulate --trace parquet": lambda full, ok, inputs: sim + ["--trace", full / "t.parquet"],
        "simulate --pcap (fits) with --events (does not)": lambda full, ok, inputs: sim + [
            "--pcap", ok / "a.pcap", "--events", full / "e.csv"],
        "demo": lambda full, ok, inputs: ["demo", "--servers", "1,2", "--duration", "10ms", "--out", full / "demo"],
        "reproduce --no-store": lambda full, ok, inputs: ["reproduce", "fast08-fig4", "--quick", "--no-store",
                                                          "--out", full / "rep"],
        "reproduce, its store on the full disk": lambda full, ok, inputs: ["reproduce", "fast08-fig4", "--quick",
                                                                           "--out", full / "rep"],
        "reproduce, the store elsewhere": lambda full, ok, inputs: ["reproduce", "fast08-fig4", "--quick", "--out",
                                                                    full / "rep", "--store", ok / "store"],
        "sweep": lambda full, ok, inputs: ["sweep", "--grid", *GRID, "--executor", "threads", "--out", full / "sw"],
        "report --html": lambda full, ok, inputs: ["report", inputs["study"], "--html", full / "r.html"],
        "monitor plot": lambda full, ok, inputs: ["monitor", "plot", inputs["recording"], "--out", full / "m.png"],
        "monitor --record": lambda full, ok, inputs: ["monitor", "--iface", "lo", "--source", "sysfs", "--duration",
                                                      "1s", "--record", full / "m.parquet"],
        "report --html (fits) with --screenshot (does not)": lambda full, ok, inputs: [
            "report", inputs["study"], "--html", ok / "r.html", "--screenshot", full / "r.png"],
    }


FULL = _full_cases()


@pytest.mark.parametrize("case", list(FULL))
def test_a_full_disk_is_one_line_and_leaves_no_file_of_the_command(case, full_disk, tmp_path, study_dir,
                                                                    recording):
    if "screenshot" in case and shutil.which("chromium") is None:
        pytest.skip("no Chromium for --screenshot (scripts/install.sh installs it)")
    ok = tmp_path / "ok"
    ok.mkdir()
    before_full, before_ok = snapshot(full_disk), snapshot(ok)
    o = run_in_process(FULL[case](full_disk, ok, {"study": study_dir, "recording": recording}), tmp_path)
    # the store elsewhere keeps the points it got: that is what a store is for
    left = partial_outputs(full_disk, before_full) + partial_outputs(ok, before_ok, allowed={"store"})
    TALLY.record("full disk", traceback=o.traceback, partial=len(left))
    assert o.code == 2 and not o.traceback, o.err
    assert len(o.lines) == 1 and o.lines[0].startswith("incastlab: error:"), o.err
    assert "No space left on device" in o.lines[0] or "a full disk?" in o.lines[0], o.lines[0]
    assert left == [], left


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_stdout_on_a_full_disk_is_one_line_naming_standard_output(unbuffered, full_disk, tmp_path):
    """``incastlab ... > FILE`` with FILE on a full disk, with Python's stdout buffered (a
    user's shell) and unbuffered (PYTHONUNBUFFERED=1, as under many CI runners)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    out = full_disk / f"stdout{unbuffered}.txt"
    with open(out, "w") as f:
        p = subprocess.run(CLI + ["reproduce", "--list"], stdout=f, stderr=subprocess.PIPE, text=True, env=env,
                           cwd=tmp_path, timeout=120)
    out.unlink()
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    TALLY.record("full disk", traceback="Traceback" in p.stderr)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert lines == ["incastlab: error: cannot write to standard output: No space left on device"], p.stderr


# --- damaged files: the result store, a report's inputs --------------------------------------

def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(bytes((i * 131 + 7) % 256 for i in range(len(data))))
    elif how == "one byte flipped":
        # inside the first column's last data page (the page checksum's business, not the framing's)
        import pyarrow.parquet as pq

        col = pq.ParquetFile(path).metadata.row_group(0).column(0)
        at = col.data_page_offset + col.total_compressed_size - 2
        b = bytearray(data)
        b[at] ^= 0x40
        path.write_bytes(bytes(b))


DAMAGE = ["truncated", "empty", "garbage", "one byte flipped"]


def _copy_store(study_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    store = tmp_path / "store"
    shutil.copytree(study_dir / "store", store)
    victim = sorted((store / "data").glob("part-*.parquet"))[1]
    return store, victim


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_store_file_is_named_set_aside_and_its_points_simulated_again(how, tmp_path, study_dir):
    store, victim = _copy_store(study_dir, tmp_path)
    _damage(victim, how)
    o = run_in_process(["sweep", "--grid", *GRID, "--executor", "threads", "--out", tmp_path / "out", "--store",
                        store], tmp_path)
    TALLY.record("damaged file", traceback=o.traceback)
    assert o.code == 0 and not o.traceback, o.err
    warned = [line for line in o.lines if line.startswith("incastlab: warning:")]
    assert len(warned) == 1 and victim.name in warned[0] and "damaged" in warned[0], o.err
    assert (store / "damaged" / victim.name).exists() and not victim.exists()
    assert "3 from the store, 1 simulated" in o.out, o.out
    # the point simulated again is the point that was lost: same seed, same result
    cols = ["servers", "goodput_mbps", "blocks", "timeouts", "drops"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "out" / "sweep.csv")[cols],
                                  pd.read_csv(study_dir / "sweep.csv")[cols])


def test_a_damaged_store_file_through_the_api_is_a_warning_not_an_exception(tmp_path, study_dir):
    import incastlab
    from incastlab.study.store import DamagedFileWarning

    store, victim = _copy_store(study_dir, tmp_path)
    _damage(victim, "truncated")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            df = incastlab.sweep(grid={"servers": "1,2,4,8"}, base={"duration": "10ms"}, store=store)
        except Exception:
            TALLY.record("damaged file", traceback=True)
            raise
    TALLY.record("damaged file")
    assert [w for w in seen if issubclass(w.category, DamagedFileWarning) and victim.name in str(w.message)]
    assert list(df["servers"]) == [1, 2, 4, 8] and int(df["from_store"].sum()) == 3


def test_report_skips_a_damaged_store_file_without_moving_it(tmp_path, study_dir):
    store, victim = _copy_store(study_dir, tmp_path)
    _damage(victim, "garbage")
    o = run_in_process(["report", store, "--html", tmp_path / "r.html"], tmp_path)
    TALLY.record("damaged file", traceback=o.traceback)
    assert o.code == 0 and not o.traceback, o.err
    assert any(victim.name in line and "skipped (reading only" in line for line in o.lines), o.err
    assert victim.exists() and (tmp_path / "r.html").stat().st_size > 0


@pytest.fixture
def read_only(tmp_path):
    """A read-only bind mount of a directory (root: mount; as the owner, chmod would not stop root)."""
    mounts = []

    def make(source: Path) -> Path:
        where = tmp_path / f"ro-{len(mounts)}"
        where.mkdir()
        if subprocess.run(["mount", "--bind", str(source), str(where)], capture_output=True).returncode != 0:
            pytest.skip("a read-only bind mount needs root (CAP_SYS_ADMIN)")
        mounts.append(where)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(where)], check=True, capture_output=True)
        return where

    yield make
    for m in mounts:
        subprocess.run(["umount", "-l", str(m)], check=False)


def test_a_read_only_store_is_reported_on(tmp_path, study_dir, read_only):
    store, victim = _copy_store(study_dir, tmp_path)
    _damage(victim, "truncated")
    ro = read_only(store)
    o = run_in_process(["report", ro, "--html", tmp_path / "r.html"], tmp_path)
    TALLY.record("read-only store", traceback=o.traceback)
    assert o.code == 0 and not o.traceback, o.err
    assert "3 stored points" in (tmp_path / "r.html").read_text()
    # and the page's default place, in the read-only directory, is refused up front
    o = run_in_process(["report", ro], tmp_path)
    TALLY.record("read-only store", traceback=o.traceback)
    one_line_refusal(o, "--html FILE")


def test_damaged_report_inputs_are_skipped_with_a_warning_each(tmp_path, study_dir):
    d = tmp_path / "out"
    shutil.copytree(study_dir, d)
    good = json.loads((d / "sweep.study.json").read_text())
    (d / "cut.study.json").write_text(json.dumps(good)[:200])  # cut short
    (d / "bytes.study.json").write_bytes(b"\xff\xfe\x00garbage")  # not UTF-8
    (d / "list.study.json").write_text("[1, 2]")  # JSON, not an object
    (d / "fast08-fig4.checks.json").write_text('[{"claim": "x", "pass": true}]')
    (d / "fast08-fig4.csv").write_bytes(b'a,b\n1,"2\n' + bytes(range(256)))  # an unclosed quote, then bytes
    os.mkfifo(d / "fifo.checks.json")  # would block a reader forever
    (d / "store" / "runs" / "bad.json").write_text("{not json")
    o = run_in_process(["report", d], tmp_path)
    TALLY.record("damaged file", traceback=o.traceback)
    assert o.code == 0 and not o.traceback, o.err
    warned = [line for line in o.lines if line.startswith("incastlab: warning:")]
    for name in ("cut.study.json", "bytes.study.json", "list.study.json", "fast08-fig4.checks.json",
                 "fifo.checks.json", "bad.json"):
        assert sum(name in w for w in warned) == 1, (name, o.err)
    assert len(warned) == 6, o.err
    assert "sweep" in (d / "report.html").read_text()  # the good sweep is on the page


# --- signals and kills ----------------------------------------------------------------------

def _wait_for(condition, p, limit: float = 60.0, what: str = "") -> None:
    end = time.monotonic() + limit
    while not condition():
        assert p.poll() is None, f"ended before {what}: {p.communicate()}"
        assert time.monotonic() < end, f"no {what} within {limit} s"
        time.sleep(0.05)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _signalled(p, sig: int, tmp_path: Path, before, allowed=frozenset(), within: float = 10.0):
    """Send ``sig`` to the command alone (not its group: a shell's kill), then judge it."""
    p.send_signal(sig)
    try:
        o = finish(p, timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        o = finish(p)
    orphans = orphans_after(p.pid, within)
    left = partial_outputs(tmp_path, before, allowed)
    TALLY.record(f"signal {signal.Signals(sig).name}", traceback=o.traceback, orphans=len(orphans),
                 partial=len(left))
    assert o.code == 128 + sig and not o.traceback, (o.code, o.err)
    assert f"interrupted ({signal.Signals(sig).name})" in o.err, o.err
    assert orphans == [] and left == [], (orphans, left)
    return o


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_stops_a_long_point_like_ctrl_c(sig, tmp_path):
    before = snapshot(tmp_path)
    p = start(["simulate", "--servers", "100000", "--blocks", "1", "--csv", tmp_path / "a.csv"], tmp_path)
    # inside the core by then: parsing and building take about a CPU second here
    _wait_for(lambda: _cpu_seconds(p.pid) > 2.0, p, what="a running point")
    _signalled(p, sig, tmp_path, before)


def _maps(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def test_ctrl_c_while_the_command_imports_is_the_one_line(tmp_path):
    """The CLI's handlers are set before the second of imports a command needs (pydantic,
    pandas, the core: 1-5 s on a loaded machine), so Ctrl-C then is not a traceback from
    inside pydantic. pydantic_core's library in the process's maps: those imports run."""
    before = snapshot(tmp_path)
    p = start(["simulate", "--servers", "1,2,4,8,16,32,64", "--duration", "20s", "--csv", tmp_path / "a.csv"],
              tmp_path)
    _wait_for(lambda: "pydantic_core" in _maps(p.pid), p, what="the command's imports", limit=30)
    _signalled(p, signal.SIGINT, tmp_path, before)


def test_the_cli_module_imports_nothing_heavy_before_its_handlers_are_set():
    """What runs before ``main`` sets the handlers: the package and the CLI module alone."""
    heavy = ["pydantic", "pandas", "numpy", "pyarrow", "incastlab.scenario", "incastlab._native"]
    code = f"import sys, incastlab.cli.main; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_a_stopped_capture_run_leaves_no_file_of_its_finished_points(tmp_path):
    before = snapshot(tmp_path)
    p = start(["simulate", "--servers", "1,2,100,200", "--duration", "60s", "--capture-limit", "300000",
               "--jobs", "2", "--pcap", tmp_path / "x.pcap", "--trace", tmp_path / "t.csv"], tmp_path)

    def a_point_is_written() -> bool:
        return any(f.name.startswith(".incastlab-") and f.stat().st_size > 0 for f in tmp_path.iterdir())

    _wait_for(a_point_is_written, p, what="a finished point's files")
    o = _signalled(p, signal.SIGTERM, tmp_path, before)
    assert "nothing written" in o.err, o.err


def test_kill_9_of_a_capture_run_leaves_temporary_files_the_next_write_removes(tmp_path):
    p = start(["simulate", "--servers", "1,2,100,200", "--duration", "60s", "--capture-limit", "300000",
               "--jobs", "2", "--pcap", tmp_path / "x.pcap", "--trace", tmp_path / "t.csv"], tmp_path)

    def a_point_is_written() -> bool:
        return any(f.name.startswith(".incastlab-") and f.stat().st_size > 0 for f in tmp_path.iterdir())

    _wait_for(a_point_is_written, p, what="a finished point's files")
    os.kill(p.pid, signal.SIGKILL)  # nothing of ours runs: the staged files stay
    p.wait()
    assert [f for f in tmp_path.iterdir() if ".incastlab-" in f.name]
    o = run_in_process(["simulate", "--servers", "1", "--duration", "10ms", "--csv", tmp_path / "a.csv"], tmp_path)
    left = [f.name for f in tmp_path.iterdir() if f.name != "a.csv"]
    TALLY.record("kill -9", traceback=o.traceback, orphans=len(orphans_after(p.pid, 2.0)), partial=len(left))
    assert o.code == 0 and "removed" in o.err and "temporary file" in o.err, o.err
    assert left == [], left


def test_a_killed_store_writers_temporary_file_is_removed_once_it_is_old(tmp_path, study_dir):
    store, _ = _copy_store(study_dir, tmp_path)
    dead = 2**22 + 12345  # above the largest pid_max Linux allows (2^22): never a running pid
    old = store / "data" / f".part-20260101T000000-{dead}-0123456789ab.parquet.tmp"
    young = store / "data" / f".part-20260101T000001-{dead}-0123456789ac.parquet.tmp"
    for f in (old, young):
        f.write_bytes(b"half a batch")
    os.utime(old, (time.time() - 7200, time.time() - 7200))  # older than the store's hour
    o = run_in_process(["sweep", "--grid", "servers=16", "duration=10ms", "--executor", "threads", "--out",
                        tmp_path / "out", "--store", store], tmp_path)
    TALLY.record("kill -9", traceback=o.traceback, partial=int(old.exists()))
    assert o.code == 0, o.err
    assert not old.exists(), "a killed writer's temporary file is removed"
    assert young.exists(), "one that may be another host's write in progress is left alone"


def _sweep(tmp_path: Path, *extra: str):
    return start(["sweep", "--grid", "servers=64", "jitter=3us", "seed=1..400+1", "duration=20s", "--jobs", "2",
                  "--executor", "processes", "--out", tmp_path / "out", *extra], tmp_path)


def _journal(tmp_path: Path) -> dict:
    from incastlab.study.store import ResultStore

    (j,) = ResultStore(tmp_path / "out" / "store").journals()
    return j


def _stored(tmp_path: Path) -> bool:
    return any((tmp_path / "out" / "store" / "data").glob("part-*.parquet"))


def test_sigterm_stops_a_sweep_and_its_worker_processes(tmp_path):
    p = _sweep(tmp_path)
    _wait_for(lambda: _stored(tmp_path), p, what="a stored batch")
    assert len(group_processes(p.pid)) >= 4  # the sweep, the forkserver, two workers (and a resource tracker)
    o = _signalled(p, signal.SIGTERM, tmp_path, snapshot(tmp_path), allowed={"out"})
    assert "the same command simulates only the rest" in o.err
    assert _journal(tmp_path)["status"] == "interrupted (SIGTERM)"
    assert not (tmp_path / "out" / "sweep.csv").exists()


def test_kill_9_of_a_sweep_leaves_no_worker_and_its_journal_reads_as_died(tmp_path):
    p = _sweep(tmp_path)
    _wait_for(lambda: _stored(tmp_path), p, what="a stored batch")
    workers = [pid for pid in group_processes(p.pid) if pid != p.pid]
    assert workers
    os.kill(p.pid, signal.SIGKILL)  # the parent alone, as the OOM killer does: no cleanup code runs
    p.wait()
    orphans = orphans_after(p.pid, within=10.0)  # each worker watches its parent's pidfd
    TALLY.record("kill -9", orphans=len(orphans))
    assert orphans == [], f"left running: {orphans}"
    assert _journal(tmp_path)["status"].startswith(f"died (process {p.pid} is gone")


def test_three_signals_stop_a_sweep_at_once_and_still_leave_no_worker(tmp_path):
    p = _sweep(tmp_path)
    _wait_for(lambda: _stored(tmp_path), p, what="a stored batch")
    for _ in range(3):
        p.send_signal(signal.SIGTERM)
    o = finish(p)
    orphans = orphans_after(p.pid)
    TALLY.record("signal SIGTERM x3", traceback=o.traceback, orphans=len(orphans))
    assert o.code == 143 and not o.traceback, o.err
    assert orphans == [], orphans


def test_sighup_stops_a_reproduction_before_it_writes_any_of_its_files(tmp_path):
    before = snapshot(tmp_path)
    p = start(["reproduce", "fast08-fig4", "--out", tmp_path / "rep", "--jobs", "1"], tmp_path)
    _wait_for(lambda: _cpu_seconds(p.pid) > 2.5, p, what="a running reproduction")
    _signalled(p, signal.SIGHUP, tmp_path, before, allowed={"rep"})  # its store keeps the points it got
    assert not list((tmp_path / "rep").glob("fast08-fig4.*"))


def test_ctrl_c_ends_a_monitor_with_its_recording_and_summary(tmp_path):
    from incastlab.monitor import record

    p = start(["monitor", "--iface", "lo", "--source", "sysfs", "--duration", "60s", "--record",
               tmp_path / "m.parquet"], tmp_path)
    _wait_for(lambda: p.stdout is not None and _cpu_seconds(p.pid) > 2.5, p, what="a watching monitor")
    p.send_signal(signal.SIGINT)
    o = finish(p)
    orphans = orphans_after(p.pid, 2.0)
    temps = [f.name for f in tmp_path.iterdir() if f.name.startswith(".incastlab-")]
    TALLY.record("signal SIGINT", traceback=o.traceback, orphans=len(orphans), partial=len(temps))
    assert o.code == 130 and not o.traceback, o.err
    assert "summary:" in o.out and "(stopped by SIGINT)" in o.out, o.out
    assert len(record.read(str(tmp_path / "m.parquet"))) > 0, "the recording is kept"
    assert orphans == [] and temps == []


# --- a server that accepts and never answers ------------------------------------------------

def test_read_gives_up_on_a_silent_server_naming_it(tmp_path):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # the kernel completes the handshake; nobody ever reads
    addr = f"127.0.0.1:{silent.getsockname()[1]}"
    try:
        started = time.monotonic()
        o = finish(start(["read", "--servers", addr, "--blocks", "2", "--timeout", "1s"], tmp_path), timeout=60)
        took = time.monotonic() - started
    finally:
        silent.close()
    TALLY.record("silent server", traceback=o.traceback)
    one_line_refusal(o, addr, "sent nothing", "--timeout 1s")
    assert took < 30, took  # 1 s of silence plus the interpreter's start, not the 120 s block timeout
