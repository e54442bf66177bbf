"""Recognising instruction-like text ("SYSTEM OVERRIDE: ignore all previous instructions…").

Facts and memories end up in a chat model's prompt. A user line that gives the model orders is
kept as a turn (nothing accepted is lost) but the built-in paths do not turn it into a fact, a
summary sentence or a quote, so it never reaches a prompt dressed as something remembered.
The patterns name the moves such payloads make in English and Korean: overriding or ignoring
the instructions, claiming a system / developer / admin role, asking for the prompt, switching
the model into a mode, and forged prompt markup. Look-alike characters (fullwidth `＜`, `ＳＹＳＴＥＭ`)
are folded first (NFKC).
"""

from __future__ import annotations

import re
import unicodedata

_ENGLISH = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,30}?\b(?:instructions?|prompts?|directives?)\b"
    r"|\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    r"(?:above|previous|prior|earlier|preceding|original|system'?s?|safety)\b"
    r"|\bsystem\s*(?:override|prompt|instruction|command)s?\b"
    r"|^\s*[\[(<{]?\s*(?:system|developer|admin(?:istrator)?|root|assistant)\s*[\])>}]?\s*:"
    r"|\b(?:developer|admin(?:istrator)?|god|jailbreak|debug|unrestricted|dan)\s+mode\b"
    r"|\b(?:reveal|print|show|output|repeat|leak|tell\s+me)\b[^.!?\n]{0,30}?"
    r"\b(?:system\s+prompt|your\s+(?:instructions|prompt|rules)|hidden\s+(?:instructions|prompt))\b"
    r"|\bfrom\s+now\s+on,?\s+you\b|\byou\s+(?:are\s+now|must\s+now|will\s+now)\b"
    r"|\b(?:new|updated|real)\s+instructions?\s*:|\bdo\s+anything\s+now\b"
    r"|</?\s*(?:system|user-memory|instructions?|im_start|im_end)\b|\[/?inst\]|<\|im_(?:start|end)\|>",
    re.IGNORECASE | re.MULTILINE,
)
# Korean orders use the imperative or a connective ("무시해", "무시하고"), never the past a user
# tells a story in ("선생님 지시를 무시했어"); the instructions ignored are the model's own.
_KOREAN = re.compile(
    r"(?:이전|앞의|앞선|위의|위에|기존|모든|원래|너의|네|당신의|시스템)[^.!?\n]{0,8}?"
    r"(?:지시|지침|명령|규칙|설정|프롬프트|제약|내용)[^.!?\n]{0,8}?"
    r"(?:무시(?:해|하고|하라|하세요|할\s*것|하십시오)|잊어|잊고|따르지\s*마|해제해|우회해)"
    r"|시스템\s*(?:프롬프트|메시지|명령|지시|오버라이드)"
    r"|^\s*[\[(<]?\s*(?:시스템|관리자|개발자)\s*[\])>]?\s*:"
    r"|(?:관리자|개발자|디버그|탈옥|무제한)\s*모드"
    r"|(?:새로운|새|진짜)\s*(?:지시|명령|지침)\s*:"
    r"|(?:지금부터|이제부터)[^.!?\n]{0,16}?(?:너는|넌|당신은|네가|모든\s*답)"
    r"|(?:프롬프트|지시문|지침)[^.!?\n]{0,10}?(?:공개|출력|보여|알려|유출)",
    re.MULTILINE,
)


def fold(text: str) -> str:
    """`text` with look-alike characters folded (fullwidth letters and brackets to ASCII)."""
    return unicodedata.normalize("NFKC", text)


def is_instruction(text: str) -> bool:
    """Whether `text` reads as orders to a language model rather than something about the speaker."""
    folded = fold(text)
    return bool(_ENGLISH.search(folded) or _KOREAN.search(folded))
