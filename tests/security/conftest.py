from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.stack import LocalStack, local_stack


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[LocalStack]:
    with local_stack(tmp_path) as built:
        yield built
