//! Unit tests of the timestamp readers.

use super::*;
use crate::prefix::parse_prefix;

fn ts(line: &str) -> Timestamp {
    parse_prefix(line.as_bytes()).timestamp.unwrap()
}

#[test]
fn zones_are_kept_as_written() {
    let t = ts("2026-11-29T19:41:10.166Z ERROR boom");
    assert_eq!(t.zone, Some(Zone::Utc));
    assert_eq!(t.iso().as_deref(), Some("2026-11-29T19:41:10.166Z"));
    let t = ts("2026-11-29 19:41:10,166+00:00 boom");
    assert_eq!(t.iso().as_deref(), Some("2026-11-29T19:41:10.166+00:00"));
    let t = ts("2026-11-29T19:41:10-0800 boom");
    assert_eq!(t.zone, Some(Zone::Offset(-480)));
    assert_eq!(t.iso().as_deref(), Some("2026-11-29T19:41:10-08:00"));
    let t = ts("[2026-11-29T19:41:10+05:30] boom");
    assert_eq!(t.iso().as_deref(), Some("2026-11-29T19:41:10+05:30"));
    assert_eq!(
        ts("2026-11-29 19:41:10 INFO x").iso().as_deref(),
        Some("2026-11-29T19:41:10")
    );
}

#[test]
fn only_valid_dates_are_iso() {
    // Parsed as prefixes (the body starts after them), but no date.
    for line in [
        "2026-13-01 10:00:00 x",
        "2026-02-29 10:00:00 x",
        "2026-04-31 10:00:00 x",
        "2026-11-29 24:00:00 x",
        "2026-11-29 23:59:60 x",
        "2026-11-29T10:00:00+2400 x",
    ] {
        let t = ts(line);
        assert_eq!((t.iso(), t.yearless()), (None, None), "{line}");
    }
    assert!(ts("2028-02-29 10:00:00 x").iso().is_some());
    // Yearless: 29 February may be valid; 30 February never.
    let leap = ts("E0229 10:00:00.000001 1 f.cc:1] x");
    assert_eq!(leap.yearless().as_deref(), Some("--02-29T10:00:00.000001"));
    assert_eq!(leap.iso(), None);
    assert_eq!(ts("E0230 10:00:00.000001 1 f.cc:1] x").yearless(), None);
    let up = ts("[ 4821.553190] NVRM: Xid");
    assert_eq!((up.iso(), up.yearless()), (None, None));
    assert_eq!(up.uptime_secs().as_deref(), Some("4821.553190"));
}

#[test]
fn years_from_a_dated_line() {
    let glog = ts("E1129 19:46:54.456820794 1 f.cc:1] x");
    let near = ts("2026-11-29 19:46:33,316 INFO x");
    let t = glog.with_year_near(&near);
    assert_eq!(t.iso().as_deref(), Some("2026-11-29T19:46:54.456820794"));
    // Across New Year, both ways.
    let eve = ts("W1231 23:59:59.000000 1 f.cc:1] x");
    assert_eq!(
        eve.with_year_near(&ts("2027-01-01 00:00:01 x")).year,
        Some(2026)
    );
    let day = ts("W0101 00:00:01.000000 1 f.cc:1] x");
    assert_eq!(
        day.with_year_near(&ts("2026-12-31 23:59:59 x")).year,
        Some(2027)
    );
    // A dated time keeps its year; an uptime stays an uptime.
    let dated = ts("2025-06-14 03:12:13 x");
    assert_eq!(dated.with_year_near(&near), dated);
    let up = ts("[ 4821.553190] x");
    assert_eq!(up.with_year_near(&near), up);
    // A reference that is not a valid date is no reference.
    assert_eq!(glog.with_year_near(&ts("2026-13-29 19:46:33 x")), glog);
    // The zone of the reference does not change the line's own.
    assert_eq!(
        glog.with_year_near(&ts("2026-11-29T19:46:33Z x")).zone,
        None
    );
}

#[test]
fn years_from_a_modification_time() {
    let at = |y, mo, d, h: i64| {
        let days = days_from_civil(y, mo, d);
        UNIX_EPOCH + std::time::Duration::from_secs((days * 86400 + h * 3600) as u64)
    };
    let glog = |s: &str| ts(&format!("E{s} 1 f.cc:1] x"));
    let written = at(2027, 1, 2, 9);
    assert_eq!(
        glog("0101 10:00:00.0").with_year_before(written).year,
        Some(2027)
    );
    assert_eq!(
        glog("1231 23:00:00.0").with_year_before(written).year,
        Some(2026)
    );
    assert_eq!(
        glog("0102 09:00:00.0").with_year_before(written).year,
        Some(2027)
    );
    // A clock up to a day ahead of UTC is not next year's, nor last
    // year's; beyond that it is last year's.
    assert_eq!(
        glog("0102 20:00:00.0").with_year_before(written).year,
        Some(2027)
    );
    assert_eq!(
        glog("0104 10:00:00.0").with_year_before(written).year,
        Some(2026)
    );
    // Written at 15:00 UTC on 31 December by a clock 9 hours ahead.
    let eve = at(2026, 12, 31, 15);
    assert_eq!(
        glog("0101 00:30:00.0").with_year_before(eve).year,
        Some(2027)
    );
    // 29 February: the last leap year.
    assert_eq!(
        glog("0229 10:00:00.0").with_year_before(written).year,
        Some(2024)
    );
    let syslog = ts("Nov 29 19:41:10 node-7 kernel: NVRM: Xid");
    assert_eq!(
        syslog.with_year_before(written).iso().as_deref(),
        Some("2026-11-29T19:41:10")
    );
}

#[test]
fn civil_days_round_trip() {
    assert_eq!(days_from_civil(1970, 1, 1), 0);
    assert_eq!(days_from_civil(2027, 1, 1), 1_798_761_600 / 86400);
    for z in (-800_000..800_000).step_by(97) {
        let (y, m, d) = civil_from_days(z);
        assert_eq!(days_from_civil(y, m, d), z);
        assert!((1..=12).contains(&m) && d >= 1 && d <= i64::from(days_in_month(y, m as u8)));
    }
}
