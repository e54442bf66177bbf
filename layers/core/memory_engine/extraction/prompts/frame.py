"""Quoting user text into a prompt so it reads as data, never as instructions.

User words (dialogue turns, remembered facts) go between a named opening and closing marker, and
the instructions around them say that what is inside is quoted data. The markers are tags
(`<dialogue>` ... `</dialogue>`); inside the quoted text every `<` and `>` is replaced by a
look-alike (`‹`, `›`), so no text can write a closing marker, whatever its spelling, and step out
of the frame to pose as instructions. The other angle brackets a model may read as `<` and `>`
(fullwidth `＜／user-memory＞`, small, CJK, mathematical, Canadian syllabics, modifier letters)
become the same `‹`/`›`, and a fullwidth or fraction slash a `/`: what was a look-alike marker
reads exactly like a neutralised one.
"""

from __future__ import annotations

_OPENERS = "<\uff1c\ufe64\u2329\u3008\u27e8\u29fc\u1438\u02c2\u276c\u276e\u2770"
_CLOSERS = ">\uff1e\ufe65\u232a\u3009\u27e9\u29fd\u1433\u02c3\u276d\u276f\u2771"
_SLASHES = "\uff0f\u2044\u2215\u29f8"
_NEUTRAL = str.maketrans(
    {**dict.fromkeys(_OPENERS, "‹"), **dict.fromkeys(_CLOSERS, "›"), **dict.fromkeys(_SLASHES, "/")}
)


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
