"""The experiments' own tables for the docs (`python -m bench.report` writes them)."""

from __future__ import annotations

from typing import Any

from bench.render import table


def cost(result: dict[str, Any]) -> list[str]:
    """A month of the AWS deployment per tenant: one row per item, totals in bold, the LLM's
    share as what it adds."""
    tenants = list(result["per_month_usd"])
    items = list(dict.fromkeys(item for tenant in tenants for item in result["per_month_usd"][tenant]))
    price = result["llm_price_per_m_tokens"]
    rows = []
    for item in items:
        usd = [result["per_month_usd"][tenant].get(item) for tenant in tenants]
        if item.startswith("with LLM"):
            label = f"{item} (${price['input']:.2f} / ${price['output']:.2f} per M tokens)"
            rows.append([label, *(f"+{value:,.2f}" for value in usd)])
        elif item.startswith("total"):
            rows.append([f"**{item}**", *(f"**{value:,.2f}**" for value in usd)])
        else:
            rows.append([item, *(f"{value:,.2f}" for value in usd)])
    return table(["per month, prod stack (USD)", *tenants], rows)


def candidate_counts(result: dict[str, Any]) -> list[str]:
    """Per data set, the ranking at each count of turn and memory candidates per retriever."""
    rows = [
        [
            name, row["turn_candidates"], row["memory_candidates"], f"{row['recall_at_5']:.4f}",
            f"{row['recall_at_10']:.4f}", f"{row['ndcg_at_10']:.4f}", f"{row['objective']:.4f}",
        ]
        for name, found in result["sets"].items()
        for row in found["rows"]
    ]  # fmt: skip
    return table(["data", "turns", "memories", "R@5", "R@10", "NDCG@10", "objective"], rows)


def forming_loss(result: dict[str, Any]) -> list[str]:
    """R@10 (every question captured) per re-scoring and state, then each diagnosed state's loss by
    where the gold turns are."""
    states = result["states"]
    rows = [
        [
            name,
            *(f"{row['recall_10'][state]['all']:.3f}" for state in states),
            "; ".join(row["verdict"]) or "—",
        ]
        for name, row in result["variants"].items()
    ]
    lines = table(["ranking", *states, "target"], rows)
    for state, found in result["diagnosis"].items():
        compared = " and ".join(found["ends"])
        sides = [
            [where, int(group["questions"]), f"{group['recall_10']:.3f}",
             ", ".join(f"{group[f'{end} recall_10']:.3f}" for end in found["ends"]),
             int(group.get("below_both_ends", 0)), f"{group.get('loss_below_lower_end', 0.0):.2f}"]
            for where, group in found["by_side"].items()
        ]  # fmt: skip
        lines += ["", f"{state}, against {compared}:", ""]
        lines += table(["gold turns", "questions", "R@10", "at the end(s)", "below", "R@10 lost"], sides)
    return lines
