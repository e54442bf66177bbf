"""bench.quality.llm_extraction without a model: the batches it runs, in which order, what it records of
the server's answers, and how a batch's row and the totals are counted."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.quality.llm_batches import Batch, in_run_order, own_batches
from bench.quality.llm_extraction import Recorder, record
from bench.quality.llm_rows import report, row_of, totals
from memory_engine.extraction.schema import characters_json
from memory_engine.models.domain import MemoryFields
from memory_engine.ports import Extraction, ExtractionContext
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, chat_completion, error_body
from tests.llm.builders import as_content, memory_answer
from tests.llm.recorded import recording


def test_the_own_conversations_are_cut_into_batches_of_eight_at_their_instants() -> None:
    # Given the committed conversations
    batches = own_batches()
    # When they are cut
    first = next(batch for batch in batches if batch.id == "ko-pets#2")
    # Then each batch holds 8 turns, the time sent with +09:00 kept as the same instant in UTC
    assert {len(batch.turns) for batch in batches} == {8}
    assert first.turns[0].timestamp == datetime(2024, 5, 12, 15, 36, tzinfo=UTC)
    assert first.language == "ko" and first.user_name == "지수"
    assert "보리" in first.expected


def _batch(id_: str, source: str = "own") -> Batch:
    return Batch(
        id=id_, source=source, conversation=id_.split("#")[0], turns=[], language="en", user_name="u"
    )


def test_a_run_starts_with_every_conversations_first_batch_and_half_the_locomo_sample() -> None:
    batches = [_batch("a#1"), _batch("a#2"), _batch("b#1"), _batch("L1", "locomo"), _batch("L2", "locomo")]

    order = [batch.id for batch in in_run_order(batches)]

    assert order == ["a#1", "b#1", "L1", "a#2", "L2"]


def test_the_recorder_keeps_each_exchange_with_its_mode_and_body(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    # Given a server that refuses json_schema and answers in JSON mode with a schema
    recorder = Recorder()
    with FakeOpenAIServer() as server:
        server.refuse_mode("json_schema", 500, error_body("response_format type json_schema"))
        server.script((200, chat_completion("{}")))
        client = openai.OpenAI(
            base_url=server.base_url, api_key="x", http_client=recorder.client(), max_retries=0
        )
        # When both requests go through the recording client
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(
                model="m", messages=[], response_format={"type": "json_schema", "json_schema": {"name": "x"}}
            )
        client.chat.completions.create(
            model="m", messages=[], temperature=0.7, response_format={"type": "json_object", "schema": {}}
        )
    # Then both exchanges are kept, refusal and answer, with what was asked
    refused, answered = recorder.exchanges
    assert (refused["mode"], refused["status"]) == ("json_schema", 500)
    assert (answered["mode"], answered["status"], answered["temperature"]) == ("json_object_schema", 200, 0.7)
    assert answered["body"]["choices"][0]["message"]["content"] == "{}"


def test_a_streamed_answer_is_recorded_as_the_completion_its_chunks_make_and_a_cut_one_as_cut() -> None:
    openai = pytest.importorskip("openai")
    # Given a server that streams one whole answer, then one it breaks off after two chunks
    recorder = Recorder()
    with FakeOpenAIServer() as server:
        whole = chat_completion('{"a": "b c"}', prompt_tokens=11, completion_tokens=3)
        server.script((200, whole), Scripted(200, chat_completion('{"x": "y z"}'), cut_after=2))
        client = openai.OpenAI(
            base_url=server.base_url, api_key="x", http_client=recorder.client(), max_retries=0
        )
        # When both are read as streams
        for _ in range(2):
            stream = client.chat.completions.create(
                model="m", messages=[], stream=True, stream_options={"include_usage": True}
            )
            list(stream)
    # Then the first is recorded as its completion, with its usage; the second as cut, no answer
    answered, cut = (exchange["body"] for exchange in recorder.exchanges)
    assert answered["choices"][0]["message"]["content"] == '{"a": "b c"}'
    assert answered["choices"][0]["finish_reason"] == "stop" and answered["usage"]["prompt_tokens"] == 11
    assert cut["cut"] is True and cut["choices"][0]["finish_reason"] is None


def _exchange(status: int, body: Any, mode: str = "json_object_schema") -> dict[str, Any]:
    return {
        "mode": mode,
        "messages": 2,
        "temperature": 0.0,
        "max_tokens": 4000,
        "status": status,
        "body": body,
    }


def _extraction(answer: dict[str, Any]) -> Extraction:
    fields = MemoryFields(
        summary=answer["summary"],
        keywords=answer["keywords"],
        key_facts=[fact["fact"] for fact in answer["key_facts"]],
        key_dialogue=[f"{q['speaker']}: {q['quote']}" for q in answer["key_dialogue"]],
        intent=answer["intent"],
        location=answer["location"],
        characters=[c["name"] for c in answer["characters"]],
    )
    found = {c["name"]: c["aliases"] for c in answer["characters"]}
    return Extraction(
        fields=fields,
        metadata={"structured_output": "json_object_schema", "characters_json": characters_json(found)},
    )


def test_a_batch_answered_after_a_refusal_and_a_repair_counts_as_after_repair_with_every_token() -> None:
    # Given a batch whose server refused a mode, answered prose, then a valid memory
    batch = Batch(
        id="x#1",
        source="own",
        conversation="x",
        turns=[],
        language="en",
        user_name="Caroline",
        expected={"Caroline": ["Caro"], "Melanie": []},
    )
    answer = memory_answer()
    exchanges = [
        _exchange(500, error_body("response_format json_schema"), "json_schema"),
        _exchange(200, chat_completion("Sure!", prompt_tokens=900, completion_tokens=5)),
        _exchange(200, chat_completion(as_content(answer), prompt_tokens=950, completion_tokens=400)),
    ]
    outcome = {"extraction": _extraction(answer), "error": None, "seconds": 123.45}
    # When its row is made
    row = row_of(batch, outcome, exchanges)
    # Then it counts as answered after a repair, with the tokens of both answers and the refused mode
    assert row["outcome"] == "after_repair"
    assert (row["requests"], row["answers"], row["refused_modes"]) == (3, 2, ["json_schema"])
    assert (row["prompt_tokens"], row["completion_tokens"], row["seconds"]) == (1850, 405, 123.5)
    assert row["limits"]["within"] is True
    assert row["characters"]["matched"] == 2


def test_the_totals_count_outcomes_and_leave_given_up_batches_out_of_the_quality_shares() -> None:
    # Given one batch answered at once and one given up
    answered = {
        "outcome": "first_try",
        "limits": {"within": True, "empty": []},
        "hangul_share": 0.9,
        "grounding": {"facts": 4, "facts_grounded": 3, "quotes": 2, "quotes_grounded": 2},
        "characters": {"expected": 3, "matched": 2, "extra": ["Iceland"], "split": [], "conflated": []},
        "prompt_tokens": 1000,
        "completion_tokens": 1500,
        "seconds": 100.0,
    }
    given_up = {"outcome": "given_up", "prompt_tokens": 3000, "completion_tokens": 6000, "seconds": 500.0}
    # When they are totalled
    summary = totals([answered, given_up])
    # Then both count in outcomes, time and tokens; only the answered one in the quality shares
    assert (summary["first_try"], summary["given_up"], summary["within_limits"]) == (1, 1, 1)
    assert (summary["facts_grounded"], summary["quotes_grounded"], summary["characters_recall"]) == (
        0.75,
        1.0,
        0.667,
    )
    assert summary["characters_extra"] == 1
    assert (summary["seconds_total"], summary["completion_tokens_max"]) == (600.0, 6000)


def test_a_recorded_batch_reads_back_as_the_same_turns_and_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an own batch recorded with its known characters and one exchange
    batch = own_batches()[0]
    context = ExtractionContext(
        user_name=batch.user_name, language="ko", known_characters={"보리": ["강아지"]}
    )
    path = record(tmp_path, batch, context, [_exchange(200, chat_completion("{}"))])
    # When the tests' loader reads it
    monkeypatch.setattr("tests.llm.recorded.HERE", tmp_path)
    loaded = recording(path.stem)
    # Then the turns, their instants and the context are the ones the model was given
    assert [(t.query, t.answer, t.user_name, t.timestamp) for t in loaded.turns] == [
        (t.query, t.answer, t.user_name, t.timestamp) for t in batch.turns
    ]
    assert loaded.context == context
    assert json.loads(path.read_text(encoding="utf-8"))["batch"] == batch.id


def test_the_docs_table_has_a_row_per_batch_and_the_totals() -> None:
    # Given a saved run of one answered and one given-up batch
    answered = {
        "batch": "ko-pets#1",
        "outcome": "first_try",
        "requests": 5,
        "seconds": 741.6,
        "prompt_tokens": 1200,
        "completion_tokens": 516,
        "limits": {"within": False, "empty": []},
        "hangul_share": 0.98,
        "grounding": {"facts": 5, "facts_grounded": 4, "quotes": 4, "quotes_grounded": 4},
        "characters": {"expected": 5, "matched": 1, "extra": [], "split": [], "conflated": []},
    }
    given_up = {"batch": "en#1", "outcome": "given_up", "requests": 3, "seconds": 900.0}
    given_up |= {"prompt_tokens": 3000, "completion_tokens": 4000}
    machine = {"cores": 2, "cpu": "test", "load_average_1m": 20.0}
    result = {
        "model": "m",
        "structured_output": "json_schema",
        "machine": machine,
        "rows": [answered, given_up],
    }
    result["totals"] = totals(result["rows"])
    # When the table is made
    lines = report(result)
    # Then each batch has its row, the given-up one without quality figures, and the totals follow
    assert "| ko-pets#1 | first try | 5 | 742 | 1,200 / 516 | no | 98% | 4/5 | 4/4 | 1/5 |" in lines
    assert "| en#1 | given up | 3 | 900 | 3,000 / 4,000 | no |  |  |  |  |" in lines
    assert lines[-1].startswith("In all: 1 of 2 valid at the first answer, 0 after a repair, 1 given up;")
