"""matplotlib figures of gentle's results (the command line draws PNG and SVG with
``--out``; these are the same pictures as Figures to adjust, show or save)."""

from __future__ import annotations

from typing import Any, Optional


def _pandas(t: Any) -> Any:
    return t if hasattr(t, "groupby") else t.to_pandas()


def cdf(result: Any, ax: Any = None) -> Any:
    """The CDF of every variant's ranked times (the scenario's metric, ms): one
    line per variant, as ``cdf.png``."""
    import matplotlib.pyplot as plt
    import numpy as np

    df = _pandas(result.records)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7, 4.5))
    else:
        fig = ax.figure
    ranked = df[df["ranked"]]
    for name in [v["name"] for v in result.summary["variants"]]:
        x = np.sort(ranked.loc[ranked["variant"] == name, "metric_ms"].to_numpy())
        if len(x) == 0:
            continue
        y = np.arange(1, len(x) + 1) / len(x)
        ax.step(x, y, where="post", label=f"{name} (n={len(x)})")
    metric = result.summary.get("metric", "server")
    ax.set_xlabel(f"{metric} time, ms")
    ax.set_ylabel("fraction of exchanges")
    ax.set_title(f"{result.summary['scenario']} — {result.summary['trials']} trials")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return fig


def sweep_lines(result: Any, x: str, y: str, panel: Optional[str] = None) -> Any:
    """``y`` of the summary table against sweep axis ``x``, a line per variant,
    a panel per value of axis ``panel``."""
    import matplotlib.pyplot as plt

    df = _pandas(result.points)
    panels = list(dict.fromkeys(df[panel])) if panel else [None]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7, 3.2 * len(panels)), squeeze=False)
    for ax, value in zip(axes[:, 0], panels):
        part = df if value is None else df[df[panel] == value]
        for variant in dict.fromkeys(part["variant"]):
            rows = part[part["variant"] == variant]
            xs = rows[x]
            try:
                xs = xs.astype(float)
            except (TypeError, ValueError):
                pass
            ax.plot(xs, rows[y], marker="o", label=variant)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        if value is not None:
            ax.set_title(f"{panel} = {value}")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    return fig
