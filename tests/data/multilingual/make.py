"""Writes memories.jsonl (import) and gold.jsonl (`ostrakon eval`) for two memories written in
languages other than English, in the style of MemoryBank: a user talks with an assistant
over ten days, one episode per exchange, and later asks about what was said. Written for
Ostrakon (no outside text); licence CC0 1.0, see SOURCE.md.

    python3 make.py
"""
import json
import os

KO = ("ko-jimin", "2024-03-", [
    # (day, user, assistant)
    (4, "안녕하세요, 저는 지민이에요. 서울에서 초등학교 선생님으로 일하고 있어요.", "반가워요, 지민 님. 선생님이시군요! 무엇을 도와드릴까요?"),
    (4, "요즘 밤에 잠이 잘 안 와요. 좋은 방법이 있을까요?", "자기 전에 휴대폰을 멀리 두고, 따뜻한 캐모마일 차를 마셔 보세요. 매일 같은 시간에 자는 것도 중요해요."),
    (4, "저는 고양이를 두 마리 키워요. 이름은 호두랑 땅콩이에요.", "귀여운 이름이네요! 호두와 땅콩은 몇 살이에요?"),
    (5, "호두는 세 살이고 땅콩은 이번 달에 한 살이 됐어요.", "땅콩이 첫 생일을 맞았군요. 작은 간식 파티를 해 주면 좋겠어요."),
    (5, "다음 달에 부산으로 여행을 가려고 해요. 어디를 가 보면 좋을까요?", "해운대 해변, 감천 문화마을, 자갈치 시장을 추천해요. 밀면과 돼지국밥도 꼭 드셔 보세요."),
    (5, "저는 매운 음식을 잘 못 먹어요. 떡볶이도 너무 매워요.", "그렇다면 간장 떡볶이나 궁중 떡볶이를 드셔 보세요. 맵지 않고 맛있어요."),
    (6, "오늘 학교에서 학생들이랑 봄꽃을 심었어요. 튤립이랑 수선화를 심었어요.", "멋진 수업이네요! 튤립은 햇빛을 좋아하니 창가 쪽 화단이 좋아요."),
    (6, "제 동생 민수가 다음 주 토요일에 결혼해요.", "축하드려요! 결혼식 축사를 준비하시나요?"),
    (6, "네, 축사를 제가 하기로 했어요. 너무 떨려요.", "어릴 때 함께한 재미있는 추억 하나와 두 사람에게 바라는 점을 짧게 말하면 좋아요. 3분 정도가 적당해요."),
    (7, "요즘 기타를 배우기 시작했어요. 매주 화요일 저녁에 레슨이 있어요.", "좋은 취미네요! 처음에는 C, G, Am, F 코드부터 연습해 보세요."),
    (7, "손가락 끝이 너무 아파요.", "처음에는 누구나 그래요. 하루에 15분씩 짧게 자주 연습하면 굳은살이 생겨서 괜찮아져요."),
    (7, "저는 한국 소설을 좋아해요. 최근에 한강의 소년이 온다를 읽었어요.", "깊은 작품이죠. 같은 작가의 채식주의자도 읽어 보셨나요?"),
    (8, "오늘 병원에 갔는데 비타민 D가 부족하대요.", "햇빛을 하루 20분 정도 쬐고, 연어나 달걀 같은 음식을 드시면 도움이 돼요. 영양제는 의사와 상담하세요."),
    (8, "저는 땅콩 알레르기가 있어서 견과류를 조심해야 해요.", "알겠습니다. 음식을 추천할 때 견과류가 들어간 것은 빼고 말씀드릴게요."),
    (8, "주말에 친구 수아랑 한강에서 자전거를 탔어요.", "날씨가 좋았겠네요! 여의도에서 반포까지 가는 길이 특히 예뻐요."),
    (9, "제 꿈은 언젠가 제주도에 작은 책방을 여는 거예요.", "멋진 꿈이에요. 제주에는 동네 책방이 많아서 미리 둘러보시면 도움이 될 거예요."),
    (9, "오늘 저녁에 김치찌개를 만들었는데 너무 짰어요.", "물이나 육수를 조금 더 넣고 두부와 양파를 넣으면 짠맛이 줄어들어요."),
    (9, "다음 주 수요일이 엄마 생신이에요. 선물로 뭐가 좋을까요?", "어머님이 좋아하시는 꽃과 함께 따뜻한 손편지를 드리면 어떨까요? 스카프도 좋은 선물이에요."),
    (10, "엄마 선물로 연보라색 스카프를 샀어요.", "어머님이 정말 좋아하실 거예요. 손편지도 꼭 함께 드리세요."),
    (10, "요즘 영어 공부를 다시 시작했어요. 아침마다 팟캐스트를 들어요.", "좋은 습관이에요. 들은 문장을 따라 말하는 쉐도잉을 해 보면 말하기에도 도움이 돼요."),
    (10, "호두가 어제부터 밥을 잘 안 먹어요.", "하루 이상 식욕이 없으면 동물병원에 데려가 보세요. 물을 잘 마시는지도 살펴보세요."),
    (11, "호두를 동물병원에 데려갔는데 이빨에 염증이 있었대요.", "치료를 받았다니 다행이에요. 당분간 부드러운 사료를 주시면 좋아요."),
    (11, "학교에서 다음 달에 학부모 공개 수업이 있어요. 과학 수업을 할 거예요.", "물에 뜨고 가라앉는 물건 실험은 어떨까요? 아이들이 정말 좋아해요."),
    (11, "저는 아침에 커피 대신 보리차를 마셔요.", "보리차는 카페인이 없어서 잠에도 좋아요."),
    (12, "동생 결혼식에서 축사를 했어요. 다들 웃고 울었어요.", "정말 잘하셨네요! 동생분께 평생 기억에 남을 거예요."),
    (12, "결혼식 뷔페에서 잡채가 제일 맛있었어요.", "잡채는 잔칫날의 대표 음식이죠. 집에서도 쉽게 만들 수 있어요."),
    (12, "다음 주부터 요가를 시작하려고 해요. 허리가 자주 아파서요.", "고양이 자세와 아기 자세부터 천천히 해 보세요. 허리 통증에 도움이 돼요."),
    (13, "부산 기차표를 예매했어요. 4월 12일 금요일 아침 KTX예요.", "좋아요! 서울역에서 부산역까지 두 시간 반 정도 걸려요."),
    (13, "부산에서 묵을 숙소로 광안리 근처 게스트하우스를 골랐어요.", "광안리에서는 밤에 광안대교 야경을 꼭 보세요."),
    (13, "수아가 저한테 뜨개질을 가르쳐 주기로 했어요.", "좋은 친구네요. 처음에는 굵은 실과 대바늘로 목도리를 떠 보세요."),
    (13, "오늘은 비가 와서 집에서 호두랑 땅콩이랑 놀았어요.", "비 오는 날 고양이들과 보내는 시간은 정말 평화롭죠."),
    (13, "요즘 제일 좋아하는 노래는 아이유의 밤편지예요.", "잔잔하고 아름다운 노래죠. 기타로 연습해 보셔도 좋겠어요."),
], [
    # (question, [episode numbers, 1-based], tags)
    ("제 직업이 뭐라고 했죠?", [1], ["user-said"]),
    ("잠이 안 올 때 어떤 차를 마시라고 했어요?", [2], ["assistant-said"]),
    ("제 고양이들 이름이 뭐예요?", [3], ["user-said"]),
    ("땅콩은 몇 살이에요?", [4], ["user-said"]),
    ("부산에서 어떤 음식을 먹어 보라고 추천했어요?", [5], ["assistant-said"]),
    ("맵지 않은 떡볶이로 뭘 추천해 줬죠?", [6], ["assistant-said", "preference"]),
    ("학생들이랑 어떤 꽃을 심었어요?", [7], ["user-said", "event"]),
    ("누가 결혼한다고 했죠?", [8], ["user-said", "event"]),
    ("축사는 몇 분 정도가 좋다고 했어요?", [9], ["assistant-said"]),
    ("기타 레슨은 무슨 요일이에요?", [10], ["user-said"]),
    ("손가락이 아플 때 하루에 얼마나 연습하라고 했어요?", [11], ["assistant-said"]),
    ("최근에 읽은 소설이 뭐였죠?", [12], ["user-said"]),
    ("병원에서 무엇이 부족하다고 했어요?", [13], ["user-said", "event"]),
    ("제가 무슨 알레르기가 있다고 했죠?", [14], ["user-said", "preference"]),
    ("친구랑 한강에서 뭘 했어요?", [15], ["user-said", "event"]),
    ("제 꿈이 뭐라고 했죠?", [16], ["user-said"]),
    ("찌개가 짤 때 어떻게 하라고 했어요?", [17], ["assistant-said"]),
    ("엄마 생신은 언제예요?", [18], ["user-said", "date-anchored"]),
    ("엄마 선물로 무엇을 샀어요?", [19], ["user-said", "event"]),
    ("영어 공부는 어떻게 하고 있다고 했죠?", [20], ["user-said"]),
    ("호두가 동물병원에서 무슨 진단을 받았어요?", [22], ["user-said", "event"]),
    ("공개 수업에서 어떤 실험을 추천했어요?", [23], ["assistant-said"]),
    ("아침에 커피 대신 뭘 마신다고 했죠?", [24], ["user-said", "preference"]),
    ("결혼식 뷔페에서 뭐가 제일 맛있었어요?", [26], ["user-said"]),
    ("허리가 아파서 시작하려는 운동이 뭐예요?", [27], ["user-said"]),
    ("부산 가는 기차는 언제 출발해요?", [28], ["user-said", "date-anchored"]),
    ("부산에서 어디에 묵기로 했어요?", [29], ["user-said"]),
    ("수아가 무엇을 가르쳐 주기로 했어요?", [30], ["user-said"]),
    ("요즘 제일 좋아하는 노래가 뭐예요?", [32], ["user-said", "preference"]),
    ("동생 결혼식 축사는 어땠어요?", [25], ["user-said", "event"]),
])

ES = ("es-lucia", "2024-05-", [
    (6, "Hola, me llamo Lucía. Soy enfermera en un hospital de Valencia.", "¡Encantado, Lucía! ¿En qué puedo ayudarte hoy?"),
    (6, "Trabajo en el turno de noche y me cuesta dormir durante el día.", "Prueba con cortinas opacas, tapones para los oídos y una rutina fija antes de acostarte, incluso de día."),
    (6, "Tengo un perro que se llama Canelo. Es un galgo rescatado.", "¡Qué bonito! Los galgos son muy tranquilos en casa y les encanta correr."),
    (7, "Canelo tiene miedo de los petardos de las Fallas.", "Prepárale un rincón tranquilo con su manta y pon música suave para tapar el ruido."),
    (7, "Quiero aprender a hacer una buena paella valenciana.", "Usa arroz bomba, pollo, conejo, judía verde y garrofó, y no remuevas el arroz una vez añadido."),
    (7, "No como marisco porque soy alérgica.", "Entendido, te recomendaré siempre recetas sin marisco."),
    (8, "Mi hermana Carmen se muda a Lisboa el mes que viene.", "¡Qué cambio! Lisboa está cerca; podrás visitarla en un vuelo corto."),
    (8, "Estoy leyendo Cien años de soledad por segunda vez.", "Es una novela que gana con cada lectura. ¿Qué personaje te gusta más?"),
    (8, "Mi personaje favorito es Úrsula Iguarán.", "Úrsula es el pilar de la familia Buendía; una gran elección."),
    (9, "Me he apuntado a clases de cerámica los jueves por la tarde.", "¡Qué buena afición! Empieza con cuencos sencillos en el torno."),
    (9, "Me duele la espalda después de los turnos largos.", "Estira la espalda al terminar el turno y prueba con yoga suave o natación dos veces por semana."),
    (9, "El sábado fui a la playa de la Malvarrosa con mis amigas.", "¡Qué plan tan bueno! ¿Os bañasteis o todavía estaba fría el agua?"),
    (10, "El agua estaba helada, solo mojamos los pies.", "En mayo todavía está fresca; en junio será perfecta."),
    (10, "Mi sueño es hacer el Camino de Santiago el próximo verano.", "El Camino Francés desde Sarria son unos cien kilómetros: ideal para una primera vez."),
    (10, "Necesito unas botas para el Camino.", "Compra botas ligeras de media caña y úsalas varias semanas antes de salir para domarlas."),
    (11, "Hoy he cocinado lentejas con chorizo y me han quedado muy bien.", "¡Un clásico! Un chorrito de vinagre al final les da un toque especial."),
    (11, "El cumpleaños de mi madre es el 24 de mayo.", "Podrías regalarle una planta bonita y una cena en su restaurante favorito."),
    (11, "A mi madre le encantan las orquídeas.", "Entonces una orquídea blanca sería un regalo perfecto."),
    (12, "He comprado una orquídea blanca para mi madre.", "Seguro que le encanta. Riégala poco, una vez por semana."),
    (12, "Estoy aprendiendo alemán con una aplicación, quince minutos al día.", "La constancia es lo más importante. Añade series alemanas con subtítulos."),
    (12, "Canelo cojea un poco de la pata trasera.", "Si sigue cojeando mañana, llévalo al veterinario para que lo revise."),
    (13, "El veterinario dijo que Canelo tenía una espina clavada en la pata.", "Menos mal que no era nada grave. Revisa sus patas después de los paseos por el campo."),
    (13, "En el hospital me han propuesto ser supervisora de planta.", "¡Enhorabuena! Es un reconocimiento a tu trabajo."),
    (13, "Tengo dudas porque tendría menos contacto con los pacientes.", "Haz una lista de lo que ganarías y lo que perderías, y habla con una supervisora actual."),
    (14, "He decidido aceptar el puesto de supervisora.", "¡Qué buena noticia! Estarás genial en el nuevo puesto."),
    (14, "Para desayunar siempre tomo tostada con tomate y aceite.", "El pan con tomate es un desayuno mediterráneo perfecto."),
    (14, "Mi canción favorita ahora mismo es Malamente de Rosalía.", "¡Un temazo! Mezcla flamenco y pop de una manera increíble."),
    (15, "Carmen me ha invitado a Lisboa el puente de junio.", "Visita el barrio de Alfama, sube en el tranvía 28 y prueba los pasteles de Belém."),
    (15, "He reservado un vuelo a Lisboa para el 7 de junio.", "¡Perfecto! Lleva calzado cómodo: Lisboa tiene muchas cuestas."),
    (15, "Mi amiga Marta me va a enseñar a tocar el ukelele.", "¡Qué divertido! Empieza con los acordes Do, La menor, Fa y Sol."),
    (15, "Hoy ha llovido y me he quedado en casa viendo películas con Canelo.", "Un día de lluvia perfecto para descansar con tu perro."),
    (15, "Mi película favorita es El laberinto del fauno.", "Una película preciosa y oscura de Guillermo del Toro."),
], [
    ("¿En qué trabajo yo?", [1], ["user-said"]),
    ("¿Qué me recomendaste para dormir de día?", [2], ["assistant-said"]),
    ("¿Cómo se llama mi perro?", [3], ["user-said"]),
    ("¿De qué tiene miedo Canelo?", [4], ["user-said"]),
    ("¿Qué arroz me dijiste que usara para la paella?", [5], ["assistant-said"]),
    ("¿A qué soy alérgica?", [6], ["user-said", "preference"]),
    ("¿Adónde se muda mi hermana?", [7], ["user-said", "event"]),
    ("¿Qué libro estoy releyendo?", [8], ["user-said"]),
    ("¿Quién es mi personaje favorito de la novela?", [9], ["user-said", "preference"]),
    ("¿Qué día tengo clase de cerámica?", [10], ["user-said"]),
    ("¿Qué me aconsejaste para el dolor de espalda?", [11], ["assistant-said"]),
    ("¿A qué playa fui con mis amigas?", [12], ["user-said", "event"]),
    ("¿Cómo estaba el agua del mar?", [13], ["user-said"]),
    ("¿Cuál es mi sueño para el próximo verano?", [14], ["user-said"]),
    ("¿Qué botas me recomendaste para el Camino?", [15], ["assistant-said"]),
    ("¿Qué truco me diste para las lentejas?", [16], ["assistant-said"]),
    ("¿Cuándo es el cumpleaños de mi madre?", [17], ["user-said", "date-anchored"]),
    ("¿Qué flores le gustan a mi madre?", [18], ["user-said", "preference"]),
    ("¿Qué le compré a mi madre?", [19], ["user-said", "event"]),
    ("¿Cómo estoy aprendiendo alemán?", [20], ["user-said"]),
    ("¿Qué le pasaba a Canelo en la pata según el veterinario?", [22], ["user-said", "event"]),
    ("¿Qué puesto me propusieron en el hospital?", [23], ["user-said", "event"]),
    ("¿Qué decidí sobre el nuevo puesto?", [25], ["user-said", "event"]),
    ("¿Qué desayuno siempre?", [26], ["user-said", "preference"]),
    ("¿Cuál es mi canción favorita ahora?", [27], ["user-said", "preference"]),
    ("¿Qué me recomendaste visitar en Lisboa?", [28], ["assistant-said"]),
    ("¿Qué día sale mi vuelo a Lisboa?", [29], ["user-said", "date-anchored"]),
    ("¿Quién me va a enseñar a tocar el ukelele?", [30], ["user-said"]),
    ("¿Cuál es mi película favorita?", [32], ["user-said", "preference"]),
    ("¿Por qué dudaba en aceptar el puesto de supervisora?", [24], ["user-said"]),
])

# Questions asked in another language than the memory's: (episode number, {language: question}).
CROSS = {
    "ko-jimin": [
        (1, {"en": "What did I say my job is?", "es": "¿Cuál dije que es mi trabajo?", "zh": "我说过我的职业是什么？"}),
        (3, {"en": "What are my cats' names?", "es": "¿Cómo se llaman mis gatos?", "zh": "我的猫叫什么名字？"}),
        (5, {"en": "What food did you recommend I try in Busan?", "es": "¿Qué comida me recomendaste probar en Busan?", "zh": "你推荐我在釜山吃什么？"}),
        (7, {"en": "What flowers did I plant with my students?", "es": "¿Qué flores planté con mis alumnos?", "zh": "我和学生们种了什么花？"}),
        (8, {"en": "Who did I say is getting married?", "es": "¿Quién dije que se casa?", "zh": "我说谁要结婚了？"}),
        (10, {"en": "What day is my guitar lesson?", "es": "¿Qué día es mi clase de guitarra?", "zh": "我的吉他课是星期几？"}),
        (13, {"en": "What did the hospital say I was low on?", "es": "¿Qué me dijeron en el hospital que me faltaba?", "zh": "医院说我缺什么？"}),
        (14, {"en": "What am I allergic to?", "es": "¿A qué soy alérgica?", "zh": "我对什么过敏？"}),
        (16, {"en": "What did I say my dream is?", "es": "¿Cuál dije que es mi sueño?", "zh": "我说我的梦想是什么？"}),
        (19, {"en": "What did I buy as a present for my mom?", "es": "¿Qué le compré a mi madre de regalo?", "zh": "我给妈妈买了什么礼物？"}),
        (22, {"en": "What did the vet find wrong with Hodu?", "es": "¿Qué le encontró el veterinario a Hodu?", "zh": "兽医说Hodu怎么了？"}),
        (24, {"en": "What do I drink instead of coffee in the morning?", "es": "¿Qué bebo por la mañana en lugar de café?", "zh": "我早上不喝咖啡，喝什么？"}),
        (29, {"en": "Where did I decide to stay in Busan?", "es": "¿Dónde decidí alojarme en Busan?", "zh": "我决定在釜山住哪里？"}),
        (32, {"en": "What is my favourite song these days?", "es": "¿Cuál es mi canción favorita estos días?", "zh": "我最近最喜欢的歌是什么？"}),
    ],
    "es-lucia": [
        (1, {"en": "What is my job?", "ko": "제 직업이 뭐예요?", "zh": "我是做什么工作的？"}),
        (3, {"en": "What is my dog called?", "ko": "제 강아지 이름이 뭐예요?", "zh": "我的狗叫什么名字？"}),
        (4, {"en": "What is Canelo afraid of?", "ko": "카넬로는 무엇을 무서워해요?", "zh": "Canelo害怕什么？"}),
        (6, {"en": "What am I allergic to?", "ko": "제가 무슨 알레르기가 있어요?", "zh": "我对什么过敏？"}),
        (7, {"en": "Where is my sister moving to?", "ko": "제 언니는 어디로 이사 가요?", "zh": "我姐姐要搬到哪里？"}),
        (8, {"en": "Which book am I rereading?", "ko": "제가 다시 읽고 있는 책이 뭐예요?", "zh": "我在重读哪本书？"}),
        (10, {"en": "What day is my pottery class?", "ko": "도자기 수업은 무슨 요일이에요?", "zh": "我的陶艺课是星期几？"}),
        (12, {"en": "Which beach did I go to with my friends?", "ko": "친구들이랑 어느 해변에 갔어요?", "zh": "我和朋友们去了哪个海滩？"}),
        (17, {"en": "When is my mother's birthday?", "ko": "엄마 생일이 언제예요?", "zh": "我妈妈的生日是哪天？"}),
        (19, {"en": "What did I buy for my mother?", "ko": "엄마에게 뭘 사 드렸어요?", "zh": "我给妈妈买了什么？"}),
        (20, {"en": "How am I learning German?", "ko": "독일어를 어떻게 배우고 있어요?", "zh": "我是怎么学德语的？"}),
        (23, {"en": "What position did the hospital offer me?", "ko": "병원에서 어떤 자리를 제안받았어요?", "zh": "医院给我提供了什么职位？"}),
        (29, {"en": "What day is my flight to Lisbon?", "ko": "리스본 가는 비행기는 언제예요?", "zh": "我飞往里斯本的航班是哪天？"}),
        (32, {"en": "What is my favourite film?", "ko": "제가 제일 좋아하는 영화가 뭐예요?", "zh": "我最喜欢的电影是什么？"}),
    ],
}

LABELS = {"ko-jimin": ("사용자", "도우미"), "es-lucia": ("Usuaria", "Asistente")}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    memories, gold, cross = [], [], []
    for namespace, month, turns, questions in (KO, ES):
        user, assistant = LABELS[namespace]
        seen = {}
        ids = []
        last_day = 0
        for day, said, answered in turns:
            seen[day] = seen.get(day, 0) + 1
            date = f"{month}{day:02d}"
            external = f"{date}#{seen[day]}"
            ids.append(external)
            last_day = max(last_day, day)
            memories.append({"namespace": namespace, "op": "recordEpisode", "episode": {
                "text": f"{user}: {said}\n{assistant}: {answered}", "occurredAt": date, "thread": date,
                "externalId": external}})
        asked = f"{month}{last_day + 1:02d}T09:00:00Z"
        for question, numbers, tags in questions:
            gold.append({"namespace": namespace, "question": question, "gold": [ids[n - 1] for n in numbers],
                         "at": asked, "tags": [namespace[:2]] + tags})
        for number, asked_in in CROSS[namespace]:
            for language, question in asked_in.items():
                cross.append({"namespace": namespace, "question": question, "gold": [ids[number - 1]],
                              "at": asked, "tags": [f"{language}-on-{namespace[:2]}", f"asked-in-{language}"]})
    with open(os.path.join(here, "memories.jsonl"), "w", encoding="utf-8") as f:
        for line in memories:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(here, "gold.jsonl"), "w", encoding="utf-8") as f:
        for line in gold:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    with open(os.path.join(here, "cross.jsonl"), "w", encoding="utf-8") as f:
        for line in cross:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(len(memories), "episodes,", len(gold), "questions,", len(cross), "asked in another language")


if __name__ == "__main__":
    main()
