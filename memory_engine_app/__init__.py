"""The application around the Lambda core: the local server, the OpenAPI writer and the CLI.

They read the route table and the handlers (`functions/`), so they live outside `memory_engine`
(layers/core, the Lambda layer), which never imports them or `functions`.
"""
