//! The literal pass's engines (the NFA, the DFA, the two-tier pass with
//! Teddy's, the exact-byte or the hashed first tier, Hyperscan's with that feature)
//! find the same lines, so every engine gives the same report.

use cudnnlog::report::FindingsSink;
use cudnnlog::{Catalog, Report, ScannerBuilder};

/// The literal pass's engines find the same lines: every real and
/// synthetic fixture gives the same report with the NFA and the DFA.
#[test]
fn every_literal_engine_gives_the_same_report() {
    let catalog = Catalog::builtin().unwrap();
    let scanners = engines(&catalog);
    let mut logs = 0;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/");
    let mut paths = Vec::new();
    for dir in ["real", "gpu", "synthetic"] {
        for entry in std::fs::read_dir(format!("{root}{dir}")).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    for entry in std::fs::read_dir(format!("{root}wild/cases")).unwrap() {
        paths.push(entry.unwrap().path().join("log.txt"));
    }
    for path in paths {
        if path.extension().is_none_or(|e| e != "log" && e != "txt") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let reports = reports_by_engine(&scanners, &bytes);
        for (r, e) in reports.iter().zip(ENGINES).skip(1) {
            assert_eq!(r, &reports[0], "{} {e:?}", path.display());
        }
        logs += 1;
    }
    assert!(logs > 150, "{logs} logs");
}

/// Every literal engine, the NFA first.
const ENGINES: &[cudnnlog::LiteralEngine] = &[
    cudnnlog::LiteralEngine::Nfa,
    cudnnlog::LiteralEngine::Dfa,
    cudnnlog::LiteralEngine::TwoTier,
    cudnnlog::LiteralEngine::Exact,
    cudnnlog::LiteralEngine::Hashed,
    #[cfg(feature = "hyperscan")]
    cudnnlog::LiteralEngine::Hyperscan,
];

/// Scanners of every literal engine, in [`ENGINES`]' order.
fn engines(catalog: &Catalog) -> Vec<cudnnlog::Scanner> {
    ENGINES
        .iter()
        .map(|&e| {
            ScannerBuilder::new()
                .literal_engine(e)
                .build(catalog.clone())
        })
        .collect()
}

fn reports_by_engine(scanners: &[cudnnlog::Scanner], bytes: &[u8]) -> Vec<Report> {
    scanners
        .iter()
        .map(|s| {
            let mut sink = FindingsSink::new(s.catalog());
            s.scan_slice(bytes, &mut sink).unwrap();
            sink.into_report()
        })
        .collect()
}

#[test]
fn the_two_tier_pass_agrees_where_fingerprints_fire_on_most_lines() {
    // Several MiB where every line holds a fingerprint but none an anchor
    // (the guard hands such blocks to the plain DFA), glog headers after
    // `\r\n`, a lone `\r`, and failures between them.
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let anchors = scanner.line_anchors();
    let fillers: Vec<String> = cudnnlog::prefilter::parse(cudnnlog::prefilter::BUILTIN)
        .into_iter()
        .filter_map(|f| String::from_utf8(f).ok())
        .map(|f| format!("ok {f} 7 loss 0.25 lr 3e-4 tokens/s 18000"))
        .filter(|l| !l.contains('\n') && !anchors.iter().any(|a| l.contains(a)))
        .take(20)
        .collect();
    assert!(fillers.len() >= 10, "{fillers:?}");
    let mut log = String::new();
    let n = 200_000usize;
    for i in 0..n {
        log.push_str(&format!(
            "[rank{}]:{}\r\n",
            i % 4,
            fillers[i % fillers.len()]
        ));
        if i % 9_973 == 0 {
            log.push_str("E1130 15:17:03.923 ops.cc:42] Unknown: something broke\r\n");
            log.push_str("progress 12%\rtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.19 GiB is free.\n");
        }
    }
    assert!(log.len() > 4 << 20);
    let catalog = Catalog::builtin().unwrap();
    let reports = reports_by_engine(&engines(&catalog), log.as_bytes());
    for (r, e) in reports.iter().zip(ENGINES).skip(1) {
        assert_eq!(r, &reports[0], "{e:?}");
    }
    let oom = reports[0]
        .findings
        .iter()
        .find(|f| f.class == "cuda.oom")
        .unwrap();
    assert_eq!(oom.count, (0..n).filter(|i| i % 9_973 == 0).count() as u64);
}

#[test]
fn every_builtin_line_anchor_holds_a_listed_fingerprint() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let anchors = scanner.line_anchors();
    // Teddy's list covers every anchor; the exact-byte tier's 4-byte
    // windows every anchor of four bytes or more (a shorter one is its
    // own fingerprint).
    for (file, list, min) in [
        ("prefilter.txt", cudnnlog::prefilter::BUILTIN, 0),
        ("prefilter-exact.txt", cudnnlog::prefilter::EXACT_BUILTIN, 4),
    ] {
        let long: Vec<&str> = anchors.iter().copied().filter(|a| a.len() >= min).collect();
        let listed = cudnnlog::prefilter::parse(list);
        let missing: Vec<&str> = cudnnlog::prefilter::uncovered(&long, &listed)
            .into_iter()
            .map(|i| long[i])
            .collect();
        assert!(
            missing.is_empty(),
            "run `cargo xtask prefilter`: no fingerprint in patterns/{file} covers {missing:?}"
        );
        assert!(long.len() > 700, "{file}: {}", long.len());
    }
}

/// A real log is mostly a healthy run's progress: the first tier's
/// fingerprints must rarely fire there, or the anchor automaton reads
/// every update (`oss=`, listed for `loss=nan`, fired on three in four
/// anchor-free lines of these runs; without it a two-core scan of a 1 GiB
/// generated log went from 0.693 s to 0.613 s on the device machine).
#[test]
fn fingerprints_rarely_fire_on_healthy_runs_progress() {
    let scanner = ScannerBuilder::new().build(Catalog::builtin().unwrap());
    let anchors = scanner.line_anchors();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for name in [
        "b01_tqdm_progress",
        "b02_lightning_progress",
        "b03_hf_trainer",
    ] {
        let path = format!(
            "{}/../../fixtures/gpu/h200-{name}.log",
            env!("CARGO_MANIFEST_DIR")
        );
        // Lines end at a carriage return too, as in the literal pass.
        lines.extend(cudnnlog::prefilter::lines(&std::fs::read(path).unwrap()));
    }
    let free: Vec<&[u8]> = (lines.iter().map(|l| &l[..]))
        .filter(|l| {
            !anchors
                .iter()
                .any(|a| memchr::memmem::find(l, a.as_bytes()).is_some())
        })
        .collect();
    assert!(free.len() > 1_000, "{}", free.len());
    // Teddy's list is for CPUs without AVX2 and fires on "er " of
    // "Validation DataLoader"; the exact one is what Auto picks elsewhere.
    for (file, list, most) in [
        ("prefilter.txt", cudnnlog::prefilter::BUILTIN, 20),
        (
            "prefilter-exact.txt",
            cudnnlog::prefilter::EXACT_BUILTIN,
            100,
        ),
    ] {
        let listed = cudnnlog::prefilter::parse(list);
        let fired: Vec<&[u8]> = (free.iter().copied())
            .filter(|l| listed.iter().any(|f| memchr::memmem::find(l, f).is_some()))
            .collect();
        assert!(
            fired.len() * most < free.len(),
            "patterns/{file} fires on {} of {} anchor-free lines, such as {:?}",
            fired.len(),
            free.len(),
            String::from_utf8_lossy(fired[0])
        );
    }
}

#[test]
fn a_user_anchor_no_fingerprint_covers_is_still_found() {
    let dir = std::env::temp_dir().join(format!("cudnnlog-prefilter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("quux-frobnication.toml"), "id = \"quux-frobnication\"\nclass = \"python.exception\"\nseverity = \"error\"\nstability = \"stable\"\nsince = \"0.1.0\"\nsummary = \"s\"\nanchors = [\"Qz7frobnication halted\"]\nregex = 'Qz7frobnication halted at (?P<where>\\w+)'\nsignature = []\nremediations = []\n[doc]\nwhat = \"w\"\nwhy = \"y\"\n[[causes]]\nid = \"code_bug\"\nprior = 1.0\n[[examples]]\nlog = \"Qz7frobnication halted at stage2\"\n").unwrap();
    let catalog = cudnnlog::catalog::CatalogBuilder::new()
        .add_dir(&dir)
        .build();
    std::fs::remove_dir_all(&dir).unwrap();
    let catalog = catalog.unwrap();
    let listed = cudnnlog::prefilter::parse(cudnnlog::prefilter::BUILTIN);
    assert_eq!(
        cudnnlog::prefilter::uncovered(&["Qz7frobnication halted"], &listed),
        [0]
    );
    let mut log = "INFO step 1 loss 0.5\n".repeat(300_000);
    log.push_str("Qz7frobnication halted at stage2\n");
    let reports = reports_by_engine(&engines(&catalog), log.as_bytes());
    for (r, e) in reports.iter().zip(ENGINES).skip(1) {
        assert_eq!(r, &reports[0], "{e:?}");
    }
    let classes: Vec<&str> = reports[0]
        .findings
        .iter()
        .map(|f| f.pattern.as_str())
        .collect();
    assert_eq!(classes, ["quux-frobnication"]);
}
