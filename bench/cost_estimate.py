"""What the AWS deployment costs: at idle per month, and per 1M turns. An estimate, not a bill.

    python -m bench.cost_estimate [--llm-input-per-m 0.15 --llm-output-per-m 0.60]

Every price and every usage figure is a named constant below: change one, run again. Prices are
us-east-1 on-demand list prices (USD) as known when this was written; check the AWS pricing
pages before relying on them. Usage figures (durations, request units) are assumptions about
this code, not measurements on AWS: the project has no AWS account to measure on.
Writes bench/results/cost_estimate.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "cost_estimate.json"
HOURS_PER_MONTH = 730

# --- Prices (USD, us-east-1) ---------------------------------------------------------------------
AOSS_OCU_HOUR = 0.24  # OpenSearch Serverless, per OCU-hour (indexing and search alike)
AOSS_MIN_OCU_DEV = 1.0  # standby replicas off: 0.5 indexing + 0.5 search
AOSS_MIN_OCU_PROD = 2.0  # standby replicas on: 1 indexing + 1 search
DOMAIN_T3_SMALL_HOUR = 0.036  # managed OpenSearch t3.small.search (the dev domain)
EBS_GP3_GB_MONTH = 0.122  # OpenSearch managed storage
API_REST_PER_M = 3.50  # API Gateway REST, first 333M requests
LAMBDA_GB_SECOND = 0.0000166667  # x86_64
LAMBDA_PER_M = 0.20
DDB_WRU_PER_M = 0.625  # on-demand write request units
DDB_RRU_PER_M = 0.125  # on-demand read request units
DDB_GB_MONTH = 0.25
DDB_PITR_GB_MONTH = 0.20
SQS_FIFO_PER_M = 0.50
LOGS_INGEST_GB = 0.50
ALARM_MONTH = 0.10
DASHBOARD_MONTH = 3.00
ECR_GB_MONTH = 0.10

# --- Usage per turn and per component (assumptions) ----------------------------------------------
RETRIEVES_PER_TURN = 1.0  # a chat loop: retrieve before the reply, consolidate after it
TURNS_PER_MEMORY = 8  # MEMORY_ENGINE_BATCH_SIZE
TURNS_PER_JOB = 16  # a job at 20 buffered turns extracts 2 batches
AUTHORIZER_MISS_RATE = 0.05  # results cached 300 s per key: few keys, mostly cache hits
# (memory MB, average billed ms) per invocation
CONSOLIDATE = (1024, 60)  # one transactional write, one SQS send at the threshold
RETRIEVE = (1024, 150)  # one embedding call, one OpenSearch query, a few reads
AUTHORIZER = (512, 30)
EMBEDDER = (2048, 40)  # MiniLM on CPU, one short text
WORKER_BUILTIN = (1024, 2000)  # per job: 2 batches, built-in extractor, 2 embeddings
WORKER_LLM = (1024, 20000)  # per job: 2 LLM calls of ~10 s each (waiting is billed)
EMBED_CALLS_PER_TURN = RETRIEVES_PER_TURN + 1 + 1 / TURNS_PER_MEMORY  # query, buffered turn, memory
# Each turn's ±1 window (about three turns of text) is embedded in its memory's call: no more
# invocations, but billed time, counted as three short texts' worth (EMBEDDER's ms) per turn.
WINDOW_MS_PER_TURN = 3 * 40
WRU_PER_TURN = 6  # turn + session in one transaction (transactions bill twice)
RRU_PER_TURN = 2  # the store's one read of the session (half the 4 of the two reads before)
# A memory item: ~4 KB of fields and source text + 17 vectors of 384 float32 (its own, one per
# turn, one per turn's window) = ~30 KB.
RRU_PER_RETRIEVE = 42  # the hits' memories (limit 5 x 8 RRU, strongly consistent) + buffered turns
WRU_PER_MEMORY = 76  # memory item (~30 KB) + 8 turns marked extracted, in one transaction (x2)
SQS_REQUESTS_PER_JOB = 3  # send, receive, delete
LOG_KB_PER_INVOCATION = 1.0
ACCESS_LOG_KB_PER_REQUEST = 0.4
GB_PER_M_TURNS = 4.8  # 1 KB per turn + ~30 KB per memory of 8 turns
IMAGE_GB = 2.5  # torch CPU + sentence-transformers + the model
LLM_INPUT_TOKENS_PER_MEMORY = 731  # docs/configuration.md: median prompt per 8-turn batch (json_schema)
LLM_OUTPUT_TOKENS_PER_MEMORY = 1546  # docs/configuration.md: median answer at the schema's limits


def lambda_cost(invocations: float, memory_mb: int, billed_ms: float) -> float:
    gb_seconds = invocations * memory_mb / 1024 * billed_ms / 1000
    return gb_seconds * LAMBDA_GB_SECOND + invocations / 1e6 * LAMBDA_PER_M


def idle_month() -> dict[str, float]:
    fixed = {
        "CloudWatch alarms (5) + dashboard": 5 * ALARM_MONTH + DASHBOARD_MONTH,
        "ECR image storage": IMAGE_GB * ECR_GB_MONTH,
        "Lambda, API Gateway, DynamoDB, SQS": 0.0,  # pay per request: nothing at idle
    }
    return {
        "dev, OpenSearch Serverless (default)": AOSS_MIN_OCU_DEV * AOSS_OCU_HOUR * HOURS_PER_MONTH
        + sum(fixed.values()),
        "prod, OpenSearch Serverless with standby": AOSS_MIN_OCU_PROD * AOSS_OCU_HOUR * HOURS_PER_MONTH
        + sum(fixed.values()),
        "dev, managed domain (-c search=es)": DOMAIN_T3_SMALL_HOUR * HOURS_PER_MONTH
        + 20 * EBS_GP3_GB_MONTH
        + sum(fixed.values()),
    }


def per_million_turns(llm_input_per_m: float, llm_output_per_m: float) -> dict[str, float]:
    turns = 1e6
    retrieves = turns * RETRIEVES_PER_TURN
    requests = turns + retrieves
    memories = turns / TURNS_PER_MEMORY
    jobs = turns / TURNS_PER_JOB
    invocations = requests + requests * AUTHORIZER_MISS_RATE + turns * EMBED_CALLS_PER_TURN + jobs
    costs = {
        "API Gateway (consolidate + retrieve)": requests / 1e6 * API_REST_PER_M,
        "Lambda: consolidate": lambda_cost(turns, *CONSOLIDATE),
        "Lambda: retrieve": lambda_cost(retrieves, *RETRIEVE),
        "Lambda: authorizer (cache misses)": lambda_cost(requests * AUTHORIZER_MISS_RATE, *AUTHORIZER),
        "Lambda: embedding image": lambda_cost(turns * EMBED_CALLS_PER_TURN, *EMBEDDER)
        + turns * EMBEDDER[0] / 1024 * WINDOW_MS_PER_TURN / 1000 * LAMBDA_GB_SECOND,
        "Lambda: worker (built-in extractor)": lambda_cost(jobs, *WORKER_BUILTIN),
        "DynamoDB requests": (turns * WRU_PER_TURN + memories * WRU_PER_MEMORY) / 1e6 * DDB_WRU_PER_M
        + (turns * RRU_PER_TURN + retrieves * RRU_PER_RETRIEVE) / 1e6 * DDB_RRU_PER_M,
        "DynamoDB storage + PITR (first month)": GB_PER_M_TURNS * (DDB_GB_MONTH + DDB_PITR_GB_MONTH),
        "SQS FIFO": jobs * SQS_REQUESTS_PER_JOB / 1e6 * SQS_FIFO_PER_M,
        "CloudWatch Logs ingestion": (
            invocations * LOG_KB_PER_INVOCATION + requests * ACCESS_LOG_KB_PER_REQUEST
        )
        / 1e6
        * LOGS_INGEST_GB,
        "OpenSearch Serverless": 0.0,  # ~0.4 turn/s on average fits in the minimum OCUs above
    }
    costs["total, built-in extraction"] = sum(costs.values())
    llm_worker = lambda_cost(jobs, *WORKER_LLM) - costs["Lambda: worker (built-in extractor)"]
    tokens = (
        memories * LLM_INPUT_TOKENS_PER_MEMORY / 1e6 * llm_input_per_m
        + memories * LLM_OUTPUT_TOKENS_PER_MEMORY / 1e6 * llm_output_per_m
    )
    costs["extra with LLM extraction: worker time"] = llm_worker
    costs["extra with LLM extraction: tokens"] = tokens
    costs["total, LLM extraction"] = costs["total, built-in extraction"] + llm_worker + tokens
    return costs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cost_estimate", description=__doc__)
    parser.add_argument("--llm-input-per-m", type=float, default=0.15, help="USD per 1M prompt tokens")
    parser.add_argument("--llm-output-per-m", type=float, default=0.60, help="USD per 1M answer tokens")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    idle = idle_month()
    turns = per_million_turns(args.llm_input_per_m, args.llm_output_per_m)
    print("| at idle, per month | USD |\n|---|---:|")
    for name, usd in idle.items():
        print(f"| {name} | {usd:,.2f} |")
    print("\n| per 1M turns (+1M retrieves) | USD |\n|---|---:|")
    for name, usd in turns.items():
        print(f"| {name} | {usd:,.2f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "idle_per_month_usd": idle,
                "per_million_turns_usd": turns,
                "llm_price_per_m_tokens": {"input": args.llm_input_per_m, "output": args.llm_output_per_m},
                "note": "estimate from the constants in bench/cost_estimate.py, us-east-1 list prices",
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
