//! A progress bar on stderr for long runs; invisible when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress(ProgressBar);

impl Progress {
    pub fn new(total: u64, unit: &str) -> Progress {
        let bar = ProgressBar::new(total);
        let template = format!("{{bar:40}} {{pos}}/{{len}} {unit} ({{elapsed}}, eta {{eta}})");
        bar.set_style(ProgressStyle::with_template(&template).expect("a valid template"));
        Progress(bar)
    }

    pub fn tick(&self) {
        self.0.inc(1);
    }

    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}
