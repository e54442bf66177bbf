"""LlmExtractor.extract against a fake OpenAI-compatible server."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("openai")

from memory_engine.adapters.openai import LlmBadOutput, LlmExtractor, LlmUnavailable, chat_client
from memory_engine.adapters.openai.client import RetryPolicy
from memory_engine.extraction.prompts.render import compact_schema
from memory_engine.extraction.schema import MemoryOut, strict_json_schema
from memory_engine.ports import ExtractionContext
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, chat_completion, error_body
from tests.llm.builders import MODEL, as_content, memory_answer, prompt_text, turns

Make = Callable[..., LlmExtractor]
EN = ExtractionContext(user_name="Caroline", language="en")
BATCH = turns(
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful.", ""),
    ("Melanie", "Wow, Caro, I'm proud of you! How did it feel?", ""),
)


def test_the_request_carries_the_model_the_schema_and_the_batchs_turns(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a server that answers validly
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    make_extractor().extract(BATCH, EN)
    # Then the one request names the model, the strict schema and every turn of the batch
    [request] = server.requests
    assert request["model"] == MODEL
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["strict"] is True
    assert request["response_format"]["json_schema"]["schema"] == strict_json_schema(MemoryOut)
    text = prompt_text(request)
    assert all(json.dumps(turn.query, ensure_ascii=False) in text for turn in BATCH)
    assert '<dialogue>\nuser: "Caroline"\n' in request["messages"][1]["content"]


def test_a_valid_answer_becomes_an_extraction_with_every_field_filled(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a valid answer that cost 321 + 123 tokens
    answer = memory_answer()
    server.script((200, chat_completion(as_content(answer), prompt_tokens=321, completion_tokens=123)))
    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)
    # Then every field is filled from the answer, and the cost is recorded
    fields = extraction.fields
    assert fields.summary == answer["summary"]
    assert fields.keywords == answer["keywords"]
    assert fields.key_facts == [fact["fact"] for fact in answer["key_facts"]]
    assert fields.key_dialogue == ["Caroline: It was so powerful.", "Melanie: I'm proud of you!"]
    assert fields.intent == answer["intent"]
    assert fields.location == answer["location"]
    assert fields.characters == ["Caroline", "Melanie"]
    assert extraction.metadata | {"characters_json": "…"} == {
        "extractor": "llm",
        "model": "fake-model",
        "prompt_version": "en-v4",
        "structured_output": "json_schema",
        "language": "en",
        "prompt_tokens": 321,
        "completion_tokens": 123,
        "attempts": 1,
        "tokens_estimated": 0,
        "characters_json": "…",
    }
    assert json.loads(str(extraction.metadata["characters_json"])) == {
        "Caroline": ["Caro"],
        "Melanie": ["Mel"],
    }


def test_a_malformed_answer_is_repaired_by_exactly_one_call_that_names_the_validation_errors(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a first answer without a summary, then a valid one
    broken = memory_answer()
    del broken["summary"]
    server.script(
        (200, chat_completion(as_content(broken))), (200, chat_completion(as_content(memory_answer())))
    )
    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)
    # Then exactly one repair request was made, quoting the bad answer and naming the missing field
    first, repair = server.requests
    assert repair["messages"][:2] == first["messages"]
    assert repair["messages"][2] == {"role": "assistant", "content": as_content(broken)}
    assert "summary: Field required" in repair["messages"][3]["content"]
    assert extraction.metadata["attempts"] == 2
    assert extraction.metadata["prompt_tokens"] == 200


def test_repairs_and_fresh_tries_are_not_sent_at_the_first_requests_temperature(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a model that answers prose three times, then validly
    server.script(
        *[(200, chat_completion("Sure! Here is the memory."))] * 3,
        (200, chat_completion(as_content(memory_answer()))),
    )
    # When a batch is extracted at temperature 0 with repairs at 0.6
    make_extractor(temperature=0.0, retry_temperature=0.6).extract(BATCH, EN)
    # Then only the first request is at 0: at 0 the same question gets the same answer again
    assert [request["temperature"] for request in server.requests] == [0.0, 0.6, 0.6, 0.6]


def test_a_model_without_temperature_gets_none_on_repairs_either(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an answer that needs a repair, for a model configured without a temperature
    server.script(
        (200, chat_completion("Sure! Here is the memory.")),
        (200, chat_completion(as_content(memory_answer()))),
    )
    # When a batch is extracted
    make_extractor(temperature=None).extract(BATCH, EN)
    # Then no request names a temperature (reasoning models reject one)
    assert all("temperature" not in request for request in server.requests)


def test_a_truncated_answer_is_repaired_by_asking_for_a_shorter_one(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an answer cut off at the token limit, then a valid one
    cut = as_content(memory_answer())[:80]
    server.script(
        (200, chat_completion(cut, finish_reason="length")),
        (200, chat_completion(as_content(memory_answer()))),
    )
    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)
    # Then the repair request says the answer was cut off
    assert "cut off at the length limit" in server.requests[1]["messages"][-1]["content"]
    assert extraction.fields.summary == memory_answer()["summary"]


def test_an_answer_that_stays_malformed_makes_extract_raise_after_bounded_retries(
    server: FakeOpenAIServer, make_extractor: Make, sleeps: list[float]
) -> None:
    # Given a model that never answers JSON
    server.script(*[(200, chat_completion("Sure! Here is the memory you asked for."))] * 4)
    extractor = make_extractor(retry=RetryPolicy(content_rounds=2, base_delay_s=1.5))
    # When a batch is extracted
    # Then it raises (nothing is returned), after two rounds of answer + repair and one backoff
    with pytest.raises(LlmBadOutput, match="no valid answer in 4 requests"):
        extractor.extract(BATCH, EN)
    assert len(server.requests) == 4
    assert sleeps == [1.5]


def test_a_rate_limited_request_is_retried_after_the_servers_retry_after(
    server: FakeOpenAIServer, make_extractor: Make, sleeps: list[float]
) -> None:
    # Given a 429 asking to come back in 1.5 s, then a valid answer
    server.script(
        (429, error_body("Rate limit reached", "rate_limit_error"), {"Retry-After-Ms": "1500"}),
        (200, chat_completion(as_content(memory_answer()))),
    )
    # When a batch is extracted
    extraction = make_extractor().extract(BATCH, EN)
    # Then the request was sent again after waiting as told, and the retry counts as an attempt
    assert len(server.requests) == 2
    assert extraction.metadata["attempts"] == 2
    assert sleeps == [1.5]


def test_a_timed_out_request_is_retried_by_the_client(
    server: FakeOpenAIServer, make_extractor: Make, sleeps: list[float]
) -> None:
    # Given a server far slower than the client's timeout once, then quick (the timeout leaves a
    # loaded host seconds for the quick answer: no assertion on how long anything took)
    server.script(
        Scripted(200, chat_completion(as_content(memory_answer())), delay_s=20.0),
        (200, chat_completion(as_content(memory_answer()))),
    )
    # When a batch is extracted with a 3 s timeout
    extraction = make_extractor(timeout_s=3.0).extract(BATCH, EN)
    # Then the retry, after a short backoff, succeeded
    assert extraction.fields.summary
    assert len(server.requests) == 2 and extraction.metadata["attempts"] == 2
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 0.5


def test_an_endpoint_failing_past_the_retry_bound_raises_unavailable(
    server: FakeOpenAIServer, make_extractor: Make, sleeps: list[float]
) -> None:
    # Given a server that keeps failing with 503 (asking for quick retries, to keep the test short)
    server.script(*[(503, error_body("overloaded", "server_error"), {"Retry-After-Ms": "10"})] * 3)
    # When a batch is extracted with at most 3 attempts
    # Then it raises after 3 requests
    with pytest.raises(LlmUnavailable, match="failed 3 times"):
        make_extractor(retry=RetryPolicy(transport_attempts=3)).extract(BATCH, EN)
    assert len(server.requests) == 3
    assert sleeps == [0.01, 0.01]


def test_a_refused_request_is_not_retried(server: FakeOpenAIServer, make_extractor: Make) -> None:
    # Given a server that rejects the key
    server.script((401, error_body("Incorrect API key provided", code="invalid_api_key")))
    # When a batch is extracted
    # Then it raises at once, saying what to check
    with pytest.raises(LlmUnavailable, match="OPENAI_API_KEY"):
        make_extractor().extract(BATCH, EN)
    assert len(server.requests) == 1


def test_korean_text_comes_back_from_the_model_untouched(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a Korean batch and a Korean answer
    batch = turns(("김민수", "어제 부산에서 돼지국밥을 먹었어.", "와, 맛있었겠다! 누구랑 갔어?"))
    answer = memory_answer(
        summary="김민수는 어제 부산에서 돼지국밥을 먹었다고 말했다. 상대는 누구와 갔는지 물었다.",
        keywords=["부산", "돼지국밥", "여행"],
        key_facts=[{"turn": 1, "fact": "김민수는 부산에서 돼지국밥을 먹었다."}],
        key_dialogue=[{"speaker": "김민수", "quote": "어제 부산에서 돼지국밥을 먹었어."}],
        intent="김민수는 여행 이야기를 나누고 싶어 한다.",
        location="부산, 2024년 5월 7일",
        characters=[{"name": "김민수", "aliases": ["민수"]}],
    )
    server.script((200, chat_completion(as_content(answer))))
    # When it is extracted in Korean (the default)
    extraction = make_extractor().extract(batch, ExtractionContext(user_name="김민수"))
    # Then the prompt carries the Korean turn as written, and the fields are the model's text exactly
    request = server.requests[0]
    assert "어제 부산에서 돼지국밥을 먹었어." in prompt_text(request)
    assert "모든 텍스트 값은 한국어로 쓰세요." in prompt_text(request)
    fields = extraction.fields
    assert (fields.summary, fields.keywords, fields.intent, fields.location) == (
        answer["summary"],
        answer["keywords"],
        answer["intent"],
        answer["location"],
    )
    assert fields.key_dialogue == ["김민수: 어제 부산에서 돼지국밥을 먹었어."]
    dumped = json.dumps(fields.model_dump(), ensure_ascii=False)
    assert json.loads(dumped) == fields.model_dump()
    assert answer["summary"] in dumped
    assert extraction.metadata["prompt_version"] == "ko-v4"
    # (the NPC who answered is a speaker, so a character too)
    assert json.loads(str(extraction.metadata["characters_json"])) == {"김민수": ["민수"], "npc": []}


def test_fields_over_their_bounds_are_trimmed_not_rejected(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given an answer over every bound, with facts out of order
    answer = memory_answer(
        summary=" ".join(f"Sentence {n}." for n in range(1, 21)),
        keywords=[f"kw{n}" for n in range(80)] + ["KW1"],
        key_facts=[{"turn": 2 - n % 2, "fact": f"fact {n}"} for n in range(30)],
        key_dialogue=[{"speaker": "Caro", "quote": f"line {n}"} for n in range(6)]
        + [{"speaker": "Melanie", "quote": "hi"}],
        intent="One. Two. Three. Four. Five. Six.",
    )
    server.script((200, chat_completion(as_content(answer))))
    # When it is extracted
    fields = make_extractor().extract(BATCH, EN).fields
    # Then each field is cut to its bound, facts in turn order, quotes 4 per (canonical) character
    assert fields.summary == " ".join(f"Sentence {n}." for n in range(1, 13))
    assert fields.keywords == [f"kw{n}" for n in range(65)]
    assert len(fields.key_facts) == 18
    assert fields.key_facts[0] == "fact 1" and fields.key_facts[-1] == "fact 28"
    assert fields.key_dialogue == [f"Caroline: line {n}" for n in range(4)] + ["Melanie: hi"]
    assert fields.intent == "One. Two. Three. Four."


def test_speakers_the_model_left_out_are_still_characters(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a batch where Caroline talks to the NPC Luna, and a model answering no characters
    # (as the 1.5B model did for a batch of eight Korean turns)
    batch = turns(("Caroline", "I adopted a dog.", "How lovely!"))
    batch = [turn.model_copy(update={"npc_id": "Luna"}) for turn in batch]
    server.script((200, chat_completion(as_content(memory_answer(characters=[])))))
    # When the batch is extracted
    extraction = make_extractor().extract(batch, EN)
    # Then the batch's speakers are its characters, and the registry learns them
    assert extraction.fields.characters == ["Caroline", "Luna"]
    assert json.loads(str(extraction.metadata["characters_json"])) == {"Caroline": [], "Luna": []}


def test_a_speaker_the_model_named_by_an_alias_is_not_added_twice(
    server: FakeOpenAIServer, make_extractor: Make
) -> None:
    # Given a model that lists Caroline only as "Caro", alias of the thread's known Caroline
    server.script(
        (200, chat_completion(as_content(memory_answer(characters=[{"name": "Caro", "aliases": []}]))))
    )
    known = ExtractionContext(user_name="Caroline", language="en", known_characters={"Caroline": ["Caro"]})
    # When a batch Caroline speaks in is extracted
    fields = make_extractor().extract(turns(("Caroline", "hi", "")), known).fields
    # Then she is one character, under her canonical name
    assert fields.characters == ["Caroline"]


def test_json_mode_tells_the_schema_in_the_prompt(server: FakeOpenAIServer, make_extractor: Make) -> None:
    # Given an extractor for a server with JSON mode only
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When a batch is extracted
    make_extractor(structured_output="json_object").extract(BATCH, EN)
    # Then the response format is JSON mode and the schema is in the system prompt
    request = server.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert compact_schema(strict_json_schema(MemoryOut)) in request["messages"][0]["content"]


def test_length_limit_cuts_each_turn_fed_to_the_model(server: FakeOpenAIServer, make_extractor: Make) -> None:
    # Given a turn of 50 characters of query and 50 of answer
    batch = turns(("Caroline", "q" * 50, "a" * 50))
    server.script((200, chat_completion(as_content(memory_answer()))))
    # When it is extracted with length_limit 60
    make_extractor().extract(batch, ExtractionContext(language="en", length_limit=60))
    # Then the prompt holds the whole query and the first 10 characters of the answer
    text = prompt_text(server.requests[0])
    assert '"' + "q" * 50 + '" | ' in text
    assert "a" * 10 + "…" in text and "a" * 11 not in text


def test_no_request_starts_past_the_deadline(server: FakeOpenAIServer, sleeps: list[float]) -> None:
    # Given a model that keeps answering prose and a clock that jumps 100 s per reading
    server.script(*[(200, chat_completion("Sure! Here is the memory."))] * 4)
    ticks = iter(range(0, 10_000, 100))
    extractor = LlmExtractor(
        chat_client()(
            model=MODEL,
            base_url=server.base_url,
            sleep=sleeps.append,
            clock=lambda: float(next(ticks)),
            retry=RetryPolicy(deadline_s=150),
        )
    )
    # When a batch is extracted
    # Then it gives up once the next request (the repair) would start past the deadline
    with pytest.raises(LlmUnavailable, match="Gave up on the LLM after 150 s"):
        extractor.extract(BATCH, EN)
    assert len(server.requests) == 1 and sleeps == []


def test_no_request_runs_past_the_batchs_deadline(server: FakeOpenAIServer, sleeps: list[float]) -> None:
    # Given a batch with 2 s left on its deadline and a per-request timeout of 300 s
    server.script((200, chat_completion(as_content(memory_answer()))))
    readings = iter([0.0, 598.0])
    client = RecordingOpenAI()
    extractor = LlmExtractor(
        chat_client()(
            model=MODEL,
            base_url=server.base_url,
            sleep=sleeps.append,
            clock=lambda: next(readings, 598.0),
            retry=RetryPolicy(deadline_s=600),
            timeout_s=300,
            client=client.wrapping(server.base_url),
        )
    )
    # When a batch is extracted
    extractor.extract(BATCH, EN)
    # Then its one request was given the 2 s left as its timeout, not 300 s
    assert client.timeouts == [2.0]


def test_a_retry_is_not_started_when_its_backoff_would_end_past_the_deadline(
    server: FakeOpenAIServer, sleeps: list[float]
) -> None:
    # Given an endpoint that times out, 1.2 s before the batch's deadline
    server.script(Scripted(200, chat_completion(as_content(memory_answer())), delay_s=1.0))
    readings = iter([0.0, 598.0, 599.8])
    extractor = LlmExtractor(
        chat_client()(
            model=MODEL,
            base_url=server.base_url,
            sleep=sleeps.append,
            clock=lambda: next(readings, 599.8),
            draw=lambda: 1.0,
            retry=RetryPolicy(deadline_s=600),
            timeout_s=0.2,
        )
    )
    # When a batch is extracted
    # Then it gives up instead of retrying past the deadline (the openai client's own retries are off)
    with pytest.raises(LlmUnavailable, match="Gave up on the LLM after 600 s"):
        extractor.extract(BATCH, EN)
    assert len(server.requests) == 1 and sleeps == []


class RecordingOpenAI:
    """An openai client whose chat requests note the timeout each was given."""

    def __init__(self) -> None:
        self.timeouts: list[float] = []

    def wrapping(self, base_url: str) -> Any:
        import openai

        real = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        create = real.chat.completions.create
        timeouts = self.timeouts

        def noting(**request: Any) -> Any:
            timeouts.append(request["timeout"])
            return create(**request)

        real.chat.completions.create = noting
        return real


def test_without_the_openai_package_building_the_extractor_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given an interpreter where `openai` cannot be imported
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.delitem(sys.modules, "memory_engine.adapters.openai.client", raising=False)
    # When an LLM extractor is built
    # Then the error names the extra to install
    with pytest.raises(LlmUnavailable, match=r"memory-engine-server\[llm\]"):
        LlmExtractor(chat_client()(model=MODEL))
