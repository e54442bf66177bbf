"""The local server: HTTP on 127.0.0.1 → API Gateway proxy events → the very same handlers."""
