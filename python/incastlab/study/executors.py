"""Where batches run: local threads, local processes, or a Dask cluster.

Every executor runs ``worker.run_batch`` and offers the same three calls: ``submit``
(a batch, tagged), ``wait`` (the batches finished within a timeout, as ``(tag, result)``)
and ``close`` (``cancel=True`` stops running work: Ctrl-C). The runner keeps
``capacity`` batches in flight, so the points lost to a kill are the ones running.

- ``threads``: the core releases the GIL, so threads of one process run points on all
  cores; Ctrl-C stops running points within a few thousand events (``_native.cancel``).
- ``processes`` (the default): one process per worker (forkserver); Ctrl-C ends them,
  and a worker ends by itself when the sweep's process dies (``worker.watch_parent``).
- ``dask``: Dask distributed, on a running scheduler (``tcp://host:8786``) or a
  LocalCluster started here; batches are larger there, since every task costs a few
  milliseconds of scheduling.
"""

from __future__ import annotations

import concurrent.futures as cf  # cheap: its executors' modules load when first used
import logging
import os
from dataclasses import dataclass
from typing import Any, Hashable

from ..errors import EnvironmentProblem, UsageError
from . import worker

KINDS = ("processes", "threads", "dask")
#: The executor when none is asked for, from Python (docs/sweep.md, "Execution": threads
#: and processes measured alike on 2 cores, and threads start at once and need no
#: ``if __name__ == "__main__"`` guard in the caller's script, which worker processes
#: started by forkserver do). ``incastlab sweep`` uses processes (CLI_EXECUTOR).
DEFAULT_EXECUTOR = "threads"
CLI_EXECUTOR = "processes"


@dataclass
class ExecutorInfo:
    """What ran the points, for the summary and the run journal."""

    kind: str
    workers: int
    where: str


class _PoolExecutor:
    """A concurrent.futures pool (threads or processes)."""

    def __init__(self, pool: cf.Executor, info: ExecutorInfo):
        self.pool = pool
        self.info = info
        self.capacity = info.workers  # one batch per worker: only running points are in flight
        self._futures: dict[cf.Future, Hashable] = {}

    def submit(self, tag: Hashable, tasks: list[tuple[str, str]], core: tuple[str, str]) -> None:
        self._futures[self.pool.submit(worker.run_batch, tasks, core)] = tag

    def wait(self, timeout: float) -> list[tuple[Hashable, dict]]:
        if not self._futures:
            return []
        done, _ = cf.wait(self._futures, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return [(self._futures.pop(f), f.result()) for f in done]

    def close(self, cancel: bool = False) -> None:
        if cancel:
            self._stop_running()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _stop_running(self) -> None:
        pass


class _ThreadExecutor(_PoolExecutor):
    def __init__(self, workers: int):
        super().__init__(cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="incastlab-sweep"),
                         ExecutorInfo("threads", workers, "this process"))

    def _stop_running(self) -> None:
        from .. import _native

        _native.cancel()  # running points stop within a few thousand events and raise KeyboardInterrupt

    def close(self, cancel: bool = False) -> None:
        from .. import _native

        try:
            super().close(cancel)
        finally:
            _native.clear_cancel()


class _ProcessExecutor(_PoolExecutor):
    def __init__(self, workers: int):
        # forkserver: a fresh, single-threaded parent for the workers (fork would copy this
        # process's threads and locks, pyarrow's among them)
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=worker.start_in_pool,
                                      initargs=(os.getpid(),))
        super().__init__(pool, ExecutorInfo("processes", workers, "local processes"))
        # start every worker now (the pool starts them one per submit), so the startup is
        # paid and measured here, not inside the first batches
        try:
            for f in [pool.submit(worker.warm_up, 0.2) for _ in range(workers)]:
                f.result()
        except BaseException:  # Ctrl-C while they start: nobody else holds the pool to close it
            self.close(cancel=True)
            raise

    def _stop_running(self) -> None:
        # concurrent.futures cannot stop a running task before Python 3.14
        # (ProcessPoolExecutor.terminate_workers); its worker processes are in _processes.
        # SIGKILL: workers ignore the stop signals (worker.start_in_pool)
        for p in list(getattr(self.pool, "_processes", {}).values()):
            p.kill()


class _DaskExecutor:
    """Batches as Dask futures on a distributed Client."""

    def __init__(self, scheduler: str | None, local_workers: int | None):
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as e:  # pragma: no cover - dask is a dependency
            raise EnvironmentProblem(f"Dask is not installed ({e}); pip install 'dask[distributed]'") from None
        self.cluster = None
        if scheduler is not None:
            try:
                self.client = Client(scheduler, timeout="5s")
            except (OSError, TimeoutError, ValueError, TypeError) as e:  # unreachable, or not an address
                raise UsageError("--scheduler", scheduler, f"the address of a running Dask scheduler ({e})") from None
            where = scheduler
        else:
            # one single-threaded process per worker: the simulator is single-threaded
            # silence_logs: its workers' warnings on a stop (a cancelled task, a busy worker
            # killed after 4 s) are the expected way down, not news for the user
            self.cluster = LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.ERROR)
            self.client = Client(self.cluster)
            where = f"Dask LocalCluster at {self.cluster.scheduler_address}"
        workers = sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        if workers < 1:
            self.close()
            raise EnvironmentProblem(f"the Dask scheduler {where} has no workers")
        self.info = ExecutorInfo("dask", workers, where)
        # two batches per worker thread, so a worker never waits for the scheduler's next task
        self.capacity = 2 * workers
        self._futures: dict[Any, Hashable] = {}

    def submit(self, tag: Hashable, tasks: list[tuple[str, str]], core: tuple[str, str]) -> None:
        self._futures[self.client.submit(worker.run_batch, tasks, core, pure=False)] = tag

    def wait(self, timeout: float) -> list[tuple[Hashable, dict]]:
        from dask.distributed import wait as dask_wait

        if not self._futures:
            return []
        try:
            done, _ = dask_wait(list(self._futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return [(self._futures.pop(f), f.result()) for f in done]

    def close(self, cancel: bool = False) -> None:
        if cancel and self._futures:
            self.client.cancel(list(self._futures))
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def check_executor(kind: str | None, workers: int | None, scheduler: str | None, dask_local: int | None) -> None:
    """Refuse a choice of executor that cannot be made, before anything runs."""
    if scheduler is not None and dask_local is not None:
        raise UsageError("--scheduler", scheduler, "either a scheduler address or --dask-local N, not both")
    if kind is not None and kind not in KINDS:
        raise UsageError("executor", kind, "one of " + ", ".join(KINDS))
    for name, n in (("jobs", workers), ("dask_local", dask_local)):
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise UsageError(name, n, "a whole number of parallel workers, at least 1")


def available_cores() -> int:
    """Cores this process may run on (respects taskset/cgroup affinity)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def make_executor(kind: str = "threads", workers: int | None = None, scheduler: str | None = None,
                  dask_local: int | None = None):
    """An executor: ``kind`` with ``workers`` (default: the available cores); a Dask
    ``scheduler`` address or ``dask_local`` LocalCluster workers choose Dask."""
    check_executor(kind, workers, scheduler, dask_local)
    if scheduler is not None or dask_local is not None:
        return _DaskExecutor(scheduler, dask_local)
    n = available_cores() if workers is None else workers
    if kind == "dask":
        return _DaskExecutor(None, n)
    return _ThreadExecutor(n) if kind == "threads" else _ProcessExecutor(n)
