"""`python -m memory_engine_mcp`: the same as `memory-engine-mcp`."""

import sys

from memory_engine_mcp.cli import main

sys.exit(main())
