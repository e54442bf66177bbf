"""English prompts, version 1. Also the base for languages without a prompt of their own."""

from __future__ import annotations

from memory_engine.extraction.prompts.base import PromptSet

PROMPT = PromptSet(
    version="en-v1",
    language="en",
    language_name="English",
    memory_system=(
        "Turn the numbered dialogue turns into one memory for long-term recall. "
        "Answer with one JSON object:\n"
        "- summary: about 10 sentences: what happened, what each character said, felt and decided, "
        "with names and details.\n"
        "- keywords: 10-40 keywords (max 65): names, places, things, topics, dates.\n"
        "- key_facts: up to 18 short self-contained facts in chronological order, each with its turn "
        "number.\n"
        "- key_dialogue: up to 4 telling quotes per character, word for word, one sentence each, with "
        "the speaker.\n"
        "- intent: 2-4 sentences on what the characters want, plan or feel.\n"
        '- location: place, time and weather as far as known, else "".\n'
        "- characters: everyone who speaks or is mentioned, with the other names used for them "
        "(aliases).\n"
        "Rules: use only what the turns say. Call the user {user_name}. Resolve relative dates "
        '("yesterday") with the turn times. Call known characters only by their canonical name. '
        "{language_rule}"
    ),
    memory_user=("Known characters (canonical name: aliases):\n{known_characters}\n\nTurns:\n{turns}"),
    no_known_characters="(none yet)",
    language_rule="Write every text value in {language}.",
    schema_hint="The JSON object must match this JSON schema:\n{schema}",
    repair=("Your answer is not valid:\n{errors}\nAnswer again with the whole corrected JSON object only."),
    truncated=(
        "Your answer was cut off at the length limit ({errors}). Answer again with the whole "
        "JSON object, shorter: fewer keywords and facts, shorter sentences."
    ),
    facts_system=(
        "You keep a list of short facts about the user. From the new messages, take the facts "
        "worth remembering (preferences, plans, relationships, personal details, events), each a "
        "short self-contained sentence, and compare them with the existing facts, shown by number. "
        'Answer with one JSON object {{"operations": [...]}}; each operation has "op", "id", "fact":\n'
        '- "add": a new fact; id null.\n'
        '- "update": an existing fact that changed or became more precise; id is its number, '
        "fact the new full sentence.\n"
        '- "delete": an existing fact the messages contradict or retract; id is its number.\n'
        '- "keep": an existing fact the messages repeat; id is its number.\n'
        "Use only the numbers shown. No operation for small talk; an empty list is a fine answer. "
        "{language_rule}"
    ),
    facts_user="Existing facts:\n{existing}\n\nNew messages:\n{messages}",
    no_existing_facts="(none)",
)
