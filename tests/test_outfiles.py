"""incastlab.outfiles and incastlab.interrupts on their own (issue 25): files of one command
appear together or not at all, a stop signal waits for the renames that put them in place,
and a target is never replaced by what is not a regular file. tests/test_faults.py drives
the same through every command."""

from __future__ import annotations

import os
import signal
import stat

import pytest

from incastlab import outfiles
from incastlab.errors import UsageError
from incastlab.interrupts import Interrupted, deferred, handle_signals


def _listing(d):
    return sorted(p.name for p in d.iterdir())


def test_files_written_together_appear_only_when_all_are_written(tmp_path):
    def fails(tmp):
        raise OSError(28, "No space left on device")

    with pytest.raises(outfiles.OutputError, match="cannot write .*b.txt: No space left on device"):
        with outfiles.together():
            outfiles.write_text(tmp_path / "a.txt", "first")
            assert _listing(tmp_path) and not (tmp_path / "a.txt").exists()  # staged under a temporary name
            outfiles.write_atomically(tmp_path / "b.txt", fails)
    assert _listing(tmp_path) == [], "the file that was written is removed with the one that failed"

    with outfiles.together():
        outfiles.write_text(tmp_path / "a.txt", "first")
        outfiles.write_text(tmp_path / "b.txt", "second")
    assert _listing(tmp_path) == ["a.txt", "b.txt"]


def test_an_exception_in_the_block_removes_the_staged_files(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with outfiles.together():
            outfiles.write_text(tmp_path / "a.txt", "first")
            raise KeyboardInterrupt
    assert _listing(tmp_path) == []


def test_a_stop_signal_during_the_renames_waits_for_them(tmp_path):
    # the handler raises in the main thread; inside deferred() it notes the signal and the
    # block goes on, so every rename of a commit is made before the command stops
    with handle_signals():
        with pytest.raises(Interrupted) as e:
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):  # the handler runs between bytecodes: give it many
                    pass
                (tmp_path / "done").write_text("the block ran to its end")
        assert e.value.signum == signal.SIGTERM and e.value.exit_status == 143
    assert (tmp_path / "done").exists()


def test_a_link_is_written_through_and_the_file_keeps_its_mode(tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    outfiles.write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new" and stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.parametrize("make", ["fifo", "directory"])
def test_what_is_not_a_regular_file_is_refused_and_left_as_it_was(make, tmp_path):
    target = tmp_path / "out.csv"
    os.mkfifo(target) if make == "fifo" else target.mkdir()
    before = target.lstat()
    with pytest.raises(UsageError) as e:
        outfiles.write_text(target, "x", "--csv")
    assert e.value.param == "--csv"
    after = target.lstat()
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))
    assert _listing(tmp_path) == ["out.csv"]


def test_a_target_that_turned_into_a_directory_before_the_renames_stops_them_all(tmp_path):
    with pytest.raises(UsageError):
        with outfiles.together():
            outfiles.write_text(tmp_path / "a.txt", "first")
            outfiles.write_text(tmp_path / "b.txt", "second")
            (tmp_path / "b.txt").mkdir()  # someone else's doing, after the check
    assert _listing(tmp_path) == ["b.txt"] and (tmp_path / "b.txt").is_dir()


def test_two_outputs_on_one_file_are_refused(tmp_path):
    (tmp_path / "x.csv").write_text("")
    (tmp_path / "y.csv").symlink_to(tmp_path / "x.csv")
    with pytest.raises(UsageError) as e:
        outfiles.check_distinct([(str(tmp_path / "x.csv"), "--csv"), (str(tmp_path / "y.csv"), "--events")])
    assert e.value.param == "--events" and "--csv" in e.value.allowed
