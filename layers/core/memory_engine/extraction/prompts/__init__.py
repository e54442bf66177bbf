"""Prompts per language, as data. `prompt_for` picks one; other languages get English instructions
with an order to answer in their own language."""

from __future__ import annotations

from dataclasses import replace

from memory_engine.extraction.prompts import en_v5, ko_v5
from memory_engine.extraction.prompts.base import PromptSet

# The current version of each language's prompt; add a module and point here to release a new one.
PROMPTS: dict[str, PromptSet] = {
    "ko": ko_v5.PROMPT,
    "en": en_v5.PROMPT,
}
DEFAULT_LANGUAGE = "ko"

# Names the model understands better than a bare code; unknown codes are passed through as they are.
LANGUAGE_NAMES: dict[str, str] = {
    "ja": "Japanese",
    "zh": "Chinese",
    "zh-cn": "Simplified Chinese",
    "zh-tw": "Traditional Chinese",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
    "pt": "Portuguese",
    "ru": "Russian",
    "vi": "Vietnamese",
    "th": "Thai",
    "id": "Indonesian",
    "ar": "Arabic",
    "hi": "Hindi",
    "tr": "Turkish",
    "nl": "Dutch",
    "pl": "Polish",
    "uk": "Ukrainian",
}


def language_key(language: str | None) -> str:
    """`ko_KR`, `KO-kr` and ` ko ` all mean Korean; an empty language means the default."""
    key = (language or "").strip().lower().replace("_", "-")
    return key or DEFAULT_LANGUAGE


def prompt_for(language: str | None) -> PromptSet:
    """The prompt set for a language code: its own when there is one (by full code, then by
    primary subtag), otherwise English instructions that ask for answers in that language."""
    key = language_key(language)
    primary = key.split("-")[0]
    for candidate in (key, primary):
        if candidate in PROMPTS:
            return PROMPTS[candidate]
    name = LANGUAGE_NAMES.get(key) or LANGUAGE_NAMES.get(primary) or f"the language with code '{key}'"
    # The version stays the English one: the wording is English, only the output language differs.
    return replace(en_v5.PROMPT, language=key, language_name=name)


__all__ = ["DEFAULT_LANGUAGE", "PROMPTS", "PromptSet", "language_key", "prompt_for"]
