"""A Korean conversation end to end, with no configuration: facts told in one session, asked about
in other words in a later one, the memory that holds each fact comes back first."""

from __future__ import annotations

import re

import pytest

from memory_engine.models.api import RetrievedMemory
from tests.e2e.conftest import LocalServer, wait_on_work

pytestmark = pytest.mark.e2e

THREAD = "thread-ko"
FIRST, LATER = "session-ko-1", "session-ko-2"
# 지훈 talks with his companion 하루; three batches of 8 turns, one fact in each.
FACTS = {
    2: "하루야, 나 사실 땅콩 알레르기가 있어서 어릴 때 응급실에 실려 간 적도 있어.",
    11: "우리 부모님은 아직 부산 해운대 근처에 계셔. 명절마다 KTX 타고 내려가.",
    19: "참, 우리 집 고양이 보리가 이번 달에 세 살이 됐어. 털이 완전 회색이야.",
}
FILLER = [
    "오늘 회사에서 회의가 길어서 좀 지쳤어.",
    "점심은 그냥 편의점 도시락으로 때웠어.",
    "퇴근길에 비가 와서 우산을 하나 샀어.",
    "요즘 밤에 드라마 보느라 늦게 자.",
    "주말에 방 청소를 싹 해야겠어.",
    "새로 나온 게임을 조금 해 봤는데 재밌더라.",
    "아침에 지하철이 엄청 붐볐어.",
    "동료가 커피를 사 줘서 기분이 좋았어.",
    "이번 분기 보고서 마감이 다가와서 바빠.",
    "헬스장에 등록했는데 아직 두 번밖에 못 갔어.",
    "어제는 친구들이랑 노래방에 갔어.",
    "요즘 자전거 타고 한강 가는 게 재밌어.",
    "팀장님이 다음 주에 휴가를 가신대.",
    "책상 정리를 했더니 속이 시원해.",
    "새 키보드를 샀는데 타건감이 좋아.",
    "저녁에 라면 끓여 먹었어.",
    "요즘 영어 회화 학원에 다니고 있어.",
    "동네에 새로 생긴 빵집이 맛있더라.",
    "휴대폰 액정이 깨져서 수리 맡겼어.",
    "날씨가 추워져서 패딩을 꺼냈어.",
    "퇴근하고 산책을 삼십 분 했어.",
    "회사 앞 국밥집이 문을 닫았대.",
    "조카 생일 선물로 레고를 샀어.",
    "오늘은 일찍 자려고.",
]
ANSWERS = ["그랬구나, 지훈 씨.", "와, 더 얘기해 줘요.", "지훈 씨 오늘도 수고 많았어요."]
# Paraphrased: other words, particles and endings than the turn that holds the answer (one noun
# in common, as a person asking about a fact usually has).
QUESTIONS = {
    "지훈이한테 알레르기 있는 음식이 뭐였지?": 2,
    "지훈 씨 부모님 댁은 어느 지역이야?": 11,
    "지훈이가 키우는 고양이 이름이 뭐야?": 19,
}
HANGUL = re.compile("[가-힣]")


def consolidate(server: LocalServer, n: int, session: str) -> None:
    text = FACTS.get(n, FILLER[n % len(FILLER)])  # every line of the story is its own
    # language and user_name's other defaults as a Korean client leaves them
    turn = {"uuid": f"ko-{n}", "query": text, "answer": ANSWERS[n % len(ANSWERS)]}
    server.client().consolidate(session, THREAD, turn, user_name="지훈")


def memories(server: LocalServer) -> list[RetrievedMemory]:
    hits = server.client().retrieve(THREAD, "지훈", limit=20).data
    return [hit for hit in hits if hit.memory_id.count("_") == 2]


@pytest.fixture(scope="module")
def told(server: LocalServer) -> LocalServer:
    # Given 24 turns in a first session, closed when the next session starts
    for n in range(24):
        consolidate(server, n, FIRST)
    consolidate(server, 100, LATER)
    wait_on_work(server, lambda: len(memories(server)) >= 3)
    return server


@pytest.mark.parametrize("question", list(QUESTIONS))
def test_a_paraphrased_korean_question_gets_the_memory_of_its_fact_first(
    told: LocalServer, question: str
) -> None:
    # When the question is asked in the later session
    first = told.client().retrieve(THREAD, question, limit=3).data[0]

    # Then the first hit is the memory built from the turn that told the fact
    assert f"ko-{QUESTIONS[question]}" in first.source_dialog_uuids, (question, first)


def test_korean_memories_stay_korean_and_never_label_a_speaker_assistant(told: LocalServer) -> None:
    found = memories(told)
    for hit in found:
        content = hit.content
        # Then each memory is in the language it was said in, with no English role label
        assert len(HANGUL.findall(content)) > len(re.findall("[A-Za-z]", content)), content
        assert "assistant" not in content
    # and the companion whom 지훈 called by name ("하루야, ...") is named in that batch's memory
    first = next(hit for hit in found if "ko-2" in hit.source_dialog_uuids)
    assert "하루" in first.content


def test_the_default_embedder_is_multilingual(told: LocalServer) -> None:
    # The question from issue 15 that an English-only model gets wrong
    api = told.client()
    asked = api.embed("못 먹는 음식이 있어?", mode="query")
    said = api.embed(["나는 서울에서 태어났어.", "나는 땅콩 알레르기가 있어."], mode="passage")
    assert asked.embedding is not None and said.embeddings is not None
    question, (unrelated, related) = asked.embedding, said.embeddings
    assert asked.dimension == said.dimension == 384

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(question, related) > cosine(question, unrelated)
