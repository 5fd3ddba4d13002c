//! The golden corpus: every case of every primitive must pass (`ARCBATCH_GOLDEN` overrides
//! the corpus folder).

mod shared;

use std::path::PathBuf;

use arcbatch::golden::conform_dir;

#[test]
fn every_golden_case_passes() {
    let dir = match std::env::var_os("ARCBATCH_GOLDEN") {
        Some(d) => PathBuf::from(d),
        None => match shared::shared("golden") {
            Some(d) => d,
            None => return,
        },
    };
    let reports = conform_dir(&dir).expect("the corpus is readable");
    let mut failures = Vec::new();
    let (mut passed, mut skipped) = (0, 0);
    for r in &reports {
        passed += r.passed;
        skipped += r.skipped;
        for (case, why) in r.failures.iter().take(3) {
            failures.push(format!("{}: {case}\n    {why}", r.prim));
        }
    }
    let failed: usize = reports.iter().map(|r| r.failures.len()).sum();
    assert!(
        failed == 0,
        "{failed} golden cases failed ({passed} passed); first ones:\n{}",
        failures.join("\n")
    );
    assert_eq!(reports.len(), 160, "expected one case file per primitive");
    assert!(
        skipped <= 33,
        "{skipped} cases skipped; only the 33 unenumerable order-sensitive ones may be"
    );
}
