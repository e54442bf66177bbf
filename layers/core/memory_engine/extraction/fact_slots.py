"""Facts that hold one value at a time: where the user lives, what they work as, who they are
with, their dog, their car, their favourite food, their trip, their health.

"I moved to Seoul" shares almost no characters with "The user lives in Busan", so a similarity
between the two sentences cannot tell that the first replaces the second. A slot can: both are
about where the user lives, and the later statement wins (the earlier one is kept as history,
`models.life`). A slot is a name, sometimes with what it is about after a colon: "residence",
"pet:dog", "possession:car", "preference:food", "plan:trip". Two statements replace each other
only when their slots are equal, so a new cat does not replace the dog, nor a new phone the car.

Only the speaker's own facts: "I live in", "the user works as", and Korean with no one else as
subject ("서울로 이사했어"; not "언니는 부산에 살아"). Only present or completed states count
("I live in", "moved to", "we broke up", "the trip got cancelled"); a past one ("I used to live
in", "살았어") describes history and supersedes nothing. A plan is its own slot ("plan:move"),
so "I'm moving to Jeju next month" does not yet replace where the user lives.

The patterns are a heuristic for the built-in extractors; an LLM extractor names the fact it
updates (extraction/prompts).
"""

from __future__ import annotations

import re

Slot = str

_I = re.IGNORECASE

# (slot, pattern), tried in order: the first that matches names the slot. Residence and job read
# only the speaker's own statements (`_SOMEONE_ELSE`); the others name their own subject.
_SLOTS: tuple[tuple[Slot, re.Pattern[str]], ...] = (
    (
        "plan:move",
        re.compile(
            r"\b(?:plan(?:ning)?|going|about)\s+to\s+move\b|\bmov(?:e|ing)\s+(?:fell\s+through|is\s+off|"
            r"(?:got|was|has\s+been)\s+(?:cancell?ed|called\s+off|postponed))"
            r"|이사\s*(?:갈|가려고|가요|갈\s*거|할\s*거|계획|예정|가기로)|이사\s*(?:는\s*)?(?:취소|안\s*가|무산)",
            _I,
        ),
    ),
    (
        "residence",
        re.compile(
            r"\b(?:i|we|user)(?:'ve|\s+have)?\s+(?:\w+\s+){0,2}?(?:live|lives|living|moved|relocated)\s+"
            r"(?:back\s+)?(?:in|to)\b"
            r"|\bmy\s+home\s+is\s+in\b"
            r"|(?:에|에서)\s*(?:살아|살고\s*있|산다|삽니다|살아요|거주)"
            r"|(?:으로|로)\s*이사\s*(?:했|왔|갔|를\s*(?:했|왔|갔))",
            _I,
        ),
    ),
    (
        "job",
        re.compile(
            r"\b(?:i|user)\s+(?:\w+\s+){0,2}?(?:work|works|working)\s+as\b|\b(?:my|the\s+user's)\s+job\s+is\b"
            r"|\b(?:i|user)\s+(?:just\s+)?(?:got|started)\s+(?:a\s+)?(?:new\s+)?job\s+as\b"
            r"|\bi\s+(?:quit|left)\s+my\s+job\b|\bi(?:'m|\s+am)\s+(?:now\s+)?unemployed\b"
            r"|(?:으로|로)\s*(?:일해|일하고|일합니다|일해요|일한다|근무|취직|이직)|직업은|회사\s*(?:를\s*)?그만뒀",
            _I,
        ),
    ),
    (
        "relationship",
        re.compile(
            r"\b(?:i|we)(?:'m|\s+am|'re|\s+are)\s+(?:now\s+)?(?:dating|engaged|married|single|divorced)\b"
            r"|\b(?:i|we)\s+(?:just\s+)?(?:got\s+(?:married|engaged|divorced)|broke\s+up|split\s+up)\b"
            r"|\bmy\s+(?:new\s+)?(?:girlfriend|boyfriend|partner|fianc[eé]e?|wife|husband)(?:'s|\s+is)\s+(?:name|called)"
            r"|\bi(?:'m|\s+am)\s+seeing\s+someone\b|\bbroke\s+up\s+with\b"
            r"|(?:여자\s*친구|남자\s*친구|애인)(?:가|이)?\s*생겼|(?:랑|와|과)\s*(?:사귀|헤어졌|결혼했|약혼했)"
            r"|(?:^|\s)(?:헤어졌|결혼했|약혼했|이혼했)|사귀고\s*있|(?:여자\s*친구|남자\s*친구|애인)(?:는|은)\s*없",
            _I,
        ),
    ),
    (
        "pet:dog",
        re.compile(
            r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:have|got|adopted|rescued|own)\s+(?:a|an|two|another)\s+(?:new\s+)?"
            r"(?:\w+\s+)?(?:dog|puppy)\b|\bour\s+(?:dog|puppy)\b\s*(?:\w+\s+)?(?:died|passed|ran\s+away)"
            r"|\bmy\s+(?:dog|puppy)\s+(?:\w+\s+)?(?:died|passed\s+away|ran\s+away)"
            r"|(?:강아지|개|반려견)(?:를|을)?\s*(?:입양|키우|키워|데려왔|샀)|(?:강아지|반려견)(?:가|이)?\s*(?:죽었|무지개\s*다리|하늘나라)",
            _I,
        ),
    ),
    (
        "pet:cat",
        re.compile(
            r"\b(?:i|we)\s+(?:\w+\s+){0,2}?(?:have|got|adopted|rescued|own)\s+(?:a|an|two|another)\s+(?:new\s+)?"
            r"(?:\w+\s+)?(?:cat|kitten)\b|\b(?:my|our)\s+(?:cat|kitten)\s+(?:\w+\s+)?(?:died|passed\s+away|ran\s+away)"
            r"|(?:고양이|냥이)(?:를|을)?\s*(?:입양|키우|키워|데려왔)|(?:고양이|냥이)(?:가|이)?\s*(?:죽었|무지개\s*다리|하늘나라)",
            _I,
        ),
    ),
    (
        "possession:car",
        re.compile(
            r"\b(?:i|we)\s+(?:just\s+)?(?:bought|got|drive|sold|leased)\s+(?:a\s+|an\s+|my\s+|our\s+)?(?:new\s+|used\s+|old\s+)?"
            r"(?:\w+\s+){0,2}?(?:car|suv|truck|tesla|hyundai|kia|toyota|honda|bmw)\b"
            r"|(?:차|자동차|중고차)(?:를|을)?\s*(?:샀|뽑았|팔았|바꿨)"
            r"|(?:차|자동차|아반떼|쏘나타|소나타|그랜저|테슬라|모닝)(?:를|을)\s*타(?:고|는|요|$|\s)",
            _I,
        ),
    ),
    (
        "possession:phone",
        re.compile(
            r"\b(?:i|we)\s+(?:just\s+)?(?:bought|got|switched\s+to)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:\w+\s+)?"
            r"(?:phone|iphone|galaxy|pixel)\b|(?:폰|휴대폰|핸드폰|아이폰|갤럭시)(?:을|를|으로|로)?\s*(?:샀|바꿨)",
            _I,
        ),
    ),
    (
        "health",
        re.compile(
            r"\bi\s+(?:just\s+)?(?:broke|sprained|injured|hurt)\s+my\b|\bi(?:'ve|\s+have)\s+(?:got\s+)?(?:a\s+)?"
            r"(?:cold|flu|covid|fever|diabetes|asthma)\b|\bi(?:'m|\s+am)\s+(?:sick|pregnant|recovering|"
            r"(?:fully\s+)?recovered|(?:all\s+)?better\s+now)\b|\bmy\s+\w+\s+(?:has\s+)?(?:healed|is\s+healed)\b"
            r"|(?:다리|팔|발목|손목|허리)(?:가|이)?\s*(?:부러졌|다쳤|나았)|(?:감기|독감|코로나)(?:에)?\s*걸렸|"
            r"(?:다|완전히)\s*나았|임신했|입원했|퇴원했",
            _I,
        ),
    ),
    (
        "plan:trip",
        re.compile(
            r"\b(?:trip|vacation|holiday|travel)\b.*\b(?:cancell?ed|called\s+off|postponed|booked|planned)\b"
            r"|\b(?:i|we)(?:'m|\s+am|'re|\s+are)\s+(?:going|flying|heading)\s+to\s+\w+\s+(?:next|this)\s+\w+"
            r"|\b(?:i|we)(?:'m|\s+am|'re|\s+are)\s+planning\s+(?:a\s+)?(?:trip|vacation|to\s+(?:visit|travel|go))\b"
            r"|\b(?:i|we)\s+(?:just\s+)?(?:got\s+back|came\s+back|returned)\s+from\b"
            r"|(?:여행|휴가)(?:을|를|은|는|이|가)?\s*(?:\S+\s+)?(?:취소|미뤘|연기|계획|예약|갈\s*거|가기로|다녀왔)"
            r"|(?:으로|로|에)\s*(?:여행|휴가)\s*(?:갈|가려고|가기로|다녀왔)",
            _I,
        ),
    ),
    (
        "preference:diet",
        re.compile(
            r"\bi(?:'m|\s+am)\s+(?:now\s+|a\s+)*(?:vegetarian|vegan|pescatarian)\b|\bi\s+(?:stopped|quit)\s+eating\s+meat\b"
            r"|(?:채식|비건)(?:을|를)?\s*(?:시작|해|하고|주의)|고기(?:를|을)?\s*(?:끊었|안\s*먹)",
            _I,
        ),
    ),
)
# "My favourite food is ramen", "제일 좋아하는 음식은 라멘이야": a preference about that thing.
_FAVOURITE = re.compile(
    r"\b(?:my|the\s+user's)\s+(?:new\s+)?favou?rite\s+(\w+)|(?:제일|가장)\s*좋아하는\s*([가-힣]+?)(?:은|는|이|가)?(?:\s|$)",
    _I,
)
# "My sister lives in Porto", "언니는 부산에 살아": someone else's, not the speaker's.
_SOMEONE_ELSE = re.compile(
    r"\b(?:my|his|her|their|our)\s+(?!home\b|job\b)\w+\s+(?:\w+\s+)?(?:lives|moved|works)\b"
    r"|(?:언니|오빠|누나|형|동생|남동생|여동생|엄마|아빠|어머니|아버지|부모님|친구|남편|아내|딸|아들|동료|할머니|할아버지)"
    r"(?:는|은|가|이|도|께서)\s",
    _I,
)
_OWN_ONLY = frozenset({"residence", "job"})
# "I used to live in", "I lived in Busan before": history, not the current value.
_PAST = re.compile(
    r"\bused\s+to\b|\blived\b|\bworked\b|\bbefore\b|\bformerly\b|원래|예전|전에는|살았|일했", re.I
)


def slot_of(text: str) -> Slot | None:
    """The one-value-at-a-time fact `text` states, if any (see the module's docstring)."""
    if _PAST.search(text):
        return None
    for slot, pattern in _SLOTS:
        if pattern.search(text):
            if slot in _OWN_ONLY and _SOMEONE_ELSE.search(text):
                return None
            return slot
    favourite = _FAVOURITE.search(text)
    if favourite:
        return f"preference:{(favourite.group(1) or favourite.group(2)).casefold()}"
    return None
