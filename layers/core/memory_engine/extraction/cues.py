"""Recognising sentences that state facts and sentences that show what a speaker wants."""

from __future__ import annotations

import re
from typing import Literal

from memory_engine.extraction.keywords import final_consonant

IntentKind = Literal["plan", "question", "suggestion"]

_RIEUL = 8
_QUESTION_END = re.compile(r"[?？][\"'”’)\]~]*$")
_DIGIT = re.compile(r"\d")

_EN_FIRST_PERSON_FACT = re.compile(
    r"\b(?:i|we)(?:'m|'ve|'d|\s+(?:am|was|were|have|had|got|went|go|live[sd]?|lived|work(?:ed)?|"
    r"stud(?:y|ied)|like[sd]?|love[sd]?|hate[sd]?|used\s+to|grew\s+up|moved|bought|made|met|visited|"
    r"started|finished|joined|lost|won|became|began|took|saw|found|received|adopted|ran|painted|"
    r"wrote|read|play(?:ed)?|own(?:ed)?|just|also|still|really|never|always|[a-z]+ed))\b",
    re.IGNORECASE,
)
_EN_POSSESSIVE = re.compile(r"\b(?:my|our)\s+[a-z]+", re.IGNORECASE)
_EN_THIRD_PERSON = re.compile(
    r"\b(?:he|she|they|[A-Z][a-z]+)\s+(?:is|was|are|were|has|had|lives|lived|works|worked|went|got|became)\b"
)
_EN_DATE = re.compile(
    r"\b(?:yesterday|today|tomorrow|last|ago|since|born|birthday|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|january|february|march|april|june|july|august|september|october|"
    r"november|december)\b",
    re.IGNORECASE,
)
_KO_FIRST_PERSON = re.compile(
    r"(?:^|\s)(?:저는|나는|난|제가|내가|저도|나도|저의|나의|우리|저희|제|내)(?=\s|$)"
)
_KO_DECLARATIVE = re.compile(
    r"(?:었|았|였|했)(?:어|다|어요|습니다|지)|입니다|이에요|예요|이야|이다|있어|있다|있어요|있습니다|없어|없다"
)
_KO_DATE = re.compile(r"어제|오늘|내일|지난|작년|올해|내년|생일|태어")

_EN_PLAN = re.compile(
    r"\b(?:i|we|i'm|we're|i'd|we'd)\b[^.!?]{0,24}?\b(?:want|wanna|need|plan|planning|hope|hoping|intend|"
    r"wish|like\s+to|love\s+to|going\s+to|gonna|will|thinking\s+of|thinking\s+about|should|have\s+to|"
    r"must|try\s+to|trying\s+to|decided|looking\s+forward)\b"
    r"|\b(?:i|we)'ll\b|\blet'?s\b|\b(?:can|could|would|will)\s+you\b|\bplease\b|\bshall\s+we\b"
    r"|\b(?:i|we)(?:'d|\s+would)\s+rather\b|\b[A-Z][a-z]+\s+(?:wants|plans|hopes|needs|is\s+planning|is\s+going)\s+to\b"
    r"|\bhow\s+about\b|\bwhy\s+don't\s+we\b",
    re.IGNORECASE,
)
# Not 겠: "좋겠어요", "걱정되시겠어요" guess at someone's feelings far more often than they plan.
_KO_PLAN = re.compile(
    r"싶|할래|갈래|볼래|하자|가자|보자|먹자|만나자|놀자|마시자|려고|계획|예정|기로\s?했|기로\s?해|야겠|"
    r"주세요|줘|줄래|부탁|바라|원해|원한다|필요해|필요하|할까|갈까|살까"
)
# The assistant's advice ("Maybe feed them in separate rooms.", "알림을 맞춰 두세요."): its intent
# for the user, unlike its questions and its guesses at feelings.
_EN_SUGGESTION = re.compile(
    r"^(?:maybe|perhaps|try|how\s+about|why\s+not|why\s+don't\s+you|consider)\b|\byou\s+(?:could|should|might)\b"
    r"|\b(?:i\s+)?(?:recommend|suggest)\b",
    re.IGNORECASE,
)
_KO_SUGGESTION = re.compile(
    r"(?:보세요|두세요|하세요|드세요|추천해요|추천합니다|는\s?건\s?어때요|면\s?어때요|는\s?게\s?좋아요)"
)
# "할 거야", "갈게": an ㄹ-final syllable before 거/게/래 marks a plan or a promise.
_KO_FUTURE = re.compile(
    r"([가-힣])\s?(?:거(?:야|예요|에요|다|임|라|든)|게(?:요)?(?=[\s.!~]|$)|래(?:요)?(?=[\s.!?~]|$))"
)


def _normalise(text: str) -> str:
    return text.replace("’", "'")


def is_question(text: str) -> bool:
    return bool(_QUESTION_END.search(text.strip()))


def fact_score(text: str, names_mentioned: bool = False) -> int:
    """How strongly a sentence states a fact: numbers, dates, names, "I am / I went / my ...".

    Questions score 0. A score of 2 or more is a fact worth keeping.
    """
    if is_question(text):
        return 0
    text = _normalise(text)
    score = 2 if _DIGIT.search(text) else 0
    score += 1 if names_mentioned else 0
    if _EN_FIRST_PERSON_FACT.search(text) or _KO_FIRST_PERSON.search(text):
        score += 2
    if _EN_POSSESSIVE.search(text) or _EN_THIRD_PERSON.search(text):
        score += 1
    if _EN_DATE.search(text) or _KO_DATE.search(text):
        score += 1
    if _KO_DECLARATIVE.search(text):
        score += 1
    return score


def _korean_future(text: str) -> bool:
    return any(final_consonant(match.group(1)) == _RIEUL for match in _KO_FUTURE.finditer(text))


def is_suggestion(text: str) -> bool:
    """Advice to the listener ("Maybe ask other parents.", "간식 양을 조금 줄여 보세요.")."""
    text = _normalise(text)
    return not is_question(text) and bool(_EN_SUGGESTION.search(text) or _KO_SUGGESTION.search(text))


def intent_kind(text: str) -> IntentKind | None:
    """ "plan" for wishes, plans and requests (I want, let's, 싶어, 할 거야), "question" for questions."""
    text = _normalise(text)
    if _EN_PLAN.search(text) or _KO_PLAN.search(text) or _korean_future(text):
        return "plan"
    if is_question(text):
        return "question"
    return None
