"""Quoting user text into a prompt so it reads as data, never as instructions.

User words (dialogue turns, remembered facts) go between a named opening and closing marker, and
the instructions around them say that what is inside is quoted data. The markers are tags
(`<dialogue>` ... `</dialogue>`); inside the quoted text every `<` and `>` is replaced by a
look-alike (`‹`, `›`), so no text can write a closing marker, whatever its spelling, and step out
of the frame to pose as instructions. The other angle brackets a model may read as `<` and `>`
(fullwidth `＜／user-memory＞`, small, CJK (`《》`), mathematical (`⦉⦊`, `⟪⟫`), Canadian
syllabics, modifier letters) and their HTML spellings (`&lt;`, `&#60;`, `&#x3E;`) become the same
`‹`/`›`, and a fullwidth or fraction slash a `/`: what was a look-alike marker reads exactly like a
neutralised one.

Inside the frame each item is one line, its text a JSON string (`quoted`): a line break, a quote
mark or a backslash in the text is escaped, so a turn cannot forge another turn, a speaker or a
fact on a line of its own.
"""

from __future__ import annotations

import json
import re

OPENERS = "<\uff1c\ufe64\u2329\u3008\u27e8\u29fc\u1438\u02c2\u276c\u276e\u2770\u300a\u2989\u2991\u2993\u27ea"
CLOSERS = ">\uff1e\ufe65\u232a\u3009\u27e9\u29fd\u1433\u02c3\u276d\u276f\u2771\u300b\u298a\u2992\u2994\u27eb"
_SLASHES = "\uff0f\u2044\u2215\u29f8"
_NEUTRAL = str.maketrans(
    {**dict.fromkeys(OPENERS, "‹"), **dict.fromkeys(CLOSERS, "›"), **dict.fromkeys(_SLASHES, "/")}
)
_ENTITY = re.compile(r"&(?:(lt)|(gt)|#0*(?:(60)|(62))|#x0*(?:(3c)|(3e)));?", re.IGNORECASE)
# Line breaks json.dumps leaves as they are (JSON allows them raw) but a reader may break lines at.
_RAW_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"})


def neutralise(text: str) -> str:
    """`text` with the characters markers are made of, and their HTML spellings, replaced by
    look-alikes."""
    text = _ENTITY.sub(lambda found: "‹" if found.group(1) or found.group(3) or found.group(5) else "›", text)
    return text.translate(_NEUTRAL)


def quoted(text: str) -> str:
    """`text` neutralised and written as one JSON string: on one line, with its quote marks and
    backslashes escaped, so it reads as one piece of quoted data whatever it holds."""
    return json.dumps(neutralise(text), ensure_ascii=False).translate(_RAW_BREAKS)


def opening(tag: str) -> str:
    return f"<{tag}>"


def closing(tag: str) -> str:
    return f"</{tag}>"


def framed(tag: str, body: str) -> str:
    """`body` (already neutralised) between the tag's markers, each on its own line."""
    return f"{opening(tag)}\n{body}\n{closing(tag)}"
