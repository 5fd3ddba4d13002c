//! `arcbatch.JitFunction`: a Python solver compiled once by the core's parser and run by the
//! core's interpreter, for `arcbatch.jit`.
//!
//! A call converts each argument the program reads once, runs every step in Rust, and converts
//! the result once; the reference's exceptions come back as the `arcbatch.Dsl*Error` classes, as
//! from `arcbatch.dsl`. The GIL stays held, as in `arcbatch.dsl`'s calls: releasing and taking
//! it back costs about as much as converting a small grid, which is most of a one-step
//! solver's call. Which functions may be compiled (their
//! statements, and whether each name means the DSL's own primitive or constant where the
//! function was defined) is decided in Python (`python/arcbatch/_jit.py`), which knows the
//! function's namespace; this file only compiles source text and runs the result.

use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use arcbatch::dsl::Value;
use arcbatch::program::{parse_program, run_guarded_keeping, Callee, Invariants, Operand, Program, RunError};

use crate::convert::{to_py, to_value};
use crate::exceptions::{core_error, dsl_error, error, internal, Kind};
use crate::tuples::TupleProgram;

/// A compiled solver. Holds its source (one `def`, its first line at `first_line` of `file`)
/// so that it pickles as text and compiles again where it is unpickled.
///
/// A lambda of the solver that has no DSL form is called back: `arcbatch.jit` lifts it into a
/// Python function of its own, which the source takes as a last, hidden parameter, and which
/// every call passes (`callbacks`).
#[pyclass(frozen, dict, weakref, name = "JitFunction", module = "arcbatch")]
pub struct JitFunction {
    program: Program,
    /// Whether the program reads each parameter: those it never reads are not converted, so a
    /// value the DSL cannot take fails a call only where the Python function would fail too.
    reads: Vec<bool>,
    /// The program on the Python tuples themselves, where every step has a tuple form.
    tuples: Option<TupleProgram>,
    source: String,
    first_line: u32,
    timeout_ms: Option<u64>,
    /// The values of the last, hidden parameters (Python callables, which convert back to
    /// themselves).
    callbacks: Vec<Value>,
    /// The results of the steps that read no parameter, kept from one call to the next (a call
    /// made while another runs, as a callback calling the function again, keeps none).
    invariants: Mutex<Invariants>,
}

#[pymethods]
impl JitFunction {
    /// Compiles `source`, the text of one `def` whose first line is line `first_line` of `file`
    /// (so that messages name the file's own lines). `timeout_ms` bounds each call. Raises
    /// `arcbatch.InputError` with the parser's message when the source does not compile.
    /// `callbacks` are the values of the source's last parameters, which calls do not pass.
    #[new]
    #[pyo3(signature = (source, file, first_line=1, timeout_ms=None, callbacks=Vec::new()))]
    fn new(
        py: Python<'_>,
        source: String,
        file: &str,
        first_line: u32,
        timeout_ms: Option<u64>,
        callbacks: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let shift = first_line.saturating_sub(1);
        let mut program = parse_program(file, &source).map_err(|mut e| {
            e.line += shift;
            core_error(py, e)
        })?;
        if callbacks.len() > program.params.len() {
            return Err(error(
                py,
                Kind::Input,
                format!(
                    "{} callbacks for a function of {} parameters",
                    callbacks.len(),
                    program.params.len()
                ),
            ));
        }
        program.line += shift;
        for step in &mut program.steps {
            step.line += shift;
        }
        let mut reads = vec![false; program.params.len()];
        let operands = program.steps.iter().flat_map(|s| {
            let callee = match &s.callee {
                Callee::Value(op) => Some(op),
                Callee::Prim(_) => None,
            };
            s.args.iter().chain(callee)
        });
        for op in operands.chain([&program.output]) {
            if let Operand::Param(k) = op {
                reads[*k as usize] = true;
            }
        }
        let tuples = if callbacks.is_empty() {
            TupleProgram::of(py, &program)?
        } else {
            None
        };
        Ok(JitFunction {
            tuples,
            invariants: Mutex::new(Invariants::new(&program)),
            program,
            reads,
            source,
            first_line,
            timeout_ms,
            callbacks: callbacks.iter().map(to_value).collect::<PyResult<_>>()?,
        })
    }

    /// Runs the program on the arguments, bound to its parameters as Python binds them.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let given = self.arrange(args, kwargs)?;
        if let Some(out) = self.tuples.as_ref().and_then(|tuples| tuples.run(&given)) {
            return Ok(out);
        }
        let mut params = self.bind(&given)?;
        params.extend(self.callbacks.iter().cloned());
        // Attached to the signal watch, as `arcbatch.dsl` calls are: a handler that raises
        // (SIGALRM, Ctrl-C) stops the call within milliseconds.
        let limit = self.timeout_ms.map(Duration::from_millis);
        let run = || {
            let mut invariants = self.invariants.try_lock().ok();
            Ok(run_guarded_keeping(
                &self.program,
                &params,
                limit,
                invariants.as_deref_mut(),
            ))
        };
        match crate::interrupt::attached(py, run)? {
            Ok(Ok(v)) => to_py(py, &v),
            Ok(Err(e)) => Err(self.run_error(py, e)),
            Err(e) => Err(dsl_error(py, &self.program.name, &e)),
        }
    }

    /// The source the function was compiled from (one `def`).
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// The file the source came from.
    #[getter]
    fn file(&self) -> &str {
        &self.program.file
    }

    /// The line of `file` the source starts on.
    #[getter]
    fn first_line(&self) -> u32 {
        self.first_line
    }

    /// The Python functions the source's hidden last parameters take (its lambdas with no DSL
    /// form).
    #[getter]
    fn callbacks<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.callbacks.iter().map(|v| to_py(py, v)).collect()
    }

    /// The time limit of each call, in milliseconds (`None`: no limit).
    #[getter]
    fn timeout_ms(&self) -> Option<u64> {
        self.timeout_ms
    }

    /// The compiled program, one step a line, as the reference's syntax writes it.
    #[getter]
    fn program(&self) -> String {
        self.program.to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "<arcbatch.JitFunction {}({})>",
            self.program.name,
            self.params().join(", ")
        )
    }
}

impl JitFunction {
    /// The parameters a call passes (not the hidden ones the callbacks fill).
    fn params(&self) -> &[String] {
        &self.program.params[..self.program.params.len() - self.callbacks.len()]
    }

    /// The parameters' values from the arguments in their order ([`JitFunction::arrange`]).
    /// Parameters the program never reads are left `None`.
    fn bind(&self, given: &[Bound<'_, PyAny>]) -> PyResult<Vec<Value>> {
        given
            .iter()
            .zip(&self.reads)
            .map(|(obj, &read)| if read { to_value(obj) } else { Ok(Value::None) })
            .collect()
    }

    /// The arguments of a call in the order of the parameters, bound as Python binds them, with
    /// Python's own errors for a call that does not fit the signature.
    fn arrange<'py>(
        &self,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let names = self.params();
        if kwargs.is_none_or(|k| k.is_empty()) && args.len() == names.len() {
            return Ok(args.iter().collect());
        }
        let signature_error = |what: String| PyTypeError::new_err(format!("{}() {what}", self.program.name));
        if args.len() > names.len() {
            let takes = match names.len() {
                1 => "1 positional argument".to_string(),
                n => format!("{n} positional arguments"),
            };
            return Err(signature_error(format!("takes {takes} but {} were given", args.len())));
        }
        let mut given: Vec<Option<Bound<'py, PyAny>>> = args.iter().map(Some).collect();
        given.resize(names.len(), None);
        for (key, value) in kwargs.into_iter().flatten() {
            let key: String = key.extract()?;
            let Some(k) = names.iter().position(|n| *n == key) else {
                return Err(signature_error(format!("got an unexpected keyword argument '{key}'")));
            };
            if given[k].replace(value).is_some() {
                return Err(signature_error(format!("got multiple values for argument '{key}'")));
            }
        }
        let missing: Vec<String> = names
            .iter()
            .zip(&given)
            .filter(|(_, g)| g.is_none())
            .map(|(n, _)| format!("'{n}'"))
            .collect();
        if !missing.is_empty() {
            return Err(signature_error(format!(
                "missing {} required argument(s): {}",
                missing.len(),
                missing.join(", ")
            )));
        }
        Ok(given.into_iter().flatten().collect())
    }

    /// The exception for a run that gave no value; a primitive's error names the call, the
    /// file's line and the solver.
    fn run_error(&self, py: Python<'_>, e: RunError) -> PyErr {
        let p = &self.program;
        match e {
            RunError::Raised(e) => {
                let callee = p
                    .steps
                    .iter()
                    .find(|s| s.line == e.line && s.target == e.target)
                    .map_or_else(
                        || e.target.clone(),
                        |s| match &s.callee {
                            Callee::Prim(id) => id.spec().name.to_string(),
                            Callee::Value(op) => p.operand_name(op),
                        },
                    );
                let context = format!("{callee} ({}:{}, in {})", p.file, e.line, p.name);
                dsl_error(py, &context, &e.error)
            }
            RunError::Timeout { line } => error(
                py,
                Kind::DslTimeout,
                format!(
                    "{}: time limit of {} ms exceeded ({}:{line})",
                    p.name,
                    self.timeout_ms.unwrap_or_default(),
                    p.file
                ),
            ),
            RunError::Panic(message) => internal(py, &message),
        }
    }
}
