"""Parameter studies: a grid of scenarios, run where the user says, kept in a result store.

- ``grid``: the sweep grammar (``servers=1,2,4..64 buffer=32KiB,64KiB``) and study files (TOML).
- ``store``: the Parquet result store, keyed by the complete scenario and the core that ran it.
- ``executors``: local threads, local processes, or a Dask cluster; all run ``worker.run_batch``.
- ``runner``: takes the points the store lacks, batches them, runs them, stores each batch.

``incastlab.sweep(...)`` and ``incastlab sweep`` are the fronts (docs/sweep.md).
"""
