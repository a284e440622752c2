//! Who wrote a line: rank tags, NCCL's `host:pid:tid [rank]`, Ray's
//! `(pid=N)`, srun labels, pdsh hosts, container names.

use crate::prefix::digits;
use crate::prefix::parse_u64;
use crate::prefix::spaces;
use crate::prefix::Origin;
use crate::prefix::Res;
use nom::{
    branch::alt,
    bytes::complete::{tag, take_while1, take_while_m_n},
    character::complete::char,
    combinator::{map, opt, recognize},
    sequence::{delimited, pair, preceded, terminated, tuple},
};

/// `[rank3]:`, `[default3]:`, `[1,3]<stderr>:`, `host:pid:tid [3] NCCL`.
pub(super) fn origin(i: &[u8]) -> Res<'_, Origin> {
    alt((
        map(
            terminated(
                delimited(
                    char('['),
                    preceded(alt((tag("rank"), tag("default"))), digits),
                    char(']'),
                ),
                pair(char(':'), opt(char(' '))),
            ),
            |d| Origin::Rank(parse_u64(d) as u32),
        ),
        // Open MPI's `--tag-output`: `[jobid,rank]<stream>:` (the job id,
        // 1 for mpirun's first job, then the process's rank).
        map(
            terminated(
                delimited(
                    char('['),
                    preceded(pair(digits, char(',')), digits),
                    char(']'),
                ),
                tuple((
                    char('<'),
                    take_while1(|c: u8| c.is_ascii_alphabetic()),
                    tag(">:"),
                    opt(char(' ')),
                )),
            ),
            |d| Origin::Rank(parse_u64(d) as u32),
        ),
        nccl_origin,
        ray_origin,
        srun_label,
        // A logger's own rank tag: `rank1: step 2 …`.
        map(terminated(preceded(tag("rank"), digits), tag(": ")), |d| {
            Origin::Rank(parse_u64(d) as u32)
        }),
        pdsh_host,
        // PyTorch Lightning's rank-zero logger: `[rank: 0] `.
        map(
            terminated(delimited(tag("[rank: "), digits, char(']')), opt(char(' '))),
            |d| Origin::Rank(parse_u64(d) as u32),
        ),
    ))(i)
}

/// NCCL's `host:pid:tid [dev] ` tag. The bracket holds the CUDA device, not
/// the rank, so the process (host and pid) identifies the writer. The body
/// keeps the `NCCL …` text.
pub(super) fn nccl_origin(i: &[u8]) -> Res<'_, Origin> {
    let host =
        take_while1(|c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_');
    let (rest, (hp, _)) = pair(
        recognize(tuple((host, char(':'), digits))),
        tuple((char(':'), digits, char(' '), char('['), digits, tag("] "))),
    )(i)?;
    // The body starts with `NCCL INFO …`, or with `file.cc:904 NCCL WARN …`.
    if memfind!(&rest[..rest.len().min(48)], b"NCCL").is_none() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Tag,
        )));
    }
    Ok((rest, Origin::Process(fnv1a(hp))))
}

/// Ray's worker tags: `(RayTrainWorker pid=4242, ip=10.0.0.7) `,
/// `(pid=4242) `, `(raylet) `, `(raylet, ip=10.0.0.7) `. Each process is
/// its own writer.
pub(super) fn ray_origin(i: &[u8]) -> Res<'_, Origin> {
    let (rest, inner) = terminated(
        delimited(
            char('('),
            take_while1(|c: u8| c != b')' && c != b'\n' && c != b'('),
            char(')'),
        ),
        char(' '),
    )(i)?;
    let pid = memfind!(inner, b"pid=").is_some_and(|p| {
        (p == 0 || inner[p - 1] == b' ') && inner.get(p + 4).is_some_and(|c| c.is_ascii_digit())
    });
    let daemon = inner.starts_with(b"raylet") || inner.starts_with(b"gcs_server");
    let name_ok = inner
        .iter()
        .take_while(|&&c| c != b' ' && c != b',')
        .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'=' || *c == b':' || *c == b'.');
    if !(pid || daemon) || !name_ok || inner.len() > 200 {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((rest, Origin::Process(fnv1a(inner))))
}

/// `srun --label`'s task number: `3: message` (padded: ` 3: `).
pub(super) fn srun_label(i: &[u8]) -> Res<'_, Origin> {
    map(
        terminated(
            preceded(spaces, take_while_m_n(1, 5, |c: u8| c.is_ascii_digit())),
            tag(": "),
        ),
        |d| Origin::Rank(parse_u64(d) as u32),
    )(i)
}

/// The host tag pdsh and DeepSpeed's multi-node launcher put before each
/// line: `worker-3: `, `node007: `, `localhost: `, `ip-10-0-0-7: `: a
/// lower-case name with a number in it (or `localhost`), so that message
/// words (`RuntimeError: `, `loss: `) are never taken for one.
pub(super) fn pdsh_host(i: &[u8]) -> Res<'_, Origin> {
    let (rest, name) = terminated(
        take_while_m_n(2, 63, |c: u8| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.'
        }),
        tag(": "),
    )(i)?;
    let ok = name == b"localhost"
        || (name[0].is_ascii_lowercase()
            && name.iter().any(|c| c.is_ascii_digit())
            && name.last().is_some_and(|c| c.is_ascii_digit()));
    if !ok {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((rest, Origin::Process(fnv1a(name))))
}

/// The service tag of `docker compose logs`: `trainer-1  | ` (compose v2)
/// or `trainer_1  | ` (v1). The name must end in a replica number, so that
/// a table row such as `epoch  | loss` is not taken for a tag.
pub(super) fn container(i: &[u8]) -> Res<'_, Origin> {
    let (rest, name) = terminated(
        take_while1(|c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.'),
        tuple((take_while1(|c: u8| c == b' '), char('|'), opt(char(' ')))),
    )(i)?;
    let digits = name.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let head = &name[..name.len() - digits];
    if digits == 0 || !(head.ends_with(b"-") || head.ends_with(b"_")) || head.len() < 2 {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((rest, Origin::Process(fnv1a(name))))
}

pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}
