"""Adapters implement the ports in `memory_engine.ports`, one package per provider.

`local/` is the embedded default (one SQLite file, in-process worker and model), `aws/` the
serverless backends (DynamoDB, SQS FIFO, OpenSearch, remote embedder), `openai/` any
OpenAI-compatible model endpoint. Heavy dependencies are imported by the adapter module that
needs them, never here, so choosing one backend never pays for another.
"""
