"""In-memory fakes of the ports, for unit tests: no model, no sockets, no disk."""
