"""Pydantic models at every boundary: domain records, API bodies, queue messages."""
