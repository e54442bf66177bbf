"""A persona thread as a live chatbot meets it: 16 facts among filler turns, in three sessions.

The first two sessions are over (the engine extracts them when the third begins); the third is
fresh, 18 turns long, below the extraction threshold of 20, so its six facts are still buffered.
Each fact is asked once with a paraphrased question (no fact's key word repeated where a paraphrase
reads naturally), in English and in Korean (the same facts and questions, translated).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    line: str  # what the user says
    question: str  # the paraphrased question that this line answers


@dataclass(frozen=True)
class Thread:
    language: str
    user: str
    facts: tuple[Fact, ...]
    filler: tuple[str, ...]
    ack: str  # the assistant's answer to every turn


# (facts said, filler turns) per session: 5 + 5 + 6 facts; the last session has 18 turns.
SESSIONS = ((5, 9), (5, 9), (6, 12))

ENGLISH = Thread(
    language="en",
    user="Mina",
    facts=(
        Fact(
            "My older sister Hana moved to Busan last year to work as a nurse.",
            "Which city does my sibling live in now?",
        ),
        Fact(
            "I am allergic to peanuts, so I always check the labels.",
            "What food can't I eat because of an allergy?",
        ),
        Fact("I play the cello in a community orchestra on Thursdays.", "What instrument do I play?"),
        Fact("My cat is called Mochi and she is fourteen years old.", "What is my pet's name?"),
        Fact("I studied marine biology at university in Jeju.", "What was my major in college?"),
        Fact("I drive a small blue electric car to work.", "What kind of vehicle do I commute in?"),
        Fact("My favourite dish is my grandmother's kimchi stew.", "Which meal do I like best?"),
        Fact("I ran my first full marathon in Seoul in April.", "What long-distance race did I finish?"),
        Fact("I work as a data engineer at a shipping company.", "What is my job?"),
        Fact(
            "My best friend Jisoo is getting married in October.", "Whose wedding is coming up this autumn?"
        ),
        Fact(
            "I started learning Spanish because we plan a trip to Mexico.",
            "Which foreign language am I studying?",
        ),
        Fact("I broke my left wrist while skiing in February.", "How did I get injured this winter?"),
        Fact(
            "My husband Minho bakes sourdough bread every Sunday morning.",
            "What does my spouse make on weekends?",
        ),
        Fact("We adopted a rescue dog named Bori two weeks ago.", "Did we get a new animal recently?"),
        Fact(
            "I am reading a novel by Han Kang for my book club.",
            "Which author is my reading group discussing?",
        ),
        Fact(
            "My dream is to open a small bookshop café by the sea.",
            "What business would I love to run someday?",
        ),
    ),
    filler=(
        "Good morning! How are you today?",
        "Haha, that is funny.",
        "The weather is so nice outside.",
        "I just had a cup of coffee.",
        "Okay, let me think about that.",
        "That sounds interesting, tell me more.",
        "I am a bit tired this afternoon.",
        "Thanks, that helps a lot.",
        "Hmm, I am not sure about that.",
        "Let us talk about something else.",
        "I watched a movie last night, it was fine.",
        "Sorry, I was busy for a moment.",
    ),
    ack="I see. Tell me more.",
)

KOREAN = Thread(
    language="ko",
    user="미나",
    facts=(
        Fact(
            "우리 언니 하나는 작년에 간호사로 일하려고 부산으로 이사했어.", "내 형제는 지금 어느 도시에 살아?"
        ),
        Fact(
            "나는 땅콩 알레르기가 있어서 항상 성분표를 확인해.", "내가 알레르기 때문에 못 먹는 음식은 뭐야?"
        ),
        Fact("나는 목요일마다 동네 오케스트라에서 첼로를 연주해.", "내가 연주하는 악기는 뭐야?"),
        Fact("우리 고양이 이름은 모찌이고 열네 살이야.", "내 반려동물 이름이 뭐였지?"),
        Fact("나는 제주에 있는 대학에서 해양생물학을 공부했어.", "내가 대학에서 뭘 전공했지?"),
        Fact("나는 작은 파란색 전기차를 타고 출근해.", "내가 출퇴근할 때 타는 차는 어떤 거야?"),
        Fact("내가 제일 좋아하는 음식은 할머니가 끓여 주신 김치찌개야.", "내가 가장 좋아하는 요리는 뭐야?"),
        Fact("나는 4월에 서울에서 처음으로 풀코스 마라톤을 완주했어.", "내가 완주한 장거리 경주는 뭐야?"),
        Fact("나는 해운 회사에서 데이터 엔지니어로 일해.", "내 직업이 뭐야?"),
        Fact("내 가장 친한 친구 지수가 10월에 결혼해.", "이번 가을에 누구 결혼식이 있지?"),
        Fact(
            "멕시코 여행을 계획하고 있어서 스페인어를 배우기 시작했어.", "내가 공부하고 있는 외국어는 뭐야?"
        ),
        Fact("2월에 스키를 타다가 왼쪽 손목이 부러졌어.", "이번 겨울에 내가 어떻게 다쳤지?"),
        Fact("남편 민호는 매주 일요일 아침에 사워도우 빵을 구워.", "내 배우자는 주말에 뭘 만들어?"),
        Fact("우리는 2주 전에 보리라는 유기견을 입양했어.", "우리가 최근에 새 동물을 데려왔어?"),
        Fact(
            "독서 모임 때문에 한강 작가의 소설을 읽고 있어.", "내 독서 모임에서 어떤 작가의 책을 읽고 있지?"
        ),
        Fact("내 꿈은 바닷가에 작은 북카페를 여는 거야.", "내가 언젠가 하고 싶은 가게는 뭐야?"),
    ),
    filler=(
        "좋은 아침! 오늘 기분 어때?",
        "하하, 그거 웃기다.",
        "오늘 날씨가 정말 좋네.",
        "방금 커피 한 잔 마셨어.",
        "음, 잠깐 생각해 볼게.",
        "그거 재밌다, 더 얘기해 줘.",
        "오늘 오후에는 좀 피곤해.",
        "고마워, 많이 도움이 됐어.",
        "음, 그건 잘 모르겠어.",
        "다른 얘기 하자.",
        "어젯밤에 영화 봤는데 그냥 그랬어.",
        "미안, 잠깐 바빴어.",
    ),
    ack="그렇구나. 더 얘기해 줘.",
)

THREADS = {"en": ENGLISH, "ko": KOREAN}


def sessions(thread: Thread) -> list[list[tuple[str, int | None]]]:
    """Each session's turns in order: (the user's line, the fact's index or None for filler).
    Facts are spread among the filler, never two in a row."""
    out: list[list[tuple[str, int | None]]] = []
    fact = 0
    for number, (facts, fillers) in enumerate(SESSIONS):
        turns: list[tuple[str, int | None]] = []
        filler = iter(thread.filler[(number * 3 + n) % len(thread.filler)] for n in range(fillers))
        gap = fillers // facts
        for _ in range(facts):
            turns += [(next(filler), None) for _ in range(gap)]
            turns.append((thread.facts[fact].line, fact))
            fact += 1
        turns += [(line, None) for line in filler]
        out.append(turns)
    return out
