"""People (and pets) named in Korean text, from where a name stands rather than from a dictionary.

ko-dic tags many places and nouns as person names (베를린, 한강, 한정식, 후시미, 아키 of 아키텍트),
and knows no pet names (비스킷, 모찌, 보리 are just nouns), so a word is a name here when the
sentence puts it in a name's place:
- after a relation or an animal: "강아지 비스킷은", "남편 준호가", "친구 도윤이를", "수의사 김민지";
- as what something is called: "이름은 보리야", "보리라는 강아지";
- before a family title, when ko-dic knows it as a name: "미나 언니는";
- as a full name ko-dic knows (family name + given name, then only grammar): "김민지가";
- as a given name ko-dic knows, called with the familiar 이: "도윤이는";
- anywhere, once it is known: a speaker, a character of the thread, or found above in the batch.
Honorifics (씨, spaced 님) and vocatives are read in `names.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory_engine.extraction.keywords import final_consonant, strip_particle
from memory_engine.retrieval import korean


def _split(words: str) -> list[str]:
    return words.split()


_RELATIONS = _split(
    """
    강아지 고양이 개 반려견 반려묘 애완견 햄스터 토끼 앵무새 거북이 새끼 남편 아내 와이프 신랑 친구 동료
    언니 오빠 누나 형 동생 남동생 여동생 엄마 아빠 딸 아들 사촌 조카 삼촌 이모 고모 선배 후배 수의사 의사
    담임 남자친구 여자친구 남친 여친 애인 손녀 손자 룸메이트 짝꿍 제자 상사 부하
    """
)
_TITLES_AFTER = _split(
    """
    언니 오빠 누나 형 선생님 쌤 선배 이모 삼촌 고모 씨
    """
)
# A lookahead, so "사촌 언니 미나도" is read at 사촌 and again at 언니.
_AFTER_RELATION = re.compile(rf"(?:^|(?<=[\s\"'“(]))(?=(?:{'|'.join(_RELATIONS)})\s+([가-힣]{{2,5}}))")
# "고양이 전문이야": a noun and the copula, not a name.
_COPULA = re.compile(r"(?:이야|이다|이고|이에요|예요|이라|이지|인데|이셔)$")
_CALLED = re.compile(
    r"이름(?:은|이)\s*([가-힣]{1,4}?)(?:이야|야|이에요|예요|이래|래|이라고|라고|이다|다)(?=[\s.!?~]|$)"
)
_SUCH_NAMED = re.compile(r"(?:^|(?<=\s))([가-힣]{2,4}?)(?:이)?라는\s+(?:" + "|".join(_RELATIONS) + ")")
_BEFORE_TITLE = re.compile(
    rf"(?:^|(?<=[\s\"'“(]))([가-힣]{{2,3}})\s+(?:{'|'.join(_TITLES_AFTER)})(?![가-힣])"
)
_WORD = re.compile(r"[가-힣]+")
# Nouns that follow a relation word without being its name ("강아지 산책", "엄마 생신").
NOT_KOREAN_NAMES = frozenset(
    _split(
        """
        산책 사료 간식 생일 생신 결혼식 사진 선물 장난감 학교 병원 얘기 이야기 이름 나이 방 자리 때문 덕분
        보험 수술 목욕 미용 훈련 가방 회사 친구 동생 사이 걱정 사랑 꼬리 발톱 털 밥그릇 집 옷 용품 카페 모임
        결혼 장례식 여행 선생님 얼굴 목소리 건강 상태 문제 일 생각 소식 하나 둘 두 한 마리 명 분 들 언니
        오빠 누나 형 엄마 아빠 남편 아내 사촌 동네 회사 학교 알레르기 전문 병 약 사진 영상 간식 장난
        """
    )
)
_SURNAMES = frozenset(
    _split(
        """
        김 이 박 최 정 강 조 윤 장 임 한 오 서 신 권 황 안 송 류 전 홍 고 문 양 손 배 백 허 유 남
        심 노 하 곽 성 차 주 우 구 민 진 지 엄 채 원 천 방 공 현 함 변 염 여 추 소 석 선 설
        """
    )
)
_GRAMMAR_TAGS = ("J", "E", "VCP", "XSN", "SF", "SP", "UNKNOWN")


def name_form(word: str) -> str:
    """A name as written in a sentence, its particle and familiar 이 taken off ("수진이가" → "수진")."""
    stem = strip_particle(word)
    if len(stem) == 3 and stem.endswith("이") and final_consonant(stem[1]):
        return stem[:2]
    return stem


def _plausible(name: str) -> bool:
    return 2 <= len(name) <= 4 and name not in NOT_KOREAN_NAMES


def _full_names(sentence: str) -> list[str]:
    """Family name + given name as ko-dic reads them in the sentence, followed by grammar, a title
    or the end ("김민지가", "김민지 선생님"), not right after another proper noun ("후시미 이나리")."""
    morphs = korean.analysis(sentence) or ()
    out: list[str] = []
    for i, (surface, tag, meaning) in enumerate(morphs):
        if tag != "NNP" or meaning != "인명" or len(surface) != 3 or surface[0] not in _SURNAMES:
            continue
        after = morphs[i + 1] if i + 1 < len(morphs) else None
        before = morphs[i - 1] if i else None
        followed = after is None or after[1].startswith(_GRAMMAR_TAGS) or after[0] in _TITLES_AFTER
        if followed and not (before and before[1] == "NNP"):
            out.append(surface)
    return out


def korean_people(sentence: str, known: Iterable[str] = ()) -> list[str]:
    """The people (and pets) a Korean sentence names, in order of appearance, without particles."""
    found: dict[str, int] = {}

    def take(name: str, at: int) -> None:
        if _plausible(name):
            found.setdefault(name, at)

    for match in _AFTER_RELATION.finditer(sentence):
        if not _COPULA.search(match.group(1)):
            take(name_form(match.group(1)), match.start(1))
    for match in _SUCH_NAMED.finditer(sentence):
        take(match.group(1), match.start(1))
    for match in _CALLED.finditer(sentence):
        take(match.group(1), match.start(1))
    for match in _BEFORE_TITLE.finditer(sentence):
        if korean.person(match.group(1)) == match.group(1):
            take(match.group(1), match.start(1))
    for name in _full_names(sentence):
        take(name, sentence.find(name))
    familiar = {name for name in known if _WORD.fullmatch(name)}
    for match in _WORD.finditer(sentence):
        word = match.group()
        form = name_form(word)
        if form in familiar or word in familiar:
            take(form if form in familiar else word, match.start())
        elif form != strip_particle(word) and korean.person(word) == form:
            take(form, match.start())  # a name ko-dic knows, called with the familiar 이: "도윤이는"
    return sorted(found, key=found.__getitem__)
