"""Recall@k for k = 1…50, the engine against the baselines, one panel per category (matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.quality.locomo.metrics import Summary

_TITLES = {
    "all": "categories 1–4 (headline)",
    "1": "1 multi-hop",
    "2": "2 temporal",
    "3": "3 open-domain",
    "4": "4 single-hop",
    "5": "5 adversarial",
}


def draw(path: Path, systems: dict[str, dict[str, Summary]], shown: Sequence[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    panels = [c for c in ("all", "1", "2", "3", "4", "5") if any(c in systems[name] for name in shown)]
    columns = 3
    rows = (len(panels) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 3.6 * rows), squeeze=False)
    for ax, category in zip(axes.flat, panels, strict=False):
        for name in shown:
            summary = systems[name].get(category)
            if summary is None or not summary.curve:
                continue
            ks = range(1, len(summary.curve) + 1)
            ax.plot(ks, summary.curve, label=name, linewidth=2 if name == shown[0] else 1.2)
        questions = systems[shown[0]][category].questions if category in systems[shown[0]] else 0
        ax.set_title(f"{_TITLES.get(category, category)} (n={questions})", fontsize=10)
        ax.set_xlabel("k (ranked turns)")
        ax.set_ylabel("Recall@k")
        ax.set_xlim(1, 50)
        ax.set_ylim(0, 1)
        ax.axvline(10, color="grey", linewidth=0.6, linestyle=":")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8, loc="lower right")
    figure.suptitle(title, fontsize=11)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
