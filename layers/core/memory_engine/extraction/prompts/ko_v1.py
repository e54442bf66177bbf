"""Korean prompts, version 1 (Korean is the engine's default language)."""

from __future__ import annotations

from memory_engine.extraction.prompts.base import PromptSet

PROMPT = PromptSet(
    version="ko-v1",
    language="ko",
    language_name="한국어",
    memory_system=(
        "번호가 매겨진 대화 턴을 장기 기억용 메모리 하나로 정리하세요. JSON 객체 하나로 답하세요:\n"
        "- summary: 약 10문장. 무슨 일이 있었고 각 인물이 무엇을 말하고 느끼고 결정했는지, "
        "이름과 구체적인 내용으로.\n"
        "- keywords: 키워드 10~40개(최대 65개): 이름, 장소, 물건, 주제, 날짜.\n"
        "- key_facts: 짧고 그 자체로 이해되는 사실 최대 18개, 시간 순서대로, 각각 턴 번호와 함께.\n"
        "- key_dialogue: 인물당 최대 4개의 중요한 대사, 원문 그대로 한 문장씩, 화자와 함께.\n"
        "- intent: 인물들이 원하는 것, 계획, 감정을 2~4문장으로.\n"
        '- location: 알 수 있는 장소, 시간, 날씨. 모르면 "".\n'
        "- characters: 말하거나 언급된 모든 인물과, 그 인물을 부른 다른 이름들(aliases).\n"
        "규칙: 턴에 있는 내용만 쓰세요. 사용자는 {user_name}(이)라고 부르세요. "
        '상대적 날짜("어제")는 턴 시각을 기준으로 날짜로 바꾸세요. 알려진 인물은 대표 이름으로만 '
        "부르세요. {language_rule}"
    ),
    memory_user="알려진 인물 (대표 이름: 별칭):\n{known_characters}\n\n대화 턴:\n{turns}",
    no_known_characters="(아직 없음)",
    language_rule="모든 텍스트 값은 {language}로 쓰세요.",
    schema_hint="JSON 객체는 다음 JSON 스키마를 따라야 합니다:\n{schema}",
    repair="답이 올바르지 않습니다:\n{errors}\n고친 JSON 객체 전체만 다시 답하세요.",
    truncated=(
        "답이 길이 제한에서 잘렸습니다({errors}). JSON 객체 전체를 더 짧게 다시 답하세요: "
        "키워드와 사실은 더 적게, 문장은 더 짧게."
    ),
    facts_system=(
        "사용자에 대한 짧은 사실 목록을 관리합니다. 새 메시지에서 기억할 만한 사실(취향, 계획, "
        "관계, 신상, 사건)을 각각 짧고 그 자체로 이해되는 한 문장으로 뽑아, 번호로 표시된 기존 "
        '사실과 비교하세요. JSON 객체 {{"operations": [...]}} 하나로 답하고, 각 작업은 '
        '"op", "id", "fact"를 가집니다:\n'
        '- "add": 새 사실. id는 null.\n'
        '- "update": 바뀌었거나 더 정확해진 기존 사실. id는 그 번호, fact는 새 문장 전체.\n'
        '- "delete": 메시지가 부정하거나 철회한 기존 사실. id는 그 번호.\n'
        '- "keep": 메시지가 되풀이한 기존 사실. id는 그 번호.\n'
        "표시된 번호만 쓰세요. 잡담에는 작업이 없으며, 빈 목록도 좋은 답입니다. {language_rule}"
    ),
    facts_user="기존 사실:\n{existing}\n\n새 메시지:\n{messages}",
    no_existing_facts="(없음)",
)
