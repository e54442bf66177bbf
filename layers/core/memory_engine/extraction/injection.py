"""Recognising instruction-like text ("SYSTEM OVERRIDE: ignore all previous instructions…").

Facts and memories end up in a chat model's prompt. A user line that gives the model orders is
kept as a turn (nothing accepted is lost) but is not made a fact, a summary sentence or a quote,
nor shown to the chat model as something remembered (`facts.merge`, `chat_prompt.memory_block`).
The patterns name the moves such payloads make, in English, Korean, Spanish, Japanese, Chinese,
French, German and Portuguese: overriding or ignoring the instructions (paraphrases included:
"set aside the guidance you were given"), claiming a system / developer / operator role or
speaking for one ("NEW RULE FROM THE OPERATOR"), asking for the prompt, switching the model into a
mode, standing orders to the assistant ("whenever you reply, always…"), and forged prompt markup.

Before matching, look-alikes are folded (`fold`): NFKC (fullwidth `＜`, `ＳＹＳＴＥＭ`), HTML and
numeric entities (`&lt;`, `&#60;`, `&#x3C;`), `\\u003c`, `\\x3c` and `%3C` escapes, and the other
angle brackets (`⦉`, `《`, `‹`, …) to `<` and `>`: a forged `&lt;/user-memory&gt;` reads as
the `</user-memory>` it imitates.

A heuristic, and said so in docs/security.md: it catches the common phrasings, not every way of
giving an order in every language.
"""

from __future__ import annotations

import html
import re
import unicodedata

from memory_engine.extraction.prompts.frame import CLOSERS, OPENERS

_ENGLISH = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,30}?\b(?:instructions?|prompts?|directives?)\b"
    r"|\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
    r"(?:above|previous|prior|earlier|preceding|original|system'?s?|safety)\b"
    r"|\bsystem\s*(?:override|prompt|instruction|command)s?\b"
    r"|^\s*[\[(<{]?\s*(?:system|developer|admin(?:istrator)?|root|assistant|operator)\s*[\])>}]?\s*:"
    r"|\b(?:developer|admin(?:istrator)?|god|jailbreak|debug|unrestricted|dan)\s+mode\b"
    r"|\b(?:reveal|print|show|output|repeat|leak|dump|tell\s+me)\b[^.!?\n]{0,30}?"
    r"\b(?:system\s+prompt|your\s+(?:instructions|prompt|rules)|hidden\s+(?:instructions|prompt|configuration))\b"
    r"|\bfrom\s+now\s+on,?\s+you\b|\byou\s+(?:are\s+now|must\s+now|will\s+now)\b"
    r"|\b(?:new|updated|real)\s+instructions?\s*:|\bdo\s+anything\s+now\b"
    r"|</?\s*(?:system|user-memory|dialogue|facts|messages|instructions?|im_start|im_end)\b"
    r"|\[/?inst\]|<\|im_(?:start|end)\|>"
    # Paraphrases: putting the model's instructions aside in other words...
    r"|(?:\b(?:set|put|cast|push)\s+aside|\bpay\s+no\s+(?:attention|heed)\s+to|\bstop\s+following"
    r"|\b(?:do\s+not|don'?t|no\s+longer)\s+(?:follow|obey)|\bthrow\s+out"
    r")[^.!?\n]{0,30}?\b(?:(?:your|the|all|any|previous|prior|earlier|above|original|system)\s+"
    r"(?:\w+\s+){0,2}?(?:instructions?|guid(?:ance|elines?)|directives?|prompts?|programming)"
    r"|(?:your|previous|prior|earlier|above|original|system)\s+(?:\w+\s+)?rules)\b"
    r"|\byour\s+(?:real\s+|original\s+|previous\s+|earlier\s+)?(?:rules|instructions|guidelines|restrictions)"
    r"\s+(?:are|were|have\s+been)\s+(?:suspended|lifted|void|revoked|cancell?ed|disabled|removed|replaced)\b"
    # ... speaking for the operator ...
    r"|\b(?:rules?|instructions?|directives?|polic(?:y|ies)|orders?|commands?)\s+(?:from|by)\s+(?:the\s+|your\s+)?"
    r"(?:operators?|developers?|admin(?:istrator)?s?|system|openai|anthropic)\b"
    r"|\b(?:message|note|notice)s?\s+(?:from|to|for)\s+(?:the\s+|your\s+)?"
    r"(?:operators?|developers?|admin(?:istrator)?s?|system|assistant|ai|model|chatbot)\s*:"
    r"|\b(?:operator|developer|admin(?:istrator)?)\s+(?:says|said|wants|orders|requires)\s*:"
    r"|\b(?:important|new|updated|revised|secret|urgent|additional)\s+(?:\w+\s+)?(?:instructions?|directives?)\s*:"
    # ... and standing orders to the assistant.
    r"|\b(?:whenever|every\s+time|each\s+time)\s+you\s+(?:reply|respond|answer|write)\b[^.!?\n]{0,40}?"
    r"\b(?:always|never|must|include|add|start|end|put|mention|recommend)\b"
    r"|(?:^|[.!?:;]\s*)(?:the\s+)?(?:assistant|ai|chatbot)\s+(?:must|shall|has\s+to|is\s+required\s+to)\s+(?!be\b)"
    r"|(?:^|[:;,.!]\s*|\b(?:and|you|must|always)\s+)(?:obey|comply\s+with)\s+(?:every|all|any)\s+"
    r"(?:of\s+(?:my|the)\s+)?(?:requests?|orders?|commands?|instructions?)\b"
    r"|\b(?:act|answer|respond|behave)\s+as\s+(?:my\s+|an?\s+)?(?:unfiltered|unrestricted|uncensored|jailbroken)\b",
    re.IGNORECASE | re.MULTILINE,
)
# Korean orders use the imperative or a connective ("무시해", "무시하고"), never the past a user
# tells a story in ("선생님 지시를 무시했어"); the instructions ignored are the model's own.
_KOREAN = re.compile(
    r"(?:이전|앞의|앞선|위의|위에|기존|모든|원래|너의|네|당신의|시스템)[^.!?\n]{0,8}?"
    r"(?:지시|지침|명령|규칙|설정|프롬프트|제약|내용)[^.!?\n]{0,8}?"
    r"(?:무시(?:해|하고|하라|하세요|할\s*것|하십시오)|잊어|잊고|따르지\s*마|해제해|우회해)"
    r"|시스템\s*(?:프롬프트|메시지|명령|지시|오버라이드)"
    r"|^\s*[\[(<]?\s*(?:시스템|관리자|개발자|운영자)\s*[\])>]?\s*:"
    r"|(?:관리자|개발자|디버그|탈옥|무제한)\s*모드"
    r"|(?:새로운|새|진짜)\s*(?:지시|명령|지침)\s*:"
    r"|(?:지금부터|이제부터)[^.!?\n]{0,16}?(?:너는|넌|당신은|네가|모든\s*답)"
    r"|(?:프롬프트|지시문|지침)[^.!?\n]{0,10}?(?:공개|출력|보여|알려|유출)",
    re.MULTILINE,
)
_SPANISH = re.compile(
    r"\b(?:ignora|ignore|ignoren|olvida|olvide|olviden|omite|descarta|desobedece)\s+(?:"
    r"todo\s+lo\s+(?:anterior|dicho)|(?:todas\s+)?(?:las|tus|sus)\s+(?:instrucciones|indicaciones|reglas|[óo]rdenes|directrices)"
    r"(?:\s+(?:anteriores|previas|originales|del\s+sistema))?|(?:el\s+)?prompt)\b"
    r"|\ba\s+partir\s+de\s+ahora,?\s+(?:eres|ser[áa]s|debes|vas\s+a|t[úu]\s+eres|responde)"
    r"|\bmodo\s+(?:desarrollador|dios|administrador|depuraci[óo]n|sin\s+(?:restricciones|filtros|l[íi]mites))\b"
    r"|\b(?:revela|muestra|imprime|repite|dime|filtra)\b[^.!?\n]{0,30}?"
    r"\b(?:prompt|instrucciones)\s+(?:del\s+sistema|ocultas|originales|secretas)\b"
    r"|\bnuevas?\s+(?:instrucci[óo]n|instrucciones|directrices)\s*:"
    r"|\b(?:reglas?|[óo]rdenes|instrucci[óo]n|instrucciones|mensaje)\s+(?:nuevas?\s+)?(?:del|de\s+la)\s+"
    r"(?:operador|administrador|sistema|desarrollador)\b"
    r"|^\s*[\[(<{]?\s*(?:sistema|administrador|desarrollador|operador)\s*[\])>}]?\s*:",
    re.IGNORECASE | re.MULTILINE,
)
# Japanese and Chinese are written without spaces: the patterns are runs of characters.
_JAPANESE = re.compile(
    r"(?:以前|これまで|今まで|前|上記|上|元|すべて|全て|あなた)の?(?:すべての|全ての)?"
    r"(?:指示|命令|ルール|設定|プロンプト|指令|制約)を?(?:すべて|全て)?"
    r"(?:無視し(?:て|ろ)|無視せよ|忘れ(?:て(?!しま)|ろ|なさい)|破棄し(?:て|ろ)|解除し(?:て|ろ))"
    r"|システムプロンプト"
    r"|(?:今から|これから|今後|今日から)は?、?(?:あなた|君|お前|貴方)は"
    r"|(?:開発者|管理者|デバッグ|脱獄|無制限|ゴッド)モード"
    r"|新しい(?:指示|命令)\s*:"
    r"|(?:運営者|開発者|オペレーター)(?:から|より)の(?:指示|命令|ルール)"
    r"|^\s*[\[(<]?\s*(?:システム|管理者|開発者)\s*[\])>]?\s*:",
    re.MULTILINE,
)
_CHINESE = re.compile(
    r"(?:忽略|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|别管|別管)(?!了)"
    r"(?:之前|以前|上面|上述|先前|所有|全部|你的|原来|原來|系统|系統)的?(?:所有|全部)?的?"
    r"(?:指令|指示|命令|规则|規則|设定|設定|提示|限制)"
    r"|(?:系统|系統)(?:提示词|提示詞|指令)"
    r"|(?:显示|告诉|输出|泄露|打印|重复|顯示|告訴|輸出|洩露|重複)[^。！？\n]{0,10}?(?:系统提示|系統提示|提示词|提示詞)"
    r"|(?:从现在开始|從現在開始|从现在起|從現在起|从今以后|從今以後)[^。！？\n]{0,6}?"
    r"(?:你是|你要|你必须|你必須|你将|你將|你就是)"
    r"|(?:开发者|開發者|调试|調試|越狱|越獄|无限制|無限制|上帝)模式"
    r"|新的?(?:指令|指示)\s*:"
    r"|(?:运营者|運營者|开发者|開發者|操作员|操作員)(?:的|发来的|發來的)(?:指令|命令|规则|規則)"
    r"|^\s*[\[(<]?\s*(?:系统|系統|开发者|開發者)\s*[\])>]?\s*:",
    re.MULTILINE,
)
# The other languages the prompts name (prompts.LANGUAGE_NAMES), their commonest phrasings.
_OTHERS = re.compile(
    r"\b(?:ignore[zs]?|oublie[zs]?)\s+(?:toutes\s+)?(?:les|tes|vos)\s+(?:instructions|consignes|r[èe]gles)\b"
    r"|\b[àa]\s+partir\s+de\s+maintenant,?\s+(?:tu|vous)\s+(?:es|êtes|dois|devez)\b|\bmode\s+d[ée]veloppeur\b"
    r"|\b(?:ignoriere|ignorieren\s+sie|vergiss|vergessen\s+sie)\s+(?:alle\s+)?(?:vorherigen\s+|bisherigen\s+)?"
    r"(?:anweisungen|regeln|instruktionen)\b|\bab\s+jetzt\s+bist\s+du\b|\bentwicklermodus\b"
    r"|\b(?:ignore|ignora|esque[çc]a|esquece)\s+(?:todas\s+)?(?:as\s+)?(?:instru[çc][õo]es|regras)\b"
    r"|\ba\s+partir\s+de\s+agora,?\s+(?:voc[êe]|tu)\s+(?:[ée]|deve|ser[áa])\b|\bmodo\s+desenvolvedor\b",
    re.IGNORECASE | re.MULTILINE,
)
_PATTERNS = (_ENGLISH, _KOREAN, _SPANISH, _JAPANESE, _CHINESE, _OTHERS)

# Escapes of `<`, `>` and `/` a model may read as the characters themselves.
_ESCAPED = re.compile(r"\\u003[cCeE]|\\x3[cCeE]|%3[cCeE]|\\u002[fF]|%2[fF]")
_UNESCAPED = {"c": "<", "e": ">", "f": "/"}
# The frame's look-alikes, and the neutral `‹›` they become in a prompt (guillemets « » stay:
# they are quotation marks in many languages, not brackets).
_BRACKETS = str.maketrans({**dict.fromkeys(OPENERS + "‹", "<"), **dict.fromkeys(CLOSERS + "›", ">")})


def fold(text: str) -> str:
    """`text` with look-alikes folded: NFKC (fullwidth letters and brackets to ASCII), entities
    and escapes of `<`, `>` and `/` decoded, and other angle brackets made `<` and `>`."""
    text = _ESCAPED.sub(lambda found: _UNESCAPED[found.group()[-1].lower()], text)
    return unicodedata.normalize("NFKC", html.unescape(text)).translate(_BRACKETS)


def is_instruction(text: str) -> bool:
    """Whether `text` reads as orders to a language model rather than something about the speaker."""
    folded = fold(text)
    return any(pattern.search(folded) for pattern in _PATTERNS)
