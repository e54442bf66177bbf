"""memory_engine: long-term memory for dialogue (domain, use cases, ports, adapters)."""

__version__ = "0.1.0"
