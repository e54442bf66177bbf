"""Why a forming state loses recall, question by question, and re-scorings of its captured candidates.

    python -m bench.experiments.forming_loss diagnose --out DIR [DIR ...] [--state 3]
    python -m bench.experiments.forming_loss variants --out DIR [DIR ...] [--save NAME --embedder gemma]

Reads the captures of `bench.experiments.forming_power capture` (one pickle per forming state; one
folder per group of conversations). `diagnose` scores every question at one middle state (75 %
extracted by default) against the same question at both ends (all buffered, all extracted) under
the shipped ranking, and sorts the questions that fall below both ends by where their gold turns
are in that state (all buffered, all in memories, on both sides) and by what put them out of the
first ten places: for an answer still buffered, the places memories took before it and the score
parts (`fusion.RankedUnit.parts`) by which the memories ahead of it beat it. `variants` replays
ranking changes over the captured candidates (weights, features or the order of the units; never
the engine) and judges each per split as `forming.check` judges a recorded run; `--save` records
the table in bench/results with its provenance.

It lives outside bench/quality/locomo/ for the reason `forming_power` does (bench/measured.py).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import save
from bench.experiments import forming_power
from bench.quality.locomo import forming, forming_tune
from bench.quality.locomo.data import default_data, load
from bench.quality.locomo.engine_run import LIMIT
from bench.quality.locomo.metrics import HEADLINE, recall_at
from memory_engine.retrieval import features
from memory_engine.retrieval.fusion import RankedUnit, rank

DEPTH = 10
_SESSION = re.compile(r"^D(\d+):")
# The score parts a diagnosis compares (`fusion.rank`'s names; "handicap" is 0 as shipped).
WINDOW_SHARE = 0.5  # RetrievalConfig's window_share, as the captures were gathered
ENDS = (forming.ALL_BUFFERED, forming.ALL_EXTRACTED)
PARTS = ("dense", "window", "lexical", "date", "speaker", "memory", "memory_dense")


@dataclass(frozen=True)
class Scored:
    """One ranking of a captured question: the units in order and the dialogs they stand for."""

    units: list[RankedUnit]  # the units the harness keeps (those with dialogs), best first
    places: list[tuple[str, str]]  # (dialog, the unit's key) in ranked order, each dialog once


# A ranking of one captured question (the default: the shipped one).
Ranker = Callable[[forming_tune.Captured], Scored]


def shipped(power: float = 2.0) -> Ranker:
    """The engine's ranking as shipped: the memory side's share ^ `power` on the memory documents'
    BM25 (`forming_tune.side_share`), the question's own weights."""
    scaler = forming_tune.side_share(power)
    return lambda item: order(item, rank(scaler(item), item.turns, item.weights))


def order(item: forming_tune.Captured, ranked: Iterable[RankedUnit]) -> Scored:
    """`forming_tune._ranking`, keeping which unit put each dialog where: each unit's matched
    turns first, then its others, a dialog counted at its first place."""
    units = [unit for unit in ranked if unit.key in item.dialogs or unit.key in item.buffered][:LIMIT]
    places: dict[str, str] = {}
    for unit in units:
        if unit.key in item.buffered:
            places.setdefault(item.buffered[unit.key], unit.key)
            continue
        sources = item.dialogs[unit.key]
        for key, _ in unit.turns:
            position = key.rsplit(":", 1)[-1]
            if position.isdigit() and int(position) < len(sources):
                places.setdefault(sources[int(position)], unit.key)
        for dialog in sources:
            places.setdefault(dialog, unit.key)
    return Scored(units, list(places.items()))


def key_of(question: Any) -> tuple[str, int]:
    return (question.sample_id, question.qa_index)


def session_of(dialog: str) -> int:
    found = _SESSION.match(dialog)
    return int(found.group(1)) if found else 0


def side(gold: Sequence[str], extracted: int) -> str:
    """Where a question's gold turns are when the first `extracted` sessions are memories."""
    kinds = {"memories" if session_of(dialog) <= extracted else "buffered" for dialog in gold}
    return "both" if len(kinds) > 1 else kinds.pop()


def per_question(captured: Sequence[forming_tune.Captured], ranker: Ranker) -> dict[tuple[str, int], float]:
    """R@10 of every headline question (categories 1–4) under `ranker`."""
    out = {}
    for item in captured:
        if item.question.category in HEADLINE:
            ranked = [dialog for dialog, _ in ranker(item).places]
            out[key_of(item.question)] = recall_at(ranked, item.question.gold_turns, DEPTH)
    return out


def diagnose(
    states: Mapping[str, Sequence[forming_tune.Captured]],
    state: str,
    sessions: Mapping[str, int],
    ranker: Ranker | None = None,
) -> dict[str, Any]:
    """The questions of `state` that fall below both ends, by where their gold turns are, and why
    (below the one end captured where only one is: `ends` says which were compared).

    `sessions`: each conversation's number of sessions (which of them `state` has extracted)."""
    ranker = ranker or shipped()
    extracted = next(s for s in forming.STATES if s.name == state).extracted
    ends = {end: per_question(states[end], ranker) for end in ENDS if end in states}
    groups: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    gaps: dict[str, list[float]] = defaultdict(list)
    causes: Counter[str] = Counter()
    memory_places: list[int] = []
    for item in states[state]:
        question = item.question
        if question.category not in HEADLINE:
            continue
        key = key_of(question)
        scored = ranker(item)
        ranked = [dialog for dialog, _ in scored.places]
        mine = recall_at(ranked, question.gold_turns, DEPTH)
        group = groups[side(question.gold_turns, extracted(sessions[question.sample_id]))]
        lower = min(found[key] for found in ends.values())
        group["questions"] += 1
        group["recall_10"] += mine
        for end, found in ends.items():
            group[f"{end} recall_10"] += found[key]
        memory_places.append(sum(1 for _, unit in scored.places[:DEPTH] if unit not in item.buffered))
        if mine >= lower - 1e-9:
            continue
        group["below_both_ends"] += 1
        group["loss_below_lower_end"] += lower - mine
        for gold in dict.fromkeys(question.gold_turns):
            if gold not in ranked[:DEPTH]:
                causes[_cause(item, scored, gold, gaps)] += 1
    total = len(memory_places)
    means = ("recall_10", *(f"{end} recall_10" for end in ends))
    return {
        "state": state,
        "ends": list(ends),
        "questions": total,
        "memory_places_in_first_10": round(sum(memory_places) / (DEPTH * total), 3) if total else 0.0,
        "by_side": {
            where: {
                name: round(value / group["questions"] if name in means else value, 3)
                for name, value in group.items()
            }
            for where, group in sorted(groups.items())
        },
        "missed_gold_turns_by_cause": dict(causes.most_common()),
        "mean_part_gap_memory_ahead_of_buffered_gold": {
            name: round(sum(values) / len(values), 4) for name, values in gaps.items() if values
        },
        "pairs_compared": len(gaps.get("score", [])),
    }


def _cause(item: forming_tune.Captured, scored: Scored, gold: str, gaps: dict[str, list[float]]) -> str:
    """Why `gold` is not among the first ten places of `scored` (and, for a buffered answer
    outranked by memories, each memory's score parts minus the answer's, into `gaps`)."""
    unit_of = dict(scored.places)
    by_key = {unit.key: unit for unit in scored.units}
    buffered_keys = {dialog: key for key, dialog in item.buffered.items()}
    if gold in buffered_keys:
        unit = by_key.get(buffered_keys[gold])
        if unit is None:
            return "buffered answer: not among the first 50 units"
        ahead = [by_key[key] for key in dict.fromkeys(k for _, k in scored.places[:DEPTH])]
        memories = [other for other in ahead if other.memory_id is not None and other.score > unit.score]
        if not memories:
            return "buffered answer: outranked by other buffered turns"
        for other in memories:
            gaps["score"].append(other.score - unit.score)
            for name in PARTS:
                gaps[name].append(other.parts.get(name, 0.0) - unit.parts.get(name, 0.0))
        return "buffered answer: memories took the first ten places"
    owner = unit_of.get(gold)
    if owner is None:
        if any(gold in dialogs for dialogs in item.dialogs.values()):
            return "answer in a memory: its memory not among the first 50 units"
        return "answer in a memory: its memory not a candidate"
    first = min(place for place, (_, key) in enumerate(scored.places) if key == owner)
    if first < DEPTH:
        return "answer in a memory: its memory is in the first ten, the turn placed past them"
    if any(key in item.buffered for _, key in scored.places[:first]):
        return "answer in a memory: buffered turns ranked ahead of its memory"
    return "answer in a memory: other memories ranked ahead"


def load_sessions() -> dict[str, int]:
    return {c.sample_id: len(c.sessions) for c in load(default_data())}


def table(
    states: Mapping[str, Sequence[forming_tune.Captured]], ranker: Ranker
) -> dict[str, dict[str, float]]:
    """R@10 per state and conversation ("all": every headline question), as `forming_tune.recall`."""
    out: dict[str, dict[str, float]] = {}
    for name, captured in states.items():
        per: dict[str, list[float]] = defaultdict(list)
        for key, value in per_question(captured, ranker).items():
            per[key[0]].append(value)
            per["all"].append(value)
        out[name] = {sample: sum(v) / len(v) for sample, v in per.items()}
    return out


def _own_cosines(item: forming_tune.Captured) -> list[features.TurnCandidate]:
    """While anything is buffered, each memory turn's cosine from its own vector alone (as a
    buffered turn's is): `dense` = its own cosine, `window` 0. Unchanged where nothing is buffered."""
    if not item.buffered:
        return list(item.turns)
    out = []
    for turn in item.turns:
        if turn.memory_id is None or not turn.features.get("window"):
            out.append(turn)
            continue
        own = turn.features["dense"] / (1 - WINDOW_SHARE)
        out.append(turn._replace(features={**turn.features, "dense": own, "window": 0.0}))
    return out


def own_cosines(power: float = 2.0) -> Ranker:
    """Memory turns ranked by their own cosine while forming (no window part a buffered turn lacks)."""
    scaler = forming_tune.side_share(power)
    return lambda item: order(item, rank(scaler(item), _own_cosines(item), item.weights))


def while_forming(name: str, value: float, power: float = 2.0, own: bool = False) -> Ranker:
    """Feature `name`'s weight set to `value` only while the question has both buffered turns and
    memory turns among its candidates (a middle state); both ends rank as shipped. `own`: memory
    turns by their own cosine too (`own_cosines`)."""

    def ranker(item: forming_tune.Captured) -> Scored:
        weights = dict(item.weights)
        if item.buffered and any(turn.memory_id for turn in item.turns):
            weights[name] = value
        turns = _own_cosines(item) if own else item.turns
        return order(item, rank(forming_tune.side_share(power)(item), turns, weights))

    return ranker


def buffered_by(place: int, power: float = 2.0) -> Ranker:
    """The shipped ranking, then the best buffered turn moved up to unit `place` (1-based) where
    memories alone were ahead of it: no state's first `place` units are all memories while a
    buffered turn is a candidate. No effect at either end (nothing buffered, no memory)."""
    base = shipped(power)

    def ranker(item: forming_tune.Captured) -> Scored:
        units = base(item).units
        first = next((i for i, unit in enumerate(units) if unit.memory_id is None), None)
        if first is None or first < place:
            return order(item, units)
        moved = units[first]
        return order(item, [*units[: place - 1], moved, *units[place - 1 : first], *units[first + 1 :]])

    return ranker


def memory_places(cost: float, power: float = 2.0) -> Ranker:
    """Units taken greedily by score, each memory's score lowered by `cost` for every ten places the
    memories already taken fill (a memory stands for all of its turns); buffered turns unchanged."""
    base = shipped(power)

    def ranker(item: forming_tune.Captured) -> Scored:
        units = base(item).units
        if not item.buffered or all(unit.memory_id is None for unit in units):
            return order(item, units)
        left, out, filled = list(units), [], 0
        while left:
            penalty = cost * filled / DEPTH
            scores = [unit.score - (penalty if unit.memory_id is not None else 0.0) for unit in left]
            best = left.pop(scores.index(max(scores)))  # the first of equals: the shipped order
            out.append(best)
            if best.memory_id is not None:
                filled += len(item.dialogs.get(best.key, ()))
        return order(item, out)

    return ranker


def buffered_side_share(item: forming_tune.Captured) -> float:
    """The buffered side's lexical standing in the pool, as `features.memory_lexical_share` is the
    memory side's: the best buffered turn's BM25 over the pool's best (a buffered turn's `lexical`
    is its BM25 on the pool's scale). 1 where there is nothing to compare (no indexed turn
    candidate: the pool is the buffered turns) and where the memory side's share is under 1 (then
    a buffered turn holds the pool's best). Exact where the best buffered turn is among the 50 the
    capture kept, a lower bound otherwise."""
    if item.share < 1.0 or not any(turn.memory_id for turn in item.turns):
        return 1.0
    return max((turn.features["lexical"] for turn in item.turns if turn.key in item.buffered), default=0.0)


def _buffered_document(item: forming_tune.Captured, scale: Callable[[float, float], float]) -> list[Any]:
    """The captured turns with each buffered turn's own-document BM25 (`memory`) set to
    `scale(its BM25 on the pool's scale, the buffered side's share)`; every other feature kept."""
    if not item.buffered:
        return list(item.turns)
    mine = buffered_side_share(item)
    return [
        turn._replace(features={**turn.features, "memory": scale(turn.features["lexical"], mine)})
        if turn.key in item.buffered
        else turn
        for turn in item.turns
    ]


def buffered_documents(scale: Callable[[float, float], float], power: float = 2.0) -> Ranker:
    """The shipped ranking with each buffered turn's own-document BM25 re-scaled (`_buffered_document`);
    the memory documents as shipped (their BM25 over their best × the memory side's share ^ `power`)."""
    scaler = forming_tune.side_share(power)
    return lambda item: order(item, rank(scaler(item), _buffered_document(item, scale), item.weights))


def memory_side_scale(power: float = 2.0) -> Callable[[float, float], float]:
    """A buffered turn's document BM25 on the memory documents' scale: over the best buffered
    turn's (as a memory document's over the best memory document's) × the buffered side's share
    ^ `power` (as the memory documents' × the memory side's share ^ `power`)."""
    return lambda pooled, mine: (pooled / mine if mine else 0.0) * mine**power


def scaled(scaler: forming_tune.Scaler) -> Ranker:
    """The shipped turns and weights with the memory documents scaled by `scaler`."""
    return lambda item: order(item, rank(scaler(item), item.turns, item.weights))


def variants() -> dict[str, Ranker]:
    """The re-scorings replayed, by name."""
    out: dict[str, Ranker] = {"shipped (share^2)": shipped()}
    out["forming_memory_weight 0.1 (main, off)"] = while_forming("memory", 0.1)
    for power in (2.0, 1.0, 0.0):
        out[f"buffered document BM25 over the best buffered x its side's share^{power:g}"] = (
            buffered_documents(memory_side_scale(power))
        )
    for cap in (False, True):
        label = "capped at" if cap else "x"
        out[f"memory document BM25 {label} its own best turn's share"] = scaled(forming_tune.own_share(cap))
    out["memory turns by their own cosine while forming"] = own_cosines()
    for name in ("memory", "memory_dense"):
        for weight in (0.15, 0.1, 0.05, 0.0):
            out[f"{name} weight {weight:g} while forming"] = while_forming(name, weight)
    out["memory weight 0.1 while forming, memory turns by their own cosine"] = while_forming(
        "memory", 0.1, own=True
    )
    for place in (1, 2, 3, 5):
        out[f"best buffered turn by unit {place}"] = buffered_by(place)
    for cost in (0.02, 0.05, 0.1):
        out[f"memory places cost {cost:g} per ten"] = memory_places(cost)
    return out


def judge(
    states: Mapping[str, Sequence[forming_tune.Captured]], rankers: Mapping[str, Ranker]
) -> dict[str, Any]:
    """Per ranker: R@10 per state and split, and `forming_power.verdict`'s lines."""
    out = {}
    for name, ranker in rankers.items():
        found = table(states, ranker)
        out[name] = {
            "recall_10": {
                state: {
                    label: _round(forming_power._mean(row, samples))
                    for label, samples in forming_power.SPLITS
                }
                for state, row in found.items()
            },
            "verdict": forming_power.verdict(found),
        }
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("diagnose", "variants"))
    parser.add_argument("--out", type=Path, nargs="+", required=True, help="capture folder(s)")
    parser.add_argument("--state", type=int, default=3, help="index into forming.STATES (diagnose)")
    parser.add_argument("--save", default="", help="variants: the embedder captured; saves forming_loss_<it>")
    parser.add_argument("--only", nargs="*", default=[], help="variants: those whose name holds one of these")
    args = parser.parse_args(argv)
    states = forming_power.load_states(*args.out)
    if args.action == "diagnose":
        print(json.dumps(diagnose(states, forming.STATES[args.state].name, load_sessions()), indent=2))
        return
    chosen = {
        name: ranker
        for name, ranker in variants().items()
        if not args.only or any(part in name for part in args.only)
    }
    judged = judge(states, chosen)
    for name, row in judged.items():
        print(name)
        for state, cells in row["recall_10"].items():
            print(f"   {state[:36]:36} " + ", ".join(f"{k} {v}" for k, v in cells.items() if v is not None))
        for line in row["verdict"]:
            print(f"   {line}")
    if args.save:
        save(f"forming_loss_{args.save}", record(states, judged, args.save))


def record(
    states: Mapping[str, Sequence[forming_tune.Captured]],
    judged: dict[str, Any],
    embedder: str,
    sessions: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The saved result: what was captured, each middle state's diagnosis, every variant's table
    (`sessions`: each conversation's session count, by default LoCoMo dev's)."""
    sessions = sessions or load_sessions()
    middle = [s.name for s in forming.STATES if s.name not in (forming.ALL_BUFFERED, forming.ALL_EXTRACTED)]
    return {
        "embedder": embedder,
        "conversations": sorted({item.question.sample_id for item in next(iter(states.values()), [])}),
        "states": list(states),
        "tolerance": forming.TOLERANCE,
        "diagnosis": {
            state: diagnose(states, state, sessions)
            for state in middle
            if state in states and any(end in states for end in ENDS)
        },
        "variants": judged,
    }


if __name__ == "__main__":
    main()
