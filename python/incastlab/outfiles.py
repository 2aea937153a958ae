"""Output files: checked before any work starts, written whole, and put in place together.

What a path may be (docs/faults.md, "Output files"): a new path or a regular file. A
symbolic link is written through: the file it points to gets the new contents and the
link stays a link. A device (``/dev/null``), a FIFO, a socket or a directory, or a link to
one, is refused: renaming a file over the path, which is how a file appears whole, would
replace the device itself (as root, the normal case for the testbed and the monitor).

How a file is written: under a temporary name in its target's directory, flushed to the
disk, then renamed over the target (rename is atomic within a file system), with the
mode and owner the target had. A failure (a full disk, an I/O error, a signal) removes
the temporary file and leaves the target as it was, and is one line (``OutputError``).

Together: inside ``together()``, each file is written under its temporary name and the
renames wait until the block ends without an error; then all of them are made, with stop
signals held back (``interrupts.deferred``). A command's outputs appear together or none
do. Writers that write a file themselves (the native pcap writer) take a temporary name
from ``Outputs.reserve``.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import platform
import re
import stat
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from .errors import EnvironmentProblem, UsageError

if TYPE_CHECKING:
    import pandas as pd

#: Prefix of every temporary file: hidden, and recognisable in a directory listing.
TEMP_PREFIX = ".incastlab-"


class OutputError(EnvironmentProblem):
    """An output could not be written (a full disk, an unwritable target): one line."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def resolve_target(path: str | os.PathLike, param: str) -> Path:
    """The file that writing ``path`` replaces: ``path`` itself, or, for a symbolic link
    (or a path through linked directories), the file it points to. UsageError for what is
    neither a regular file nor a new path."""
    text = os.fspath(path)
    if str(text).strip() == "" or "\0" in str(text):
        raise UsageError(param, str(text), "a file path")
    p = Path(text)
    try:
        real = Path(os.path.realpath(p, strict=False))
        st = os.stat(real)
    except FileNotFoundError:
        return real  # a new path (or a link to one): created where the link points
    except OSError as e:  # a loop of links, a name too long, a directory we may not search
        raise UsageError(param, str(text), f"a path this system can write ({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(param, str(text), "a file name, not a directory")
    if not stat.S_ISREG(st.st_mode):
        via = f" (it links to {real}, {_kind(st.st_mode)})" if os.path.islink(p) else f" ({_kind(st.st_mode)})"
        raise UsageError(param, str(text), "a regular file or a new path, never a device, FIFO or socket" + via)
    return real


def check_writable(path: str | os.PathLike, param: str, suffixes: tuple[str, ...] | None = None) -> Path:
    """Refuse a path we could not write (wrong extension, not a regular file or a new
    path, missing or read-only directory) before any work starts; returns ``path``."""
    if str(path).strip() == "":
        raise UsageError(param, str(path), "a file path")
    p = Path(path)
    if suffixes is not None and p.suffix.lower().lstrip(".") not in suffixes:
        raise UsageError(param, str(path), "a file name ending in " + ", ".join("." + s for s in suffixes))
    target = resolve_target(p, param)
    parent = target.parent
    if not parent.is_dir():
        where = "" if target == p.absolute() else f", where {p} points"
        raise UsageError(param, str(path), f"a path in an existing directory ({parent} does not exist{where})")
    if not os.access(parent, os.W_OK):
        raise UsageError(param, str(path), f"a path in a writable directory ({parent} is not writable)")
    return p


def check_directory(path: str | os.PathLike, param: str) -> Path:
    """Refuse an output directory that is a file or could not be created (its nearest
    existing ancestor is not a writable directory); creates nothing (``directory`` does,
    when the files are written, so a refused or stopped run leaves no directory)."""
    p = Path(path)
    if str(path).strip() == "" or "\0" in str(path):
        raise UsageError(param, str(path), "a directory path")
    probe = p
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():
            raise UsageError(param, str(path), f"a directory path ({probe} is a link to nothing)")
        probe = probe.parent
    if not probe.is_dir():
        what = "this is a file" if probe == p else f"{probe} is not a directory"
        raise UsageError(param, str(path), f"a directory ({what})")
    if not os.access(probe, os.W_OK):
        raise UsageError(param, str(path), f"a writable directory ({probe} is not writable)")
    return p


@contextlib.contextmanager
def directory(path: str | os.PathLike, param: str) -> Iterator[Path]:
    """Create ``path`` (and its parents) if missing, for the block's files; on an error
    in the block, remove again the directories created here if they stayed empty."""
    p = Path(path)
    missing = []
    probe = p
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(param, str(path), f"a directory that can be created ({e.strerror or e})") from None
    try:
        yield p
    except BaseException:
        for d in missing:  # deepest first
            with contextlib.suppress(OSError):
                d.rmdir()
        raise


@contextlib.contextmanager
def pruned_on_failure(path: str | os.PathLike) -> Iterator[None]:
    """If the block fails (an error, Ctrl-C) and ``path`` did not exist before it, remove
    the directories under it that hold no file, and ``path`` itself if it is then empty: a
    run refused by a full disk leaves no empty output or store directory. Files stay."""
    p = Path(path)
    existed = p.exists()
    try:
        yield
    except BaseException:
        if not existed and p.is_dir() and not p.is_symlink():
            for d in sorted((x for x in p.rglob("*") if x.is_dir() and not x.is_symlink()),
                            key=lambda x: len(x.parts), reverse=True) + [p]:
                with contextlib.suppress(OSError):
                    d.rmdir()  # only succeeds when empty
        raise


def check_distinct(outputs: list[tuple[str, str]]) -> None:
    """Refuse two outputs of one command that would land on one file (``--csv x.csv
    --events x.csv``, or two links to one file): the second would replace the first."""
    seen: dict[Path, tuple[str, str]] = {}
    for path, param in outputs:
        target = resolve_target(path, param)
        if target in seen:
            other, other_param = seen[target]
            raise UsageError(param, path, f"a file other than {other_param}'s ({other})")
        seen[target] = (path, param)


def cannot_write(path: str | os.PathLike, e: BaseException) -> OutputError:
    """The one line for a file that could not be written (a full disk, an I/O error)."""
    errno_ = getattr(e, "errno", None)  # pyarrow's OSError sets errno, not its own strerror
    why = (os.strerror(errno_) if errno_ else getattr(e, "strerror", None)) or " ".join(str(e).split()) \
        or type(e).__name__
    return OutputError(f"cannot write {os.fspath(path)}: {why}; nothing was written")


def temp_beside(target: Path, suffix: str) -> Path:
    """A new empty file in ``target``'s directory, named ``.incastlab-HOST-PID-XXXXXXXX``
    plus ``suffix`` (HOST: 6 hex digits of this host's name): hidden, and, with the host
    and the pid in its name, removable by a later run on this host once this process is
    gone (``remove_stale``), never by a run on another host sharing the directory."""
    remove_stale(target.parent)
    fd, name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{HOST_TAG}-{os.getpid()}-", suffix=suffix, dir=target.parent)
    os.close(fd)
    return Path(name)


#: This host's tag in temporary names (a directory on NFS may be shared by several hosts).
HOST_TAG = hashlib.sha1(platform.node().encode()).hexdigest()[:6]
# ours, .incastlab-HOST-PID-..., and the native writer's temporary file beside one of ours,
# ..incastlab-HOST-PID-....EXT.incastlab-PID-N.tmp (crates/simio/src/atomic.rs)
_OURS = re.compile(r"^\.\.?incastlab-([0-9a-f]{6})-(\d+)-")
# the native writer's beside a path given from Python directly (no host in the name)
_NATIVE = re.compile(r"^\..+\.incastlab-(\d+)-\d+\.tmp$")
#: Without a host in its name, a temporary file is only removed once this old.
STALE_ELSEWHERE_S = 24 * 3600
_SWEPT: set[Path] = set()


def _stale(path: Path) -> bool:
    m = _OURS.match(path.name)
    if m:
        return m.group(1) == HOST_TAG and not pid_running(int(m.group(2)))
    m = _NATIVE.match(path.name)
    if m:
        return not pid_running(int(m.group(1))) and time.time() - path.stat().st_mtime > STALE_ELSEWHERE_S
    return False


def remove_stale(directory: Path) -> None:
    """Remove temporary files that a killed incastlab process left in ``directory`` (its
    pid no longer runs on this host), once per directory per process, with a one-line
    warning: a ``kill -9`` of a run writing a capture can leave hundreds of MB of hidden files."""
    key = Path(os.path.abspath(directory))
    if key in _SWEPT:
        return
    _SWEPT.add(key)
    gone, size = [], 0
    try:
        names = os.listdir(key)
    except OSError:
        return
    for name in names:
        path = key / name
        try:
            if not name.startswith(".") or path.is_symlink() or not path.is_file() or not _stale(path):
                continue
            n = path.stat().st_size
            path.unlink()
        except OSError:
            continue
        gone.append(name)
        size += n
    if gone:
        warnings.warn(f"removed {len(gone)} temporary file{'s' if len(gone) > 1 else ''} ({size / 1e6:.1f} MB) "
                      f"that a stopped incastlab run left in {directory}", stacklevel=3)


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists (this one counts; another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    return True


def _settle(tmp: Path, target: Path) -> None:
    """Flush ``tmp`` to the disk (a full disk some file systems report only now) and give
    it the target's mode and owner, or 0644 for a new file."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    try:
        st = os.stat(target)
    except FileNotFoundError:
        os.chmod(tmp, 0o644)
        return
    os.chmod(tmp, stat.S_IMODE(st.st_mode))
    if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0):
        with contextlib.suppress(OSError):
            os.chown(tmp, st.st_uid, st.st_gid)


@dataclass
class _Staged:
    shown: str  # the path as the user gave it
    param: str
    target: Path  # where it goes (a link's file)
    tmp: Path
    settled: bool = False  # flushed, mode and owner set (else at commit: a reserved name)


class Outputs:
    """The files of one command: staged under temporary names, then renamed together
    (``commit``) or removed (``discard``). Use through ``together()``."""

    def __init__(self) -> None:
        self.staged: list[_Staged] = []

    def reserve(self, path: str | os.PathLike, param: str) -> str:
        """A temporary name beside ``path``'s target (same extension) for a writer that
        writes the file itself; moved into place at ``commit``."""
        target = resolve_target(path, param)
        try:
            tmp = temp_beside(target, Path(os.fspath(path)).suffix)
        except OSError as e:
            raise cannot_write(path, e) from None
        self.staged.append(_Staged(os.fspath(path), param, target, tmp))
        return str(tmp)

    def write(self, path: str | os.PathLike, write: Callable[[str], None], param: str | None = None) -> Path:
        """Stage ``write(tmp_name)``'s file for ``path``."""
        tmp = Path(self.reserve(path, param or os.fspath(path)))
        staged = self.staged[-1]
        try:
            write(str(tmp))
            if tmp.stat().st_size == 0 and staged.target.suffix.lower() in _NEVER_EMPTY:
                raise OSError(0, "the writer produced an empty file")
            _settle(tmp, staged.target)
        except OSError as e:
            raise cannot_write(path, e) from None
        staged.settled = True
        return Path(os.fspath(path))

    def commit(self) -> list[str]:
        """Rename every staged file over its target; returns the paths as given. Stop
        signals wait until the renames are done."""
        from .interrupts import deferred

        with deferred():
            try:
                for s in self.staged:  # a target replaced meanwhile by a device or a directory
                    resolve_target(s.shown, s.param)
            except UsageError:
                self.discard()
                raise
            done: list[str] = []
            for s in self.staged:
                try:
                    if not s.settled:  # a reserved name, filled by its own writer
                        if s.tmp.stat().st_size == 0 and s.target.suffix.lower() in _NEVER_EMPTY:
                            raise OSError(0, "its writer left it empty")
                        _settle(s.tmp, s.target)
                    os.replace(s.tmp, s.target)
                except OSError as e:
                    self.discard()
                    kept = f" ({', '.join(done)} already in place)" if done else ""
                    raise OutputError(f"cannot put {s.shown} in place: {e.strerror or e}{kept}") from None
                done.append(s.shown)
            self.staged.clear()
        return done

    def as_given(self, text: str) -> str:
        """``text`` with each staged file's temporary name replaced by its path as given."""
        for s in self.staged:
            text = text.replace(str(s.tmp), s.shown).replace(s.tmp.name, s.shown)
        return text

    def discard(self) -> int:
        """Remove every staged file; returns how many there were."""
        n = len(self.staged)
        for s in self.staged:
            with contextlib.suppress(OSError):
                s.tmp.unlink()
        self.staged.clear()
        return n


#: Formats that are never empty when written whole: an empty one is a failed writer
#: (a browser that could not write its screenshot exits 0 with 0 bytes).
_NEVER_EMPTY = {".png", ".pdf", ".svg", ".parquet", ".pcap", ".html", ".htm", ".json"}

_ACTIVE: contextvars.ContextVar[Outputs | None] = contextvars.ContextVar("incastlab_outputs", default=None)


@contextlib.contextmanager
def together() -> Iterator[Outputs]:
    """Every file ``write_atomically`` writes in this thread within the block is staged,
    and all of them are put in place when the block ends without an error, else removed."""
    from .interrupts import on_abrupt_exit

    outputs = Outputs()
    token = _ACTIVE.set(outputs)
    forget = on_abrupt_exit(outputs.discard)
    try:
        yield outputs
    except BaseException as e:
        if isinstance(e, EnvironmentProblem) and e.args:  # name the files as the user did, not by
            e.args = (outputs.as_given(str(e.args[0])),)   # their temporary names
        outputs.discard()
        raise
    else:
        outputs.commit()
    finally:
        forget()
        _ACTIVE.reset(token)


def write_atomically(path: str | os.PathLike, write: Callable[[str], None], param: str | None = None) -> Path:
    """Call ``write(tmp_name)``, then rename the file over ``path``'s target, so readers
    never see half a file; inside ``together()`` the rename waits for the others."""
    group = _ACTIVE.get()
    if group is not None:
        return group.write(path, write, param)
    alone = Outputs()
    try:
        alone.write(path, write, param)
        alone.commit()
    except BaseException:
        alone.discard()
        raise
    return Path(os.fspath(path))


def write_csv(df: pd.DataFrame, path: str | os.PathLike, param: str | None = None) -> Path:
    """``df`` as CSV (no index), written atomically."""
    return write_atomically(path, lambda tmp: df.to_csv(tmp, index=False), param)


def write_text(path: str | os.PathLike, text: str, param: str | None = None) -> Path:
    """``text`` (UTF-8), written atomically."""
    return write_atomically(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), param)


def leftovers(directory: str | os.PathLike) -> list[Path]:
    """Temporary files of this module in ``directory`` (none unless a process was killed)."""
    return sorted(Path(directory).glob(TEMP_PREFIX + "*"))
