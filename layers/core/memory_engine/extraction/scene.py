"""Where and when a batch happens: place, time and weather cues, and the turns' dates."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memory_engine.extraction.keywords import strip_particle
from memory_engine.extraction.lexicon import (
    EN_STOP_WORDS,
    EN_TIME_WORDS,
    EN_WEATHER_WORDS,
    KO_NOT_PLACES,
    KO_PLACE_WORDS,
    KO_TIME_WORDS,
    NOT_PLACES,
    PLACE_NOUNS,
)

MAX_PER_KIND = 5

_EN_PLACE = re.compile(
    r"\b(?:at|in|to|from|near|inside|outside|into|around|through|toward|towards|by|off|on|onto|under|behind)"
    r"[ \t]+"
    r"(?:the|a|an|my|our|your|his|her|their|this|that)[ \t]+"
    r"((?:[A-Za-z][\w'-]*)(?:[ \t]+[A-Za-z][\w'-]*){0,3})",
    re.IGNORECASE,
)
_EN_BARE_PLACE = re.compile(
    r"\b(?:at|to|from|back)[ \t]+(home|school|work|church|college|university|class|camp|kindergarten)\b"
    r"|\b(downtown)\b",
    re.I,
)
_EN_TIME_PHRASE = re.compile(
    r"\b(?:(?:last|next|this)[ \t]+(?:week|weekend|month|year|night|morning|afternoon|evening|summer|winter|"
    r"spring|autumn|fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|\d+[ \t]+(?:days?|weeks?|months?|years?)[ \t]+ago"
    r"|\d{1,2}(?::\d{2})?[ \t]?(?:am|pm|a\.m\.|p\.m\.)"
    r"|\d{4}-\d{2}-\d{2}"
    r"|(?:january|february|march|april|may|june|july|august|september|october|november|december)[ \t]+\d{1,2}"
    r"|(?:19|20)\d{2})\b",
    re.IGNORECASE,
)
_KO_TIME_PHRASE = re.compile(
    r"\d{4}년(?:[ \t]?\d{1,2}월)?(?:[ \t]?\d{1,2}일)?|\d{1,2}월(?:[ \t]?\d{1,2}일)?"
    r"|\d{1,2}시(?:[ \t]?\d{1,2}분)?|(?:다음|지난|이번)[ \t]?(?:주|달)(?=$|[^가-힣]|에|엔|은|는|도|부터|까지)"
)
_KO_PLACE_BEFORE_MOTION = re.compile(
    r"(?<![가-힣])([가-힣]+?)"
    r"(?:에서|에선|에서는|(?:에|으로|로)[ \t]?(?:가|갔|간|갈|왔|와|온|올|도착|다녀|돌아|있))"
)
_KO_WEATHER: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), label)
    for pattern, label in (
        (r"비가|비 ?와|비 ?오|비 ?내리|소나기|장마", "비"),
        (r"눈이 ?(?:와|오|내리)|눈 ?(?:와|오)|폭설", "눈"),
        (r"날씨가 ?맑|하늘이 ?맑|맑은 날", "맑음"),
        (r"흐리|흐린|흐려", "흐림"),
        (r"폭염", "더위"),
        (r"태풍", "태풍"),
        (r"안개", "안개"),
    )
)
# Warm, cold, windy: weather only when the sentence is about the weather ("날씨가 너무 추웠어"),
# not "고양이들은 따뜻한 곳을 좋아하죠".
_KO_WEATHER_TOPIC = re.compile(r"날씨|기온|바깥|밖이|밖은|하늘|바람이 ?(?:불|세|차)")
_KO_TEMPERATURE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), label)
    for pattern, label in (
        (r"더웠|더워|덥|더운", "더위"),
        (r"추웠|추워|춥|추운|쌀쌀", "추위"),
        (r"따뜻|선선", "따뜻함"),
        (r"바람", "바람"),
    )
)
_EN_WEATHER_TOPIC = re.compile(
    r"\b(?:it|it's|it was|it is|weather|outside|sky|day|morning|afternoon|evening|night|today|temperature)\b",
    re.IGNORECASE,
)
# Words that name the weather whatever the sentence; the others ("warm", "cold") need a topic.
_EN_WEATHER_NOUNS = frozenset(
    {
        "rain",
        "raining",
        "rained",
        "snow",
        "snowing",
        "snowed",
        "storm",
        "thunder",
        "thunderstorm",
        "lightning",
        "fog",
        "drizzle",
        "hail",
        "heatwave",
        "rainy",
        "snowy",
        "stormy",
        "foggy",
        "sunny",
        "cloudy",
    }
)
_WORD = re.compile(r"[A-Za-z][\w'-]*|[가-힣]+")


@dataclass
class Scene:
    """Place, time and weather cues in order of first mention, plus the turns' date range."""

    places: list[str] = field(default_factory=list)
    times: list[str] = field(default_factory=list)
    weather: list[str] = field(default_factory=list)
    dates: str = ""

    def describe(self, korean: bool) -> str:
        labels = ("장소", "시간", "날씨", "날짜") if korean else ("Place", "Time", "Weather", "Date")
        parts = [
            f"{label}: {', '.join(values)}."
            for label, values in zip(
                labels, (self.places, self.times, self.weather, [self.dates]), strict=True
            )
            if any(values)
        ]
        return " ".join(parts)


def _add(bucket: list[str], value: str) -> None:
    """Append a new cue; one already said within a longer cue ("weekend" in "last weekend") is not."""
    value = value.strip()
    folded = value.casefold()
    if not value or len(bucket) >= MAX_PER_KIND:
        return
    if any(folded == item.casefold() or folded in item.casefold().split() for item in bucket):
        return
    bucket.append(value)


def _english_place(phrase: str) -> str | None:
    words: list[str] = []
    for word in phrase.split():
        low = word.casefold()
        if low in EN_STOP_WORDS or low in EN_TIME_WORDS or low in NOT_PLACES:
            break
        words.append(word)
    while words and words[-1].casefold() not in PLACE_NOUNS and not words[-1][0].isupper():
        words.pop()
    return " ".join(words) if words else None


_KO_LOCATIVE = re.compile(r"^(?:에서|에|으로|로)")


def _weather(said: str) -> list[tuple[int, str]]:
    """Weather the characters state: weather words, and warmth or cold in a sentence about the weather."""
    found: list[tuple[int, str]] = []
    offset = 0
    for line in said.split("\n"):
        english_topic = bool(_EN_WEATHER_TOPIC.search(line))
        for match in _WORD.finditer(line):
            low = match.group().casefold()
            if low in _EN_WEATHER_NOUNS or (low in EN_WEATHER_WORDS and english_topic and low != "weather"):
                found.append((offset + match.start(), low))
        patterns = [*_KO_WEATHER, *(_KO_TEMPERATURE if _KO_WEATHER_TOPIC.search(line) else ())]
        for pattern, label in patterns:
            if hit := pattern.search(line):
                found.append((offset + hit.start(), label))
        offset += len(line) + 1
    return found


def date_range(timestamps: Sequence[datetime]) -> str:
    """ "2023-05-08", or "2023-05-08 ~ 2023-05-09" when the turns span several days."""
    if not timestamps:
        return ""
    first, last = min(timestamps).date().isoformat(), max(timestamps).date().isoformat()
    return first if first == last else f"{first} ~ {last}"


def find_scene(
    sentences: Iterable[str],
    named_places: Iterable[str],
    timestamps: Sequence[datetime],
    remarks: Iterable[str] = (),
) -> Scene:
    """Place, time and weather cues of the sentences, each kind in order of first mention.

    `named_places` are capitalised places already found ("Boston", "Central Park"). `remarks`
    (the assistant's lines) give places only: "Kyoto is beautiful in autumn" says nothing about
    when the characters were there, "Cats love warm keyboards" nothing about the weather.
    """
    said = "\n".join(sentences)
    text = "\n".join([said, *remarks])  # one pass per pattern; the patterns never cross a line
    places: list[tuple[int, str]] = []
    times: list[tuple[int, str]] = []
    weather: list[tuple[int, str]] = []
    for place in named_places:
        if (at := text.find(place)) >= 0:
            places.append((at, place))
    for match in _EN_PLACE.finditer(text):
        first = match.group(1).split()[0]
        if first.casefold() in EN_TIME_WORDS:
            times.append((match.start(1), first))
        elif phrase := _english_place(match.group(1)):
            places.append((match.start(1), phrase))
    for match in _EN_BARE_PLACE.finditer(text):
        place = match.group(1) or match.group(2)
        places.append((match.start(), place.lower()))
    for match in _KO_PLACE_BEFORE_MOTION.finditer(text):
        stem = strip_particle(match.group(1))
        if stem not in KO_NOT_PLACES and (len(stem) >= 2 or stem in KO_PLACE_WORDS):
            places.append((match.start(1), stem))
    for pattern in (_EN_TIME_PHRASE, _KO_TIME_PHRASE):
        times.extend((match.start(), match.group()) for match in pattern.finditer(said))
    for match in _WORD.finditer(text):
        word = match.group()
        low = word.casefold()
        korean = "가" <= word[0] <= "힣"
        stem = strip_particle(word) if korean else low
        if match.start() < len(said) and (low in EN_TIME_WORDS or stem in KO_TIME_WORDS):
            times.append((match.start(), word if low in EN_TIME_WORDS else stem))
        elif stem in KO_PLACE_WORDS and (len(stem) >= 2 or _KO_LOCATIVE.match(word[len(stem) :])):
            places.append((match.start(), stem))
    weather.extend(_weather(said))

    scene = Scene(dates=date_range(timestamps))
    for bucket, cues in ((scene.places, places), (scene.times, times), (scene.weather, weather)):
        earliest: dict[str, int] = {}
        for at, value in cues:
            earliest[value] = min(at, earliest.get(value, at))
        for value in sorted(earliest, key=lambda value: earliest[value]):
            if len(bucket) == MAX_PER_KIND:
                break
            _add(bucket, value)
    return scene
