"""Figures that know their age: every saved result records the commit, a digest of the code its
benchmark measures, the settings that matter and the machine; a result whose measured code has
changed since (or was never recorded) is told apart from a current one.

The drift tests run on a small git checkout of their own holding the paths a real declaration
names (`token_estimate`'s), so editing a measured file, an unrelated one, or committing are real.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import common, provenance
from bench.measured import MEASURED
from bench.provenance import drift, record
from memory_engine.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TOKENS = "layers/core/memory_engine/retrieval/tokens.py"
ENCODERS = "layers/core/memory_engine/adapters/local/encoders.py"
E5_FILE = "layers/core/memory_engine/adapters/local/e5_file.py"
UNRELATED = "layers/core/memory_engine/usecases/bank.py"
# Where a benchmark on this team's machines finds its data, caches and checkouts.
MACHINE_PATHS = ("/work/", "/tmp/", "/home/", "/root/", "/Users/")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Iterator[Path]:
    """A committed checkout holding token_estimate's measured files and one it does not measure."""
    for path in (TOKENS, ENCODERS, E5_FILE, UNRELATED):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"# {path}\n")
    (tmp_path / ".gitignore").write_text("__pycache__/\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "first")
    provenance.clear()
    yield tmp_path
    provenance.clear()


def _edit(root: Path, path: str, text: str) -> None:
    (root / path).write_text(text)
    provenance.clear()  # a new process would list and read the files afresh


def test_a_record_names_the_commit_and_a_digest_of_each_measured_path(checkout: Path) -> None:
    # Given a clean checkout
    # When token_estimate's provenance is recorded there
    made = record("token_estimate", checkout)

    # Then it names the commit, the declared paths (and no other) with a digest each, nothing uncommitted
    assert made["commit"] == _git(checkout, "rev-parse", "--short", "HEAD")
    assert set(made["code"]) == {TOKENS, ENCODERS, E5_FILE}
    assert all(len(digest) == 16 for digest in made["code"].values())
    assert made["uncommitted"] == []
    assert made["declared"] is True


def test_an_edit_to_a_measured_file_makes_the_result_stale_and_names_the_path(checkout: Path) -> None:
    # Given a result recorded on the checkout
    result = {"provenance": record("token_estimate", checkout)}

    # When a file it measured changes
    _edit(checkout, TOKENS, "# the token estimate, rewritten\n")

    # Then the result is stale, naming that path only
    found = drift(result, checkout)
    assert not found.current
    assert found.code == [TOKENS]
    assert found.reasons() == [f"code changed since: {TOKENS}"]


def test_an_edit_elsewhere_or_a_commit_leaves_the_result_current(checkout: Path) -> None:
    # Given a result recorded on the checkout
    result = {"provenance": record("token_estimate", checkout)}

    # When a file it does not measure changes and is committed, and a cache appears beside the code
    _edit(checkout, UNRELATED, "# the bank, rewritten\n")
    _git(checkout, "commit", "-q", "-am", "unrelated")
    (checkout / "layers/core/memory_engine/retrieval/__pycache__").mkdir()
    (checkout / "layers/core/memory_engine/retrieval/__pycache__/tokens.pyc").write_bytes(b"\0")
    provenance.clear()

    # Then the result is still current
    assert drift(result, checkout).current


def test_a_measured_path_that_is_gone_makes_the_result_stale(checkout: Path) -> None:
    # Given a result recorded on the checkout
    result = {"provenance": record("token_estimate", checkout)}

    # When the code it measured is removed
    (checkout / E5_FILE).unlink()
    provenance.clear()

    # Then the result is stale, naming the path that is gone
    assert drift(result, checkout).code == [E5_FILE]


def test_a_run_on_uncommitted_changes_says_which_measured_paths_held_them(checkout: Path) -> None:
    # Given an uncommitted edit to a measured file and one to an unmeasured file
    _edit(checkout, ENCODERS, "# encoders, being changed\n")
    _edit(checkout, UNRELATED, "# bank, being changed\n")

    # When a result is recorded
    made = record("token_estimate", checkout)

    # Then only the measured path is named, and the digest is of what ran (current until it changes)
    assert made["uncommitted"] == [ENCODERS]
    assert drift({"provenance": made}, checkout).current


def test_a_result_saved_before_records_existed_is_never_current() -> None:
    # Given a result with a machine and a date but no provenance
    legacy = {"machine": {"cores": 2, "measured_at": "2026-12-05T02:15:14+00:00"}, "rows": []}

    # When its drift is asked
    found = drift(legacy)

    # Then it is not current, and says why
    assert not found.recorded and not found.current
    assert "no record" in found.reasons()[0]


def test_the_settings_are_recorded_as_the_run_had_them_and_secrets_and_paths_are_not(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a run with another embedder, an API key and a data folder in its environment
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "minilm")
    monkeypatch.setenv("MEMORY_ENGINE_API_KEY", "me_0123456789ab_secretsecretsecretsecretsecret")
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(checkout / "data"))

    # When a benchmark that declares the embedding settings records its provenance
    made = record("embedding", checkout)

    # Then the settings it declares are there with the run's values, the embedder flagged as not the
    # default; the environment names the key without its value and the folder without its path
    assert made["settings"] == {"embedding_threads": 0}
    made = record("retrieve_latency", checkout)
    assert made["settings"]["embedder"] == "minilm"
    assert made["not_default"] == ["embedder"]
    assert made["environment"]["MEMORY_ENGINE_API_KEY"] == "[set]"
    assert made["environment"]["MEMORY_ENGINE_DATA_DIR"] == ".../data"
    assert str(checkout) not in json.dumps(made)


def test_a_default_that_moved_since_the_run_makes_the_result_stale(checkout: Path) -> None:
    # Given a result measured at the defaults, one of which has moved since
    made = record("retrieve_latency", checkout)
    threshold = Settings.model_fields["local_index_ann_threshold"].default
    made["settings"]["local_index_ann_threshold"] = threshold * 2

    # When its drift is asked
    found = drift({"provenance": made}, checkout)

    # Then it is stale, naming the setting, what ran and what the default is now
    assert found.settings == [f"local_index_ann_threshold {threshold * 2!r} → {threshold!r}"]


def test_a_value_the_run_chose_itself_is_not_taken_for_a_moved_default(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a result measured with MiniLM on purpose
    monkeypatch.setenv("MEMORY_ENGINE_EMBEDDER", "minilm")
    made = record("retrieve_latency", checkout)

    # When its drift is asked
    found = drift({"provenance": made}, checkout)

    # Then no default moved: the run's own choice is recorded as such
    assert found.settings == []


def test_save_adds_the_machine_and_the_provenance_to_every_result(tmp_path: Path) -> None:
    # Given any benchmark's payload
    payload = {"rows": [{"memories": 10, "p95_ms": 1.5}]}

    # When it is saved through bench.common.save
    path = common.save("retrieve_latency", payload, tmp_path / "retrieve_latency.json")

    # Then the file holds the figures, the machine and load, and the provenance of this checkout
    body = json.loads(path.read_text())
    assert body["rows"] == payload["rows"]
    assert {"cores", "load_average_1m", "measured_at"} <= set(body["machine"])
    assert body["provenance"]["commit"] == _git(ROOT, "rev-parse", "--short", "HEAD")
    assert set(body["provenance"]["code"]) == set(MEASURED["retrieve_latency"].paths)
    assert drift(body).code == []


def test_rows_kept_from_an_earlier_run_on_other_code_make_the_result_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a saved result whose 100k row was measured on other code
    path = "layers/core/memory_engine/adapters/local/vectors.py"
    earlier = {
        "provenance": {"commit": "0ld0ld0", "code": {path: "0123456789abcdef"}},
        "rows": [{"memories": 100_000, "p95_ms": 18.0}],
    }
    (tmp_path / "graph_beam.json").write_text(json.dumps(earlier))
    monkeypatch.setattr(common, "RESULTS", tmp_path)

    # When a run of another size keeps that row and saves
    rows = common.kept("graph_beam", "rows", [{"memories": 10_000, "p95_ms": 9.0}], {10_000})
    body = json.loads(common.save("graph_beam", {"rows": rows}).read_text())

    # Then the kept rows' run is recorded, and the result is not current: part of it is other code
    assert [row["memories"] for row in body["rows"]] == [10_000, 100_000]
    assert body["provenance"]["kept_rows_from"]["commit"] == "0ld0ld0"
    assert path in drift(body).code


def test_every_declaration_names_paths_that_exist_and_settings_that_do() -> None:
    # Given every benchmark's declaration
    # When its paths and settings are looked up
    missing = sorted(
        f"{name}: {path}" for name, m in MEASURED.items() for path in m.paths if not (ROOT / path).exists()
    )
    unknown = sorted(
        f"{name}: {field}"
        for name, m in MEASURED.items()
        for field in m.settings
        if not any(field in piece.model_fields for piece in provenance.setting_pieces())
    )

    # Then all are real: a declaration cannot silently measure nothing
    assert missing == []
    assert unknown == []


def test_every_saved_result_has_a_declaration_of_the_code_it_measures() -> None:
    # Given the committed results
    names = sorted(path.stem for path in (ROOT / "bench" / "results").glob("*.json"))

    # When each is looked up among the declarations
    undeclared = [name for name in names if name not in MEASURED]

    # Then each has one: an undeclared benchmark would be dated against the whole engine
    assert undeclared == [], f"declare the code these measure in bench/measured.py: {undeclared}"


def test_no_saved_result_holds_a_path_of_the_machine_that_measured_it() -> None:
    # Given the committed results (a reader's checkout has no /work, /tmp or home of ours)
    results = sorted((ROOT / "bench" / "results").glob("*.json"))

    # When every string in them is looked at
    def strings(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    found = {
        path.name: sorted({s for s in strings(json.loads(path.read_text())) if s.startswith(MACHINE_PATHS)})
        for path in results
    }

    # Then none is an absolute path of a machine: a folder is recorded by its last part
    assert {name: paths for name, paths in found.items() if paths} == {}
