"""Facts that hold one value at a time: where the user lives, what they work as.

"I moved to Seoul" shares almost no characters with "The user lives in Busan", so a similarity
between the two sentences cannot tell that the first replaces the second. A slot can: both are
about where the user lives, and the later statement wins. Only present or completed states
count ("I live in", "moved to", "살아", "이사했어"); a past one ("I used to live in", "살았어")
or a plan ("이사 갈 거야") describes history or the future and supersedes nothing.
"""

from __future__ import annotations

import re
from typing import Literal

Slot = Literal["residence", "job"]

_SLOTS: tuple[tuple[Slot, re.Pattern[str]], ...] = (
    (
        "residence",
        re.compile(
            r"\b(?:live|lives|living)\s+in\b|\b(?:moved|relocated)\s+(?:back\s+)?to\b|\bhome\s+is\s+in\b"
            r"|(?:에|에서)\s*(?:살아|살고\s*있|산다|삽니다|살아요|거주)"
            r"|(?:으로|로)\s*이사\s*(?:했|왔|갔|를\s*(?:했|왔|갔))",
            re.IGNORECASE,
        ),
    ),
    (
        "job",
        re.compile(
            r"\bworks?\s+as\b|\bworking\s+as\b|\b(?:my|the\s+user's)\s+job\s+is\b"
            r"|(?:으로|로)\s*(?:일해|일하고|일합니다|일해요|일한다|근무)|직업은",
            re.IGNORECASE,
        ),
    ),
)
# "I used to live in", "I lived in Busan before": history, not the current value.
_PAST = re.compile(
    r"\bused\s+to\b|\blived\b|\bworked\b|\bbefore\b|\bformerly\b|원래|예전|전에는|살았|일했", re.I
)


def slot_of(text: str) -> Slot | None:
    """The one-value-at-a-time fact `text` states, if any."""
    if _PAST.search(text):
        return None
    for slot, pattern in _SLOTS:
        if pattern.search(text):
            return slot
    return None
