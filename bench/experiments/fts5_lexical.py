"""The lexical half of the local index on SQLite FTS5: the second candidate of issue 36, measured
against tantivy (`memory_engine.adapters.local.lexical.LexicalIndex`) by `lexical_ab`.

Same interface as `LexicalIndex` (write, clear, count, lookup, parts, search, close; `drop_after`
left out: the search never needs it) and the same tokens: the engine's analyzer output
(`retrieval.text.tokenize`) joined by spaces, read by FTS5's `ascii` tokenizer. That tokenizer
splits on ASCII non-alphanumerics only and keeps every non-ASCII character inside a token, and the
analyzer's terms are runs of letters and digits, so it splits on the spaces alone and keeps Korean
and accented terms as they are; `unicode61` would fold them (it folds "ς" into "σ").

One FTS5 table per kind, so each kind has its own BM25 statistics as each tantivy index has; BM25
is FTS5's `bm25()` (k1 1.2, b 0.75, fixed: tantivy's defaults too), lower is better, so scores are
negated. Its idf is ln((N − n + 0.5)/(n + 0.5)), floored at 1e-6, where tantivy's (Lucene's) is
ln(1 + (N − n + 0.5)/(n + 0.5)): equal for rare terms, lower for common ones. A query is the OR of
its terms, each a phrase of its own: `bm25()` sums over phrases, so a term given twice counts twice,
as tantivy's Should clauses do.

The FTS tables are contentless: the tokens are kept once, in `lexical_docs` beside what a hit echoes,
because deleting from a contentless table takes the tokens it was given (re-tokenizing the stored
text would save that copy but break the index if the analyzer changed between write and delete).
FTS5 needs `detail=full` (positions) for term frequencies: `detail=column` counts a term once per
document. The tenant and thread filter is a join on the rowid. In production these tables would
live in the store's own file; here they live in a file of their own (`path`), or in memory.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_engine.adapters.local.lexical import KINDS, Details, Found, Stored
from memory_engine.adapters.local.sqlite_db import CACHE_KIB, MMAP_BYTES
from memory_engine.ports import DocKind, IndexDocument
from memory_engine.retrieval.text import tokenize

__all__ = ["Fts5LexicalIndex", "fts_query"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS lexical_docs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    tenant TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    thread TEXT NOT NULL,
    memory_id TEXT,
    occurred_at TEXT,
    body TEXT NOT NULL,
    text TEXT NOT NULL,
    session_uuid TEXT NOT NULL,
    sources TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS lexical_docs_key ON lexical_docs (tenant, doc_id, kind);
CREATE INDEX IF NOT EXISTS lexical_docs_part_of ON lexical_docs (tenant, memory_id)
    WHERE memory_id IS NOT NULL;
""" + "".join(
    f"CREATE VIRTUAL TABLE IF NOT EXISTS lexical_{kind} USING fts5("
    "body, content='', tokenize='ascii', detail=full);\n"
    for kind in KINDS
)
# What a hit echoes; a memory document's text only through `details`, as in `LexicalIndex`.
_HIT = (
    "d.id, d.kind, d.doc_id, d.thread, d.memory_id, d.occurred_at,"
    " CASE WHEN d.memory_id IS NULL THEN '' ELSE d.text END"
)
_NONE = ", ".join(["NULL"] * 6)  # the rest of `_HIT`'s columns


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of the terms, each a quoted phrase (a term repeated stays
    repeated: `bm25()` scores each phrase)."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


class Fts5LexicalIndex:
    """BM25 over the documents of each kind in one SQLite file (`path` None: in memory).

    Not thread-safe: one connection, as `LocalSearchIndex` calls its lexical half under its lock.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._conn = sqlite3.connect(":memory:" if path is None else str(path), isolation_level=None)
        if path is not None:  # the store's own settings, as if these tables were in its file
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        self._conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        self._conn.executescript(_SCHEMA)
        self._counts: dict[DocKind, int] = {}

    # -- writes -----------------------------------------------------------------------------------

    def write(
        self,
        docs: Sequence[IndexDocument] = (),
        deleted: Iterable[tuple[DocKind, str, str]] = (),
    ) -> None:
        """Delete documents (kind, tenant, doc id), then add `docs` (replacing those with the same
        key), in one transaction."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for kind, tenant, doc_id in deleted:
                self._delete(kind, tenant, doc_id)
            for doc in docs:
                self._delete(doc.kind, doc.tenant, doc.doc_id)
                body = " ".join(tokenize(doc.text))
                row = conn.execute(
                    "INSERT INTO lexical_docs (kind, tenant, doc_id, thread, memory_id, occurred_at, body,"
                    " text, session_uuid, sources, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        doc.kind, doc.tenant, doc.doc_id, doc.thread, doc.memory_id,
                        doc.occurred_at.isoformat() if doc.occurred_at else None, body, doc.text,
                        doc.session_uuid, json.dumps(doc.source_dialog_uuids), doc.created_at.isoformat(),
                    ),
                )  # fmt: skip
                table = f"lexical_{doc.kind}"
                conn.execute(f"INSERT INTO {table} (rowid, body) VALUES (?, ?)", (row.lastrowid, body))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            self._counts.clear()

    def _delete(self, kind: DocKind, tenant: str, doc_id: str) -> None:
        found = self._conn.execute(
            "SELECT id, body FROM lexical_docs WHERE tenant = ? AND doc_id = ? AND kind = ?",
            (tenant, doc_id, kind),
        ).fetchone()
        if found is not None:
            self._unindex(kind, *found)

    def _unindex(self, kind: str, rowid: int, body: str) -> None:
        # A contentless table forgets a row only when given the tokens it indexed.
        table = f"lexical_{kind}"
        command = f"INSERT INTO {table} ({table}, rowid, body) VALUES ('delete', ?, ?)"
        self._conn.execute(command, (rowid, body))
        self._conn.execute("DELETE FROM lexical_docs WHERE id = ?", (rowid,))

    def clear(self, tenant: str | None) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        if tenant is None:
            for kind in KINDS:
                conn.execute(f"INSERT INTO lexical_{kind} (lexical_{kind}) VALUES ('delete-all')")
            conn.execute("DELETE FROM lexical_docs")
        else:
            rows = conn.execute("SELECT kind, id, body FROM lexical_docs WHERE tenant = ?", (tenant,))
            for kind, rowid, body in rows.fetchall():
                self._unindex(kind, rowid, body)
        conn.execute("COMMIT")
        self._counts.clear()

    def count(self, kind: DocKind) -> int:
        """How many documents of the kind the index holds (every tenant's)."""
        if kind not in self._counts:
            (self._counts[kind],) = self._conn.execute(
                "SELECT count(*) FROM lexical_docs WHERE kind = ?", (kind,)
            ).fetchone()
        return self._counts[kind]

    def close(self) -> None:
        self._conn.close()

    # -- reads ------------------------------------------------------------------------------------

    def lookup(self, tenant: str, doc_ids: Sequence[str]) -> dict[str, tuple[DocKind, Stored]]:
        """The documents of the tenant among `doc_ids`, with their kind."""
        rows = self._conn.execute(
            f"SELECT {_HIT} FROM lexical_docs AS d WHERE tenant = ? AND doc_id IN ({_marks(doc_ids)})",
            (tenant, *doc_ids),
        )
        return {row[2]: (row[1], _stored(row)) for row in rows}

    def parts(self, tenant: str, memory_ids: Sequence[str]) -> list[tuple[DocKind, Stored]]:
        """The documents (of any kind) that are part of the memories named."""
        rows = self._conn.execute(
            f"SELECT {_HIT} FROM lexical_docs AS d WHERE tenant = ? AND memory_id IN ({_marks(memory_ids)})",
            (tenant, *memory_ids),
        )
        return [(row[1], _stored(row)) for row in rows]

    def matching(self, kind: DocKind, terms: Sequence[str]) -> int:
        """How many documents of the kind hold any of the terms (each one a search scores)."""
        if not terms:
            return 0
        table = f"lexical_{kind}"
        (count,) = self._conn.execute(
            f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (fts_query(terms),)
        ).fetchone()
        return int(count)

    def details(self, stored: Stored) -> Details:
        """The text, session, source dialogs and creation time of a stored document."""
        text, session_uuid, sources, created = self._conn.execute(
            "SELECT text, session_uuid, sources, created_at FROM lexical_docs WHERE id = ?", (stored.doc,)
        ).fetchone()
        return Details(text, session_uuid, json.loads(sources), datetime.fromisoformat(created))

    def search(
        self,
        kind: DocKind,
        tenant: str,
        threads: Sequence[str],
        terms: Sequence[str],
        k: int,
        named: Sequence[str] = (),
        whole: bool = False,
    ) -> Found:
        """The k best documents of the kind in the tenant's threads by BM25, and the BM25 of each
        `named` one (0 for one holding no term; left out when the index does not hold it), with
        what every one of them stores: `LexicalIndex.search`'s contract.

        One statement: FTS5 has no WAND, so a top k scores every document holding a term anyway;
        those scores are kept (a materialised CTE) and serve the named documents too, where a
        `rowid IN (...)` beside MATCH would run the whole query once per rowid (5× slower at 18k
        documents). `whole` skips the join on the threads."""
        table = f"lexical_{kind}"
        named_ids = (
            f"SELECT id FROM lexical_docs WHERE tenant = ? AND kind = ? AND doc_id IN ({_marks(named)})"
        )
        args: tuple[object, ...] = ()
        if not terms:
            sql = f"SELECT 1, 0.0, {_HIT} FROM lexical_docs AS d WHERE d.id IN ({named_ids})"
        else:
            scope = (
                ""
                if whole
                else f" JOIN lexical_docs AS d ON d.id = m.id WHERE d.tenant = ?"
                f" AND d.thread IN ({_marks(threads)})"
            )
            sql = (
                f"WITH m AS MATERIALIZED (SELECT rowid AS id, -bm25({table}) AS s FROM {table}"
                f" WHERE {table} MATCH ?),"
                f" best AS (SELECT m.id, m.s FROM m{scope} ORDER BY m.s DESC LIMIT ?), named AS ({named_ids})"
                f" SELECT 0, best.s, {_HIT} FROM best JOIN lexical_docs AS d ON d.id = best.id"
                f" UNION ALL SELECT 1, 0.0, {_HIT} FROM named JOIN lexical_docs AS d ON d.id = named.id"
                f" UNION ALL SELECT 2, m.s, m.id, {_NONE} FROM m WHERE m.id IN named"
            )
            args = (fts_query(terms), *(() if whole else (tenant, *threads)), k)
        scored: dict[int, float] = {}
        best: list[tuple[float, int, Stored]] = []
        others: list[tuple[int, Stored]] = []
        for part, score, *hit in self._conn.execute(sql, (*args, tenant, kind, *named)):
            if part == 2:
                scored[hit[0]] = score
            elif part == 0:
                best.append((score, hit[0], _stored(hit)))
            else:
                others.append((hit[0], _stored(hit)))
        found = Found({}, {}, {})
        for score, _, row in sorted(best, key=lambda item: (-item[0], item[1])):
            found.lexical[row.doc_id] = score
            found.stored[row.doc_id] = row
        for rowid, row in others:
            found.lexical_of[row.doc_id] = scored.get(rowid, 0.0)
            found.stored[row.doc_id] = row
        return found


def _stored(row: Sequence[Any]) -> Stored:
    rowid, _, doc_id, thread, memory_id, occurred, text = row
    when = datetime.fromisoformat(occurred) if occurred else None
    return Stored(doc_id, thread, memory_id, when, text, rowid)
