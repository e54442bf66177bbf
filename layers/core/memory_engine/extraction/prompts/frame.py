"""Quoting user text into a prompt so it reads as data, never as instructions.

User words (dialogue turns, remembered facts) go between a named opening and closing marker, and
the instructions around them say that what is inside is quoted data. The markers are tags
(`<dialogue>` ... `</dialogue>`); inside the quoted text every `<` and `>` is replaced by a
look-alike (`‹`, `›`), so no text can write a closing marker, whatever its spelling, and step out
of the frame to pose as instructions.
"""

from __future__ import annotations

_NEUTRAL = str.maketrans({"<": "‹", ">": "›"})


def neutralise(text: str) -> str:
    """`text` with the characters markers are made of replaced by look-alikes."""
    return text.translate(_NEUTRAL)


def opening(tag: str) -> str:
    return f"<{tag}>"


def closing(tag: str) -> str:
    return f"</{tag}>"


def framed(tag: str, body: str) -> str:
    """`body` (already neutralised) between the tag's markers, each on its own line."""
    return f"{opening(tag)}\n{body}\n{closing(tag)}"
