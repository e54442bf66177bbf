"""The Lambda functions: `functions/<name>/handler.py` serves one route or reads one queue.

Every handler is imported as `functions.<name>.handler`, so this runs first in each function:
Powertools' `event_handler` and `data_classes` packages are initialised name by name, on first
use, instead of importing every resolver and every event source's class at each cold start
(`memory_engine.edge.deferred_init`).
"""

from memory_engine.edge.deferred_init import defer

defer("aws_lambda_powertools.event_handler", "aws_lambda_powertools.utilities.data_classes")
