//! `arcbatch conform DIR`: one line per primitive, the failures with case, expected and actual
//! value, and a last line `conformance: P passed, F failed, S skipped`.

use std::path::Path;
use std::process::ExitCode;

use arcbatch::golden::conform_dir;

use super::Failure;

pub fn run(dir: &Path, only: &[String], max_failures: usize) -> Result<ExitCode, Failure> {
    let mut reports = conform_dir(dir)?;
    if !only.is_empty() {
        reports.retain(|r| only.contains(&r.prim));
    }
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for r in &reports {
        let total = r.passed + r.skipped + r.failures.len();
        if r.failures.is_empty() {
            let note = if r.skipped > 0 {
                format!(" ({} skipped: order-sensitive, not enumerable)", r.skipped)
            } else {
                String::new()
            };
            println!("{}: passed {}/{total}{note}", r.prim, r.passed);
        } else {
            println!("{}: FAILED {} of {total}", r.prim, r.failures.len());
            for (case, why) in r.failures.iter().take(max_failures) {
                println!("    {case}\n      {why}");
            }
            if r.failures.len() > max_failures {
                println!("    ... and {} more", r.failures.len() - max_failures);
            }
        }
        passed += r.passed;
        failed += r.failures.len();
        skipped += r.skipped;
    }
    println!("conformance: {passed} passed, {failed} failed, {skipped} skipped");
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
