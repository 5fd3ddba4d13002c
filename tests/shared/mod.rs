//! Locating `../shared` (the golden corpus and the ARC data), which the project never copies.
//!
//! On a user's fresh clone it is absent: tests that need it print a one-line note and return.
//! Under CI (`CI=true`) a missing `../shared` fails the test, so it is never skipped silently.
//! `ARCBATCH_SHARED` points elsewhere.

use std::path::PathBuf;

/// The path of `sub` inside the shared folder, or `None` (after a note) when it is missing
/// outside CI.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let root = std::env::var_os("ARCBATCH_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("shared"));
    let path = root.join(sub);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{} is missing, and under CI=true tests that need it may not be skipped",
            path.display()
        );
    }
    eprintln!("note: skipped, {} not found (set ARCBATCH_SHARED)", path.display());
    None
}
