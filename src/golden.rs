//! The golden conformance corpus: decoding its JSON encoding into [`Value`]s and judging the
//! port's result against the recorded one, by the rules of the corpus README.
//!
//! A case is *passed* when the result matches (`out`, one of `any_of`, the same multiset, or an
//! error where the reference raised); *failed* otherwise; *skipped* when the case is
//! order-sensitive without an enumerable answer and the port's result has the right kind.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::dsl::func::{caught, Panicked};
use crate::dsl::value::Grid;
use crate::dsl::{call, Color, DslError, DslResult, PrimId, Value};

/// Why the corpus cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GoldenError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: malformed JSON", path.display())]
    Json {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}:{line}: no \"prim\"", path.display())]
    NoPrim { path: PathBuf, line: usize },
    #[error("{}: no .jsonl case files", .0.display())]
    NoCaseFiles(PathBuf),
}

/// Why a JSON value is not the corpus encoding of a DSL value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("integer out of range: {0}")]
    IntRange(String),
    #[error("unknown primitive {0:?}")]
    UnknownPrimitive(String),
    #[error("strings are not DSL values: {0:?}")]
    String(String),
    /// Any other JSON (its text).
    #[error("cannot decode {0}")]
    Other(String),
}

/// Why a case cannot be judged, or why its result is wrong in a way a comparison cannot say.
#[derive(Debug, thiserror::Error)]
enum CaseError {
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("missing argument list")]
    NoArguments,
    #[error("{given} arguments for arity {arity}")]
    Arity { given: usize, arity: usize },
    #[error("PANIC: {0}")]
    Panic(String),
    /// The key function of `order` raised.
    #[error(transparent)]
    Key(#[from] DslError),
    #[error("result {0} is not sorted by the key")]
    NotSorted(Value),
}

/// Decodes the corpus encoding of a value.
pub fn decode(j: &Json) -> Result<Value, DecodeError> {
    Ok(match j {
        Json::Null => Value::None,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Int(n.as_i64().ok_or_else(|| DecodeError::IntRange(n.to_string()))?),
        Json::Array(items) => {
            if let Some(g) = decode_grid(items) {
                return Ok(Value::grid(g));
            }
            Value::tuple(items.iter().map(decode).collect::<Result<_, _>>()?)
        }
        Json::Object(map) => {
            if let Some(Json::Array(items)) = map.get("fs") {
                Value::set(items.iter().map(decode).collect::<Result<_, _>>()?)
            } else if let Some(Json::String(name)) = map.get("fn") {
                Value::prim(PrimId::of(name).ok_or_else(|| DecodeError::UnknownPrimitive(name.clone()))?)
            } else {
                return Err(DecodeError::Other(j.to_string()));
            }
        }
        Json::String(s) => return Err(DecodeError::String(s.clone())),
    })
}

/// A non-empty array of equally long arrays of colours, as a grid (structurally the same value
/// as the tuple of row tuples, in the compact representation).
fn decode_grid(rows: &[Json]) -> Option<Grid> {
    if rows.is_empty() {
        return None;
    }
    let w = rows[0].as_array()?.len();
    let mut cells = Vec::with_capacity(rows.len() * w);
    for r in rows {
        let r = r.as_array()?;
        if r.len() != w {
            return None;
        }
        for c in r {
            if c.is_boolean() {
                return None;
            }
            cells.push(Color::try_from(c.as_i64()?).ok()?);
        }
    }
    Some(Grid::new(rows.len(), w, cells))
}

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    Skipped,
    Failed(String),
}

/// One line of a corpus file.
pub struct Case {
    pub prim: String,
    pub line: usize,
    pub text: String,
    json: Json,
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = self.text.clone();
        if text.len() > 600 {
            text.truncate(600);
            text.push_str("...");
        }
        write!(f, "line {}: {}", self.line, text)
    }
}

/// Runs the primitive (and, for function builders, the function it returns) on a case.
fn run_case(id: PrimId, json: &Json) -> Result<DslResult<Value>, CaseError> {
    let args = decode_list(json.get("args"))?;
    if args.len() != id.spec().arity() {
        return Err(CaseError::Arity {
            given: args.len(),
            arity: id.spec().arity(),
        });
    }
    let apply = match json.get("apply") {
        Some(a) => Some(decode_list(Some(a))?),
        None => None,
    };
    caught(|| {
        let f = (id.spec().imp)(&args)?;
        match &apply {
            Some(apply_args) => call(&f, apply_args),
            None => Ok(f),
        }
    })
    .map_err(|Panicked(message)| CaseError::Panic(message))
}

fn decode_list(j: Option<&Json>) -> Result<Vec<Value>, CaseError> {
    match j {
        Some(Json::Array(items)) => Ok(items.iter().map(decode).collect::<Result<_, _>>()?),
        _ => Err(CaseError::NoArguments),
    }
}

/// Equality as the corpus README asks: structural, but a bool never matches an int (the port's
/// `==` follows Python, where `True == 1`).
pub fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
        _ if a != b => false,
        _ => match (a, b) {
            // Generic containers may hold bools: compare member by member.
            (Value::Tuple(_) | Value::Set(_), _) | (_, Value::Tuple(_) | Value::Set(_)) => {
                let (x, y) = (a.members().unwrap_or_default(), b.members().unwrap_or_default());
                x.iter().zip(&y).all(|(p, q)| strict_eq(p, q))
            }
            // The compact variants hold no bools: equal is enough.
            _ => true,
        },
    }
}

/// Sorts the members of a tuple, for multiset comparison.
fn sorted_members(v: &Value) -> Option<Vec<Value>> {
    let mut m = v.members()?;
    m.sort();
    Some(m)
}

impl Case {
    /// Judges the port's result on this case.
    pub fn judge(&self) -> Verdict {
        let Some(id) = PrimId::of(&self.prim) else {
            return Verdict::Failed(format!("primitive {} is not registered", self.prim));
        };
        let result = match run_case(id, &self.json) {
            Ok(r) => r,
            Err(e) => return Verdict::Failed(e.to_string()),
        };
        if let Some(raised) = self.json.get("raises") {
            // The exception class too: the reference's name for it.
            return match result {
                Err(e) if raised.as_str() == Some(e.python_name()) => Verdict::Passed,
                Err(e) => Verdict::Failed(format!("expected {raised}, raised {e}")),
                Ok(v) => Verdict::Failed(format!("expected {raised}, got {v}")),
            };
        }
        let actual = match result {
            Ok(v) => v,
            Err(e) => return Verdict::Failed(format!("expected a value, got error {e}")),
        };
        let expected = match self.json.get("out").map(decode) {
            Some(Ok(v)) => v,
            Some(Err(e)) => return Verdict::Failed(format!("cannot decode expected value: {e}")),
            None => return Verdict::Failed("case has neither out nor raises".into()),
        };
        let order_sensitive = self.json.get("order_sensitive").is_some();
        if let Some(Json::Array(options)) = self.json.get("any_of") {
            for o in options {
                match decode(o) {
                    Ok(o) if strict_eq(&o, &actual) => return Verdict::Passed,
                    Ok(_) => {}
                    Err(e) => return Verdict::Failed(format!("cannot decode any_of member: {e}")),
                }
            }
            return Verdict::Failed(format!(
                "expected one of {} options (e.g. {expected}), got {actual}",
                options.len()
            ));
        }
        if self.json.get("multiset").is_some() {
            let same = match (sorted_members(&actual), sorted_members(&expected)) {
                (Some(x), Some(y)) => x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| strict_eq(p, q)),
                _ => false,
            };
            if !actual.is_tuple() || !same {
                return Verdict::Failed(format!("expected the multiset {expected}, got {actual}"));
            }
            if self.prim == "order" {
                if let Err(e) = self.check_sorted_by_key(&actual) {
                    return Verdict::Failed(e.to_string());
                }
            }
            return Verdict::Passed;
        }
        if order_sensitive {
            // Not enumerable: the port gave a value, as the reference did. Not even the kind can
            // be checked: `chain(leastcommon, leastcommon, totuple)` may give an int or a pair.
            return Verdict::Skipped;
        }
        if strict_eq(&actual, &expected) {
            Verdict::Passed
        } else {
            Verdict::Failed(format!("expected {expected}, got {actual}"))
        }
    }

    /// For `order(container, key)`: the result must be sorted by the key function.
    fn check_sorted_by_key(&self, actual: &Value) -> Result<(), CaseError> {
        let args = decode_list(self.json.get("args"))?;
        let keys = actual
            .members()
            .unwrap_or_default()
            .into_iter()
            .map(|m| crate::dsl::func::call1(&args[1], m))
            .collect::<DslResult<Vec<_>>>()?;
        if keys.windows(2).all(|w| w[0] <= w[1]) {
            Ok(())
        } else {
            Err(CaseError::NotSorted(actual.clone()))
        }
    }
}

/// Reads one primitive's case file.
pub fn read_cases(path: &Path) -> Result<Vec<Case>, GoldenError> {
    let text = std::fs::read_to_string(path).map_err(|source| GoldenError::Read {
        path: path.into(),
        source,
    })?;
    let mut cases = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let json: Json = serde_json::from_str(line).map_err(|source| GoldenError::Json {
            path: path.into(),
            line: k + 1,
            source,
        })?;
        let prim = json
            .get("prim")
            .and_then(Json::as_str)
            .ok_or_else(|| GoldenError::NoPrim {
                path: path.into(),
                line: k + 1,
            })?
            .to_string();
        cases.push(Case {
            prim,
            line: k + 1,
            text: line.to_string(),
            json,
        });
    }
    Ok(cases)
}

/// The outcome for one primitive's file.
pub struct FileReport {
    pub prim: String,
    pub passed: usize,
    pub skipped: usize,
    pub failures: Vec<(String, String)>,
}

/// Judges every case of every `cases/*.jsonl` file under `dir` (or `dir` itself holding the
/// `.jsonl` files), sorted by primitive name.
pub fn conform_dir(dir: &Path) -> Result<Vec<FileReport>, GoldenError> {
    let cases_dir = if dir.join("cases").is_dir() {
        dir.join("cases")
    } else {
        dir.to_path_buf()
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
        .map_err(|source| GoldenError::Read {
            path: cases_dir.clone(),
            source,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    if files.is_empty() {
        return Err(GoldenError::NoCaseFiles(cases_dir));
    }
    files.sort();
    use rayon::prelude::*;
    files
        .par_iter()
        .map(|path| {
            let cases = read_cases(path)?;
            let prim = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            let mut report = FileReport {
                prim,
                passed: 0,
                skipped: 0,
                failures: Vec::new(),
            };
            for case in &cases {
                match case.judge() {
                    Verdict::Passed => report.passed += 1,
                    Verdict::Skipped => report.skipped += 1,
                    Verdict::Failed(why) => report.failures.push((case.to_string(), why)),
                }
            }
            Ok(report)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bool_never_matches_an_int_in_the_judge() {
        assert!(!strict_eq(&Value::Bool(true), &Value::Int(1)));
        assert!(!strict_eq(
            &Value::tuple(vec![Value::Bool(true)]),
            &Value::tuple(vec![Value::Int(1)])
        ));
        assert!(!strict_eq(
            &Value::set(vec![Value::Bool(false)]),
            &Value::set(vec![Value::Int(0)])
        ));
        assert!(strict_eq(
            &Value::tuple(vec![Value::Int(1), Value::Bool(true)]),
            &decode(&serde_json::json!([1, true])).unwrap()
        ));
    }

    #[test]
    fn decoding_picks_compact_forms() {
        assert!(matches!(
            decode(&serde_json::json!([[1, 2], [3, 4]])).unwrap(),
            Value::Grid(_)
        ));
        assert!(matches!(
            decode(&serde_json::json!({"fs": [[0, 1], [2, 3]]})).unwrap(),
            Value::Indices(_)
        ));
        assert!(matches!(
            decode(&serde_json::json!({"fs": [[5, [0, 1]]]})).unwrap(),
            Value::Object(_)
        ));
        assert!(decode(&serde_json::json!({"fn": "nope"})).is_err());
    }
}
