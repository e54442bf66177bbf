"""Would a buffered turn hold its place beside memories if it were scored as part of a batch, as a
memory is? Replayed over `forming_power`'s captures; printed, not saved (docs/research/retrieval.md).

    python -m bench.experiments.forming_batches --out DIR [DIR ...]

At a forming state most of what `forming_loss diagnose` finds lost is an answer still buffered that
memories pushed out of the first ten places, and most of their lead is the memory document's BM25:
a memory is scored as one document holding its whole batch of dialogue (and its summary, keywords
and facts), while a buffered turn brings only its own line. The same answers, once extracted, are
found far more often (EmbeddingGemma, all six dev conversations, 75 % extracted: 0.759 buffered
against 0.904 all extracted). This replays the shipped ranking with each buffered turn's
own-document BM25 (`memory`) replaced by its *batch's*: the buffered turns of each session cut into
the extraction's batches (`batch_size` consecutive turns, as a memory is made), each batch's lines
and date scored as one document by BM25 over that thread's buffered batches, divided by the best
batch and multiplied by the buffered side's lexical share in the pool raised to `power` (the
memory documents' own scaling, mirrored: `features.memory_candidates`). Everything else is the
capture's. "while forming" applies it only where a question has buffered and memory candidates
(both ends rank as shipped); "everywhere" also at all buffered.

It needs no engine change: the batches are rebuilt from the LoCoMo data and the state's extracted
session count, which is how `forming.ingest_state` split them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from bench.experiments import forming_loss, forming_power
from bench.quality.locomo import forming, forming_tune
from bench.quality.locomo.data import Conversation, default_data, load
from memory_engine.indexing.documents import spoken_date
from memory_engine.retrieval.bm25 import TermCounts, bm25_counted
from memory_engine.retrieval.fusion import rank
from memory_engine.retrieval.text import tokenize
from memory_engine.settings import Settings

# Consecutive turns per memory: the setting's default, read from it rather than written again.
BATCH: int = Settings.model_fields["batch_size"].default
# A ranking of one captured question that also knows the state it was captured at.
StateRanker = Callable[[forming_tune.Captured, str], forming_loss.Scored]
SPLITS = (
    ("all", ("all",)),
    ("conv-26/30", ("conv-26", "conv-30")),
    ("chosen on", forming_tune.CHOOSE_ON),
    ("checked on", forming_tune.CHECK_ON),
)


class Batches:
    """One thread's buffered batches at one state: their counted terms and each turn's batch."""

    def __init__(self, conversation: Conversation, extracted: int, size: int = BATCH) -> None:
        self.docs: dict[str, TermCounts] = {}
        self.of: dict[str, str] = {}
        for session in conversation.sessions[extracted:]:
            for start in range(0, len(session.turns), size):
                chunk = session.turns[start : start + size]
                name = f"S{session.number}:{start // size}"
                text = "\n".join(f"{turn.speaker}: {turn.said()}" for turn in chunk)
                self.docs[name] = TermCounts.of(tokenize(f"{text}\n{spoken_date(session.date)}"))
                self.of.update({turn.dia_id: name for turn in chunk})

    def scores(self, question: str) -> dict[str, float]:
        """Each batch's BM25 over the best batch's (0 where nothing matched)."""
        raw = bm25_counted(self.docs, tokenize(question))
        top = max(raw.values(), default=0.0) or 1.0
        return {name: value / top for name, value in raw.items()}


def ranker(batches: Mapping[tuple[str, str], Batches], power: float, everywhere: bool) -> StateRanker:
    """The shipped ranking with each buffered turn's `memory` feature its batch's scaled BM25."""

    def rank_one(item: forming_tune.Captured, state: str) -> forming_loss.Scored:
        forming_now = bool(item.buffered) and any(turn.memory_id for turn in item.turns)
        turns = list(item.turns)
        if item.buffered and (forming_now or everywhere):
            found = batches[(item.question.sample_id, state)]
            scores = found.scores(item.question.question)
            share = forming_loss.buffered_side_share(item) ** power
            batch = {key: found.of.get(dialog, "") for key, dialog in item.buffered.items()}
            turns = [
                turn._replace(features={**turn.features, "memory": share * scores.get(batch[turn.key], 0.0)})
                if turn.key in batch
                else turn
                for turn in turns
            ]
        return forming_loss.order(item, rank(forming_tune.side_share(2.0)(item), turns, item.weights))

    return rank_one


def table(
    states: Mapping[str, Sequence[forming_tune.Captured]], score: StateRanker | None
) -> dict[str, dict[str, float]]:
    """R@10 per state and conversation, as `forming_loss.table`, with the state passed along."""
    out: dict[str, dict[str, float]] = {}
    for state, captured in states.items():
        one = (lambda item, state=state: score(item, state)) if score else forming_loss.shipped()
        row = forming_loss.table({state: captured}, one)[state]
        out[state] = row
    return out


def margins(found: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Per split: the worst state's R@10 against the floor (the lower end minus the tolerance)."""
    out = []
    for label, samples in SPLITS:
        means = {state: forming_power._mean(dict(row), samples) for state, row in found.items()}
        if any(value is None for value in means.values()):
            continue
        known = {state: value for state, value in means.items() if value is not None}
        floor = min(known[forming.ALL_BUFFERED], known[forming.ALL_EXTRACTED]) - forming.TOLERANCE
        worst = min(known, key=lambda state: known[state])
        out.append(f"{label} {known[worst]:.3f} vs {floor:.3f} ({known[worst] - floor:+.3f})")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, nargs="+", required=True, help="capture folder(s)")
    parser.add_argument("--powers", type=float, nargs="*", default=[0.0, 1.0, 2.0])
    parser.add_argument("--size", type=int, default=BATCH, help="turns per batch")
    args = parser.parse_args(argv)
    states = forming_power.load_states(*args.out)
    conversations = {c.sample_id: c for c in load(default_data())}
    by_name = {state.name: state for state in forming.STATES}
    batches = {
        (sample, name): Batches(conversation, by_name[name].extracted(len(conversation.sessions)), args.size)
        for sample, conversation in conversations.items()
        for name in states
    }
    rows: dict[str, StateRanker | None] = {"shipped": None}
    for power in args.powers:
        for everywhere in (False, True):
            where = "everywhere" if everywhere else "while forming"
            rows[f"batch BM25 x share^{power:g}, {where}"] = ranker(batches, power, everywhere)
    for name, score in rows.items():
        found = table(states, score)
        cells = " / ".join(f"{found[state]['all']:.3f}" for state in found)
        print(f"{name}\n   R@10 per state (all): {cells}")
        for line in margins(found):
            print(f"   {line}")


if __name__ == "__main__":
    main()
