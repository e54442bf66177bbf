"""Facts that hold one value at a time: where the user lives, what they work as.

Only the user's own: "I live in", "the user works as", and Korean with no one else as subject
("서울로 이사했어"; not "언니는 부산에 살아").

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
            r"\b(?:i|we|user)(?:'ve|\s+have)?\s+(?:\w+\s+){0,2}?(?:live|lives|living|moved|relocated)\s+(?:back\s+)?(?:in|to)\b"
            r"|\bmy\s+home\s+is\s+in\b"
            r"|(?:에|에서)\s*(?:살아|살고\s*있|산다|삽니다|살아요|거주)"
            r"|(?:으로|로)\s*이사\s*(?:했|왔|갔|를\s*(?:했|왔|갔))",
            re.IGNORECASE,
        ),
    ),
    (
        "job",
        re.compile(
            r"\b(?:i|user)\s+(?:\w+\s+){0,2}?(?:work|works|working)\s+as\b|\b(?:my|the\s+user's)\s+job\s+is\b"
            r"|(?:으로|로)\s*(?:일해|일하고|일합니다|일해요|일한다|근무)|직업은",
            re.IGNORECASE,
        ),
    ),
)
# "My sister lives in Porto", "언니는 부산에 살아": someone else's, not the user's.
_SOMEONE_ELSE = re.compile(
    r"\b(?:my|his|her|their|our)\s+(?!home\b|job\b)\w+\s+(?:\w+\s+)?(?:lives|moved|works)\b"
    r"|(?:언니|오빠|누나|형|동생|남동생|여동생|엄마|아빠|어머니|아버지|부모님|친구|남편|아내|딸|아들|동료|할머니|할아버지)"
    r"(?:는|은|가|이|도|께서)\s",
    re.IGNORECASE,
)
# "I used to live in", "I lived in Busan before": history, not the current value.
_PAST = re.compile(
    r"\bused\s+to\b|\blived\b|\bworked\b|\bbefore\b|\bformerly\b|원래|예전|전에는|살았|일했", re.I
)


def slot_of(text: str) -> Slot | None:
    """The one-value-at-a-time fact `text` states, if any."""
    if _PAST.search(text) or _SOMEONE_ELSE.search(text):
        return None
    for slot, pattern in _SLOTS:
        if pattern.search(text):
            return slot
    return None
