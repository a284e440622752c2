//! The job grouper (`cudnnlog::fleet::group`) on arbitrary paths: lines of
//! the input, any bytes (a file name may be anything but `/` and NUL). No
//! panic; the jobs partition the paths, keep each job's files in input
//! order and the jobs in the order of their first files; whether two paths
//! are one job depends on the two paths alone (grouping the list reversed
//! gives the same partition); a one-file job is named by its path and
//! keeps a rank only in torchrun's layout; a rank comes from the name.
#![no_main]

use cudnnlog::fleet::group;
use libfuzzer_sys::fuzz_target;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

fuzz_target!(|data: &[u8]| {
    let paths: Vec<PathBuf> = data
        .split(|&b| b == b'\n' || b == 0)
        .take(256)
        .map(|p| PathBuf::from(OsStr::from_bytes(p)))
        .collect();
    let jobs = group(&paths);

    // A partition, each job in input order, jobs by their first file.
    let mut at: HashMap<PathBuf, Vec<usize>> = HashMap::new();
    for (i, p) in paths.iter().enumerate() {
        at.entry(p.clone()).or_default().push(i);
    }
    let mut seen: HashMap<&PathBuf, usize> = HashMap::new();
    let mut firsts = Vec::new();
    let mut total = 0;
    for job in &jobs {
        assert!(!job.sources.is_empty(), "an empty job");
        let mut last = None;
        for s in &job.sources {
            let k = seen.entry(&s.path).or_default();
            let i = *at
                .get(&s.path)
                .and_then(|v| v.get(*k))
                .expect("a job holds a path that was not given (or too often)");
            *k += 1;
            assert!(last < Some(i), "a job's files out of input order");
            last = Some(i);
            total += 1;
            if let Some(rank) = s.rank {
                let digits = rank.to_string();
                let text = s.path.as_os_str().as_bytes();
                assert!(
                    text.windows(digits.len()).any(|w| w == digits.as_bytes()),
                    "rank {rank} is not in the path {:?}",
                    s.path
                );
            }
        }
        firsts.push(at[&job.sources[0].path][0]);
        if let [one] = job.sources.as_slice() {
            assert_eq!(job.name, one.path.display().to_string());
        }
    }
    assert_eq!(total, paths.len(), "every path in exactly one job");
    assert!(firsts.windows(2).all(|w| w[0] < w[1]), "jobs out of order");

    // Order-independent: the reversed list makes the same jobs.
    let reversed: Vec<PathBuf> = paths.iter().rev().cloned().collect();
    // Compared by the paths each job holds (a path given twice is one).
    let by_path = |jobs: &[cudnnlog::fleet::Job]| -> BTreeSet<BTreeSet<Vec<u8>>> {
        jobs.iter()
            .map(|j| j.sources.iter().map(|s| s.path.as_os_str().as_bytes().to_vec()).collect())
            .collect()
    };
    assert_eq!(by_path(&jobs), by_path(&group(&reversed)), "grouping depends on order");
});
