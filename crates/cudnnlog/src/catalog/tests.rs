//! The catalog's loader and validation, on small catalogs.

use super::*;

const CLASSES: &str =
    "[[class]]\nid = \"cuda.oom\"\nfamily = \"cuda\"\ntitle = \"t\"\nsummary = \"s\"\n";
const CAUSES: &str =
    "[[cause]]\nid = \"memory_pressure\"\ntitle = \"t\"\nwhat = \"w\"\nremediations = [\"r\"]\n";

fn pattern(extra: &str) -> String {
    format!(
        "id = \"x-oom\"\nclass = \"cuda.oom\"\nseverity = \"error\"\nstatus = \"stable\"\nsince = \"0.1.0\"\n\
         summary = \"s\"\nanchors = [\"out of memory\"]\nregex = 'out of memory'\n{extra}\n\
         [doc]\nwhat = \"w\"\nwhy = \"y\"\n[[examples]]\nlog = \"CUDA out of memory\"\n"
    )
}

fn load(p: String) -> Result<Catalog, Error> {
    Catalog::from_files(vec![
        ("classes.toml".into(), CLASSES.into()),
        ("causes.toml".into(), CAUSES.into()),
        ("dir/x-oom.toml".into(), p),
    ])
}

fn field_of(r: Result<Catalog, Error>) -> (String, String) {
    match r {
        Err(Error::Catalog { file, field, .. }) => (file, field),
        other => panic!("expected a catalog error, got {other:?}"),
    }
}

#[test]
fn builtin_catalog_loads() {
    let c = Catalog::builtin().unwrap();
    assert!(!c.patterns().is_empty());
}

/// The built-in catalog loads from build.rs's JSON with its regexes left
/// for first use; here the TOML files themselves pass full validation and
/// compile every regex, and give the same catalog.
#[test]
fn builtin_files_validate_and_compile_and_match_their_json() {
    let toml: Vec<(String, String)> = builtin::FILES
        .iter()
        .map(|(p, c)| (format!("patterns/{p}"), c.to_string()))
        .collect();
    let eager = Catalog::from_files(toml).unwrap();
    let lazy = Catalog::builtin().unwrap();
    assert!(eager.patterns().iter().all(|p| p.regex.is_compiled()));
    assert!(lazy.patterns().iter().all(|p| !p.regex.is_compiled()));
    assert!(eager.evidence_rules().iter().all(|e| e.regex.is_compiled()));
    assert!(lazy.evidence_rules().iter().all(|e| !e.regex.is_compiled()));
    assert!(lazy.probes().iter().all(|p| !p.regex.is_compiled()));
    fn shape(c: &Catalog) -> impl PartialEq + '_ {
        let patterns: Vec<String> = c
            .patterns()
            .iter()
            .map(|p| {
                let facts: Vec<&str> = p.facts.iter().map(|f| f.as_str()).collect();
                format!(
                    "{} {} {:?} {:?} {} {:?} {:?} {:?} {}",
                    p.id,
                    p.class,
                    p.severity,
                    p.anchors,
                    p.regex.as_str(),
                    facts,
                    p.causes
                        .iter()
                        .map(|c| (&c.id, c.prior))
                        .collect::<Vec<_>>(),
                    p.remediations,
                    p.examples.len()
                )
            })
            .collect();
        let probes: Vec<String> = c
            .probes()
            .iter()
            .map(|p| format!("{} {} {:?} {:?}", p.id, p.regex.as_str(), p.set, p.build))
            .collect();
        let classes: Vec<&str> = c.classes().iter().map(|k| k.id.as_str()).collect();
        let causes: Vec<&str> = c.causes().iter().map(|k| k.id.as_str()).collect();
        let evidence: Vec<String> = c
            .evidence_rules()
            .iter()
            .map(|e| {
                format!(
                    "{} {:?} {} {} {}",
                    e.id,
                    e.kind,
                    e.regex.as_str(),
                    e.lines,
                    e.anchor
                )
            })
            .collect();
        (
            patterns,
            probes,
            evidence,
            classes,
            causes,
            c.releases().to_vec(),
            c.knowledge().len(),
        )
    }
    assert!(shape(&eager) == shape(&lazy));
}

#[test]
fn valid_file_loads() {
    let c = load(pattern("")).unwrap();
    assert_eq!(c.patterns()[0].id, "x-oom");
}

#[test]
fn errors_name_file_and_field() {
    assert_eq!(
        field_of(load(
            pattern("").replace("regex = 'out of memory'", "regex = '(unclosed'")
        )),
        ("dir/x-oom.toml".into(), "regex".into())
    );
    assert_eq!(
        field_of(load(pattern("").replace("cuda.oom", "cuda.nope"))).1,
        "class"
    );
    assert_eq!(
        field_of(load(pattern("").replace("\"out of memory\"", "\"oom\""))).1,
        "anchors"
    );
    assert_eq!(
        field_of(load(
            pattern("").replace("severity = \"error\"", "severity = \"fatal\"")
        ))
        .1,
        "severity"
    );
    assert_eq!(
        field_of(load(pattern("").replace("since = \"0.1.0\"\n", ""))).1,
        "since"
    );
    assert_eq!(field_of(load(pattern("bogus = 1"))).1, "bogus");
    assert_eq!(
        field_of(load(pattern("signature = [\"nope\"]"))).1,
        "signature"
    );
    assert_eq!(
        field_of(load(pattern("[[causes]]\nid = \"nope\"\nprior = 0.5"))).1,
        "causes.id"
    );
    assert_eq!(
        field_of(load(pattern(
            "[[causes]]\nid = \"memory_pressure\"\nprior = 2.0"
        )))
        .1,
        "causes.prior"
    );
    assert_eq!(
        field_of(load(
            pattern("").replace("id = \"x-oom\"", "id = \"other\"")
        ))
        .1,
        "id"
    );
    assert_eq!(field_of(load("not toml [".into())).0, "dir/x-oom.toml");
}

#[test]
fn a_decoded_code_is_the_core_regexs() {
    let statuses = "[[enum]]\nname = \"oomStatus_t\"\nlibrary = \"l\"\ngeneric = \"cuda.oom\"\n";
    let with = |p: String| {
        Catalog::from_files(vec![
            ("classes.toml".into(), CLASSES.into()),
            ("causes.toml".into(), CAUSES.into()),
            ("statuses.toml".into(), statuses.into()),
            ("dir/x-oom.toml".into(), p),
        ])
    };
    let core = pattern("decodes = \"oomStatus_t\"")
        .replace("'out of memory'", "'out of memory(?: (?P<code>\\d+))?'");
    assert!(with(core).is_ok());
    let fact = pattern("decodes = \"oomStatus_t\"\nfacts = ['memory (?P<code>\\d+)']");
    assert_eq!(field_of(with(fact)).1, "decodes");
}

#[test]
fn regex_size_is_limited() {
    let huge = pattern("").replace(
        "regex = 'out of memory'",
        "regex = '(?:out of memory\\w{1000}){1000}'",
    );
    let (_, field) = field_of(load(huge));
    assert_eq!(field, "regex");
}
