"""How often the instruction filter (`memory_engine.extraction.injection.is_instruction`) takes
ordinary dialogue for orders to a model: the turns of LoCoMo dev and of the project's Korean set
(and its English version) it flags, each listed. A flagged turn is still stored; it is only never
made a fact, a summary sentence or a quote, nor shown to a chat model as a memory, so every one
here is a fact the engine would not remember.

    python -m bench.quality.instruction_filter

Matching is exact, so one run is the figure. Writes bench/results/instruction_filter.json.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from bench.common import ROOT, locomo_path, print_table, save

SETS = {
    "LoCoMo dev (English)": None,  # locomo_path()
    "Korean set": ROOT / "bench" / "data" / "korean" / "korean-dialogues.json",
    "Korean set's English": ROOT / "bench" / "data" / "korean" / "english-dialogues.json",
}


def turns(path: Path) -> list[str]:
    """The text of every turn of a LoCoMo-format file."""
    texts: list[str] = []
    for sample in json.loads(path.read_text()):
        for key, session in sample["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                texts += [turn["text"] for turn in session if turn.get("text")]
    return texts


def main() -> None:
    from memory_engine.extraction.injection import is_instruction

    rows: list[dict[str, Any]] = []
    for name, path in SETS.items():
        path = path or locomo_path()
        if path is None or not path.is_file():
            print(f"skipped {name}: no data at {path}")
            continue
        texts = turns(path)
        flagged = [text for text in texts if is_instruction(text)]
        rows.append({"set": name, "turns": len(texts), "flagged": len(flagged), "flagged_turns": flagged})
    print_table(["set", "turns", "flagged"], [[row["set"], row["turns"], row["flagged"]] for row in rows])
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    save("instruction_filter", {"commit": commit.stdout.strip(), "sets": rows})


if __name__ == "__main__":
    main()
