"""Prompts per language, as data, and what the rendered messages carry."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone

from memory_engine.extraction.prompts import PROMPTS, prompt_for
from memory_engine.extraction.prompts.render import facts_messages, format_turns, memory_messages
from memory_engine.extraction.schema import MemoryOut, first_sentences, strict_json_schema
from memory_engine.ports import ExtractionContext
from tests.llm.builders import turns


def test_korean_is_the_default_and_english_has_its_own_prompt() -> None:
    # Given no language, Korean with a region, and English
    # When their prompts are looked up
    # Then each gets its own versioned prompt set
    assert prompt_for(None).version == prompt_for("ko-KR").version == "ko-v5"
    assert prompt_for("EN").version == "en-v5"
    assert all(prompt.version.startswith(code) for code, prompt in PROMPTS.items())


def test_another_language_gets_english_instructions_asking_for_answers_in_that_language() -> None:
    # Given a Japanese memory
    context = ExtractionContext(language="ja", user_name="Yuki")
    # When its prompt is rendered
    messages, prompt = memory_messages(
        turns(("Yuki", "こんにちは、元気？", "")), context, strict_json_schema(MemoryOut)
    )
    # Then the instructions are English, the version is English's, and the answer must be Japanese
    assert prompt.version == "en-v5"
    assert "Write every text value in Japanese." in messages[0]["content"]
    assert "こんにちは、元気？" in messages[1]["content"]


def test_an_unknown_language_code_is_named_as_it_is() -> None:
    # Given a language code the engine has no name for
    # When its prompt is looked up
    # Then the model is told the code itself
    assert prompt_for("xx").language_name == "the language with code 'xx'"


def test_the_time_is_written_only_when_it_changes() -> None:
    # Given three turns, the last one an hour later
    batch = turns(("A", "one", ""), ("B", "two", ""), ("A", "three", ""))
    later = batch[2].model_copy(update={"timestamp": batch[2].timestamp + timedelta(hours=1)})
    # When they are formatted
    text = format_turns([*batch[:2], later], 1000)
    # Then the time heads the first turn and the one after the change
    assert text.splitlines() == [
        '[1] (2024-05-08 13:56 UTC) "A": "one"',
        '[2] "B": "two"',
        '[3] (2024-05-08 14:56 UTC) "A": "three"',
    ]


def test_a_turn_sent_with_an_offset_is_shown_in_utc_and_says_so() -> None:
    # Given a turn said at 20:00 in Seoul (+09:00)
    seoul = timezone(timedelta(hours=9))
    [turn] = turns(("지수", "어제 보리가 처음으로 배변패드에 쉬를 했어!", ""))
    said = turn.model_copy(update={"timestamp": datetime(2024, 5, 13, 0, 36, tzinfo=seoul)})
    # When it is formatted for the prompt
    text = format_turns([said], 1000)
    # Then the time is the same instant, labelled with its zone (not read as local time)
    assert text.startswith('[1] (2024-05-12 15:36 UTC) "지수":')


def test_facts_prompt_numbers_existing_facts_in_order() -> None:
    # Given two existing facts
    # When the facts prompt is rendered in Korean
    messages, prompt = facts_messages(
        ["저는 부산으로 이사했어요."], ["서울에 산다.", "고양이가 있다."], "ko", {}
    )
    # Then they appear as 0 and 1, with the new message
    assert prompt.version == "ko-v5"
    assert '0: "서울에 산다."\n1: "고양이가 있다."' in messages[1]["content"]
    assert '- "저는 부산으로 이사했어요."' in messages[1]["content"]


def test_importing_the_engine_and_the_adapter_does_not_import_openai() -> None:
    # Given a fresh interpreter
    code = (
        "import sys, memory_engine, memory_engine.adapters.openai, memory_engine.extraction.fact_extractor;"
        "import memory_engine.extraction.prompts.render;"
        "assert 'openai' not in sys.modules, 'openai imported eagerly'"
    )
    # When it imports the core and the adapter package
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": "layers/core:."},
    )
    # Then the openai package was not loaded
    assert result.returncode == 0, result.stderr


def test_sentence_trimming_keeps_the_words_as_written_in_any_script() -> None:
    # Given texts of five sentences in English, Korean and Japanese
    english = "One. Two! Three? Four. Five."
    korean = "하나입니다. 둘입니다! 셋인가요? 넷입니다. 다섯입니다."
    japanese = "一です。二です！三ですか？四です。五です。"
    # When each is cut to three sentences
    # Then the first three sentences remain, exactly as written
    assert first_sentences(english, 3) == "One. Two! Three?"
    assert first_sentences(korean, 3) == "하나입니다. 둘입니다! 셋인가요?"
    assert first_sentences(japanese, 3) == "一です。二です！三ですか？"
    assert first_sentences(english, 9) == english
