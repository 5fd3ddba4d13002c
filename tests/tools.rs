//! The profile tool: static counts against an independent count of the source text, and the
//! dynamic profile covering every primitive a run calls.

mod shared;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use arcbatch::batch::CpuBackend;
use arcbatch::batt::{Config, Plan};
use arcbatch::dsl::PrimId;
use arcbatch::program::parse_file;
use arcbatch::tasks;
use arcbatch::tools::profile::static_profile;

fn library() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py")).expect("dsl/solvers.py")
}

type Counts = BTreeMap<String, usize>;

/// Counts from the text alone, without the parser: in each `NAME = CALLEE(ARGS)` line, the
/// callee if it is a primitive, and every argument word that is a primitive.
fn count_text(source: &str) -> (Counts, Counts) {
    let (mut calls, mut refs) = (Counts::new(), Counts::new());
    for line in source.lines() {
        let code = line.split('#').next().unwrap_or("");
        let Some((_, rhs)) = code.split_once(" = ") else {
            continue;
        };
        let Some((callee, args)) = rhs.split_once('(') else {
            continue;
        };
        if PrimId::of(callee.trim()).is_some() {
            *calls.entry(callee.trim().to_string()).or_default() += 1;
        }
        for word in args.split(|c: char| c == ',' || c == ')' || c.is_whitespace()) {
            if PrimId::of(word).is_some() {
                *refs.entry(word.to_string()).or_default() += 1;
            }
        }
    }
    (calls, refs)
}

fn owned(map: &BTreeMap<&'static str, usize>) -> Counts {
    map.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn static_counts_agree_with_a_count_of_the_text() {
    let source = library();
    let profile = static_profile(&parse_file("dsl/solvers.py", &source).unwrap());
    let (calls, refs) = count_text(&source);
    assert_eq!(owned(&profile.counts), calls);
    assert_eq!(owned(&profile.refs), refs);
    assert!(calls.len() > 50, "the library calls many primitives");
}

#[test]
fn the_cli_writes_the_static_profile_as_json() {
    let out = std::env::temp_dir().join(format!("arcbatch-profile-{}.json", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_arcbatch"))
        .arg("profile")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("dsl/solvers.py"))
        .arg("--json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(String::from_utf8_lossy(&status.stdout).contains("most called: fill"));
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_file(&out).unwrap();
    let (calls, _) = count_text(&library());
    assert_eq!(json["counts"]["objects"], calls["objects"]);
    assert!(json["refs"].is_object());
}

#[test]
fn the_dynamic_profile_covers_every_primitive_the_run_calls() {
    let Some(training) = shared::shared("arc/training") else {
        return;
    };
    let programs = parse_file("dsl/solvers.py", &library()).unwrap();
    let set = tasks::load(&training).unwrap();
    let plan = Plan::new(&programs, &[], &set.tasks, Config::default()).unwrap();
    let report = plan.run(&CpuBackend::new(None), &|| {});
    let profiled: BTreeSet<&str> = report.profile.iter().map(|r| r.name.as_str()).collect();
    let mut called: BTreeSet<&str> = static_profile(&programs).counts.keys().copied().collect();
    if programs
        .iter()
        .flat_map(|p| &p.steps)
        .any(|s| matches!(s.callee, arcbatch::program::Callee::Value(_)))
    {
        called.insert("(call)");
    }
    assert_eq!(profiled, called);
    for row in &report.profile {
        assert!(row.calls > 0 && row.lanes >= row.calls, "{row:?}");
    }
    assert!(report.profile.iter().any(|r| r.name == "objects" && r.batched));
}
