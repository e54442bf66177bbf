"""MEMORY_ENGINE_BACKEND picks one entry of the lazy factory map in `memory_engine.backends`."""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

from memory_engine.backends import BACKENDS
from memory_engine.settings import Settings


def test_every_backend_the_settings_allow_has_an_entry_in_the_map() -> None:
    allowed = set(typing.get_args(Settings.model_fields["backend"].annotation))

    assert set(BACKENDS) == allowed


def test_building_the_local_backend_imports_no_aws_sdk(tmp_path: Path) -> None:
    # Given a process that builds every adapter of the local backend
    code = (
        "import sys\n"
        "from memory_engine import wiring\n"
        "from memory_engine.settings import Settings\n"
        f"settings = Settings(backend='local', data_dir={str(tmp_path)!r})\n"
        "wiring.build_store(settings); wiring.build_queue(settings)\n"
        "wiring.build_key_store(settings); wiring.build_usage_plan_keys(settings)\n"
        "print('boto3' in sys.modules)\n"
    )

    # When it runs
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    # Then boto3 was never loaded
    assert result.stdout.strip() == "False"
