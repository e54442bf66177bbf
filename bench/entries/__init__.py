"""What each saved result is: its section's title, what its benchmark measures, the command, its table.

`bench.report` writes docs/performance.md in the order of `PARTS` (one module per part: `speed`,
`quality`, `experiments`), and the decided A/B comparisons (`research.RESEARCH`) to
docs/research/comparisons.md; a result file not listed here still gets a section of its own in
docs/performance.md (`bench.render.generic`).
"""

from __future__ import annotations

from bench.entries.entry import Entry, Render
from bench.entries.experiments import EXPERIMENTS
from bench.entries.quality import QUALITY
from bench.entries.research import RESEARCH
from bench.entries.speed import SPEED

__all__ = ["EXPERIMENTS", "PARTS", "QUALITY", "RESEARCH", "SPEED", "Entry", "Render"]

PARTS = (("Speed", SPEED), ("Quality", QUALITY), ("Experiments", EXPERIMENTS))
