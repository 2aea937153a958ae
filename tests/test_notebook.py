"""docs/examples/tour.ipynb runs from top to bottom (issue 31): a notebook nobody executes
rots as the API moves, so the suite executes it in a fresh kernel of this environment."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the test extra: pip install -e '.[test]'")
nbclient = pytest.importorskip("nbclient", reason="the test extra: pip install -e '.[test]'")

TOUR = Path(__file__).resolve().parents[1] / "docs" / "examples" / "tour.ipynb"


@pytest.mark.slow
def test_the_tour_notebook_runs_and_shows_what_it_says():
    nb = nbformat.read(TOUR, as_version=4)
    # cwd = the notebook's directory, as in Jupyter: it reads its committed validate run from there
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(TOUR.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "every code cell ran"
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the sweep's plot was drawn"
    text = "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "preset fast08" in text and "Incast collapse" in text and "goodput_mbps_testbed" in text
