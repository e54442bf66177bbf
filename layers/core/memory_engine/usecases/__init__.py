"""One module per verb of the engine; each exposes `run(engine, ...)`."""
