"""Fakes of the ports (no model, no disk) and a local OpenAI-compatible server for LLM tests."""
