//! What the binary carries so that it runs with no file outside it: the team's solver library
//! (`dsl/solvers.py`) and the demo tasks with their solvers (`dsl/demo/`), embedded by
//! `build.rs`.

use std::path::Path;

use crate::tasks::{self, TaskSet};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The embedded demo tasks.
pub fn demo_tasks() -> TaskSet {
    let mut set = TaskSet::default();
    for (name, text) in DEMO_TASKS {
        let path = Path::new("dsl/demo").join(name);
        match tasks::from_text(&path, text) {
            Ok(mut s) => {
                set.tasks.append(&mut s.tasks);
                set.errors.append(&mut s.errors);
            }
            Err(e) => set.errors.push(e),
        }
    }
    set
}

/// The embedded library and the demo solvers, as one solver file.
pub fn all_solvers() -> String {
    format!("{LIBRARY}\n{DEMO_SOLVERS}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_tasks_load_cleanly() {
        let set = demo_tasks();
        assert!(set.errors.is_empty(), "{:?}", set.errors);
        assert!(set.tasks.len() >= 6);
    }
}
