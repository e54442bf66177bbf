"""Real answers of a real model and server, recorded by `bench.llm_extraction --record` (Qwen2.5-
Coder-1.5B-Instruct Q4_K_M on llama-cpp-python, the project's own conversations of
bench/data/llm_extraction/), so the tests check parsing and repair against what a model actually
wrote, not only against the stub's answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_engine.models.domain import Turn
from memory_engine.ports import ExtractionContext

HERE = Path(__file__).parent


def _load(name: str) -> Any:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


# What llama-cpp-python's server answers to `response_format: {"type": "json_schema", ...}`.
LLAMA_CPP_JSON_SCHEMA_500: dict[str, Any] = _load("llama_cpp_json_schema_500.json")


@dataclass(frozen=True)
class Recording:
    """One batch as the benchmark ran it: turns, context, and every response the server sent."""

    name: str
    language: str
    turns: list[Turn]
    context: ExtractionContext
    exchanges: list[dict[str, Any]]

    def answers(self) -> list[dict[str, Any]]:
        """The 200 responses (chat completions), in order."""
        return [exchange["body"] for exchange in self.exchanges if exchange["status"] == 200]


def recording(name: str) -> Recording:
    raw = _load(f"{name}.json")
    turns = [
        Turn(
            tenant="t",
            session_uuid=raw["batch"],
            dialog_uuid=f"d{seq}",
            seq=seq,
            query=turn["query"],
            answer=turn["answer"],
            user_name=turn["user_name"],
            npc_id=None,  # the benchmark's turns, like the API's without `npc_id`
            timestamp=datetime.fromisoformat(turn["timestamp"]),
            created_at=datetime.fromisoformat(turn["timestamp"]),
        )
        for seq, turn in enumerate(raw["turns"])
    ]
    context = ExtractionContext(
        user_name=raw["user_name"], language=raw["language"], known_characters=raw["known_characters"]
    )
    return Recording(name, raw["language"], turns, context, raw["exchanges"])


def recordings() -> list[str]:
    """The recorded batches' names, relative to this folder without `.json` (a subfolder holds a
    run in another structured-output mode); the single error bodies are not batches."""
    return sorted(
        str(path.relative_to(HERE).with_suffix(""))
        for path in HERE.rglob("*.json")
        if not path.stem.startswith("llama_cpp_")
    )
