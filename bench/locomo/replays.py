"""Ranking ideas replayed over the engine's gathered evidence: issue #14's round 4 (docs/retrieval.md).

    python -m bench.locomo.replays [--data FILE] [--cases FILE]

Each question's evidence is gathered once through `retrieve.gather`, as `bench.locomo.tune` does
(`--cases` keeps it, in tune's format), then ranked with the shipped weights and one change at a
time, and scored as the harness scores it (Recall@5, Recall@10, NDCG@10 and their mean over
categories 1–4):

- lift: raw buffered turns raised against memories (`memory_handicap`);
- size: a unit discounted by the places it fills, λ · (turns − 1) / 7;
- halves / seam: every memory cut in two, at its midpoint or where neighbouring turns' vectors are
  least alike (below a threshold), each part keeping its memory's document scores. A simulation:
  the engine cannot return part of a memory, whose summary speaks for all its turns;
- passage: the question also embedded as an e5 passage, its cosines to each turn and window mixed
  into the query-mode ones;
- minilm: MiniLM's cosine to each candidate turn added to e5's;
- event dates: a turn also matches the dates its own words name relative to when it was said
  ("last night", "yesterday", "last weekend", "last month"), for questions that name a date;

and where the misses are: the rank of the first unit holding a gold turn, and the ceiling, an
oracle that puts the units holding gold turns first (densest first), each unit's order unchanged.
Vectors come from the harness's cache in bench/.cache (missing ones are embedded). Writes
bench/results/locomo_replays.json.
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import save
from bench.locomo.data import Conversation, default_data, load
from bench.locomo.engine_run import CachingEmbedder, cache_name
from bench.locomo.metrics import HEADLINE, ndcg_at, recall_at
from bench.locomo.tune import CACHE, Case, _cases
from memory_engine.ports.embedder import EmbedMode
from memory_engine.retrieval.config import DEFAULT_WEIGHTS, RetrievalConfig
from memory_engine.retrieval.dates import DateMention, date_match, named_dates, relative_dates
from memory_engine.retrieval.fusion import FusionWeights, TurnEvidence, rank

Unit = tuple[float, list[str]]  # a unit's score and the dialogs it stands for, in ranking order
Turns = Callable[[Case], list[TurnEvidence]]  # a case's turn evidence, rescored


def units(case: Case, weights: FusionWeights = DEFAULT_WEIGHTS, turns: Turns | None = None) -> list[Unit]:
    """Fusion's ranking of one question, each unit as the harness expands it (its evidence, best
    first, then its other source turns)."""
    ev = case.evidence
    weights = RetrievalConfig(weights=weights).weights_for(case.question.question)
    out = []
    for unit in rank(ev.memories, turns(case) if turns else ev.turns, weights, ev.memory_ids):
        if unit.key in case.dialogs:
            sources = case.dialogs[unit.key]
            out.append((unit.score, [_dialog(case, key) for key, _ in unit.turns] + list(sources)))
    return out


def _dialog(case: Case, key: str) -> str:
    """The dialog a turn key names: a buffered turn's own, or a memory's source at its position."""
    buffered = case.evidence.buffered.get(key)
    if buffered is not None:
        return buffered.dialog_uuid
    owner, position = key.rsplit(":", 1)
    return case.dialogs[owner][int(position)]


def score(cases: Sequence[Case], ranked: Callable[[Case], list[Unit]]) -> dict[str, float]:
    """Recall@5, Recall@10, NDCG@10 and their mean over categories 1–4."""
    r5, r10, nd = [], [], []
    for case in cases:
        if case.question.category not in HEADLINE:
            continue
        found = sorted(ranked(case), key=lambda unit: -unit[0])
        order = list(dict.fromkeys(dialog for _, dialogs in found for dialog in dialogs))
        gold = case.question.gold_turns
        r5.append(recall_at(order, gold, 5))
        r10.append(recall_at(order, gold, 10))
        nd.append(ndcg_at(order, gold, 10))
    means = {"R@5": statistics.fmean(r5), "R@10": statistics.fmean(r10), "NDCG@10": statistics.fmean(nd)}
    return {**means, "objective": statistics.fmean(means.values())}


def size_discounted(case: Case, per_place: float) -> list[Unit]:
    return [(s - per_place * (len(set(dialogs)) - 1) / 7, dialogs) for s, dialogs in units(case)]


def split(case: Case, cut: Callable[[Case, tuple[str, ...]], int | None]) -> list[Unit]:
    """Every memory in two at `cut`'s position (None: whole), each part scored by its best turn
    plus its memory's document terms."""
    ev = case.evidence
    weights = RetrievalConfig(weights=DEFAULT_WEIGHTS).weights_for(case.question.question)
    out: list[Unit] = []
    for unit in rank(ev.memories, ev.turns, weights, ev.memory_ids):
        if unit.key not in case.dialogs:
            continue
        sources = case.dialogs[unit.key]
        if unit.key in ev.buffered:
            out.append((unit.score, list(sources)))
            continue
        document = unit.score - (unit.turns[0][1] if unit.turns else 0.0)
        scored = {int(key.rsplit(":", 1)[1]): s for key, s in unit.turns}
        at = cut(case, sources)
        for part in [range(len(sources))] if at is None else [range(at), range(at, len(sources))]:
            best = sorted(((scored[p], p) for p in part if p in scored), reverse=True)
            dialogs = [sources[p] for _, p in best] + [sources[p] for p in part]
            out.append(((best[0][0] if best else 0.0) + document, dialogs))
    return out


def midpoint(_: Case, sources: tuple[str, ...]) -> int | None:
    """Where `split` cuts a memory of four turns or more in halves."""
    return len(sources) // 2 if len(sources) >= 4 else None


def oracle(case: Case) -> list[Unit]:
    """The engine's units with those holding gold turns first, the densest in gold first."""
    gold = set(case.question.gold_turns)
    out = []
    for s, dialogs in units(case):
        turns = set(dialogs)
        out.append((1000 + len(gold & turns) / len(turns) if gold & turns else s, dialogs))
    return out


def first_gold_rank(cases: Sequence[Case]) -> Counter[str]:
    """How many questions have their first gold-holding unit at each rank (6+: further; none),
    and of those whose first unit holds none, how many have a gold turn within three turns of it
    in the same session ("near")."""
    ranks: Counter[str] = Counter()
    for case in cases:
        if case.question.category not in HEADLINE:
            continue
        gold = set(case.question.gold_turns)
        ranked = units(case)
        found = [i for i, (_, dialogs) in enumerate(ranked) if gold & set(dialogs)]
        ranks["none" if not found else str(found[0]) if found[0] < 6 else "6+"] += 1
        if ranked and (not found or found[0] > 0):
            ranks["near" if any(_near(g, d) for g in gold for d in ranked[0][1]) else "far"] += 1
    return ranks


def _near(one: str, other: str) -> bool:
    """Two LoCoMo dia_ids ("D<session>:<turn>") of one session at most three turns apart."""
    (a_session, a_turn), (b_session, b_turn) = one[1:].split(":"), other[1:].split(":")
    return a_session == b_session and abs(int(a_turn) - int(b_turn)) <= 3


_LAST_NIGHT = re.compile(r"\blast night\b", re.IGNORECASE)
_LAST_WEEKEND = re.compile(r"\blast weekend\b", re.IGNORECASE)


def event_dates(text: str, said: datetime) -> list[datetime]:
    """The days or months a turn's words name relative to when it was said (a month as its 1st)."""
    mentions = relative_dates(text, said)
    if _LAST_NIGHT.search(text):
        night = said - timedelta(days=1)
        mentions.append(DateMention(night.year, night.month, night.day))
    if _LAST_WEEKEND.search(text):
        saturday = said - timedelta(days=(said.weekday() - 5) % 7 or 7)
        for day in (saturday, saturday + timedelta(days=1)):
            mentions.append(DateMention(day.year, day.month, day.day))
    return [datetime(m.year, m.month, m.day or 1) for m in mentions if m.year and m.month]


class Lines:
    """Each turn's text as the engine embeds it ("speaker: said") and as the baselines do, by
    (conversation, dia_id)."""

    def __init__(self, conversations: Sequence[Conversation]) -> None:
        self.engine: dict[tuple[str, str], str] = {}
        self.protocol: dict[tuple[str, str], str] = {}
        self.said: dict[tuple[str, str], datetime] = {}
        for conversation in conversations:
            for session in conversation.sessions:
                for turn in session.turns:
                    key = (conversation.sample_id, turn.dia_id)
                    self.engine[key] = f"{turn.speaker}: {turn.said()}".strip()
                    self.protocol[key] = turn.line()
                    self.said[key] = session.date

    def window(self, case: Case, key: str) -> str | None:
        """The ±1 window within its memory that extraction embeds for a memory's turn key."""
        if key in case.evidence.buffered:
            return None
        owner, position = key.rsplit(":", 1)
        sources, at = case.dialogs[owner], int(position)
        sample = case.question.sample_id
        return "\n".join(self.engine[sample, dialog] for dialog in sources[max(at - 1, 0) : at + 2])


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data())
    parser.add_argument("--cases", type=Path, default=None, help="pickle of gathered evidence (reused)")
    args = parser.parse_args(argv)
    import numpy as np

    from memory_engine.settings import Settings
    from memory_engine.wiring import build_embedder

    cases = _cases(args)
    lines = Lines(load(args.data))
    settings = Settings()
    e5 = CachingEmbedder(build_embedder(settings), CACHE / f"embeddings-{cache_name(settings)}.pkl")
    rows: dict[str, dict[str, float]] = {}

    def add(name: str, ranked: Callable[[Case], list[Unit]]) -> None:
        rows[name] = score(cases, ranked)
        print(f"{name:28} " + "  ".join(f"{k} {v:.4f}" for k, v in rows[name].items()), flush=True)

    add("default", units)
    for lift in (0.1, 0.2, 0.3, 0.4, 0.45, 0.5):
        add(f"lift {lift}", partial(units, weights=replace(DEFAULT_WEIGHTS, memory_handicap=lift)))
    for per_place in (0.005, 0.01, 0.02, 0.05):
        add(f"size {per_place}", partial(size_discounted, per_place=per_place))
    add("halves", partial(split, cut=midpoint))

    def vector(text: str, mode: EmbedMode = "passage") -> Any:
        return np.asarray(e5.embed([text], mode)[0])

    def seam(case: Case, sources: tuple[str, ...], below: float) -> int | None:
        if len(sources) < 4:
            return None
        sample = case.question.sample_id
        vectors = [vector(lines.engine[sample, dialog]) for dialog in sources]
        alike = [(float(vectors[i] @ vectors[i + 1]), i + 1) for i in range(1, len(sources) - 2)]
        least, at = min(alike)
        return at if least < below else None

    for below in (0.8, 0.84, 0.88, 0.95):
        add(f"seam < {below}", partial(split, cut=partial(seam, below=below)))

    def mixed(share: float) -> Turns:
        def turns(case: Case) -> list[TurnEvidence]:
            asked = vector(case.question.question, "passage")
            out = []
            for turn in case.evidence.turns:
                line = lines.engine[case.question.sample_id, _dialog(case, turn.key)]
                window = lines.window(case, turn.key)
                dense = (1 - share) * turn.dense + share * float(asked @ vector(line))
                near = turn.window
                if near is not None and window is not None:
                    near = (1 - share) * near + share * float(asked @ vector(window))
                out.append(replace(turn, dense=dense, window=near))
            return out

        return turns

    for share in (0.25, 0.5, 1.0):
        add(f"passage {share}", partial(units, turns=mixed(share)))
    e5.save()

    from memory_engine.adapters.local.onnx_embedder import OnnxEmbedder

    minilm = CachingEmbedder(OnnxEmbedder("minilm"), CACHE / "embeddings-minilm.pkl")

    def second_opinion(weight: float) -> Turns:
        def turns(case: Case) -> list[TurnEvidence]:
            asked = np.asarray(minilm.embed([case.question.question], "query")[0])
            out = []
            for turn in case.evidence.turns:
                line = lines.protocol[case.question.sample_id, _dialog(case, turn.key)]
                extra = weight * float(asked @ np.asarray(minilm.embed([line])[0]))
                window = None if turn.window is None else turn.window + extra
                out.append(replace(turn, dense=turn.dense + extra, window=window))
            return out

        return turns

    for weight in (0.05, 0.1, 0.2, 0.5):
        add(f"minilm {weight}", partial(units, turns=second_opinion(weight)))
    minilm.save()

    def dated(share: float) -> Turns:
        def turns(case: Case) -> list[TurnEvidence]:
            asked = named_dates(case.question.question)
            if not asked:
                return case.evidence.turns
            out = []
            for turn in case.evidence.turns:
                key = (case.question.sample_id, _dialog(case, turn.key))
                told = event_dates(lines.engine[key], lines.said[key])
                match = max((date_match(day, asked) for day in told), default=0.0)
                out.append(replace(turn, on_date=max(turn.on_date, share * match)))
            return out

        return turns

    for share in (0.5, 1.0):
        add(f"event dates {share}", partial(units, turns=dated(share)))
    add("oracle unit order", oracle)
    misses = first_gold_rank(cases)
    print("rank of the first unit holding a gold turn:", dict(sorted(misses.items())))
    payload = {"data": args.data.name, "rows": rows, "first_gold_rank": dict(sorted(misses.items()))}
    save("locomo_replays", payload)
    return payload


if __name__ == "__main__":
    main()
