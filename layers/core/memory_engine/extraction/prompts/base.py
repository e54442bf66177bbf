"""The shape every prompt module fills in: plain text templates with a version, no logic."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptSet:
    """Templates for one language. Placeholders are `str.format` fields named in each comment.

    `version` goes into every memory's metadata, so a change of wording is a new module
    (`ko_v2.py`), never an edit of a released one: old memories stay explainable.
    """

    version: str
    language: str
    language_name: str
    # {language_rule} (versions 1-3 also named {user_name} here: kept as released, no longer rendered)
    memory_system: str
    # {known_characters}, {turns}, {user_name} (all quoted by the renderer, `render`)
    memory_user: str
    # shown instead of the list when the thread has no known characters yet
    no_known_characters: str
    # {language}: how text values must be written (the answer follows the memory's language)
    language_rule: str
    # {schema}: appended to the system prompt in JSON mode, where the server cannot enforce it
    schema_hint: str
    # {errors}
    repair: str
    # {errors}: the answer was cut off at the token limit
    truncated: str
    # {language_rule}
    facts_system: str
    # {existing}, {messages}
    facts_user: str
    no_existing_facts: str
    # Versions 5 on: shown in memory_user's {current_facts} when the thread has none yet.
    no_current_facts: str = ""
