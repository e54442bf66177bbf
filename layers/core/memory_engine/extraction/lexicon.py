"""Word lists the built-in extractor relies on: stop words, Korean particles, titles, cue words.

Data only; kept small on purpose (no external tokenizer). Entries are lower case.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN_STOP_WORDS = _words(
    """
    a about above after again against all almost also although always am an and another any anybody
    anyone anything anyway anyways are aren't around as at away back be because been before being
    below best better between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't done down during each either else enough even ever every everyone everything
    few for from further get gets getting go goes going gone gonna good got gotta great had hadn't
    has hasn't have haven't having he he'd he'll he's her here here's hers herself hey hi him
    himself his how how's however i i'd i'll i'm i've if in indeed into is isn't it it'd it'll
    it's its itself just keep kind know knew known let let's like likely lol look lot lots made
    make makes many maybe me mean might mine more most much must my myself need needs never new
    next nice no nor not nothing now of off oh ok okay on once one only onto or other others
    otherwise ought our ours ourselves out over own perhaps please pretty quite rather really
    right said same say says see seem seems shall she she'd she'll she's should shouldn't since
    so some somebody someone something sometimes soon still such sure take tell than thank thanks
    that that's the their theirs them themselves then there there's these they they'd they'll
    they're they've thing things think this those though through thus till to too took totally
    toward towards try trying um un under until up upon us use used very via want wanna wants was
    wasn't way we we'd we'll we're we've well went were weren't what what's whatever when where
    where's whether which while who who's whom whose why will with without won't would wouldn't
    wow yeah yes yet you you'd you'll you're you've your yours yourself yourselves
    today tonight yesterday tomorrow feel feels felt come came comes coming give gave tell told
    ask asked thing stuff actually definitely absolutely probably especially last first sounds sound
    happened happen finally
    """
)

# Number words and the chat's evaluative small talk ("fine", "glad", "lovely"): not what a
# memory is about, so never keywords (sentence salience keeps the plain stop words above).
EN_SMALL_TALK = _words(
    """
    two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred
    thousand million once twice half fine glad happy sad lovely beautiful wonderful awesome amazing
    cool fun funny sorry welcome congratulations congrats along bit guess old mostly near small
    whole big little long short early late usually together afterwards special spectacular
    unforgettable iconic luxurious exhausted clever generous adorable touching common fast hard
    striking modern popular helpful careful famously rough worth interesting exciting excited
    great kind nice sweet cute true real sounds hope yes hmm haha hehe lol anyway else favourite
    favorite enjoy enjoyed love loves idea help helps also
    """
)

# Past forms that "-ed" does not mark ("ate", "saw"): verbs, not keywords.
EN_IRREGULAR_PAST = _words(
    """
    ate saw drove flew went came took gave made got bought brought caught taught thought found left
    lost met ran sat slept spent told felt kept held heard knew meant paid said sent sold stood
    understood won wrote began swam sang drank rode broke chose forgot froze spoke stole woke wore
    grew threw blew drew shook fell fed led built burnt burned dealt dug hid hung lit shot shut
    """
)

KO_STOP_WORDS = _words(
    """
    나 너 저 그 이 저희 우리 당신 것 거 수 때 좀 잘 더 또 정말 진짜 너무 아주 매우 그냥 이제 지금
    그래 그래서 그리고 그런데 근데 하지만 그러면 그럼 네 예 응 어 아 오 와 음 뭐 왜 어떻게 언제 어디 누구 무엇
    이거 그거 저거 여기 거기 저기 이런 그런 저런 어떤 모든 많이 같이 다시 제 내 네가 니가 저도 나도 제가 내가
    하다 있다 없다 되다 같다 오늘 어제 내일 안녕 감사 고마워 그게 이게 저게 한번 조금 약간 항상 계속 아마
    혹시 역시 바로 먼저 다음 무슨 얼마나 이렇게 그렇게 저렇게 아니 아니요 정도 하나 많은 같은 다른
    씨 님 가서 와서 봐서 해서 돼서 보고 되고 가고 오고 먹고 놀고 자고 살고 하고 있고 없고 주고 받고
    만나서 보면 하면 가면 오면 되면 건데
    """
)

# Vague nouns, counters and small talk: never keywords (sentence salience keeps the words above).
KO_VAGUE_NOUNS = _words(
    """
    요즘 처음 생각 사람 얘기 마음 보람 기대 보통 제일 오랜만 고민 중 마리 명 분 살 번 곳 쪽 덕분 때문
    고생 최고 대박 화이팅 파이팅 다행 축하 걱정 ㅋㅋ ㅎㅎ 만한 매일 원래 이번 거기서 여기서
    """
)

# Copula and connective endings a noun takes without a particle ("비글이라니", "대학생이고",
# "직항이면"): taken off for the noun itself.
KO_COPULA_ENDINGS: tuple[str, ...] = (
    "이라니",
    "이라서",
    "이라고",
    "이지만",
    "이에요",
    "이라",
    "이고",
    "이면",
    "이셔",
    "이야",
    "인데",
    "이지",
    "이다",
    "이래",
    "이네",
    "라니",
    "라서",
    "예요",
)

# Korean particles (josa), longest first so "에서는" is tried before "는".
KO_PARTICLES: tuple[str, ...] = (
    "에서부터",
    "에게서",
    "에서는",
    "으로는",
    "까지는",
    "에서",
    "에게",
    "한테",
    "까지",
    "부터",
    "으로",
    "하고",
    "이랑",
    "처럼",
    "보다",
    "께서",
    "에는",
    "에도",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "에",
    "의",
    "와",
    "과",
    "도",
    "로",
    "만",
    "랑",
    "께",
    "야",
    "아",
)
# Particles that follow a final consonant (batchim) only / a vowel (or ㄹ for 로) only.
KO_AFTER_CONSONANT = frozenset({"은", "이", "을", "과", "으로", "으로는", "이랑", "아"})
KO_AFTER_VOWEL = frozenset({"는", "가", "를", "와", "로", "랑", "야"})
# Particles that also end many nouns (회의, 포도, 오만): stripped only from words of 3+ syllables.
KO_WEAK_PARTICLES = frozenset({"의", "도", "만", "께"})
# Nouns that look like a noun plus a particle but are whole words.
KO_PARTICLE_EXCEPTIONS = frozenset(
    {"고양이", "원숭이", "놀이", "어른이", "오이", "아이", "나이", "사이", "거리", "복숭아", "송아지"}
    | {"제주도", "울릉도", "거제도", "강화도", "독도", "안면도", "진도", "완도"}
)

# Endings of conjugated verbs and adjectives: such words are not keywords.
KO_VERBAL_ENDINGS: tuple[str, ...] = (
    "습니다",
    "니다",
    "어요",
    "아요",
    "여요",
    "해요",
    "세요",
    "에요",
    "예요",
    "었어",
    "았어",
    "였어",
    "했어",
    "었다",
    "았다",
    "였다",
    "했다",
    "는데",
    "은데",
    "니까",
    "어서",
    "아서",
    "해서",
    "었고",
    "겠어",
    "겠다",
    "거야",
    "잖아",
    "는다",
    "한다",
    "지만",
    "려고",
    "으면",
    "다고",
    "라고",
    "싶어",
    "싶다",
    "할게",
    "줄게",
    "해줘",
    "하자",
    "가자",
    "보자",
    "군요",
    "네요",
    "구나",
    "거든",
    "던데",
    "을까",
    "할까",
    "볼까",
    "갈까",
    "요",
    "하는",
    "하면",
    "했던",
    "같아",
    "좋아",
    "싫어",
    "해요",
    "하니",
    "해도",
    "하다",
    "된다",
    "나자",
    "먹자",
    "놀자",
    "시자",
    "보고",
    "간대",
    "한대",
    "는대",
    "된대",
    "온대",
)

# One-syllable nouns worth keeping as keywords (most one-syllable words are function words).
KO_SHORT_NOUNS = _words(
    """
    집 비 눈 밥 책 돈 꿈 차 옷 술 물 불 산 강 골 반 팀 방 길 빵 꽃 닭
    소 배 별 봄 밤 낮 약 병 칼 검 활 성 탑 왕 군 용 역
    """
)

TITLES = _words(
    """
    captain capt mr mrs ms miss mx dr doctor professor prof sir dame lady lord commander cmdr
    lieutenant lt sergeant sgt detective det general gen admiral colonel col major agent officer
    king queen prince princess duke duchess count countess baron uncle aunt auntie grandma grandpa
    father mother brother sister saint st master mistress chief
    """
)

# Capitalised words that are not names, even mid-sentence.
NOT_NAMES = _words(
    """
    i i'm i've i'll i'd ok okay oh yes no hi hey hello thanks thank well so and but the a an this
    that these those what why how when where who which my your our their his her its we you he she
    they it let let's just maybe sure wow yeah please sorry good great nice also then now today
    tonight tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january
    february march april may june july august september october november december god english
    korean japanese chinese french spanish german american british european asian christmas
    easter halloween thanksgiving internet tv lgbtq if as in on at for from with of to by or not
    do does did is are was were be have has had can could would should will shall might must
    any all some every each both one two three mom dad mum mommy daddy ah hmm haha lol omg
    definitely absolutely certainly totally exactly fine ha hah aw aww ooh oops yay yep yup nope nah
    welcome congratulations congrats happy cheers bye goodbye awesome amazing lovely wonderful cool
    perfect right true really mostly yet still even never always first next last ai assistant
    mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends early late little big
    """
)

# Last words that make a capitalised phrase a place ("Central Park", "Seoul Station").
PLACE_SUFFIXES = _words(
    """
    park street st avenue ave road rd boulevard lane square plaza city town village county state
    lake river mountain mountains mount island islands beach bay sea ocean valley forest desert
    university college school academy hospital clinic station airport cafe café restaurant bar
    pub hotel inn tavern museum church temple cathedral center centre mall market hall bridge
    tower castle palace kingdom empire republic harbor harbour port stadium arena library theater
    theatre zoo garden gardens falls canyon coast district province
    """
)

# First words that make a capitalised phrase a place ("Port Royal", "Mount Hood", "New York").
PLACE_PREFIXES = frozenset(
    {"port", "mount", "lake", "fort", "saint", "san", "santa", "los", "las", "new", "cape"}
)

# Lower-case nouns that name a setting after "at/in/to the ...".
PLACE_NOUNS = _words(
    """
    park beach house home room bedroom kitchen school office cafe café coffeeshop restaurant store
    shop mall market gym hospital clinic library museum church temple station airport city town
    village country forest woods lake river mountain mountains camp garden backyard yard bar pub
    club hotel inn tavern street road center centre class classroom studio theater theatre cinema
    stadium field farm island ship boat castle palace dungeon cave harbor harbour port bridge tower
    square plaza apartment building campus university college zoo pool bakery concert party
    meeting conference festival wedding shelter group hall court lab laboratory factory base
    station village valley desert sea ocean coast countryside hometown neighborhood neighbourhood
    guesthouse hostel ryokan desk cupboard kitchen kindergarten shrine backyard harbour harbor
    sofa couch bed balcony garage office downtown
    """
)

# Words that make "at/in/to the X" an idiom, not a place.
NOT_PLACES = frozenset({"end", "moment", "way", "meantime", "past", "future", "beginning", "middle", "mood"})

EN_TIME_WORDS = _words(
    """
    today tonight yesterday tomorrow morning afternoon evening night midnight noon weekend weekends
    weekday monday tuesday wednesday thursday friday saturday sunday january february march april
    june july august september october november december spring summer autumn winter christmas
    halloween thanksgiving dawn dusk sunrise sunset
    """
)

EN_WEATHER_WORDS = _words(
    """
    sunny rain rainy raining rained snow snowy snowing snowed cloudy windy wind storm stormy
    thunder thunderstorm lightning fog foggy hot cold warm humid chilly freezing drizzle hail
    heatwave breeze weather sunshine overcast
    """
)

KO_TIME_WORDS = _words(
    """
    오늘 어제 내일 모레 그저께 아침 점심 저녁 밤 새벽 오전 오후 주말 평일 지난주 이번주 다음주 지난달
    이번달 다음달 작년 올해 내년 봄 여름 가을 겨울 월요일 화요일 수요일 목요일 금요일 토요일 일요일
    크리스마스 설날 추석 한밤중 낮 올여름 올겨울
    """
)

KO_PLACE_WORDS = _words(
    """
    집 학교 회사 카페 공원 병원 식당 도서관 바다 산 해변 역 공항 마을 성 숲 시장 가게 호텔 교회
    사무실 편의점 마트 백화점 영화관 극장 놀이공원 동물원 박물관 미술관 체육관 헬스장 수영장 캠핑장
    교실 강의실 기숙사 아파트 주점 여관 던전 신전 궁전 항구 광장 거리 골목 고향 서울 부산
    제주도 한국 일본 미국 중국 파리 런던 뉴욕 도쿄
    """
)

# Words before "에서" that are not places ("그 중에서", "생각에서").
KO_NOT_PLACES = frozenset(
    {
        "중",
        "사이",
        "생각",
        "마음",
        "입장",
        "면",
        "점",
        "거기",
        "여기",
        "저기",
        "곳",
        "데",
        "처음",
        "일기예보",
        "뉴스",
    }
)
