//! When and how loud: timestamps (ISO, glog/absl, TensorFlow, syslog,
//! dmesg) and log-level words.

use super::*;

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
        uptime: None,
    }
}

/// `2026-11-29 19:41:10,166`, `2026-11-29T19:41:10.166Z`, with an optional
/// zone offset.
pub(super) fn iso(i: &[u8]) -> Res<'_, Timestamp> {
    let zone = alt((
        recognize(char('Z')),
        recognize(tuple((one_of("+-"), num_n(2), opt(char(':')), num_n(2)))),
    ));
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
        |(y, _, mo, _, d, _, t, _)| make_ts(Some(y), mo, d, t),
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

/// glog/absl: `E1129 19:46:54.456820794 12345 file.cc:689] ` and PyTorch's
/// bracketed `[E1129 19:46:54.456820794 ProcessGroupNCCL.cpp:689] `.
pub(super) fn glog(i: &[u8]) -> Res<'_, (Timestamp, Option<Level>)> {
    fn core(i: &[u8]) -> Res<'_, (Timestamp, Option<Level>)> {
        let (r, (lvl, mo, d, _, t)) =
            tuple((one_of("IWEFDV"), num_n(2), num_n(2), char(' '), hms))(i)?;
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
