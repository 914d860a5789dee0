"""Writes memories.jsonl (import) and gold.jsonl (`ostrakon eval`) for three memories, in
English, Korean and Spanish, where events are told a few days after they happened in words
relative to the day of telling ("yesterday", "이틀 전에", "el viernes pasado") and are asked
about later by their date ("on April 5", "4월 5일에", "el 5 de abril"). Beside each told
event sits another of the same kind on another day, so that a question must find the day
to find its answer. Written for Ostrakon (no outside text); licence CC0 1.0, see SOURCE.md.

    python3 make.py
"""
import json
import os

# 1 April 2024 is a Monday. Each event: (day told, text with the relative words, day meant).
# Each question: (text naming the day, number of the event's exchange, 1-based).
EN = ("en-sam", ("User", "Assistant"), [
    (1, "I signed up for a Spanish class today.", "Great! Practise a little every day."),
    (2, "My sister Lena called today, she adopted a cat.", "A new cat! What is its name?"),
    (3, "Yesterday I went hiking up Mount Tamalpais with Priya.", "Lovely views from the summit on a clear day."),
    (3, "We watched Oppenheimer at home tonight.", "A long film, but a gripping one."),
    (5, "Two days ago I had dinner at a ramen place in Japantown.", "Tonkotsu or shoyu?"),
    (6, "Tomorrow I'm going to my cousin Ana's wedding.", "Have a wonderful time!"),
    (7, "I went for a 5k run this morning.", "Nice and steady. Keep it up."),
    (8, "Last weekend I painted the garden fence green.", "That must have taken a while."),
    (8, "Tonight we had dinner at an Ethiopian restaurant.", "Injera is such a treat."),
    (9, "Last Friday I had a job interview at a bank downtown.", "How did it go?"),
    (10, "I went hiking at Point Reyes this morning.", "The coast trail is beautiful."),
    (10, "I bought a new road bike yesterday.", "Enjoy the rides!"),
    (11, "Three days ago Lena called from Berlin to say she is engaged.", "Wonderful news for her!"),
    (12, "Last Tuesday I started a pottery class.", "Start with simple bowls."),
    (12, "Had a job interview at a small startup this afternoon.", "Fingers crossed."),
    (12, "I painted the bedroom walls today.", "A fresh colour changes a room."),
    (13, "Last night I watched Dune at the cinema.", "The sound in a cinema is something else."),
    (13, "I got an invitation to a wedding in Lisbon for next summer.", "Lisbon is a lovely place for it."),
    (14, "The day before yesterday I ran a 10k race in the park.", "Congratulations on finishing!"),
    (14, "My neighbour lent me a ladder.", "Handy for the gutters."),
], [
    ("Where did I go hiking on April 2?", 3),
    ("Where did I have dinner on April 3?", 5),
    ("What did I go to on April 7?", 6),
    ("What did I paint on April 6?", 8),
    ("Where did I have a job interview on April 5?", 10),
    ("What did I buy on April 9?", 12),
    ("What did Lena tell me when she called on April 8?", 13),
    ("What class did I start on April 9?", 14),
    ("Which film did I see on April 12?", 17),
    ("How far did I run on April 12?", 19),
])

KO = ("ko-seoyeon", ("사용자", "도우미"), [
    (1, "오늘 스페인어 수업에 등록했어요.", "좋아요! 매일 조금씩 연습해 보세요."),
    (2, "오늘 언니 하나가 전화했는데 고양이를 입양했대요.", "새 고양이라니! 이름이 뭐예요?"),
    (3, "어제 친구 지우랑 북한산에 등산을 갔어요.", "맑은 날에는 정상 경치가 정말 좋죠."),
    (3, "오늘 밤에 집에서 오펜하이머를 봤어요.", "길지만 몰입감 있는 영화죠."),
    (5, "이틀 전에 홍대에 있는 라멘집에서 저녁을 먹었어요.", "돈코츠였어요, 쇼유였어요?"),
    (6, "내일 사촌 민아의 결혼식에 가요.", "즐거운 시간 보내세요!"),
    (7, "오늘 아침에 5킬로미터를 달렸어요.", "꾸준히 잘하고 있어요."),
    (8, "지난 주말에 마당 울타리를 초록색으로 칠했어요.", "시간이 꽤 걸렸겠네요."),
    (8, "오늘 저녁은 에티오피아 식당에서 먹었어요.", "인제라는 정말 별미죠."),
    (9, "지난주 금요일에 시내에 있는 은행에서 면접을 봤어요.", "어떻게 됐어요?"),
    (10, "오늘 아침에 관악산에 등산을 갔어요.", "능선 길이 참 예쁘죠."),
    (10, "어제 새 자전거를 샀어요.", "즐겁게 타세요!"),
    (11, "사흘 전에 하나 언니가 베를린에서 전화해서 약혼했다고 했어요.", "언니에게 정말 좋은 소식이네요!"),
    (12, "지난 화요일에 도자기 수업을 시작했어요.", "간단한 그릇부터 만들어 보세요."),
    (12, "오늘 오후에 작은 스타트업에서 면접을 봤어요.", "좋은 결과 있기를 바라요."),
    (12, "오늘 침실 벽을 칠했어요.", "새 색깔이 방 분위기를 바꾸죠."),
    (13, "어젯밤에 영화관에서 듄을 봤어요.", "영화관 음향은 확실히 다르죠."),
    (13, "내년 여름에 리스본에서 열리는 결혼식 초대장을 받았어요.", "리스본은 결혼식 하기 정말 좋은 곳이에요."),
    (14, "그저께 공원에서 10킬로미터 달리기 대회에 나갔어요.", "완주 축하해요!"),
    (14, "이웃이 사다리를 빌려줬어요.", "홈통 청소할 때 유용하겠네요."),
], [
    ("4월 2일에 어디로 등산을 갔어요?", 3),
    ("4월 3일에 저녁을 어디서 먹었어요?", 5),
    ("4월 7일에 어디에 갔어요?", 6),
    ("4월 6일에 무엇을 칠했어요?", 8),
    ("4월 5일에 어디서 면접을 봤어요?", 10),
    ("4월 9일에 무엇을 샀어요?", 12),
    ("4월 8일에 언니가 전화해서 뭐라고 했어요?", 13),
    ("4월 9일에 무슨 수업을 시작했어요?", 14),
    ("4월 12일에 무슨 영화를 봤어요?", 17),
    ("4월 12일에 얼마나 달렸어요?", 19),
])

ES = ("es-diego", ("Usuario", "Asistente"), [
    (1, "Hoy me he apuntado a una clase de inglés.", "¡Genial! Practica un poco cada día."),
    (2, "Hoy me llamó mi hermana Elena, ha adoptado un gato.", "¡Un gato nuevo! ¿Cómo se llama?"),
    (3, "Ayer subí al Montseny de excursión con Pablo.", "Desde la cima hay unas vistas preciosas."),
    (3, "Esta noche hemos visto Oppenheimer en casa.", "Larga, pero muy intensa."),
    (5, "Hace dos días cené en un restaurante de ramen en el Raval.", "¿Tonkotsu o shoyu?"),
    (6, "Mañana voy a la boda de mi prima Ana.", "¡Que lo paséis muy bien!"),
    (7, "Esta mañana he corrido cinco kilómetros.", "Buen ritmo, sigue así."),
    (8, "El fin de semana pasado pinté la valla del jardín de verde.", "Te habrá llevado un buen rato."),
    (8, "Esta noche hemos cenado en un restaurante etíope.", "La injera es una delicia."),
    (9, "El viernes pasado tuve una entrevista de trabajo en un banco del centro.", "¿Qué tal te fue?"),
    (10, "Esta mañana he ido de excursión a Montserrat.", "El camino de la costa es precioso."),
    (10, "Ayer me compré una bicicleta de carretera nueva.", "¡Disfruta de las salidas!"),
    (11, "Hace tres días Elena me llamó desde Berlín para decirme que se ha prometido.", "¡Qué buena noticia para ella!"),
    (12, "El martes pasado empecé una clase de cerámica.", "Empieza con cuencos sencillos."),
    (12, "Esta tarde he tenido una entrevista de trabajo en una pequeña startup.", "Mucha suerte."),
    (12, "Hoy he pintado las paredes del dormitorio.", "Un color nuevo cambia una habitación."),
    (13, "Anoche vi Dune en el cine.", "El sonido en el cine es otra cosa."),
    (13, "Me han invitado a una boda en Lisboa el verano que viene.", "Lisboa es un sitio precioso para una boda."),
    (14, "Anteayer corrí una carrera de diez kilómetros en el parque.", "¡Enhorabuena por terminarla!"),
    (14, "Mi vecino me ha prestado una escalera.", "Muy útil para limpiar los canalones."),
], [
    ("¿Adónde fui de excursión el 2 de abril?", 3),
    ("¿Dónde cené el 3 de abril?", 5),
    ("¿A qué fui el 7 de abril?", 6),
    ("¿Qué pinté el 6 de abril?", 8),
    ("¿Dónde tuve una entrevista de trabajo el 5 de abril?", 10),
    ("¿Qué me compré el 9 de abril?", 12),
    ("¿Qué me dijo Elena cuando me llamó el 8 de abril?", 13),
    ("¿Qué clase empecé el 9 de abril?", 14),
    ("¿Qué película vi el 12 de abril?", 17),
    ("¿Cuánto corrí el 12 de abril?", 19),
])

MONTH = "2024-04-"
ASKED = "2024-04-20T09:00:00Z"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    memories, gold = [], []
    for namespace, (user, assistant), turns, questions in (EN, KO, ES):
        seen, ids = {}, []
        for day, said, answered in turns:
            seen[day] = seen.get(day, 0) + 1
            date = f"{MONTH}{day:02d}"
            external = f"{date}#{seen[day]}"
            ids.append(external)
            memories.append({"namespace": namespace, "op": "recordEpisode", "episode": {
                "text": f"{user}: {said}\n{assistant}: {answered}", "occurredAt": date, "thread": date,
                "externalId": external}})
        for question, number in questions:
            gold.append({"namespace": namespace, "question": question, "gold": [ids[number - 1]],
                         "at": ASKED, "tags": [namespace[:2], "relative-time"]})
    for name, lines in (("memories.jsonl", memories), ("gold.jsonl", gold)):
        with open(os.path.join(here, name), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(len(memories), "episodes,", len(gold), "questions")


if __name__ == "__main__":
    main()
