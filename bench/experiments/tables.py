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
