"""The embedded local backend: everything in one SQLite file that survives restarts.

`SqliteStore` is the system of record (sessions, turns, memories) and `SqliteQueue` the
extraction queue the in-process worker consumes. Both may point at the same file; each keeps its
own connection and lock. Import the classes from their modules (`sqlite_store`, `sqlite_queue`):
this package imports nothing, so a Lambda never loads the local backend by accident.
"""
