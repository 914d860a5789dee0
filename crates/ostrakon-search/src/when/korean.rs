//! Korean calendar expressions: "2024년 3월 9일", "3월에", "작년", "어제", "그저께",
//! "지난 주말", "지난주 금요일", "다음 달", "이틀 전", "3주 전", "한 달 전", "사흘 후".
//!
//! Korean writes its particles onto the word ("어제부터", "지난주에는") and may or may not
//! put a space inside an expression ("지난주", "지난 주"; "3일 전", "3일전"), so each
//! reading is tried on one word and on two or three neighbours joined, longest first, and
//! a reading may end in particles.

use chrono::{Duration, NaiveDate, Weekday};
use ostrakon_core::particles::is_particle_tail;

use super::calendar::{self, Days, Unit};
use super::text::{Mention, Word, mention, year_number};

/// Most words one expression spans ("2024년 3월 9일", "다음 주 토요일").
const MAX_WORDS: usize = 3;

/// Whether `rest`, what follows an expression inside its word, is nothing or particles.
fn tail(rest: &str) -> bool {
    rest.is_empty() || is_particle_tail(rest) || matches!(rest, "쯤" | "쯤에" | "경" | "경에" | "엔" | "께")
}

/// `s` without the first of `stems` it starts with, and that stem's value.
fn strip<'s, T: Copy>(s: &'s str, stems: &[(&str, T)]) -> Option<(T, &'s str)> {
    stems.iter().find_map(|(stem, v)| s.strip_prefix(stem).map(|rest| (*v, rest)))
}

const WEEKDAYS: [(&str, Weekday); 7] = [
    ("월요일", Weekday::Mon),
    ("화요일", Weekday::Tue),
    ("수요일", Weekday::Wed),
    ("목요일", Weekday::Thu),
    ("금요일", Weekday::Fri),
    ("토요일", Weekday::Sat),
    ("일요일", Weekday::Sun),
];

/// Whether the question asks for a time: "언제" (not "언제나", always, or "언제든",
/// whenever), "며칠" as a date ("며칠이에요", not "며칠 전"), "몇 월", "몇 년", "몇 시",
/// "무슨 요일", "얼마나 오래", "얼마 동안".
pub(super) fn asks_when(ws: &[Word<'_>]) -> bool {
    let counted_back =
        |i: usize| ws.get(i).is_some_and(|w| ["전", "후", "뒤"].iter().any(|d| w.text.starts_with(d)));
    ws.iter().enumerate().any(|(i, w)| {
        let w = w.text.as_str();
        let next = ws.get(i + 1).map_or("", |n| n.text.as_str());
        (w.starts_with("언제") && !w.starts_with("언제나") && !w.starts_with("언제든"))
            || (w.starts_with("며칠") && w.len() > "며칠".len() && !w.contains('전') && !w.contains('후'))
            || (w == "며칠" && !counted_back(i + 1) && !next.starts_with("동안"))
            || ((w == "몇"
                && ["월", "년", "일", "시"].iter().any(|u| next.starts_with(u))
                && !counted_back(i + 2))
                || ["몇월", "몇년", "몇시"].iter().any(|p| w.starts_with(p)))
            || (matches!(w, "무슨" | "어느") && next.starts_with("요일"))
            || (w == "얼마나" && next.starts_with("오래"))
            || (w == "얼마" && next.starts_with("동안"))
            || w.starts_with("얼마동안")
    })
}

/// A count and what it counts, at the start of `s`: "3일", "이틀", "일주일", "한 달" (joined:
/// "한달"), "몇 주", "2년"; with whether it is vague and the rest of `s`.
fn count(s: &str) -> Option<(i64, Unit, bool, &str)> {
    // Counts of days (and a week) in one word.
    const WORDS: [(&str, (i64, Unit, bool)); 10] = [
        ("하루", (1, Unit::Day, false)),
        ("이틀", (2, Unit::Day, false)),
        ("사흘", (3, Unit::Day, false)),
        ("나흘", (4, Unit::Day, false)),
        ("닷새", (5, Unit::Day, false)),
        ("엿새", (6, Unit::Day, false)),
        ("이레", (7, Unit::Day, false)),
        ("며칠", (3, Unit::Day, true)),
        ("일주일", (1, Unit::Week, false)),
        ("보름", (15, Unit::Day, false)),
    ];
    if let Some(((n, unit, vague), rest)) = strip(s, &WORDS) {
        return Some((n, unit, vague, rest));
    }
    // A number, then its unit.
    const NUMBERS: [(&str, (i64, bool)); 20] = [
        ("다섯", (5, false)),
        ("여섯", (6, false)),
        ("일곱", (7, false)),
        ("여덟", (8, false)),
        ("아홉", (9, false)),
        ("한", (1, false)),
        ("두", (2, false)),
        ("세", (3, false)),
        ("네", (4, false)),
        ("열", (10, false)),
        ("몇", (3, true)),
        ("일", (1, false)),
        ("이", (2, false)),
        ("삼", (3, false)),
        ("사", (4, false)),
        ("오", (5, false)),
        ("육", (6, false)),
        ("칠", (7, false)),
        ("팔", (8, false)),
        ("십", (10, false)),
    ];
    const UNITS: [(&str, Unit); 6] = [
        ("개월", Unit::Month),
        ("주일", Unit::Week),
        ("달", Unit::Month),
        ("주", Unit::Week),
        ("년", Unit::Year),
        ("일", Unit::Day),
    ];
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let candidates: Vec<((i64, bool), &str)> = if digits > 0 && digits <= 3 {
        let n: i64 = s[..digits].parse().ok()?;
        vec![((n, false), &s[digits..])]
    } else {
        NUMBERS.iter().filter_map(|(w, v)| s.strip_prefix(w).map(|rest| (*v, rest))).collect()
    };
    candidates.into_iter().find_map(|((n, vague), rest)| {
        let (unit, rest) = strip(rest, &UNITS)?;
        (1..=100).contains(&n).then_some((n, unit, vague, rest))
    })
}

/// "이틀 전", "3주 전에", "한 달 후", "사흘 뒤": a count, then 전 (before) or 후/뒤 (after).
fn counted(s: &str, reference: NaiveDate) -> Option<Days> {
    let (n, unit, vague, rest) = count(s)?;
    let (forward, rest) = strip(rest, &[("전", false), ("후", true), ("뒤", true)])?;
    if !tail(rest) {
        return None;
    }
    calendar::counted(n, unit, reference, vague, forward)
}

/// "2024년 3월 9일", "3월 9일", "2024년 3월", "3월", "2024년", with or without spaces
/// between the parts ("3월9일에").
fn absolute(s: &str, reference: NaiveDate) -> Option<Days> {
    let (mut y, mut m, mut d) = (None, None, None);
    let mut rest = s;
    let mut last = 0;
    loop {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            break;
        }
        let number = &rest[..digits];
        let (order, after) = strip(&rest[digits..], &[("년", 1), ("월", 2), ("일", 3)])?;
        if order <= last {
            return None;
        }
        match order {
            1 => y = Some(year_number(number)?),
            2 => m = Some(number.parse::<u32>().ok().filter(|m| (1..=12).contains(m))?),
            _ => d = Some(number.parse::<u32>().ok().filter(|d| (1..=31).contains(d))?),
        }
        last = order;
        rest = after;
    }
    if !tail(rest) {
        return None;
    }
    match (y, m, d) {
        (Some(y), Some(m), Some(d)) => Some(calendar::day(NaiveDate::from_ymd_opt(y, m, d)?)),
        (Some(y), Some(m), None) => Some(calendar::month(calendar::month_start(y, m)?)),
        (None, Some(m), d) => calendar::month_or_day(reference, m, d),
        (Some(y), None, None) => calendar::year(y),
        // A day with no month, or a year and a day: not read.
        _ => None,
    }
}

/// "어제", "그저께", "내일", "작년", "지난주", "지난 주말", "이번 주", "다음 달", "지난 금요일",
/// "다음 주 토요일".
fn relative(s: &str, reference: NaiveDate) -> Option<Days> {
    const FIXED: [(&str, (i64, i64, Unit)); 12] = [
        ("엊그저께", (-3, -1, Unit::Day)),
        ("엊그제", (-3, -1, Unit::Day)),
        ("그저께", (-2, -2, Unit::Day)),
        ("그제", (-2, -2, Unit::Day)),
        ("어젯밤", (-1, -1, Unit::Day)),
        ("어제", (-1, -1, Unit::Day)),
        ("내일모레", (2, 2, Unit::Day)),
        ("내일", (1, 1, Unit::Day)),
        ("모레", (2, 2, Unit::Day)),
        ("재작년", (-2, -2, Unit::Year)),
        ("작년", (-1, -1, Unit::Year)),
        ("내년", (1, 1, Unit::Year)),
    ];
    if let Some(((a, b, unit), rest)) = strip(s, &FIXED) {
        if !tail(rest) {
            return None;
        }
        return match unit {
            Unit::Day => calendar::days(reference + Duration::days(a), reference + Duration::days(b)),
            _ => calendar::shifted(unit, reference, a),
        };
    }
    let (step, rest) = strip(s, &[("지난", -1), ("저번", -1), ("이번", 0), ("다음", 1), ("오는", 1)])?;
    // "지난주 금요일": a weekday of that week.
    if let Some(rest) = rest.strip_prefix('주')
        && let Some((wd, rest)) = strip(rest, &WEEKDAYS)
    {
        return tail(rest).then(|| calendar::weekday_of_week(reference, step, wd)).flatten();
    }
    let units = [("주말", Unit::Weekend), ("주", Unit::Week), ("달", Unit::Month), ("해", Unit::Year)];
    let (unit, rest) =
        strip(rest, &units).or_else(|| strip(rest, &WEEKDAYS).map(|(wd, rest)| (Unit::Weekday(wd), rest)))?;
    // "이번 달", "이번 해" say only when the text was written.
    if !tail(rest) || (step == 0 && matches!(unit, Unit::Month | Unit::Year)) {
        return None;
    }
    calendar::shifted(unit, reference, step)
}

/// The Korean calendar expressions among `ws`, resolved against `reference`, in order.
pub(super) fn mentions(ws: &[Word<'_>], reference: NaiveDate) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let found = (1..=MAX_WORDS.min(ws.len() - i)).rev().find_map(|n| {
            let joined: String = ws[i..i + n].iter().map(|w| w.text.as_str()).collect();
            counted(&joined, reference)
                .or_else(|| absolute(&joined, reference))
                .or_else(|| relative(&joined, reference))
                .map(|days| (days, n))
        });
        match found {
            Some((days, n)) => {
                out.push(mention(ws, i, i + n - 1, days));
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::{d, day, found, one};
    use super::super::{Grain, asks_when, states_time};

    #[test]
    fn korean_dates_with_and_without_spaces_and_particles() {
        let r = d(2024, 3, 14);
        assert_eq!(
            found("2024년 3월 9일에 만났어요", r),
            vec![(d(2024, 3, 9), d(2024, 3, 9), Grain::Day, "2024년 3월 9일에".into())]
        );
        assert_eq!(found("3월9일에는 비가 왔어요", r)[0].0, d(2024, 3, 9));
        assert_eq!(found("4월 12일 금요일 아침 KTX예요", r)[0].0, d(2024, 4, 12));
        let may = found("5월에 이사해요", r);
        assert_eq!((may[0].0, may[0].1, may[0].2), (d(2024, 5, 1), d(2024, 5, 31), Grain::Month));
        assert_eq!(found("2023년에 졸업했어요", r)[0].2, Grain::Year);
        assert_eq!(found("2023년 12월", r)[0].0, d(2023, 12, 1));
        // A day without its month, and numbers that are not dates, are not read.
        assert!(found("9일에 봐요", r).is_empty());
        assert!(found("고양이 두 마리, 3살", r).is_empty());
    }

    #[test]
    fn korean_relative_expressions_against_the_day_written() {
        let thursday = d(2024, 3, 14);
        let one = |t: &str| one(t, thursday);
        assert_eq!(one("어제 병원에 갔어요"), day(2024, 3, 13));
        assert_eq!(one("어제부터 밥을 안 먹어요"), day(2024, 3, 13));
        assert_eq!(one("그저께 비가 왔어요"), day(2024, 3, 12));
        assert_eq!(one("내일 만나요"), day(2024, 3, 15));
        assert_eq!(one("모레 떠나요"), day(2024, 3, 16));
        assert_eq!(one("이틀 전에 호수에 갔어요"), day(2024, 3, 12));
        assert_eq!(one("3일전에 샀어요"), day(2024, 3, 11));
        assert_eq!(one("사흘 후에 와요"), day(2024, 3, 17));
        assert_eq!(one("며칠 전에"), (d(2024, 3, 10), d(2024, 3, 12), Grain::Day));
        assert_eq!(one("일주일 전에"), (d(2024, 3, 4), d(2024, 3, 10), Grain::Day));
        assert_eq!(one("2주 전"), (d(2024, 2, 26), d(2024, 3, 3), Grain::Day));
        assert_eq!(one("한 달 전에"), (d(2024, 2, 1), d(2024, 2, 29), Grain::Month));
        assert_eq!(one("두달 전"), (d(2024, 1, 1), d(2024, 1, 31), Grain::Month));
        assert_eq!(one("3년 전에"), (d(2021, 1, 1), d(2021, 12, 31), Grain::Year));
        assert_eq!(one("지난주에 바빴어요"), (d(2024, 3, 7), d(2024, 3, 13), Grain::Day));
        assert_eq!(one("지난 주말에 자전거를 탔어요"), (d(2024, 3, 9), d(2024, 3, 10), Grain::Day));
        assert_eq!(one("이번 주말에는"), (d(2024, 3, 16), d(2024, 3, 17), Grain::Day));
        assert_eq!(one("다음 주 토요일에 결혼해요"), day(2024, 3, 23));
        assert_eq!(one("지난주 금요일"), day(2024, 3, 8));
        assert_eq!(one("지난 월요일에"), day(2024, 3, 11));
        assert_eq!(one("다음 달에 가요"), (d(2024, 4, 1), d(2024, 4, 30), Grain::Month));
        assert_eq!(one("작년에"), (d(2023, 1, 1), d(2023, 12, 31), Grain::Year));
        assert_eq!(one("지난해"), (d(2023, 1, 1), d(2023, 12, 31), Grain::Year));
        // Only when it was written, or not a time at all.
        for t in [
            "이번 달에 한 살이 됐어요",
            "올해는",
            "오늘",
            "회의 전에",
            "세 시간 전에",
            "일주일에 두 번",
            "이 전에",
        ] {
            assert!(found(t, thursday).is_empty(), "{t}");
        }
    }

    #[test]
    fn korean_questions_that_ask_for_a_time() {
        for q in [
            "엄마 생신은 언제예요?",
            "부산 가는 기차는 언제 출발해요?",
            "결혼식이 며칠이에요?",
            "몇 월에 이사했어요?",
            "기타 레슨은 무슨 요일이에요?",
            "얼마나 오래 배웠어요?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in [
            "고양이 이름이 뭐예요?",
            "언제나 고마워요",
            "며칠 전에 뭘 샀어요?",
            "몇 년 전에 어디 살았어요?",
            "몇 명이 왔어요?",
        ] {
            assert!(!asks_when(q), "{q}");
        }
        assert!(states_time("어제 병원에 갔어요", d(2024, 3, 14)));
        assert!(!states_time("병원에 갔어요", d(2024, 3, 14)));
    }
}
