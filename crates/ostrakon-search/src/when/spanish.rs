//! Spanish calendar expressions: "9 de mayo de 2024", "el 24 de mayo", "en junio", "mayo
//! de 2024", "ayer", "anteayer", "anoche", "mañana", "pasado mañana", "la semana pasada",
//! "el próximo fin de semana", "el lunes pasado", "el mes que viene", "hace dos días",
//! "hace unas semanas", "dentro de tres días".

use chrono::{Duration, NaiveDate, Weekday};

use super::calendar::{self, Days, Grain, Unit};
use super::text::{Mention, Word, day_number, mention, year_number};

/// Whether the question asks for a time: "cuándo" (with its accent: "cuando" is also the
/// conjunction), "qué/cuál día|fecha|mes|año|semana|hora", "cuánto tiempo".
pub(super) fn asks_when(ws: &[Word<'_>]) -> bool {
    ws.iter().any(|w| w.text == "cuándo")
        || ws.windows(2).any(|pair| {
            matches!(
                (pair[0].text.as_str(), pair[1].text.as_str()),
                ("qué" | "cuál", "día" | "fecha" | "mes" | "año" | "semana" | "hora") | ("cuánto", "tiempo")
            )
        })
}

fn month_of(w: &str) -> Option<u32> {
    Some(match w {
        "enero" => 1,
        "febrero" => 2,
        "marzo" => 3,
        "abril" => 4,
        "mayo" => 5,
        "junio" => 6,
        "julio" => 7,
        "agosto" => 8,
        "septiembre" | "setiembre" => 9,
        "octubre" => 10,
        "noviembre" => 11,
        "diciembre" => 12,
        _ => return None,
    })
}

/// The unit at `i` ("semana", "fin de semana", "mes", "año", a weekday; plural too), and
/// the number of words it takes.
fn unit_at(ws: &[Word<'_>], i: usize) -> Option<(Unit, usize)> {
    let w = ws.get(i)?.text.as_str();
    let unit = match w {
        "día" | "días" | "dia" | "dias" => Unit::Day,
        "semana" | "semanas" => Unit::Week,
        "mes" | "meses" => Unit::Month,
        "año" | "años" => Unit::Year,
        "finde" => Unit::Weekend,
        "fin"
            if ws.get(i + 1).is_some_and(|w| w.text == "de")
                && ws.get(i + 2).is_some_and(|w| w.text == "semana") =>
        {
            return Some((Unit::Weekend, 3));
        }
        "lunes" => Unit::Weekday(Weekday::Mon),
        "martes" => Unit::Weekday(Weekday::Tue),
        "miércoles" | "miercoles" => Unit::Weekday(Weekday::Wed),
        "jueves" => Unit::Weekday(Weekday::Thu),
        "viernes" => Unit::Weekday(Weekday::Fri),
        "sábado" | "sabado" => Unit::Weekday(Weekday::Sat),
        "domingo" => Unit::Weekday(Weekday::Sun),
        _ => return None,
    };
    Some((unit, 1))
}

/// A count at `i`: "dos", "3", "un", "una"; "unos", "unas", "algunos", "varios", "pocos" (a
/// few: 3, vague); "un par de" (2, vague). With whether it is vague and the words it takes.
fn count(ws: &[Word<'_>], i: usize) -> Option<(i64, bool, usize)> {
    let w = ws.get(i)?.text.as_str();
    if matches!(w, "un" | "una") && ws.get(i + 1).is_some_and(|w| w.text == "par") {
        return ws.get(i + 2).is_some_and(|w| w.text == "de").then_some((2, true, 3));
    }
    let n = match w {
        "un" | "una" | "uno" => 1,
        "dos" => 2,
        "tres" => 3,
        "cuatro" => 4,
        "cinco" => 5,
        "seis" => 6,
        "siete" => 7,
        "ocho" => 8,
        "nueve" => 9,
        "diez" => 10,
        "once" => 11,
        "doce" => 12,
        "quince" => 15,
        "veinte" => 20,
        "unos" | "unas" | "algunos" | "algunas" | "varios" | "varias" | "pocos" | "pocas" => {
            return Some((3, true, 1));
        }
        _ => match w.parse::<i64>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => return None,
        },
    };
    Some((n, false, 1))
}

/// "hace <count> <unit>" (ago) and "dentro de <count> <unit>" (in), at `i`; the days and
/// the index of the word after.
fn counted(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Days, usize)> {
    let (forward, at) = match ws[i].text.as_str() {
        "hace" => (false, i + 1),
        "dentro" if ws.get(i + 1).is_some_and(|w| w.text == "de") => (true, i + 2),
        _ => return None,
    };
    let (n, vague, used) = count(ws, at)?;
    // Only one-word units count (calendar::counted refuses weekends and weekdays).
    let (unit, _) = unit_at(ws, at + used)?;
    Some((calendar::counted(n, unit, reference, vague, forward)?, at + used + 1))
}

/// "9 de mayo [de 2024]", "primero de mayo", "mayo de 2024", "mayo"; the days and the
/// index of the word after.
fn absolute(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Days, usize)> {
    let w = ws[i].text.as_str();
    let of = |j: usize| ws.get(j).is_some_and(|w| w.text == "de");
    let year_after = |j: usize| of(j).then(|| ws.get(j + 1).and_then(|y| year_number(&y.text))).flatten();
    let day = if w == "primero" { Some(1) } else { day_number(w, &[]) };
    if let Some(day) = day {
        let month = ws.get(i + 2).filter(|_| of(i + 1)).and_then(|m| month_of(&m.text))?;
        return Some(match year_after(i + 3) {
            Some(y) => (calendar::day(NaiveDate::from_ymd_opt(y, month, day)?), i + 5),
            None => (calendar::month_or_day(reference, month, Some(day))?, i + 3),
        });
    }
    let month = month_of(w)?;
    Some(match year_after(i + 1) {
        Some(y) => (calendar::month(calendar::month_start(y, month)?), i + 3),
        None => (calendar::month_or_day(reference, month, None)?, i + 1),
    })
}

/// "la semana pasada", "el próximo lunes", "este fin de semana", "el mes que viene"; the
/// days and the index of the word after.
fn relative(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Days, usize)> {
    let before = match ws[i].text.as_str() {
        "próximo" | "próxima" | "proximo" | "proxima" => Some(1),
        "pasado" | "pasada" | "último" | "última" | "ultimo" | "ultima" => Some(-1),
        "este" | "esta" => Some(0),
        _ => None,
    };
    let (unit, step, next) = match before {
        Some(step) => {
            let (unit, used) = unit_at(ws, i + 1)?;
            (unit, step, i + 1 + used)
        }
        None => {
            let (unit, used) = unit_at(ws, i)?;
            let after = ws.get(i + used).map(|w| w.text.as_str());
            let (step, words) = match after {
                Some("pasado" | "pasada") => (-1, 1),
                Some("próximo" | "próxima" | "proximo" | "proxima" | "entrante") => (1, 1),
                Some("que") if ws.get(i + used + 1).is_some_and(|w| w.text == "viene") => (1, 2),
                _ => return None,
            };
            (unit, step, i + used + words)
        }
    };
    if unit == Unit::Day {
        return None;
    }
    let days = calendar::shifted(unit, reference, step)?;
    // "este mes", "este año" say only when the text was written.
    (step != 0 || days.grain == Grain::Day).then_some((days, next))
}

/// "ayer", "anteayer", "antes de ayer", "anoche", "mañana" (not "la mañana", the
/// morning), "pasado mañana"; the day and the index of the word after.
fn single(ws: &[Word<'_>], i: usize, reference: NaiveDate) -> Option<(Days, usize)> {
    let next = |j: usize, w: &str| ws.get(j).is_some_and(|x| x.text == w);
    let (offset, words) = match ws[i].text.as_str() {
        "ayer" | "anoche" => (-1, 1),
        "anteayer" | "antier" => (-2, 1),
        "antes" if next(i + 1, "de") && next(i + 2, "ayer") => (-2, 3),
        "pasado" if next(i + 1, "mañana") => (2, 2),
        "mañana" => {
            let morning = i > 0
                && matches!(
                    ws[i - 1].text.as_str(),
                    "la" | "esta" | "por" | "de" | "cada" | "una" | "toda" | "en" | "las" | "del" | "al"
                );
            if morning {
                return None;
            }
            (1, 1)
        }
        _ => return None,
    };
    Some((calendar::day(reference + Duration::days(offset)), i + words))
}

/// The Spanish calendar expressions among `ws`, resolved against `reference`, in order.
pub(super) fn mentions(ws: &[Word<'_>], reference: NaiveDate) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let found = single(ws, i, reference)
            .or_else(|| counted(ws, i, reference))
            .or_else(|| absolute(ws, i, reference))
            .or_else(|| relative(ws, i, reference));
        match found {
            Some((days, next)) => {
                out.push(mention(ws, i, next - 1, days));
                i = next;
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
    fn spanish_dates() {
        let r = d(2024, 5, 16);
        assert_eq!(
            found("El cumpleaños de mi madre es el 24 de mayo.", r),
            vec![(d(2024, 5, 24), d(2024, 5, 24), Grain::Day, "24 de mayo".into())]
        );
        assert_eq!(found("el 9 de mayo de 2023", r)[0].0, d(2023, 5, 9));
        assert_eq!(found("el primero de junio", r)[0].0, d(2024, 6, 1));
        let june = found("En junio será perfecta.", r);
        assert_eq!((june[0].0, june[0].1, june[0].2), (d(2024, 6, 1), d(2024, 6, 30), Grain::Month));
        assert_eq!(
            found("desde marzo de 2022", r)[0].0..=found("desde marzo de 2022", r)[0].1,
            d(2022, 3, 1)..=d(2022, 3, 31)
        );
    }

    #[test]
    fn spanish_relative_expressions_against_the_day_written() {
        let thursday = d(2024, 5, 16);
        let one = |t: &str| one(t, thursday);
        assert_eq!(one("Ayer fui al médico."), day(2024, 5, 15));
        assert_eq!(one("anteayer"), day(2024, 5, 14));
        assert_eq!(one("antes de ayer"), day(2024, 5, 14));
        assert_eq!(one("Anoche cenamos fuera."), day(2024, 5, 15));
        assert_eq!(one("Mañana voy al mercado."), day(2024, 5, 17));
        assert_eq!(one("pasado mañana"), day(2024, 5, 18));
        assert_eq!(one("Fuimos al lago hace dos días."), day(2024, 5, 14));
        assert_eq!(one("hace unos días"), (d(2024, 5, 12), d(2024, 5, 14), Grain::Day));
        assert_eq!(one("hace un par de semanas"), (d(2024, 4, 29), d(2024, 5, 5), Grain::Day));
        assert_eq!(one("hace un mes"), (d(2024, 4, 1), d(2024, 4, 30), Grain::Month));
        assert_eq!(one("hace tres años"), (d(2021, 1, 1), d(2021, 12, 31), Grain::Year));
        assert_eq!(one("dentro de tres días"), day(2024, 5, 19));
        assert_eq!(one("la semana pasada"), (d(2024, 5, 9), d(2024, 5, 15), Grain::Day));
        assert_eq!(one("la próxima semana"), (d(2024, 5, 17), d(2024, 5, 23), Grain::Day));
        assert_eq!(one("el fin de semana pasado"), (d(2024, 5, 11), d(2024, 5, 12), Grain::Day));
        assert_eq!(one("este fin de semana"), (d(2024, 5, 18), d(2024, 5, 19), Grain::Day));
        assert_eq!(one("el próximo fin de semana"), (d(2024, 5, 18), d(2024, 5, 19), Grain::Day));
        assert_eq!(one("el lunes pasado"), day(2024, 5, 13));
        assert_eq!(one("el próximo viernes"), day(2024, 5, 17));
        assert_eq!(one("el mes que viene"), (d(2024, 6, 1), d(2024, 6, 30), Grain::Month));
        assert_eq!(one("el año pasado"), (d(2023, 1, 1), d(2023, 12, 31), Grain::Year));
        // The morning, this month, a bare weekday: not read.
        for t in [
            "por la mañana",
            "esta mañana",
            "este mes",
            "este año",
            "el sábado fui a la playa",
            "hace frío",
            "dos veces por semana",
            "hace dos lunes",
        ] {
            assert!(found(t, thursday).is_empty(), "{t}");
        }
    }

    #[test]
    fn spanish_questions_that_ask_for_a_time() {
        for q in [
            "¿Cuándo es el cumpleaños de mi madre?",
            "¿Qué día sale mi vuelo a Lisboa?",
            "¿En qué año me mudé?",
            "¿Cuánto tiempo llevo aprendiendo alemán?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in ["¿Cómo se llama mi perro?", "Cuando estuve en Lisboa, ¿qué comí?", "¿Qué hice ayer?"]
        {
            assert!(!asks_when(q), "{q}");
        }
        assert!(states_time("Ayer fui al médico.", d(2024, 5, 16)));
        assert!(!states_time("Fui al médico.", d(2024, 5, 16)));
    }
}
