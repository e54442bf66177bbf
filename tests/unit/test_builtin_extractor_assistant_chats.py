"""The built-in extractor on chats with an assistant, in English and Korean: no noise in its
fields. Each test replays one kind of noise it once wrote for such chats (places and
interjections as characters, fragments as keywords, template intents, the assistant's chit-chat
as facts); none of them may come back."""

from __future__ import annotations

from memory_engine.extraction.builtin import BuiltinExtractor
from memory_engine.models.domain import MemoryFields, Turn
from memory_engine.ports import ExtractionContext
from tests.unit.test_builtin_extractor import make_turn

EN = ExtractionContext(language="en")
KO = ExtractionContext(language="ko")


def chat(lines: list[tuple[str, str]], user: str) -> list[Turn]:
    """A chat with the assistant: each pair is the user's line and the assistant's answer."""
    return [make_turn(seq, query, answer, user=user) for seq, (query, answer) in enumerate(lines)]


def extract(lines: list[tuple[str, str]], user: str, context: ExtractionContext) -> MemoryFields:
    return BuiltinExtractor().extract(chat(lines, user), context).fields


ICELAND = [
    ("I just got back from two weeks in Iceland!", "Welcome back! Where did you stay?"),
    (
        "Mostly in Reykjavik, in a small guesthouse near the harbour.",
        "Reykjavik is lovely. Did you see the lights?",
    ),
    ("Definitely, we saw them on our third night. We loved Reykjavik and Iceland.", "How unforgettable."),
    ("My wife Ana cried when they appeared.", "What a special moment for you both."),
]
JAPAN = [
    ("Last year we went to Japan for our anniversary.", "Which city did you visit in Japan?"),
    ("Mostly Kyoto.", "Kyoto is beautiful in autumn."),
]
PETS = [
    ("I adopted a cat. His name is Sheldon and he is two.", "Sheldon is a great name."),
    ("He sleeps on my laptop all day.", "Cats love warm keyboards."),
    ("Fine, I guess. Biscuit ate Sheldon's food twice this week.", "Maybe feed them in separate rooms."),
    ("Biscuit turned five on March 14th.", "I'm glad you celebrated. Happy birthday, Biscuit!"),
    ("Not yet, he prefers the sofa.", "Sheldon has refined taste."),
]
KOREAN_PETS = [
    (
        "우리 강아지 비스킷은 비글이야. 요즘 양말을 자꾸 훔쳐 가.",
        "양말 도둑 비글이라니 귀엽네요! 비스킷은 몇 살이에요?",
    ),
    ("비스킷은 세 살이고 작년 봄에 입양했어.", "한창 장난칠 나이네요."),
    ("고양이 모찌도 있는데 모찌는 다섯 살이야.", "두 마리 다 키우시는군요. 사이는 좋아요?"),
    ("어제는 비스킷이 공원에서 오리를 보고 엄청 짖었어.", "오리가 많이 놀랐겠네요."),
    ("모찌는 창가에서 햇볕 쬐는 걸 제일 좋아해.", "고양이들은 따뜻한 곳을 좋아하죠."),
]
KOREAN_TRAVEL = [
    ("지난달에 독일 베를린에 출장 갔다 왔어.", "베를린은 어땠어요? 겨울 베를린은 꽤 춥죠."),
    ("올여름 휴가는 발리로 가기로 했어.", "발리 좋죠!"),
    ("작년에는 교토에 갔었는데 후시미 이나리가 제일 기억에 남아.", "빨간 도리이가 정말 인상적이죠."),
    ("거기서 아키텍트로 일하는 친구 도윤이를 만났어.", "반갑죠."),
    ("선생님이고 일인데 비스킷이라 그래.", "그렇군요."),
]


def test_places_and_interjections_are_not_characters_in_english() -> None:
    # Given a travel chat naming Iceland and Reykjavik, opening a reply with "Definitely!"
    # When it is extracted
    fields = extract(ICELAND, "Leo", EN)

    # Then the characters are the speakers and the wife the user names
    assert fields.characters == ["Leo", "assistant", "Ana"]


def test_korean_places_breeds_counters_and_nouns_with_particles_are_not_characters() -> None:
    # Given Korean chats naming a beagle, Berlin, Bali, Fushimi Inari, an architect, two 마리 and a duck
    pets = extract(KOREAN_PETS, "수아", KO)
    travel = extract(KOREAN_TRAVEL, "민준", KO)

    # Then none of them is a character, and the dog 비스킷 and the cat 모찌 are
    not_people = {"비글", "베를린", "발리", "후시미", "이나리", "아키", "마리", "오리가", "오리", "도리이"}
    assert not not_people & {*pets.characters, *travel.characters}
    assert pets.characters == ["수아", "assistant", "비스킷", "모찌"]
    assert travel.characters == ["민준", "assistant", "도윤"]


def test_the_assistant_has_one_label_in_summary_facts_and_characters_in_korean_too() -> None:
    # Given a Korean chat whose answers have no npc id (the turn's own text says "assistant:")
    # When it is extracted in Korean
    fields = extract(KOREAN_PETS, "수아", KO)

    # Then the assistant is "assistant" everywhere, never "AI"
    assert "assistant" in fields.characters and "AI" not in fields.characters
    assert "AI:" not in fields.summary
    assert any(quote.startswith("assistant: ") for quote in fields.key_dialogue)


def test_keywords_hold_no_fragments_function_words_or_particles() -> None:
    # Given chats with "14th", "ate", "two", "fine", "glad" and Korean nouns with particles on
    english = extract(PETS, "Maya", EN).keywords
    korean = extract([*KOREAN_PETS, *KOREAN_TRAVEL], "수아", KO).keywords

    # Then none of those is a keyword, and the content words are there in their base form
    assert not {"th", "ate", "two", "fine", "glad", "cats"} & {k.casefold() for k in english}
    assert {"cat", "laptop", "Sheldon", "Biscuit"} <= set(english)
    assert not {"살이", "일인데", "비스킷이라", "선생님이고", "비글이라니", "살이고"} & set(korean)
    assert {"비스킷", "비글", "양말", "모찌", "베를린"} <= set(korean)


def test_intent_without_a_stated_wish_is_empty_not_template_text() -> None:
    # Given a chat where nobody states a wish, a plan or a request (the assistant only guesses)
    fields = extract(KOREAN_PETS[:2], "수아", KO)

    # Then intent is empty
    assert fields.intent == ""


def test_intent_quotes_the_wish_stated_and_never_the_topic_template() -> None:
    # Given a chat where the user states a plan
    fields = extract(KOREAN_TRAVEL, "민준", KO)

    # Then intent quotes it, and no "대화는 주로 ..." line is written
    assert '민준의 바람이나 계획: "올여름 휴가는 발리로 가기로 했어."' in fields.intent
    assert "대화는 주로" not in fields.intent
    assert "신나셨겠어요" not in fields.intent


def test_location_holds_no_weather_or_time_the_turns_do_not_state() -> None:
    # Given "Cats love warm keyboards", a birthday, and "고양이들은 따뜻한 곳을 좋아하죠"
    english = extract(PETS, "Maya", EN).location
    korean = extract(KOREAN_PETS, "수아", KO).location

    # Then no weather and no "birthday" time is made of them
    assert "Weather" not in english
    assert "birthday" not in english
    assert "날씨" not in korean


def test_location_keeps_the_weather_a_user_states() -> None:
    # Given a user who says how the weather was
    fields = extract([("It was freezing and windy the whole time in Iceland.", "Brr!")], "Leo", EN)

    # Then the weather is in the location
    assert "Weather: freezing, windy." in fields.location


def test_a_short_answer_is_a_key_fact_with_its_question() -> None:
    # Given "Mostly Kyoto." answering "Which city did you visit in Japan?"
    facts = extract(JAPAN, "Leo", EN).key_facts

    # Then the answer is kept, with the question that gives it its meaning
    assert 'Leo: Mostly Kyoto. (answering "Which city did you visit in Japan?")' in facts


def test_the_assistants_chit_chat_is_never_a_key_fact() -> None:
    # Given a chat where the assistant remarks on the user's pets
    english = extract(PETS, "Maya", EN).key_facts
    korean = extract(KOREAN_PETS, "수아", KO).key_facts

    # Then every fact is the user's ("assistant: Sheldon has refined taste." and "양말 도둑 비글이라니
    # 귀엽네요!" are not), and the user's own facts are there (the dog kept in Korean)
    assert all(fact.startswith("Maya: ") for fact in english)
    assert all(fact.startswith("수아: ") for fact in korean)
    assert "수아: 우리 강아지 비스킷은 비글이야." in korean
    assert any("Sheldon" in fact and fact.startswith("Maya:") for fact in english)


def test_the_summary_is_the_users_and_leaves_the_assistants_chit_chat_out() -> None:
    # Given a chat where the assistant answers every line
    summary = extract(PETS, "Maya", EN).summary

    # Then the summary is what the user said
    assert summary.startswith("Maya: ")
    assert "assistant:" not in summary and "refined taste" not in summary
