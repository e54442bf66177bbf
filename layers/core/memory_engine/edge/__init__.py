"""The edge: what every handler shares around its use case (the REST resolver and the one error
-> HTTP mapping, the authorizer's key checks, logging, metrics and traces, streaming, rate limits,
text refused where a request is read). Nothing here assembles an engine or runs a use case."""
