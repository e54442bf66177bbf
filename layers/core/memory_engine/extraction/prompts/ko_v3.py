"""Korean prompts, version 3: what a real small model (Qwen2.5-Coder-1.5B, issue #34) got wrong with
version 2, said in the rules: turn times are UTC (they were read as local time); every line is the
words of the speaker named before it (the assistant's lines were credited to the user); aliases
only where the turns use another name, else an empty list (every character got the alias "없음",
and the thread registry merged them all into one person); quotes copied from the turns; intent
one text (it came back as a list).
"""

from __future__ import annotations

from dataclasses import replace

from memory_engine.extraction.prompts import ko_v2

PROMPT = replace(
    ko_v2.PROMPT,
    version="ko-v3",
    memory_system=(
        "번호가 매겨진 대화 턴을 장기 기억용 메모리 하나로 정리하세요. JSON 객체 하나로 답하세요:\n"
        "- summary: 약 10문장. 무슨 일이 있었고 각 인물이 무엇을 말하고 느끼고 결정했는지, "
        "이름과 구체적인 내용으로.\n"
        "- keywords: 키워드 10~40개(최대 65개): 이름, 장소, 물건, 주제, 날짜.\n"
        "- key_facts: 짧고 그 자체로 이해되는 사실 최대 18개, 시간 순서대로, 각각 턴 번호와 함께.\n"
        "- key_dialogue: 인물당 최대 4개의 중요한 대사. 턴에서 원문 그대로 옮긴 한 문장씩, "
        "그 말을 실제로 한 화자와 함께.\n"
        "- intent: 인물들이 원하는 것, 계획, 감정을 2~4문장으로, 문자열 하나로.\n"
        '- location: 알 수 있는 장소, 시간, 날씨. 모르면 "".\n'
        "- characters: 말하거나 언급된 모든 인물(사람과 이름 있는 동물)과, 턴에서 그 인물을 부른 "
        '다른 이름들(aliases). 다른 이름이 없으면 빈 목록 []: "없음", "none"이나 이름 자체를 '
        "넣지 마세요.\n"
        "규칙: 턴에 있는 내용만 쓰세요. 사용자는 {user_name}(이)라고 부르세요. 각 줄은 그 앞에 "
        '적힌 화자의 말입니다. 턴 시각은 UTC입니다. 상대적 날짜("어제")는 턴 시각을 기준으로 '
        "날짜로 바꾸세요. 알려진 인물은 대표 이름으로만 부르세요. {language_rule} "
        + ko_v2.DATA_RULE.format(frames="<dialogue>와 </dialogue>")
    ),
)
