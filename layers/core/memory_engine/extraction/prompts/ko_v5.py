"""Korean prompts, version 5: the thread's current facts, as in `en_v5` (issue #45 §1). The model
sees the facts earlier memories of the thread state that still hold, numbered F1, F2, ..., and
marks each key fact as new, an update of one of them or a contradiction of one, naming it; the
engine keeps the replaced fact as history. Otherwise as version 4.
"""

from __future__ import annotations

from dataclasses import replace

from memory_engine.extraction.prompts import ko_v4

CURRENT_FACTS_RULE = (
    "현재 사실은 이 스레드의 이전 기억이 말하는, 아직 유효한 사실들이며 F1, F2, ... 번호가 붙어 "
    "있습니다. 각 key_facts 항목의 status는 현재 사실의 새 값(새 집, 직장, 연인, 반려동물, 계획, "
    '취향)을 말하면 "update", 현재 사실이 틀렸거나 더 이상 사실이 아니라고 말하면 "contradiction", '
    '그 밖에는 "new"로 쓰고, replaces에는 update나 contradiction일 때 그 사실의 번호("F3")를, '
    "아니면 null을 쓰세요. 다른 사람에 관한 사실이나 현재 사실에 덧붙이기만 하는 사실은 표시하지 마세요."
)

PROMPT = replace(
    ko_v4.PROMPT,
    version="ko-v5",
    memory_system=ko_v4.PROMPT.memory_system + " " + CURRENT_FACTS_RULE,
    memory_user=(
        "알려진 인물 (대표 이름: 별칭):\n{known_characters}\n\n"
        "현재 사실:\n{current_facts}\n\n"
        "대화 턴:\n<dialogue>\nuser: {user_name}\n{turns}\n</dialogue>"
    ),
    no_current_facts="(아직 없음)",
)
