"""A child's output goes to a file the test reads when it wants: the child never waits on the test."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.e2e.child_output import ChildOutput

# Well past the 64 KB a pipe holds: with `stdout=PIPE` read only at the end, this child blocks.
LINES = 20_000
WRITER = f"for n in range({LINES}):\n    print('request', n, 'answered with 200', flush=True)"


def test_a_child_that_writes_more_than_a_pipe_holds_runs_to_its_end_and_all_of_it_is_read() -> None:
    # Given a child writing ~700 KB into a ChildOutput nobody reads meanwhile
    output = ChildOutput()
    child = subprocess.Popen([sys.executable, "-c", WRITER], stdout=output.file)
    try:
        # When it runs, Then it finishes without the test reading a byte
        assert child.wait(timeout=120) == 0
        # And every line is there, in order
        lines = output.text().splitlines()
        assert len(lines) == LINES
        assert (
            lines[0] == "request 0 answered with 200"
            and lines[-1] == f"request {LINES - 1} answered with 200"
        )
    finally:
        child.kill()
        output.close()


def test_what_the_child_writes_after_a_read_goes_after_what_it_wrote_before_whatever_the_offset() -> None:
    # Given a child that writes, waits for a line on its stdin, and writes again
    output = ChildOutput()
    script = "import sys\nprint('first', flush=True)\nsys.stdin.readline()\nprint('second', flush=True)"
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=output.file, text=True
    )
    try:
        assert child.stdin is not None
        while "first" not in output.text():
            assert child.poll() is None, output.text()
            time.sleep(0.05)
        # When the test leaves the offset it shares with the child at the start (as a read
        # between its seek and its end does) and the child writes again
        output.file.seek(0)
        child.stdin.write("go\n")
        child.stdin.close()
        assert child.wait(timeout=60) == 0
        # Then the second write follows the first, nothing written over
        assert output.text().splitlines() == ["first", "second"]
    finally:
        child.kill()
        output.close()
