"""English prompts, version 3: what a real small model (Qwen2.5-Coder-1.5B, issue #34) got wrong with
version 2, said in the rules: turn times are UTC (they were read as local time); every line is the
words of the speaker named before it (the assistant's lines were credited to the user); aliases
only where the turns use another name, else an empty list (every character got the alias "none",
and the thread registry merged them all into one person); quotes copied from the turns; intent
one text (it came back as a list).
"""

from __future__ import annotations

from dataclasses import replace

from memory_engine.extraction.prompts import en_v2

PROMPT = replace(
    en_v2.PROMPT,
    version="en-v3",
    memory_system=(
        "Turn the numbered dialogue turns into one memory for long-term recall. "
        "Answer with one JSON object:\n"
        "- summary: about 10 sentences: what happened, what each character said, felt and decided, "
        "with names and details.\n"
        "- keywords: 10-40 keywords (max 65): names, places, things, topics, dates.\n"
        "- key_facts: up to 18 short self-contained facts in chronological order, each with its turn "
        "number.\n"
        "- key_dialogue: up to 4 telling quotes per character, copied word for word from the turns, "
        "one sentence each, with the speaker who said it.\n"
        "- intent: 2-4 sentences on what the characters want, plan or feel, as one string.\n"
        '- location: place, time and weather as far as known, else "".\n'
        "- characters: everyone who speaks or is mentioned (people and named animals), with the "
        "other names the turns use for them (aliases); an empty list [] when there are none, never "
        '"none" or the name itself.\n'
        "Rules: use only what the turns say. Call the user {user_name}. Each line is the words of "
        "the speaker named before it. Turn times are UTC. Resolve relative dates "
        '("yesterday") with the turn times. Call known characters only by their canonical name. '
        "{language_rule} " + en_v2.DATA_RULE.format(frames="The text between <dialogue> and </dialogue>")
    ),
)
