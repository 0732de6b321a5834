"""The example notebook runs end to end (so that it never rots)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


def test_the_tlp_study_notebook_runs(tmp_path: Path):
    import matplotlib

    matplotlib.use("Agg")
    path = EXAMPLES / "tlp-study-fig5.ipynb"
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "checks passed" in text
    # The figure was drawn.
    assert any("image/png" in o.get("data", {}) for o in outputs)
