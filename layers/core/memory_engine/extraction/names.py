"""Finding people and named places mentioned in text (capitalised names, titles, Korean 씨)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from memory_engine.extraction.keywords import final_consonant
from memory_engine.extraction.korean_names import korean_people
from memory_engine.extraction.lexicon import NOT_NAMES, PLACE_PREFIXES, PLACE_SUFFIXES, TITLES

_ABBREVIATED_TITLE = re.compile(r"\b(Mr|Mrs|Ms|Mx|Dr|Capt|Prof|Sgt|Lt|St|Col|Gen|Det|Cmdr)\.")
_NAME_WORD = r"[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:['’-][A-Za-z]+)?"
_NAME_RUN = re.compile(rf"\b{_NAME_WORD}(?:[ \t]+{_NAME_WORD})*")
_LEADING_NOISE = " \t\"'“‘(*-"
# "in Paris", "went to Busan": what stands before a capitalised word that names a place.
_PLACE_BEFORE = re.compile(
    r"\b(?:in|at|from|near|into|around|across|visit|visited|visiting|"
    r"(?:go|goes|went|going|gone|move|moved|moving|travel|traveled|travelled|fly|flew|flown|drive|drove|"
    r"sail|sailed|sailing|ride|rode|walk|walked|run|ran|trip|back|return|returned|welcome|way|road|came|"
    r"come|head|headed|heading|arrive|arrived)\s+to)\s+$",
    re.IGNORECASE,
)
# "the new Marvel movie", "watched Avengers": titles of works, brands and teams, not people.
_THING_BEFORE = re.compile(
    r"(?:\b(?:the|a|an)\s+(?:[a-z]+\s+)?|\b(?:watch|watched|watching|play|played|playing|read|reading|"
    r"listen\s+to|listened\s+to|listening\s+to|use|used|using|ordered|download|downloaded)\s+)$",
    re.IGNORECASE,
)
_THING_AFTER = re.compile(
    r"^\s+(?:movie|film|show|series|game|book|novel|song|album|band|app|store|shop|restaurant|team|"
    r"club|brand|company|card|phone|account|channel|video|concert|festival|course|class)s?\b"
)
# A Latin name followed by a Korean locative particle is a place ("Starbucks에서", "Tokyo로 이사").
_KO_PLACE_AFTER = re.compile(
    r"^(?:에서|에선|에서는|으로|로|에)(?![가-힣])|^(?:에|으로|로)\s?(?:가|갔|간|갈|왔|와|온|올|이사)"
)
# "Which city did you visit?" — "Mostly Kyoto.": a short answer to a question asking for a place
# names a place, whatever stands before the name.
_ASKS_PLACE = re.compile(
    r"\b(?:where|(?:which|what)\s+(?:\w+\s+)?(?:city|cities|country|countries|town|place|part|island|"
    r"region|state|neighbou?rhood|area))\b|어디|어느\s*(?:도시|나라|동네|지역)",
    re.IGNORECASE,
)
SHORT_ANSWER_WORDS = 4
# "Ribeira district", "Golden Gate bridge": a lower-case place word right after the name.
_PLACE_AFTER = re.compile(r"^\s+(" + "|".join(sorted(PLACE_SUFFIXES)) + r")\b")
_ARTICLES = frozenset({"the", "a", "an"})
# A sentence-initial name followed by a comma or a speech verb is a person ("Mira, look!").
_PERSON_AFTER = re.compile(r"^(?:\s*,|\s+(?:said|says|asked|asks|told|tells|replied|answered|and\s+I)\b)")
_KO_HONORIFIC = re.compile(r"(?:^|(?<=[\s\"'“(]))([가-힣]{2,3})(\s?)(씨|님)")
# A Korean vocative opening a sentence: a name and 아 (after a final consonant) or 야 (after a
# vowel), then a comma, "!" or "~" ("지훈아,", "하루야!"): someone spoken to by name.
_KO_VOCATIVE = re.compile(r"^[\"'“(]?([가-힣]{2,3})([아야])(?=[,!~])")
# Words that take 아/야 before a comma without being names ("아니야,", "그래야!", "어디야?").
_KO_NOT_VOCATIVE = frozenset(
    [
        "아니",
        "그래",
        "어디",
        "누구",
        "이거",
        "저거",
        "그거",
        "여기",
        "거기",
        "저기",
        "진짜",
        "정말",
        "대박",
        "세상",
        "어머",
        "무엇",
        "뭐",
        "좋",
        "싫",
        "같",
    ]
)
# An English vocative opening a sentence: "Luna, ..." (the comma rule below, for the addressee).
_EN_VOCATIVE = re.compile(r"^(?:(?:hey|hi|hello|oh|ok|okay|thanks|thank you)\s*,?\s+)?([A-Z][a-z]+),", re.I)
# Words that end in 씨 without being a name plus the honorific (weather, handwriting, ...).
_KO_NOT_HONORIFIC = ("날씨", "솜씨", "말씨", "아가씨", "글씨", "마음씨", "불씨", "맵씨")


_KO_WORD = re.compile(r"[가-힣]{2,}")


def korean_vocative(sentence: str) -> str | None:
    """The name a Korean sentence opens by calling ("지훈아, ..." → "지훈", "하루야!" → "하루")."""
    match = _KO_VOCATIVE.match(sentence.strip())
    if match is None:
        return None
    name, ending = match.groups()
    # 아 follows a final consonant (지훈아), 야 a vowel (하루야): anything else is not a vocative.
    if (ending == "아") != bool(final_consonant(name[-1])) or name in _KO_NOT_VOCATIVE:
        return None
    return name


def addressee(sentence: str) -> str | None:
    """Whom a sentence speaks to by name, if it opens with a vocative: "지훈아, ...", "하루 씨, ...",
    "민지 님, ...", "Luna, ..."."""
    text = sentence.strip().lstrip(_LEADING_NOISE)
    korean_name = korean_vocative(text)
    if korean_name:
        return korean_name
    honorific = _KO_HONORIFIC.match(text)
    if honorific and text[honorific.end() :].startswith((",", "!", "~")):
        return honorific.group(1)
    english = _EN_VOCATIVE.match(text)
    if english and english.group(1).casefold() not in NOT_NAMES | TITLES:
        return english.group(1)
    return None


@dataclass
class NameScan:
    """People and places named in the text, each in order of first appearance, as written."""

    persons: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)


@dataclass
class _Evidence:
    surface: str
    order: int
    strong: int = 0
    weak: int = 0
    place: int = 0
    titled: list[str] = field(default_factory=list)


def _words(name: str) -> set[str]:
    return {word.casefold() for word in name.split()}


def scan_names(sentences: Iterable[str], familiar: Iterable[str] = ()) -> NameScan:
    """People and named places mentioned in `sentences`.

    A capitalised run is a person when it follows a title ("Captain Holt"), stands inside a sentence,
    or opens one followed by a comma or a speech verb; a sentence-opening run is also accepted when it
    shares a word with a `familiar` name (speakers, known characters). It is a place when its last word
    is a place word ("Central Park", "the Ribeira district"), it follows "in/at/from/went to", or its
    sentence is a short answer to one asking where ("Which city?" "Mostly Kyoto."); after
    an article ("the Ribeira ...") it is a thing or a place, not a person. Korean names are taken
    from the honorifics 씨 and 님 ("지은 씨", "민지 님"), from vocatives ("지훈아,"), and from where a
    name stands (`korean_names.korean_people`: "강아지 비스킷은", "이름은 보리야", known names).
    """
    familiar = list(familiar)
    familiar_words = set().union(*(_words(name) for name in familiar))
    texts: list[str] = []
    evidence: dict[str, _Evidence] = {}

    def note(name: str) -> _Evidence:
        key = name.casefold()
        if key not in evidence:
            evidence[key] = _Evidence(name, len(evidence))
        return evidence[key]

    previous = ""
    for raw in sentences:
        texts.append(raw)
        answers_where = bool(_ASKS_PLACE.search(previous)) and len(raw.split()) <= SHORT_ANSWER_WORDS
        previous = raw
        text = _ABBREVIATED_TITLE.sub(r"\1", raw)
        lead = len(text) - len(text.lstrip(_LEADING_NOISE))
        for match in _NAME_RUN.finditer(text):
            words = match.group().split()
            words[-1] = re.sub(r"['’]s$", "", words[-1])
            initial = match.start() == lead
            title: list[str] = []
            article = False
            while words and (words[0].casefold() in TITLES or words[0].casefold() in NOT_NAMES):
                if words[0].casefold() in TITLES:
                    title.append(words[0])
                else:
                    title.clear()
                    article = words[0].casefold() in _ARTICLES
                initial = False
                words.pop(0)
            while words and (words[-1].casefold() in NOT_NAMES or words[-1].casefold() in TITLES):
                words.pop()
            if not words:
                continue
            name = " ".join(words)
            before = text[max(match.start() - 40, 0) : match.start()]  # enough for "travelled to "
            entry = note(name)
            if title:
                entry.strong += 1
                entry.titled.append(" ".join([*title, name]))
            elif (
                answers_where
                or words[-1].casefold() in PLACE_SUFFIXES
                or (len(words) > 1 and words[0].casefold() in PLACE_PREFIXES)
                or _PLACE_BEFORE.search(before)
                or _KO_PLACE_AFTER.match(text[match.end() :])
                or _PLACE_AFTER.match(text[match.end() :])
            ):
                entry.place += 1
            elif article or _THING_BEFORE.search(before) or _THING_AFTER.match(text[match.end() :]):
                continue
            elif not initial or _PERSON_AFTER.match(text[match.end() :]):
                entry.strong += 1
            else:
                entry.weak += 1
        for match in _KO_HONORIFIC.finditer(raw):
            # 님 glued to a word is mostly a title (선생님, 과장님, 부모님); spaced, it follows a name.
            if match.group(3) == "님" and not match.group(2):
                continue
            if not (match.group(2) == "" and match.group(0).endswith(_KO_NOT_HONORIFIC)):
                note(match.group(1)).strong += 1
        vocative = korean_vocative(raw)
        if vocative:
            note(vocative).strong += 1
    # Korean names in a second pass: a name found anywhere in the batch ("강아지 비스킷은") is a
    # name wherever else it appears ("비스킷이 공원에서 ..."), before or after.
    texts = [text for text in texts if _KO_WORD.search(text)]
    korean_known = set(familiar) | {key for key, entry in evidence.items() if entry.strong}
    for text in texts:
        korean_known.update(korean_people(text, korean_known))
    for text in texts:
        for name in korean_people(text, korean_known):
            note(name).strong += 1

    scan = NameScan()
    for entry in sorted(evidence.values(), key=lambda item: item.order):
        person = entry.strong + (entry.weak if _words(entry.surface) & familiar_words else 0)
        if person and person > entry.place:
            scan.persons.append(entry.surface)
            scan.persons.extend(dict.fromkeys(entry.titled))
        elif entry.place:
            scan.places.append(entry.surface)
    return scan
