"""What the AWS deployment costs a month, for a small and a large tenant. An estimate, not a bill.

    python -m bench.experiments.cost_estimate [--llm-input-per-m 0.15 --llm-output-per-m 0.60]

Every price and every usage figure is a named constant below: change one, run again. Prices are
us-east-1 on-demand list prices (USD) as known when this was written; check the AWS pricing
pages before relying on them. Usage figures (durations, request units, the share of a node's
memory the k-NN graphs may use) are assumptions about this code, not measurements on AWS: the
project has no AWS account to measure on.

OpenSearch is priced from what it must hold in memory: each retained turn keeps ~1.1 vectors in
HNSW graphs (its own, and an eighth of its memory's), and a vector index is bound by RAM, so the
search capacity (Serverless search OCUs, or a domain's data nodes) grows with the history kept,
whatever the traffic. Writes bench/results/cost_estimate.json.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.common import save
from functions.routes import REST_ROUTES

RESULTS = Path(__file__).resolve().parents[1] / "results" / "cost_estimate.json"
HOURS_PER_MONTH = 730
GIB = 1024**3

# --- Prices (USD, us-east-1) ---------------------------------------------------------------------
AOSS_OCU_HOUR = 0.24  # OpenSearch Serverless, per OCU-hour (indexing and search alike)
AOSS_STORAGE_GB_MONTH = 0.024  # its managed storage (S3)
DATA_NODE_HOUR = 0.178  # r7g.large.search, the prod domain's data node (16 GiB)
MASTER_NODE_HOUR = 0.136  # m7g.large.search, its dedicated masters (3)
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
LOGS_STORED_GB_MONTH = 0.03
METRIC_MONTH = 0.30  # a custom metric (each metric name × dimension values), first 10k
ALARM_MONTH = 0.10
DASHBOARD_MONTH = 3.00
XRAY_TRACES_PER_M = 5.00  # traces recorded, after 100k free a month
XRAY_FREE_TRACES = 100_000
KMS_KEY_MONTH = 1.00  # the alarm topic's key
SECRET_MONTH = 0.40  # the LLM key's secret
SECRET_CALLS_PER_10K = 0.05
ECR_GB_MONTH = 0.10

# --- Usage (assumptions) --------------------------------------------------------------------------
RETRIEVES_PER_TURN = 1.0  # a chat loop: retrieve before the reply, consolidate after it
TURNS_PER_MEMORY = 8  # MEMORY_ENGINE_BATCH_SIZE
TURNS_PER_JOB = 16  # a job at 20 buffered turns extracts 2 batches
AUTHORIZER_MISS_RATE = 0.05  # results cached 300 s per key: few keys, mostly cache hits
# (memory MB, average billed ms) per invocation
CONSOLIDATE = (1024, 60)  # one transactional write, one SQS send at the threshold
RETRIEVE = (1024, 150)  # one embedding call, one OpenSearch request, a few reads
AUTHORIZER = (512, 30)
EMBEDDER = (2048, 40)  # multilingual-e5-small on ONNX Runtime, one short text
WORKER_BUILTIN = (1024, 2000)  # per job: 2 batches, built-in extractor, 2 embeddings
WORKER_LLM = (1024, 20000)  # per job: 2 LLM calls of ~10 s each (waiting is billed)
EMBED_CALLS_PER_TURN = RETRIEVES_PER_TURN + 1 + 1 / TURNS_PER_MEMORY  # query, buffered turn, memory
WINDOW_MS_PER_TURN = 3 * 40  # each turn's ±1 window embedded in its memory's call
WRU_PER_TURN = 6  # turn + session in one transaction (transactions bill twice)
RRU_PER_TURN = 2  # the store's one read of the session
RRU_PER_RETRIEVE = 42  # the hits' memories (limit 5 x 8 RRU, strongly consistent) + buffered turns
WRU_PER_MEMORY = 76  # memory item (~30 KB: 17 vectors) + 8 turns marked extracted, in one transaction
SQS_REQUESTS_PER_JOB = 3  # send, receive, delete
LOG_KB_PER_INVOCATION = 1.0
ACCESS_LOG_KB_PER_REQUEST = 0.4
LOG_MONTHS_KEPT = 3  # prod keeps logs 90 days
TABLE_KB_PER_TURN = 1 + 30 / TURNS_PER_MEMORY  # the turn, and an eighth of its memory item
IMAGE_GB = 0.45  # ONNX Runtime + the exported e5 graphs, no torch (docs/performance.md)
LLM_INPUT_TOKENS_PER_MEMORY = 731  # docs/configuration.md: median prompt per 8-turn batch
LLM_OUTPUT_TOKENS_PER_MEMORY = 1546  # docs/configuration.md: median answer at the schema's limits
# Tracing: X-Ray's default sampling keeps 1 request a second, then 5% of the rest.
XRAY_RESERVOIR_PER_MONTH = HOURS_PER_MONTH * 3600
XRAY_RATE = 0.05
# Custom metrics (EMF, memory_engine/edge/observability.py): Requests, ServerErrors and Latency per
# route, and Jobs per kind (3) and outcome (4).
CUSTOM_METRICS = 3 * len(REST_ROUTES) + 3 * 4
ALARMS = 5
SECRET_READS_PER_MONTH = 10 * 12 * HOURS_PER_MONTH  # ~10 warm functions reading every 5 minutes

# --- OpenSearch: memory-bound k-NN --------------------------------------------------------------
DIMENSION = 384
HNSW_M = 16
VECTORS_PER_RETAINED_TURN = 1 + 1 / TURNS_PER_MEMORY  # its own, and an eighth of its memory's
BYTES_PER_VECTOR = 1.1 * (4 * DIMENSION + 8 * HNSW_M)  # the k-NN plugin's HNSW memory estimate
INDEX_KB_PER_RETAINED_TURN = 6.0  # _source (text, half and window vectors) and the vector files
# Share of a node's RAM the graphs may take: the JVM heap takes half, the k-NN circuit breaker
# half of the rest (the managed domain's defaults; assumed the same for a Serverless OCU).
GRAPH_SHARE_OF_RAM = 0.25
OCU_RAM_GIB = 6
DATA_NODE_RAM_GIB = 16
AOSS_MIN_INDEXING_OCU = 1.0  # 0.5 x 2 with standby replicas (prod)
REPLICAS = 2  # prod: standby replicas (Serverless), one replica per shard (domain)


@dataclass(frozen=True)
class Tenant:
    name: str
    turns_per_month: float
    retained_turns: float  # the history kept: turns whose vectors stay in the index


SMALL = Tenant("small: 1,000 turns a day, 100k turns kept", 30_000, 100_000)
LARGE = Tenant("large: 100,000 turns a day, 10M turns kept", 3_000_000, 10_000_000)


def lambda_cost(invocations: float, memory_mb: int, billed_ms: float) -> float:
    gb_seconds = invocations * memory_mb / 1024 * billed_ms / 1000
    return gb_seconds * LAMBDA_GB_SECOND + invocations / 1e6 * LAMBDA_PER_M


def graph_gib(tenant: Tenant) -> float:
    """RAM the HNSW graphs of the retained history take, per copy."""
    return tenant.retained_turns * VECTORS_PER_RETAINED_TURN * BYTES_PER_VECTOR / GIB


def search_ocus(tenant: Tenant) -> float:
    """Serverless search OCUs: each copy in half-OCU steps, never under the 0.5 floor."""
    per_copy = graph_gib(tenant) / (OCU_RAM_GIB * GRAPH_SHARE_OF_RAM)
    return REPLICAS * max(0.5, math.ceil(per_copy * 2) / 2)


def data_nodes(tenant: Tenant) -> int:
    """The domain's data nodes: enough RAM for every copy of the graphs, 2 at least."""
    per_copy = math.ceil(graph_gib(tenant) / (DATA_NODE_RAM_GIB * GRAPH_SHARE_OF_RAM))
    return max(REPLICAS, REPLICAS * per_copy)


def opensearch(tenant: Tenant) -> dict[str, float]:
    index_gb = tenant.retained_turns * INDEX_KB_PER_RETAINED_TURN / 1e6
    nodes = data_nodes(tenant)
    return {
        "serverless": (search_ocus(tenant) + AOSS_MIN_INDEXING_OCU) * AOSS_OCU_HOUR * HOURS_PER_MONTH
        + index_gb * AOSS_STORAGE_GB_MONTH,
        "domain": (nodes * DATA_NODE_HOUR + 3 * MASTER_NODE_HOUR) * HOURS_PER_MONTH
        + max(20.0, REPLICAS * index_gb / nodes) * nodes * EBS_GP3_GB_MONTH,
    }


def traced(entry_invocations: float) -> float:
    """Traces X-Ray records in a month under its default sampling, less the free ones, in USD."""
    recorded = min(entry_invocations, XRAY_RESERVOIR_PER_MONTH)
    recorded += XRAY_RATE * max(0.0, entry_invocations - XRAY_RESERVOIR_PER_MONTH)
    return max(0.0, recorded - XRAY_FREE_TRACES) / 1e6 * XRAY_TRACES_PER_M


def month(tenant: Tenant, llm_input_per_m: float, llm_output_per_m: float) -> dict[str, float]:
    """USD per month, component by component, for a prod stack serving `tenant`."""
    turns = tenant.turns_per_month
    retrieves = turns * RETRIEVES_PER_TURN
    requests = turns + retrieves
    memories = turns / TURNS_PER_MEMORY
    jobs = turns / TURNS_PER_JOB
    invocations = requests + requests * AUTHORIZER_MISS_RATE + turns * EMBED_CALLS_PER_TURN + jobs
    log_gb = (invocations * LOG_KB_PER_INVOCATION + requests * ACCESS_LOG_KB_PER_REQUEST) / 1e6
    search = opensearch(tenant)
    costs = {
        "API Gateway REST": requests / 1e6 * API_REST_PER_M,
        "Lambda: consolidate, retrieve, authorizer": lambda_cost(turns, *CONSOLIDATE)
        + lambda_cost(retrieves, *RETRIEVE)
        + lambda_cost(requests * AUTHORIZER_MISS_RATE, *AUTHORIZER),
        "Lambda: embedding image": lambda_cost(turns * EMBED_CALLS_PER_TURN, *EMBEDDER)
        + turns * EMBEDDER[0] / 1024 * WINDOW_MS_PER_TURN / 1000 * LAMBDA_GB_SECOND,
        "Lambda: worker (built-in extractor)": lambda_cost(jobs, *WORKER_BUILTIN),
        "DynamoDB requests": (turns * WRU_PER_TURN + memories * WRU_PER_MEMORY) / 1e6 * DDB_WRU_PER_M
        + (turns * RRU_PER_TURN + retrieves * RRU_PER_RETRIEVE) / 1e6 * DDB_RRU_PER_M,
        "DynamoDB storage + PITR": tenant.retained_turns
        * TABLE_KB_PER_TURN
        / 1e6
        * (DDB_GB_MONTH + DDB_PITR_GB_MONTH),
        "SQS FIFO": jobs * SQS_REQUESTS_PER_JOB / 1e6 * SQS_FIFO_PER_M,
        "CloudWatch Logs (ingested, kept 90 days)": log_gb
        * (LOGS_INGEST_GB + LOG_MONTHS_KEPT * LOGS_STORED_GB_MONTH),
        "CloudWatch metrics, alarms, dashboard": CUSTOM_METRICS * METRIC_MONTH
        + ALARMS * ALARM_MONTH
        + DASHBOARD_MONTH,
        "X-Ray traces": traced(requests + jobs),
        "KMS key (alarm topic), ECR image": KMS_KEY_MONTH + IMAGE_GB * ECR_GB_MONTH,
        "OpenSearch Serverless (search OCUs from the graphs' RAM)": search["serverless"],
    }
    costs["total, Serverless, built-in extraction"] = sum(costs.values())
    costs["OpenSearch domain instead (-c search=es)"] = search["domain"]
    costs["total, domain, built-in extraction"] = (
        costs["total, Serverless, built-in extraction"] - search["serverless"] + search["domain"]
    )
    llm_worker = lambda_cost(jobs, *WORKER_LLM) - costs["Lambda: worker (built-in extractor)"]
    tokens = (
        memories
        / 1e6
        * (LLM_INPUT_TOKENS_PER_MEMORY * llm_input_per_m + LLM_OUTPUT_TOKENS_PER_MEMORY * llm_output_per_m)
    )
    secret = SECRET_MONTH + SECRET_READS_PER_MONTH / 1e4 * SECRET_CALLS_PER_10K
    costs["with LLM extraction: worker time, tokens, the key's secret"] = llm_worker + tokens + secret
    return costs


def sizes(tenant: Tenant) -> dict[str, float]:
    """What drives the search bill: the graphs' RAM and the capacity holding it."""
    return {
        "graph_gib_per_copy": graph_gib(tenant),
        "serverless_search_ocus": search_ocus(tenant),
        "domain_data_nodes": data_nodes(tenant),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.experiments.cost_estimate", description=__doc__)
    parser.add_argument("--llm-input-per-m", type=float, default=0.15, help="USD per 1M prompt tokens")
    parser.add_argument("--llm-output-per-m", type=float, default=0.60, help="USD per 1M answer tokens")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    tenants = (SMALL, LARGE)
    costs = {t.name: month(t, args.llm_input_per_m, args.llm_output_per_m) for t in tenants}
    print("| per month, prod stack (USD) | " + " | ".join(t.name for t in tenants) + " |")
    print("|---|" + "---:|" * len(tenants))
    for row in costs[SMALL.name]:
        print(f"| {row} | " + " | ".join(f"{costs[t.name][row]:,.2f}" for t in tenants) + " |")
    for tenant in tenants:
        found = sizes(tenant)
        print(
            f"{tenant.name}: graphs {found['graph_gib_per_copy']:.2f} GiB per copy → "
            f"{found['serverless_search_ocus']:g} search OCUs, or {found['domain_data_nodes']} data nodes"
        )
    save(
        "cost_estimate",
        {
            "tenants": [asdict(t) | sizes(t) for t in tenants],
            "per_month_usd": costs,
            "llm_price_per_m_tokens": {"input": args.llm_input_per_m, "output": args.llm_output_per_m},
            "note": "estimate from the constants in bench/experiments/cost_estimate.py, us-east-1 list "
            "prices",
        },
        args.out,
    )


if __name__ == "__main__":
    main()
