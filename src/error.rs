//! Showing an error with its causes ([`Chain`]).
//!
//! An error's message says what is wrong and where (file, line, column); an error it wraps (an
//! I/O or JSON error, a library that does not load) is its
//! [`source`](std::error::Error::source), so a message is complete only with its causes: print
//! it through [`Chain`].

use std::fmt;

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
