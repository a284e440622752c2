//! When and how loud: timestamps (ISO, glog/absl, TensorFlow, syslog,
//! dmesg) and log-level words.
//!
//! A [`Timestamp`] is what a line's prefix wrote. glog/absl and syslog
//! headers have no year: [`Timestamp::with_year_near`] takes it from a dated
//! line of the same log, [`Timestamp::with_year_before`] from the time the
//! file was last written. [`Timestamp::iso`] gives the ISO 8601 text that
//! reports carry, only for a valid calendar date with a year.

use crate::prefix::digits;
use crate::prefix::frac;
use crate::prefix::num_n;
use crate::prefix::parse_u64;
use crate::prefix::spaces;
use crate::prefix::Level;
use crate::prefix::Res;
use nom::{
    branch::alt,
    bytes::complete::{tag, take_while1, take_while_m_n},
    character::complete::{char, one_of},
    combinator::{map, opt, recognize},
    sequence::{delimited, pair, preceded, terminated, tuple},
};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A zone designator, as the log wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zone {
    /// `Z`.
    Utc,
    /// `+05:30`, `-0800`, `+00:00`: minutes east of UTC.
    Offset(i16),
}

/// A point in time as a log line shows it; fields the format lacks are absent.
///
/// ```
/// use cudnnlog::report::{Timestamp, Zone};
/// let iso = Timestamp::of_line(b"2026-11-29T19:41:10.166+05:30 train: step 3").unwrap();
/// assert_eq!((iso.year, iso.month, iso.day, iso.hour), (Some(2026), 11, 29, 19));
/// assert_eq!(iso.zone, Some(Zone::Offset(330)));
/// // glog writes no year; dmesg only the seconds since boot.
/// let glog = Timestamp::of_line(b"E1129 19:46:54.456820 12345 f.cc:1] boom").unwrap();
/// assert_eq!((glog.year, glog.month, glog.needs_year()), (None, 11, true));
/// let dmesg = Timestamp::of_line(b"[ 4821.553190] NVRM: Xid 79").unwrap();
/// assert!(!dmesg.is_calendar());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timestamp {
    /// Missing in glog/absl and syslog headers, which print month and day
    /// only, until a reader fills it in ([`Timestamp::with_year_near`],
    /// [`Timestamp::with_year_before`]).
    pub year: Option<u16>,
    /// The month as written: 1 to 12 in a valid time
    /// ([`Timestamp::is_valid`]).
    pub month: u8,
    /// The day of the month as written.
    pub day: u8,
    /// The hour as written, on a 24-hour clock.
    pub hour: u8,
    /// The minute as written.
    pub minute: u8,
    /// The second as written (a leap second, `60`, is not valid).
    pub second: u8,
    /// Fractional seconds as written: value and number of digits.
    pub frac: Option<(u64, u8)>,
    /// The zone designator, when the line has one (`Z`, `+00:00`); without
    /// it the time is the writer's local time.
    pub zone: Option<Zone>,
    /// Seconds since boot, for dmesg lines (`[ 4821.553190]`); the calendar
    /// fields are zero then.
    pub uptime: Option<(u64, u64, u8)>,
}

impl fmt::Display for Timestamp {
    /// ISO 8601: `2026-11-29T19:41:10.166`, `2026-11-29T19:41:10.166Z`;
    /// `--11-29T19:46:54.456820` when the year is unknown, `+4821.553190s`
    /// for a dmesg uptime. Not checked: see [`Timestamp::iso`] for text a
    /// date parser is sure to accept.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((secs, frac, digits)) = self.uptime {
            return write!(f, "+{secs}.{frac:0width$}s", width = digits as usize);
        }
        match self.year {
            Some(y) => write!(f, "{y:04}-{:02}-{:02}", self.month, self.day)?,
            None => write!(f, "--{:02}-{:02}", self.month, self.day)?,
        }
        write!(f, "T{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if let Some((v, d)) = self.frac {
            write!(f, ".{v:0width$}", width = d as usize)?;
        }
        match self.zone {
            None => Ok(()),
            Some(Zone::Utc) => f.write_str("Z"),
            Some(Zone::Offset(m)) => {
                let sign = if m < 0 { '-' } else { '+' };
                let m = m.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", m / 60, m % 60)
            }
        }
    }
}

/// Slack for the time zone of a log's clock when its year is taken from a
/// file's modification time (a UTC instant): a local wall clock is at most
/// 14 hours ahead of UTC.
const ZONE_SLACK_SECS: i64 = 24 * 3600;

impl Timestamp {
    /// The time at the start of a log line, read as a scan reads it: after
    /// a container, launcher or rank tag, in any of the formats the scanner
    /// knows (ISO 8601, Python logging, glog/absl, syslog, dmesg uptime…).
    /// `None` when the line's prefix holds no time.
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = Timestamp::of_line(b"[rank1]: 2026-11-29 19:41:10,166 ERROR boom").unwrap();
    /// assert_eq!(ts.iso().as_deref(), Some("2026-11-29T19:41:10.166"));
    /// assert!(Timestamp::of_line(b"Traceback (most recent call last):").is_none());
    /// ```
    pub fn of_line(line: &[u8]) -> Option<Timestamp> {
        super::parse_prefix(line).timestamp
    }

    /// True when both are calendar times and `self` is strictly earlier
    /// than `other`; the year counts only when both write one (glog and
    /// c10 headers write none).
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert!(ts("2024-06-10 09:01:10,002 INFO x").is_before(&ts("[E610 09:11:12.6 ProcessGroupNCCL.cpp:607] x")));
    /// assert!(!ts("E610 09:11:12.6 f.cc:1] x").is_before(&ts("E610 09:11:12.6 f.cc:1] x")));
    /// ```
    pub fn is_before(&self, other: &Timestamp) -> bool {
        if !self.is_calendar() || !other.is_calendar() {
            return false;
        }
        let nanos = |t: &Timestamp| {
            t.frac.map_or(0u64, |(v, d)| {
                if d <= 9 {
                    v.saturating_mul(10u64.pow(9 - u32::from(d)))
                } else {
                    v / 10u64.saturating_pow(u32::from(d) - 9)
                }
            })
        };
        let key = |t: &Timestamp, year: bool| {
            (
                if year { t.year.unwrap_or(0) } else { 0 },
                t.month,
                t.day,
                t.hour,
                t.minute,
                t.second,
                nanos(t),
            )
        };
        let year = self.year.is_some() && other.year.is_some();
        key(self, year) < key(other, year)
    }

    /// True for a calendar time (not a dmesg uptime).
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert!(ts("2026-11-29 19:41:10,166 INFO x").is_calendar());
    /// assert!(!ts("[ 4821.553190] NVRM: Xid 79").is_calendar());
    /// ```
    pub fn is_calendar(&self) -> bool {
        self.uptime.is_none()
    }

    /// True for a calendar time whose year the line did not write and no
    /// reader has filled in yet.
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert!(ts("E1129 19:46:54.456820794 1 f.cc:1] x").needs_year());
    /// assert!(!ts("2026-11-29 19:41:10,166 INFO x").needs_year());
    /// ```
    pub fn needs_year(&self) -> bool {
        self.is_calendar() && self.year.is_none()
    }

    /// True when the fields make a real time of day, a real month and a
    /// day that month can have (29 February in a leap year only; with the
    /// year unknown, 29 February counts), and the zone is a real offset
    /// (under 24 hours). A leap second (`:60`) is not valid: most date
    /// parsers refuse it.
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert!(ts("2024-02-29 10:00:00 INFO x").is_valid());
    /// assert!(!ts("2023-02-29 10:00:00 INFO x").is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        let day_ok = match self.year {
            Some(y) => self.day >= 1 && self.day <= days_in_month(y.into(), self.month),
            None => self.day >= 1 && self.day <= days_in_month(2000, self.month),
        };
        let zone_ok = match self.zone {
            Some(Zone::Offset(m)) => m.unsigned_abs() < 24 * 60,
            _ => true,
        };
        self.is_calendar()
            && (1..=12).contains(&self.month)
            && day_ok
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && zone_ok
    }

    /// The timestamp as reports carry it: ISO 8601 / RFC 3339
    /// `YYYY-MM-DDTHH:MM:SS`, then the fraction as the log wrote it (`.` for
    /// a `,`), then the zone if the log wrote one (`Z` or `±HH:MM`). `None`
    /// for a dmesg uptime, a time whose year is unknown, and fields that are
    /// not a valid date ([`Timestamp::is_valid`]).
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert_eq!(ts("2026-11-29 19:41:10,166 INFO x").iso().as_deref(), Some("2026-11-29T19:41:10.166"));
    /// assert_eq!(ts("2026-11-29T19:41:10+0100 x").iso().as_deref(), Some("2026-11-29T19:41:10+01:00"));
    /// assert_eq!(ts("E1129 19:46:54.456820794 1 f.cc:1] x").iso(), None);
    /// ```
    pub fn iso(&self) -> Option<String> {
        (self.year.is_some() && self.is_valid()).then(|| self.to_string())
    }

    /// A calendar time with no year, as ISO 8601:2000's truncated form
    /// `--MM-DDTHH:MM:SS[.f]`; `None` when the year is known, for an uptime
    /// and for invalid fields.
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert_eq!(ts("E1129 19:46:54.456 1 f.cc:1] x").yearless().as_deref(), Some("--11-29T19:46:54.456"));
    /// assert_eq!(ts("2026-11-29 19:41:10 INFO x").yearless(), None);
    /// ```
    pub fn yearless(&self) -> Option<String> {
        (self.year.is_none() && self.is_valid()).then(|| self.to_string())
    }

    /// A dmesg uptime as seconds written in decimal (`4821.553190`).
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let ts = |l: &str| Timestamp::of_line(l.as_bytes()).unwrap();
    /// assert_eq!(ts("[ 4821.553190] NVRM: Xid 79").uptime_secs().as_deref(), Some("4821.553190"));
    /// assert_eq!(ts("2026-11-29 19:41:10 INFO x").uptime_secs(), None);
    /// ```
    pub fn uptime_secs(&self) -> Option<String> {
        self.uptime
            .map(|(s, f, d)| format!("{s}.{f:0width$}", width = d as usize))
    }

    /// The same wall-clock time in year `year`, if that makes a valid date.
    fn in_year(&self, year: i64) -> Option<Timestamp> {
        let year = u16::try_from(year)
            .ok()
            .filter(|y| (1..=9999).contains(y))?;
        let t = Timestamp {
            year: Some(year),
            ..*self
        };
        t.is_valid().then_some(t)
    }

    /// Seconds since 1970 of the wall-clock fields, zone ignored (both
    /// sides of a comparison are read the same way).
    fn wall_secs(&self) -> Option<i64> {
        let y = i64::from(self.year?);
        let days = days_from_civil(y, self.month.into(), self.day.into());
        Some(
            days * 86400
                + i64::from(self.hour) * 3600
                + i64::from(self.minute) * 60
                + i64::from(self.second),
        )
    }

    /// A yearless time given the year that puts it nearest to `reference`,
    /// a dated timestamp of the same log (the year before or after it when
    /// the log crosses New Year: `12-31T23:59` near `2027-01-01T00:00` is
    /// in 2026). Unchanged when it has a year, when `reference` has none,
    /// and when no year near the reference makes a valid date (29 February).
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// let t = |y, mo, d| Timestamp { year: y, month: mo, day: d, hour: 12, ..Timestamp::default() };
    /// assert_eq!(t(None, 11, 29).with_year_near(&t(Some(2026), 11, 29)).year, Some(2026));
    /// assert_eq!(t(None, 12, 31).with_year_near(&t(Some(2027), 1, 1)).year, Some(2026));
    /// assert_eq!(t(None, 1, 1).with_year_near(&t(Some(2026), 12, 31)).year, Some(2027));
    /// assert_eq!(t(None, 2, 29).with_year_near(&t(Some(2026), 3, 1)).year, None);
    /// ```
    pub fn with_year_near(self, reference: &Timestamp) -> Timestamp {
        let (Some(ry), Some(r)) = (reference.year, reference.wall_secs()) else {
            return self;
        };
        if !self.needs_year() || !reference.is_valid() {
            return self;
        }
        let ry = i64::from(ry);
        [ry, ry - 1, ry + 1]
            .into_iter()
            .filter_map(|y| self.in_year(y))
            .min_by_key(|t| t.wall_secs().map_or(i64::MAX, |s| (s - r).abs()))
            .unwrap_or(self)
    }

    /// A yearless time given the latest year that does not put it after
    /// `modified`, the time its file was last written (as syslog readers
    /// do: a `Dec 31` line in a file written on 2 January is from the year
    /// before), give or take a day for the zone of the log's clock.
    /// Unchanged when it has a year.
    ///
    /// ```
    /// use cudnnlog::report::Timestamp;
    /// use std::time::{Duration, UNIX_EPOCH};
    /// let t = |mo, d| Timestamp { month: mo, day: d, hour: 12, ..Timestamp::default() };
    /// let jan_2_2027 = UNIX_EPOCH + Duration::from_secs(1_798_761_600 + 86_400);
    /// assert_eq!(t(1, 1).with_year_before(jan_2_2027).year, Some(2027));
    /// assert_eq!(t(12, 31).with_year_before(jan_2_2027).year, Some(2026));
    /// ```
    pub fn with_year_before(self, modified: SystemTime) -> Timestamp {
        if !self.needs_year() {
            return self;
        }
        let m = match modified.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2),
            Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX / 2),
        };
        let my = civil_from_days(m.div_euclid(86400)).0;
        // The latest year not after the file; 29 February may go back a
        // few years to a leap year.
        ((my - 8)..=(my + 1))
            .rev()
            .filter_map(|y| self.in_year(y))
            .find(|t| t.wall_secs().is_some_and(|s| s <= m + ZONE_SLACK_SECS))
            .unwrap_or(self)
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u8) -> u8 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01: (year, month, day).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// Hours, minutes, seconds and an optional fraction.
type Hms = (u32, u32, u32, Option<(u64, u8)>);

pub(super) fn hms(i: &[u8]) -> Res<'_, Hms> {
    map(
        tuple((
            num_n(2),
            char(':'),
            num_n(2),
            char(':'),
            num_n(2),
            opt(frac),
        )),
        |(h, _, m, _, s, f)| (h, m, s, f),
    )(i)
}

pub(super) fn make_ts(y: Option<u32>, mo: u32, d: u32, t: Hms) -> Timestamp {
    Timestamp {
        year: y.map(|y| y as u16),
        month: mo as u8,
        day: d as u8,
        hour: t.0 as u8,
        minute: t.1 as u8,
        second: t.2 as u8,
        frac: t.3,
        zone: None,
        uptime: None,
    }
}

/// `2026-11-29 19:41:10,166`, `2026-11-29T19:41:10.166Z`, with an optional
/// zone: `Z`, `+05:30`, `-0800`.
pub(super) fn iso(i: &[u8]) -> Res<'_, Timestamp> {
    let offset = map(
        tuple((one_of("+-"), num_n(2), opt(char(':')), num_n(2))),
        |(sign, h, _, m)| {
            let m = (h * 60 + m).min(i16::MAX as u32) as i16;
            Zone::Offset(if sign == '-' { -m } else { m })
        },
    );
    let zone = alt((map(char('Z'), |_| Zone::Utc), offset));
    map(
        tuple((
            num_n(4),
            char('-'),
            num_n(2),
            char('-'),
            num_n(2),
            one_of("T "),
            hms,
            opt(zone),
        )),
        |(y, _, mo, _, d, _, t, zone)| Timestamp {
            zone,
            ..make_ts(Some(y), mo, d, t)
        },
    )(i)
}

/// A timestamp field, bare or in brackets, followed by a separator; or a
/// dmesg uptime `[ 4821.553190]`.
pub(super) fn timestamp_field(i: &[u8]) -> Res<'_, Timestamp> {
    alt((
        terminated(
            delimited(char('['), iso, char(']')),
            pair(opt(char(':')), spaces),
        ),
        terminated(
            iso,
            pair(opt(alt((tag(" -"), tag(" |"), tag(":")))), spaces),
        ),
        terminated(dmesg, spaces),
        terminated(dmesg_human, spaces),
        syslog,
    ))(i)
}

/// An English month abbreviation: `Jan` … `Dec`.
pub(super) fn month_name(i: &[u8]) -> Res<'_, u32> {
    const MONTHS: [&[u8]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let (r, m) = take_while_m_n(3, 3, |c: u8| c.is_ascii_alphabetic())(i)?;
    match MONTHS.iter().position(|n| *n == m) {
        Some(p) => Ok((r, p as u32 + 1)),
        None => Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Tag,
        ))),
    }
}

/// A day of the month, space- or zero-padded: ` 9`, `09`, `29`.
pub(super) fn day_of_month(i: &[u8]) -> Res<'_, u32> {
    alt((preceded(char(' '), num_n(1)), num_n(2), num_n(1)))(i)
}

/// `dmesg -T`: `[Sat Nov 29 19:41:10 2026] `.
pub(super) fn dmesg_human(i: &[u8]) -> Res<'_, Timestamp> {
    let (r, (_, _, _, mo, _, d, _, t, _, y, _)) = tuple((
        char('['),
        take_while_m_n(3, 3, |c: u8| c.is_ascii_alphabetic()),
        char(' '),
        month_name,
        char(' '),
        day_of_month,
        char(' '),
        hms,
        char(' '),
        num_n(4),
        char(']'),
    ))(i)?;
    Ok((r, make_ts(Some(y), mo, d, t)))
}

/// syslog and `journalctl`: `Nov 29 19:41:10 node-7 kernel: ` or
/// `… node-7 python3[4242]: `; the year is not written.
pub(super) fn syslog(i: &[u8]) -> Res<'_, Timestamp> {
    let word = |i| take_while1(|c: u8| !c.is_ascii_whitespace() && c != b':' && c != b'[')(i);
    let (r, (mo, _, d, _, t, _, _host, _, _tag, _pid, _)) = tuple((
        month_name,
        char(' '),
        day_of_month,
        char(' '),
        hms,
        char(' '),
        word,
        char(' '),
        word,
        opt(delimited(char('['), digits, char(']'))),
        pair(char(':'), spaces),
    ))(i)?;
    Ok((r, make_ts(None, mo, d, t)))
}

pub(super) fn dmesg(i: &[u8]) -> Res<'_, Timestamp> {
    map(
        delimited(
            pair(char('['), spaces),
            pair(digits, preceded(char('.'), digits)),
            char(']'),
        ),
        |(s, f): (&[u8], &[u8])| Timestamp {
            uptime: Some((
                parse_u64(s),
                parse_u64(&f[..f.len().min(18)]),
                f.len().min(18) as u8,
            )),
            ..Timestamp::default()
        },
    )(i)
}

/// glog's month and day, `MMDD`, or PyTorch c10's `(month + 1) * 100 + day`
/// written without padding: `0623` and `623` are both 23 June, `1129` is
/// 29 November. A number that makes no month and day is no header.
fn month_day(i: &[u8]) -> Res<'_, (u32, u32)> {
    let (r, digits) = take_while_m_n(3, 4, |c: u8| c.is_ascii_digit())(i)?;
    let n = digits
        .iter()
        .fold(0u32, |a, c| a * 10 + u32::from(c - b'0'));
    let (mo, d) = (n / 100, n % 100);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((r, (mo, d)))
}

/// glog/absl: `E1129 19:46:54.456820794 12345 file.cc:689] ` and PyTorch's
/// bracketed `[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689] `, whose
/// month is not padded from January to September (`[E623 05:45:04.413715744
/// ProcessGroupNCCL.cpp:704] `, c10/util/Logging.cpp).
pub(super) fn glog(i: &[u8]) -> Res<'_, (Timestamp, Option<Level>)> {
    fn core(i: &[u8]) -> Res<'_, (Timestamp, Option<Level>)> {
        let (r, (lvl, (mo, d), _, t)) = tuple((one_of("IWEFDV"), month_day, char(' '), hms))(i)?;
        // Optional thread id, then `file:line`.
        let (r, _) = opt(pair(spaces, digits))(r)?;
        let (r, _) = pair(
            spaces,
            recognize(tuple((
                take_while1(|c: u8| c != b':' && c != b']' && c != b' '),
                char(':'),
                digits,
            ))),
        )(r)?;
        Ok((r, (make_ts(None, mo, d, t), Level::from_letter(lvl as u8))))
    }
    alt((
        terminated(delimited(char('['), core, char(']')), spaces),
        terminated(core, pair(char(']'), spaces)),
    ))(i)
}

/// TensorFlow: `2023-01-01 12:00:00.123456: E tensorflow/core/x.cc:123] `.
pub(super) fn tf_header(i: &[u8]) -> Res<'_, (Timestamp, Level)> {
    let (r, (ts, _, lvl, _)) = tuple((iso, tag(": "), one_of("IWEF"), char(' ')))(i)?;
    let (r, _) = terminated(
        recognize(tuple((
            take_while1(|c: u8| c != b':' && c != b']' && c != b' '),
            char(':'),
            digits,
        ))),
        pair(char(']'), spaces),
    )(r)?;
    Ok((
        r,
        (ts, Level::from_letter(lvl as u8).unwrap_or(Level::Info)),
    ))
}

/// `INFO`, `[WARNING]`, `ERROR:`, `| ERROR |` …, followed by a separator.
pub(super) fn level_word(i: &[u8]) -> Res<'_, Level> {
    fn word(i: &[u8]) -> Res<'_, Level> {
        alt((
            map(alt((tag("CRITICAL"), tag("FATAL"))), |_| Level::Fatal),
            map(tag("ERROR"), |_| Level::Error),
            map(alt((tag("WARNING"), tag("WARN"))), |_| Level::Warning),
            map(tag("INFO"), |_| Level::Info),
            map(tag("DEBUG"), |_| Level::Debug),
            map(tag("TRACE"), |_| Level::Trace),
        ))(i)
    }
    let (r, lvl) = alt((
        delimited(char('['), word, char(']')),
        delimited(pair(char('|'), spaces), word, pair(spaces, char('|'))),
        word,
    ))(i)?;
    // The word must stand alone: `INFO:`, `INFO -`, `INFO train`, not `INFORMATION`.
    let (r, _) = alt((
        recognize(pair(
            opt(char(':')),
            take_while1(|c: u8| c == b' ' || c == b'\t'),
        )),
        recognize(char(':')),
    ))(r)?;
    let (r, _) = opt(pair(tag("- "), spaces))(r)?;
    Ok((r, lvl))
}

#[cfg(test)]
mod tests;
