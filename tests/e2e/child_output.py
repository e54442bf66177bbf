"""A child process's output kept in a file the test reads when it wants, never in a pipe.

A pipe that nobody reads holds 64 KB; past that, every write the child makes blocks. The local
server logs each request, so a test server started with `stdout=PIPE` and read only at its stop
answered nothing once its log passed 64 KB: on a busy host (more polling, more timeouts logged)
the doors' shared server stopped for minutes in the smoke test's clean-up and every later test
timed out (issue 42). A file never fills, and the child's writes never wait on the test.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from typing import IO


class ChildOutput:
    """An anonymous file for a child's stdout/stderr (`file` to pass to `Popen`), read any time.

    Opened for appending: the child shares the file's offset, and with O_APPEND its writes go to
    the end whatever the test's reads moved it to."""

    def __init__(self) -> None:
        # Open as long as the child runs (closed by `close`), so not in a `with`.
        self.file: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        # tempfile opens its own descriptor (mode "a+" would only seek to the end once): the
        # append flag is set on the open file itself, which the child's copy shares.
        descriptor = self.file.fileno()
        fcntl.fcntl(descriptor, fcntl.F_SETFL, fcntl.fcntl(descriptor, fcntl.F_GETFL) | os.O_APPEND)

    def text(self) -> str:
        """Everything the child wrote so far."""
        self.file.flush()
        self.file.seek(0)
        return self.file.read()

    def close(self) -> None:
        self.file.close()
