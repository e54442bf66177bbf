"""English prompts, version 5: the thread's current facts (issue #45 §1). The model is shown the
facts earlier memories of the thread state that still hold, numbered F1, F2, ... (each quoted,
with when it was said), and marks each key fact it writes as new, an update of one of them ("I
moved to Seoul" updates F3 "I live in Busan") or a contradiction of one, naming it. Nothing is
deleted: the engine keeps the replaced fact as history (`usecases/supersede.py`). Otherwise as
version 4.
"""

from __future__ import annotations

from dataclasses import replace

from memory_engine.extraction.prompts import en_v4

CURRENT_FACTS_RULE = (
    "Current facts lists what earlier memories of this thread say and still holds, numbered F1, F2, "
    '... For each key fact, set status: "update" when it gives a new value of a current fact (a '
    'new home, job, partner, pet, plan, taste), "contradiction" when it says a current fact is '
    'wrong or no longer true, otherwise "new"; and replaces: that fact\'s number ("F3") for an '
    "update or a contradiction, else null. Never mark a fact about another person, or one that "
    "only adds to a current fact."
)

PROMPT = replace(
    en_v4.PROMPT,
    version="en-v5",
    memory_system=en_v4.PROMPT.memory_system + " " + CURRENT_FACTS_RULE,
    memory_user=(
        "Known characters (canonical name: aliases):\n{known_characters}\n\n"
        "Current facts:\n{current_facts}\n\n"
        "Turns:\n<dialogue>\nuser: {user_name}\n{turns}\n</dialogue>"
    ),
    no_current_facts="(none yet)",
)
