//! Parsing of times and intervals as clients and data sets write them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ostrakon_core::{CoreError, Interval, PartialTime, Precision, TimeZone, Timestamp};

fn utc() -> TimeZone {
    TimeZone::Utc
}

fn at(s: &str) -> Timestamp {
    Timestamp::parse("t", s, &utc()).unwrap()
}

fn span(s: &str, tz: &TimeZone) -> (String, String, Precision) {
    match PartialTime::parse("t", s, tz).unwrap() {
        PartialTime::Known { start, end, precision } => (start.to_string(), end.to_string(), precision),
        PartialTime::Unknown => panic!("{s} parsed as unknown"),
    }
}

#[test]
fn rfc3339_with_offsets_is_normalised_to_utc_micros() {
    assert_eq!(at("2024-05-01T10:00:00+02:00").to_string(), "2024-05-01T08:00:00.000000Z");
    assert_eq!(at("2024-05-01T10:00:00.123456Z").to_string(), "2024-05-01T10:00:00.123456Z");
    assert_eq!(at("2024-05-01T10:00:00.5-01:30").to_string(), "2024-05-01T11:30:00.500000Z");
}

#[test]
fn dates_and_partial_dates_mean_the_start_of_their_span() {
    let tz = utc();
    assert_eq!(
        span("2014-05-03", &tz),
        ("2014-05-03T00:00:00.000000Z".into(), "2014-05-04T00:00:00.000000Z".into(), Precision::Day)
    );
    assert_eq!(
        span("2014-05", &tz),
        ("2014-05-01T00:00:00.000000Z".into(), "2014-06-01T00:00:00.000000Z".into(), Precision::Month)
    );
    assert_eq!(
        span("2014", &tz),
        ("2014-01-01T00:00:00.000000Z".into(), "2015-01-01T00:00:00.000000Z".into(), Precision::Year)
    );
}

#[test]
fn yago_partial_dates() {
    let tz = utc();
    assert_eq!(span("1952-##-##", &tz).0, "1952-01-01T00:00:00.000000Z");
    assert_eq!(span("1952-##-##", &tz).2, Precision::Year);
    assert_eq!(span("2009-12-##", &tz).1, "2010-01-01T00:00:00.000000Z");
    assert_eq!(
        span("19##-##-##", &tz),
        ("1900-01-01T00:00:00.000000Z".into(), "2000-01-01T00:00:00.000000Z".into(), Precision::Century)
    );
    assert_eq!(span("195#", &tz).2, Precision::Decade);
    assert_eq!(PartialTime::parse("t", "####-##-##", &tz).unwrap(), PartialTime::Unknown);
}

#[test]
fn negative_and_three_digit_years() {
    let tz = utc();
    assert_eq!(span("360-##-##", &tz).0, "0360-01-01T00:00:00.000000Z");
    assert_eq!(span("-405-##-##", &tz).0, "-000405-01-01T00:00:00.000000Z");
    assert_eq!(span("-405-##-##", &tz).1, "-000404-01-01T00:00:00.000000Z");
    assert!(at("-411") < at("-405"));
    assert!(at("-405") < at("100"));
    // `-4##` counts backwards: it spans the years -499 to -400.
    assert_eq!(span("-4##", &tz).0, "-000499-01-01T00:00:00.000000Z");
}

#[test]
fn a_date_is_placed_in_the_namespace_time_zone() {
    let paris: TimeZone = "Europe/Paris".parse().unwrap();
    assert_eq!(span("2024-07-01", &paris).0, "2024-06-30T22:00:00.000000Z");
    assert_eq!(span("2024-01-01", &paris).0, "2023-12-31T23:00:00.000000Z");
    let fixed = TimeZone::parse("tz", "-05:00").unwrap();
    assert_eq!(span("2024-01-01", &fixed).0, "2024-01-01T05:00:00.000000Z");
    assert_eq!(
        Timestamp::parse("t", "2024-07-01T12:00:00", &paris).unwrap().to_string(),
        "2024-07-01T10:00:00.000000Z"
    );
    // A local midnight that does not exist (Santiago skips 00:00 on 2022-09-11) moves past the gap.
    let santiago: TimeZone = "America/Santiago".parse().unwrap();
    assert_eq!(span("2022-09-11", &santiago).0, "2022-09-11T04:00:00.000000Z");
}

#[test]
fn malformed_times_name_the_field_and_value() {
    let tz = utc();
    for bad in [
        "307-13047-09",
        "2014-13",
        "2014-02-30",
        "2014-00-01",
        "abc",
        "",
        "2014-05-##x",
        "19##-05-01",
        "####-05-##",
        "2014-##-03",
        "1234567",
        "2024-05-01T25:00:00Z",
    ] {
        let err = PartialTime::parse("validFrom", bad, &tz).unwrap_err();
        match &err {
            CoreError::InvalidTime { field, value, .. } => {
                assert_eq!(field, "validFrom");
                assert_eq!(value, bad);
            }
            other => panic!("{bad}: unexpected {other:?}"),
        }
        assert!(err.to_string().contains("validFrom"), "{err}");
    }
    assert!(Timestamp::parse("t", "####-##-##", &tz).is_err());
    assert!(TimeZone::parse("tz", "Mars/Olympus").is_err());
}

#[test]
fn inverted_and_empty_intervals_are_rejected() {
    let a = at("2020");
    let b = at("2021");
    assert!(Interval::new("valid", a, Some(b)).is_ok());
    let err = Interval::new("valid", b, Some(a)).unwrap_err();
    assert!(matches!(err, CoreError::InvalidInterval { ref field, .. } if field == "valid"), "{err:?}");
    assert!(Interval::new("valid", a, Some(a)).is_err());
    assert!(Interval::new("valid", a, None).is_ok());
}

#[test]
fn half_open_containment_and_subtraction() {
    let i = Interval::new("v", at("2020"), Some(at("2022"))).unwrap();
    assert!(i.contains(at("2020")));
    assert!(i.contains(Timestamp::from_micros(at("2022").as_micros() - 1)));
    assert!(!i.contains(at("2022")));
    let hole = Interval::new("v", at("2020-06"), Some(at("2021"))).unwrap();
    let pieces = i.subtract(&hole);
    assert_eq!(pieces.len(), 2);
    assert_eq!(pieces[0].to(), Some(at("2020-06")));
    assert_eq!(pieces[1].from(), at("2021"));
    assert!(i.subtract(&Interval::open(at("2019"))).is_empty());
}
