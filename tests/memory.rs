//! Memory budgets through the command line: a program whose value is too large for its budget
//! fails with a memory error while the others run, with or without a limit on the process's
//! address space (`ulimit -v`), which without budgets made Rust abort the whole run.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

const SOLVERS: &str = "\
def solve_mirror(I):
    O = vmirror(I)
    return O

def solve_canvas(I):
    x1 = astuple(4000, 4000)
    O = canvas(ZERO, x1)
    return O

def solve_pairs(I):
    x1 = hconcat(I, I)
    x2 = asindices(x1)
    O = product(x2, x2)
    return O

def solve_lines(I):
    x1 = hconcat(I, I)
    x2 = vconcat(x1, x1)
    x3 = asindices(x2)
    x4 = prapply(connect, x3, x3)
    O = mfilter(x4, hline)
    return O
";

/// Two train pairs whose outputs are the inputs mirrored, 20x20 so that the lines and pairs
/// above are large (the lines over 40x40: `prapply(connect, ..)` builds each distinct line
/// once, and those over 20x20 fit the budget).
fn task() -> Json {
    let grid = |seed: i64| -> Json {
        (0..20)
            .map(|i| (0..20).map(|j| (i * 7 + j * seed) % 10).collect::<Vec<i64>>())
            .collect::<Vec<_>>()
            .into()
    };
    let mirrored = |g: &Json| -> Json {
        g.as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().rev().cloned().collect::<Vec<_>>().into())
            .collect::<Vec<Json>>()
            .into()
    };
    let pair = |seed| {
        let input = grid(seed);
        serde_json::json!({"input": input, "output": mirrored(&input)})
    };
    serde_json::json!({"train": [pair(3), pair(5)], "test": [pair(2)]})
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arcbatch-memory-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `arcbatch batt --cross` of [`SOLVERS`] over the task with a 64 MB budget (8 MB per lane),
/// under `ulimit -v` of `address_space_kb` where given: its exit status and its report.
fn batt(dir: &Path, address_space_kb: Option<u64>) -> (bool, String, Json) {
    let report = dir.join(format!("report-{}.json", address_space_kb.unwrap_or(0)));
    let limit = address_space_kb.map_or(String::new(), |kb| format!("ulimit -v {kb} && "));
    let script = format!(
        "{limit}exec \"$0\" batt --cross --solvers solvers.py --tasks task.json --memory 64 --threads 2 --json {}",
        report.display()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_arcbatch"))
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = std::fs::read_to_string(&report)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Json::Null);
    (out.status.success(), stderr, json)
}

/// Each solver's (correct, error) in a report.
fn outcomes(report: &Json) -> Vec<(String, u64, Option<String>)> {
    let mut rows: Vec<_> = report["matches"]
        .as_array()
        .expect("a report with matches")
        .iter()
        .map(|m| {
            (
                m["solver"].as_str().unwrap().to_string(),
                m["correct"].as_u64().unwrap(),
                m["error"].as_str().map(str::to_string),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn a_value_too_large_for_its_budget_fails_its_program_only_even_under_ulimit() {
    let dir = temp_dir("batt");
    std::fs::write(dir.join("solvers.py"), SOLVERS).unwrap();
    std::fs::write(dir.join("task.json"), task().to_string()).unwrap();
    let (ok, stderr, free) = batt(&dir, None);
    assert!(ok, "{stderr}");
    let rows = outcomes(&free);
    let by_name = |name: &str| {
        rows.iter()
            .find(|r| r.0 == name)
            .unwrap_or_else(|| panic!("{name}: {rows:?}"))
    };
    assert_eq!(by_name("solve_mirror").1, 3, "{rows:?}");
    for hog in ["solve_canvas", "solve_pairs", "solve_lines"] {
        let error = by_name(hog).2.clone().unwrap_or_default();
        assert!(error.contains("memory"), "{hog}: {error}");
    }
    // Under a 600 MB address space (which the unbudgeted run's allocator alone would take):
    // the same results, exit status 0.
    let (ok, stderr, limited) = batt(&dir, Some(600_000));
    assert!(ok, "under ulimit -v 600000: {stderr}");
    assert_eq!(outcomes(&limited), rows);
    std::fs::remove_dir_all(&dir).unwrap();
}
