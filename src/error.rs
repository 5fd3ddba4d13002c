//! The crate's error: every layer's error in one enum ([`Error`], each converting with `?`), and
//! [`Chain`], which shows an error with its causes.
//!
//! Each layer has its own error type: [`DslError`] (what a primitive raises),
//! [`ParseError`](crate::program::ParseError), [`TaskError`](crate::tasks::TaskError),
//! [`SolverError`](crate::run::SolverError), [`GroupError`](crate::batt::text::GroupError), the batt
//! layer's [`MergeError`](crate::batt::MergeError), [`TextError`](crate::batt::text::TextError)
//! and [`PlanError`](crate::batt::PlanError), [`GenError`](crate::gen::GenError),
//! [`GoldenError`](crate::golden::GoldenError), and the device layer's
//! [`DeviceError`](crate::device::DeviceError), [`SetupError`](crate::device::SetupError),
//! [`CudaError`](crate::device::cuda::CudaError) and
//! [`NvrtcError`](crate::device::nvrtc::NvrtcError). An error's message says what is wrong and
//! where (file, line, column); an error it wraps (an I/O or JSON error, a library that does
//! not load) is its [`source`](std::error::Error::source), so a message is complete only with
//! its causes: print it through [`Chain`].
//!
//! [`Chain`] knows no layer, and any layer may use it; [`Error`] names every layer, so only what
//! stands above them all uses it (the Python module, callers of the library).

use std::fmt;

use crate::batt::text::{GroupError, TextError};
use crate::batt::{MergeError, PlanError};
use crate::device::cuda::CudaError;
use crate::device::nvrtc::NvrtcError;
use crate::device::{DeviceError, SetupError};
use crate::dsl::DslError;
use crate::gen::GenError;
use crate::golden::GoldenError;
use crate::program::ParseError;
use crate::run::SolverError;
use crate::tasks::TaskError;

/// Any error of the crate, by the layer it comes from. Its message and causes are the layer
/// error's own.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Dsl(#[from] DslError),
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error(transparent)]
    Solvers(#[from] SolverError),
    #[error(transparent)]
    Group(#[from] GroupError),
    #[error(transparent)]
    Merge(#[from] MergeError),
    #[error(transparent)]
    Text(#[from] TextError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Gen(#[from] GenError),
    #[error(transparent)]
    Golden(#[from] GoldenError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error(transparent)]
    Nvrtc(#[from] NvrtcError),
}

/// An error followed by its causes (its [`source`](std::error::Error::source) chain). `{}`
/// writes them on one line, joined by `: ` (`t.json: cannot read: No such file or directory`);
/// `{:#}` puts each cause on a line of its own, as `  caused by: ...`.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            if f.alternate() {
                write!(f, "\n  caused by: {c}")?;
            } else {
                write!(f, ": {c}")?;
            }
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_chain_shows_every_cause_on_one_line_or_one_per_line() {
        let e: Error = crate::tasks::load(Path::new("no/such/tasks.json")).unwrap_err().into();
        assert!(matches!(e, Error::Task(TaskError::Read { .. })), "{e:?}");
        assert_eq!(e.to_string(), "no/such/tasks.json: cannot read");
        let one_line = Chain(&e).to_string();
        assert!(
            one_line.starts_with("no/such/tasks.json: cannot read: No such file"),
            "{one_line}"
        );
        let lines = format!("{:#}", Chain(&e));
        assert!(
            lines.starts_with("no/such/tasks.json: cannot read\n  caused by: No such file"),
            "{lines}"
        );
        assert_eq!(lines.lines().count(), 2, "{lines}");
    }
}
