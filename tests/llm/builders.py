"""Builders for the LLM tests: turns, model answers, prompt text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from memory_engine.models.domain import Turn

MODEL = "test-model"


def turns(*lines: tuple[str, str, str], session: str = "s1") -> list[Turn]:
    """Turns from (speaker, query, answer) triples; answers come from the npc `npc`."""
    at = datetime(2024, 5, 8, 13, 56, tzinfo=UTC)
    return [
        Turn(
            tenant="t",
            session_uuid=session,
            dialog_uuid=f"d{seq}",
            seq=seq,
            query=query,
            answer=answer,
            user_name=speaker,
            npc_id="npc" if answer else None,
            timestamp=at,
            created_at=at,
        )
        for seq, (speaker, query, answer) in enumerate(lines)
    ]


def memory_answer(**fields: Any) -> dict[str, Any]:
    """A valid model answer; keyword arguments replace fields."""
    answer: dict[str, Any] = {
        "summary": "Caroline told Melanie about the support group. Melanie was proud of her.",
        "keywords": ["support group", "LGBTQ", "pride"],
        "key_facts": [
            {"turn": 1, "fact": "Caroline went to an LGBTQ support group."},
            {"turn": 2, "fact": "Melanie is proud of Caroline."},
        ],
        "key_dialogue": [
            {"speaker": "Caroline", "quote": "It was so powerful."},
            {"speaker": "Melanie", "quote": "I'm proud of you!"},
        ],
        "intent": "Caroline wants to share her experience. Melanie wants to support her.",
        "location": "At home, in the afternoon of 8 May 2024.",
        "characters": [{"name": "Caroline", "aliases": ["Caro"]}, {"name": "Melanie", "aliases": ["Mel"]}],
    }
    answer.update(fields)
    return answer


def as_content(answer: dict[str, Any]) -> str:
    return json.dumps(answer, ensure_ascii=False)


def prompt_text(request: dict[str, Any]) -> str:
    return "\n".join(message["content"] for message in request["messages"])
