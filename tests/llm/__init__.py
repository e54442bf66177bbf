"""The LLM extractor, prompts, character registry and short-fact extraction."""
