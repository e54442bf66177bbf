"""`memory-engine keys ...` against the configured key store, checked through `key_wiring.key_resolver()`:
the resolver the local server and the Lambda authorizer both use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_engine.composition import key_wiring, wiring
from memory_engine.edge.auth import KeyResolver, authenticate, key_id_of, local_api_key
from memory_engine.settings import get_settings, reset_settings
from memory_engine_app import cli
from memory_engine_app.data_dir import mark_served
from memory_engine_app.server.banner import banner

LOCAL_KEY = "cli-test-local-key"


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("MEMORY_ENGINE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMORY_ENGINE_API_KEY", LOCAL_KEY)
    reset_settings()
    wiring.reset()
    yield tmp_path
    wiring.reset()
    reset_settings()


def authorize(header: str, keys: KeyResolver) -> str | None:
    """The tenant an Authorization header resolves to, or None (401)."""
    principal = authenticate(header, keys)
    return principal.tenant if principal else None


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def create(capsys: pytest.CaptureFixture[str], tenant: str) -> str:
    code, out, _ = run(capsys, "keys", "create", "--tenant", tenant)
    assert code == 0
    return out.strip()


def test_a_created_key_is_printed_once_and_resolves_to_its_tenant(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = create(capsys, "acme")

    assert key_id_of(key) is not None
    assert authorize(f"Bearer {key}", key_wiring.key_resolver()) == "acme"
    assert authorize(f"Token {key}", key_wiring.key_resolver()) == "acme"


def test_the_local_key_still_resolves_to_the_local_tenant(configured: Path) -> None:
    assert authorize(f"Bearer {LOCAL_KEY}", key_wiring.key_resolver()) == "local"


def test_the_database_holds_the_hash_never_the_key(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = create(capsys, "acme")

    stored = b"".join(path.read_bytes() for path in configured.glob("memory-engine.sqlite3*"))

    assert key.encode() not in stored
    assert key.split("_", 2)[2].encode() not in stored


def test_listing_shows_ids_and_tenants_but_no_key_or_hash(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = create(capsys, "acme")
    create(capsys, "globex")

    code, out, _ = run(capsys, "keys", "list", "--tenant", "acme", "--json")

    assert code == 0
    assert len(out.splitlines()) == 1 and key_id_of(key) in out and "globex" not in out
    assert key not in out and "sha256" not in out


def test_a_revoked_key_no_longer_resolves(configured: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key = create(capsys, "acme")

    code, _, _ = run(capsys, "keys", "revoke", str(key_id_of(key)))

    assert code == 0
    assert authorize(f"Bearer {key}", key_wiring.key_resolver()) is None


def test_rotation_issues_a_working_key_and_retires_the_old_one(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = create(capsys, "acme")

    code, out, _ = run(capsys, "keys", "rotate", str(key_id_of(old)))
    new = out.strip()

    assert code == 0 and new != old
    assert authorize(f"Bearer {new}", key_wiring.key_resolver()) == "acme"
    assert authorize(f"Bearer {old}", key_wiring.key_resolver()) is None


def test_rotation_with_grace_keeps_the_old_key_working_meanwhile(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = create(capsys, "acme")

    run(capsys, "keys", "rotate", str(key_id_of(old)), "--grace-seconds", "3600")

    assert authorize(f"Bearer {old}", key_wiring.key_resolver()) == "acme"


def test_revoking_an_unknown_key_fails_with_a_clear_message(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "keys", "revoke", "ffffffffffff")

    assert code == 1 and "No API key with id ffffffffffff" in err


def test_an_invalid_tenant_name_is_refused(configured: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "keys", "create", "--tenant", "TENANT#other")

    assert code == 1 and out == "" and "not a valid name" in err


# -- which data dir, and the key the server prints --------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["keys", "list"],
        ["keys", "create", "--tenant", "acme"],
        ["keys", "revoke", "0123456789ab"],
        ["jobs", "list"],
        ["jobs", "retry"],
        ["create-index"],
    ],
)
def test_every_cli_command_says_which_data_dir_it_uses(
    configured: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    _, _, err = run(capsys, *argv)

    assert f"memory-engine {argv[0]}: data dir {configured.resolve()} (MEMORY_ENGINE_DATA_DIR)" in err


def test_keys_create_on_a_data_dir_no_server_has_used_warns(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "keys", "create", "--tenant", "acme")

    assert code == 0 and out.startswith("me_")
    assert f"warning: no server has used {configured.resolve()} yet" in err


def test_keys_create_where_a_server_has_started_does_not_warn(
    configured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mark_served(get_settings(), "http://127.0.0.1:8140")

    _, _, err = run(capsys, "keys", "create", "--tenant", "acme")

    assert "warning" not in err


def test_the_banner_never_prints_a_key_the_operator_set(configured: Path) -> None:
    lines = banner("http://127.0.0.1:8140", get_settings(), LOCAL_KEY, created=False)

    assert not any(LOCAL_KEY in line for line in lines)
    assert "API key: MEMORY_ENGINE_API_KEY (set in the environment; not printed)" in lines
    assert f"data dir {configured.resolve()} (MEMORY_ENGINE_DATA_DIR)" in lines


def test_the_banner_prints_a_generated_key_once_when_it_is_made(
    configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_ENGINE_API_KEY")
    reset_settings()
    key, created = local_api_key(None, configured)

    first = banner("http://127.0.0.1:8140", get_settings(), key, created)
    again = banner("http://127.0.0.1:8140", get_settings(), *local_api_key(None, configured))

    assert created and any(key in line for line in first)
    assert not any(key in line for line in again) and any(
        str(configured / "api_key") in line for line in again
    )
