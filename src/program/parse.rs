//! Parses solver files in the reference's own syntax into [`Program`]s.
//!
//! Accepted: `from … import …` / `import …` lines (ignored), comments, blank lines, and any
//! number of `def NAME(PARAMS):` functions whose bodies are `VAR = EXPR` lines and one
//! `return EXPR`. An expression is a name (variable, constant or primitive), an integer
//! literal, or a call `callee(expr, …)` where the callee is a primitive or a variable holding a
//! function; nested calls are flattened into steps. A statement may continue over several lines
//! inside parentheses. Every name is resolved here, and a primitive called with the wrong number
//! of arguments is an error here, not when the program runs.

use std::collections::HashMap;

use super::ir::{Callee, ConstKey, Operand, Program, Step};
use crate::dsl::constants::constant;
use crate::dsl::{registry, PrimId};

/// A syntax or name error, with its place in the source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct ParseError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Int(i64),
    Open,
    Close,
    Comma,
    Equals,
    Colon,
}

/// A token with its 1-based line and column.
#[derive(Debug, Clone)]
struct Spanned {
    tok: Tok,
    line: u32,
    col: u32,
}

/// Parses every `def` of a file.
pub fn parse_file(file: &str, source: &str) -> Result<Vec<Program>, ParseError> {
    Parser {
        file,
        lines: logical_lines(file, source)?,
        at: 0,
    }
    .programs()
}

/// Parses a file that must hold exactly one program.
pub fn parse_program(file: &str, source: &str) -> Result<Program, ParseError> {
    let mut programs = parse_file(file, source)?;
    match programs.len() {
        1 => Ok(programs.remove(0)),
        n => Err(ParseError {
            file: file.into(),
            line: 1,
            col: 1,
            message: format!("expected one function, found {n}"),
        }),
    }
}

/// One logical line: its indentation, tokens, and the physical line it started on.
struct Line {
    indent: usize,
    toks: Vec<Spanned>,
    line: u32,
}

/// Tokenises the source into logical lines, joining lines while parentheses are open.
fn logical_lines(file: &str, source: &str) -> Result<Vec<Line>, ParseError> {
    let err = |line: u32, col: u32, message: String| ParseError {
        file: file.into(),
        line,
        col,
        message,
    };
    let mut out: Vec<Line> = Vec::new();
    let mut depth = 0i32;
    for (k, text) in source.lines().enumerate() {
        let line_no = k as u32 + 1;
        let code = text.split('#').next().unwrap_or("");
        if depth == 0 {
            let trimmed = code.trim();
            if trimmed.is_empty() || trimmed.starts_with("from ") || trimmed.starts_with("import ") {
                continue;
            }
            let indent = code.len() - code.trim_start().len();
            out.push(Line {
                indent,
                toks: Vec::new(),
                line: line_no,
            });
        }
        let current = out.last_mut().expect("a logical line is open");
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i] as char;
            let col = i as u32 + 1;
            let start = i;
            let tok = match c {
                ' ' | '\t' | '\r' => {
                    i += 1;
                    continue;
                }
                '(' => {
                    depth += 1;
                    Tok::Open
                }
                ')' => {
                    depth -= 1;
                    if depth < 0 {
                        return Err(err(line_no, col, "unbalanced ')'".into()));
                    }
                    Tok::Close
                }
                ',' => Tok::Comma,
                '=' => Tok::Equals,
                ':' => Tok::Colon,
                c if c.is_ascii_alphabetic() || c == '_' => {
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                        i += 1;
                    }
                    current.toks.push(Spanned {
                        tok: Tok::Name(code[start..i].to_string()),
                        line: line_no,
                        col,
                    });
                    continue;
                }
                c if c.is_ascii_digit() || (c == '-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)) => {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                    let n = code[start..i]
                        .parse()
                        .map_err(|_| err(line_no, col, format!("integer {} is out of range", &code[start..i])))?;
                    current.toks.push(Spanned {
                        tok: Tok::Int(n),
                        line: line_no,
                        col,
                    });
                    continue;
                }
                other => return Err(err(line_no, col, format!("unexpected character {other:?}"))),
            };
            current.toks.push(Spanned {
                tok,
                line: line_no,
                col,
            });
            i += 1;
        }
    }
    if depth > 0 {
        let last = out.last().map_or(1, |l| l.line);
        return Err(err(last, 1, "unclosed '(' at the end of the file".into()));
    }
    Ok(out)
}

struct Parser<'a> {
    file: &'a str,
    lines: Vec<Line>,
    at: usize,
}

/// The state of one function body being compiled.
struct Body {
    program: Program,
    /// Variable name -> operand (parameters and assigned variables).
    scope: HashMap<String, Operand>,
    temporaries: u32,
}

impl<'a> Parser<'a> {
    fn err(&self, line: u32, col: u32, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.into(),
            line,
            col,
            message: message.into(),
        }
    }

    fn programs(mut self) -> Result<Vec<Program>, ParseError> {
        let mut programs = Vec::new();
        while self.at < self.lines.len() {
            programs.push(self.function()?);
        }
        Ok(programs)
    }

    /// `def NAME(PARAMS):` followed by its indented body.
    fn function(&mut self) -> Result<Program, ParseError> {
        let header = &self.lines[self.at];
        let (indent, line) = (header.indent, header.line);
        let mut t = Cursor {
            toks: &header.toks,
            at: 0,
            line,
            file: self.file,
        };
        match t.next_name() {
            Some(kw) if kw == "def" => {}
            _ => return Err(t.error_here("expected 'def NAME(...):' at the top level")),
        }
        let name = t
            .next_name()
            .ok_or_else(|| t.error_here("expected the function's name after 'def'"))?;
        t.expect(Tok::Open, "'(' after the function name")?;
        let mut params = Vec::new();
        if !t.eat(&Tok::Close) {
            loop {
                params.push(t.next_name().ok_or_else(|| t.error_here("expected a parameter name"))?);
                if t.eat(&Tok::Close) {
                    break;
                }
                t.expect(Tok::Comma, "',' or ')' in the parameter list")?;
            }
        }
        t.expect(Tok::Colon, "':' after the parameter list")?;
        t.end()?;
        self.at += 1;

        let scope = params
            .iter()
            .enumerate()
            .map(|(k, p)| (p.clone(), Operand::Param(k as u8)))
            .collect();
        let program = Program {
            name,
            params,
            steps: Vec::new(),
            output: Operand::Param(0),
            file: self.file.into(),
            line,
        };
        let mut body = Body {
            program,
            scope,
            temporaries: 0,
        };
        let mut returned = false;
        while self.at < self.lines.len() && self.lines[self.at].indent > indent {
            let l = &self.lines[self.at];
            if returned {
                return Err(self.err(l.line, 1, "statement after 'return'"));
            }
            let mut t = Cursor {
                toks: &l.toks,
                at: 0,
                line: l.line,
                file: self.file,
            };
            if t.peek_name() == Some("return") {
                t.at += 1;
                body.program.output = expression(&mut t, &mut body, "return")?;
                t.end()?;
                returned = true;
            } else {
                let target = t
                    .next_name()
                    .ok_or_else(|| t.error_here("expected 'NAME = expression' or 'return'"))?;
                t.expect(Tok::Equals, "'=' after the variable name")?;
                let value = expression(&mut t, &mut body, &target)?;
                t.end()?;
                body.scope.insert(target, value);
            }
            self.at += 1;
        }
        if !returned {
            return Err(self.err(line, 1, format!("function {} has no 'return'", body.program.name)));
        }
        Ok(body.program)
    }
}

/// Compiles an expression into steps, returning the operand that holds its value.
fn expression(t: &mut Cursor, body: &mut Body, target: &str) -> Result<Operand, ParseError> {
    let (line, col) = t.position();
    let atom = match t.next() {
        Some(Tok::Name(n)) => n,
        Some(Tok::Int(n)) => return Ok(Operand::Const(ConstKey::Int(n))),
        _ => return Err(t.error_at(line, col, "expected a name, an integer or a call")),
    };
    if !t.eat(&Tok::Open) {
        return resolve(&atom, body).ok_or_else(|| t.error_at(line, col, unknown_name(&atom)));
    }
    let callee = match body.scope.get(&atom) {
        Some(op) => Callee::Value(op.clone()),
        None => match PrimId::of(&atom) {
            Some(id) => Callee::Prim(id),
            None if constant(&atom).is_some() => {
                return Err(t.error_at(line, col, format!("{atom} is a constant, not a function")))
            }
            None => return Err(t.error_at(line, col, unknown_name(&atom))),
        },
    };
    let mut args = Vec::new();
    if !t.eat(&Tok::Close) {
        loop {
            let inner = format!("_{}", body.temporaries);
            args.push(expression(t, body, &inner)?);
            if t.eat(&Tok::Close) {
                break;
            }
            t.expect(Tok::Comma, "',' or ')' in the argument list")?;
        }
    }
    if let Callee::Prim(id) = callee {
        let spec = id.spec();
        if args.len() != spec.arity() {
            return Err(t.error_at(
                line,
                col,
                format!("{} takes {} argument(s), {} given", spec.name, spec.arity(), args.len()),
            ));
        }
    }
    body.temporaries += 1;
    body.program.steps.push(Step {
        callee,
        args,
        target: target.to_string(),
        line,
    });
    Ok(Operand::Step(body.program.steps.len() as u32 - 1))
}

/// A name in argument position: a variable, a constant or a primitive.
fn resolve(name: &str, body: &Body) -> Option<Operand> {
    if let Some(op) = body.scope.get(name) {
        return Some(op.clone());
    }
    if let Some(v) = constant(name) {
        return Some(Operand::Const(ConstKey::from_value(&v).expect("constants are scalars")));
    }
    PrimId::of(name).map(|id| Operand::Const(ConstKey::Prim(id)))
}

fn unknown_name(name: &str) -> String {
    let similar = registry().similar(name);
    if similar.is_empty() {
        format!("unknown name {name:?} (not a variable, constant or primitive)")
    } else {
        format!("unknown name {name:?}; similar primitives: {}", similar.join(", "))
    }
}

/// Walks the tokens of one logical line.
struct Cursor<'t> {
    toks: &'t [Spanned],
    at: usize,
    line: u32,
    file: &'t str,
}

impl Cursor<'_> {
    fn position(&self) -> (u32, u32) {
        match self.toks.get(self.at) {
            Some(s) => (s.line, s.col),
            None => (
                self.toks.last().map_or(self.line, |s| s.line),
                self.toks.last().map_or(1, |s| s.col + 1),
            ),
        }
    }

    fn error_at(&self, line: u32, col: u32, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.into(),
            line,
            col,
            message: message.into(),
        }
    }

    fn error_here(&self, message: impl Into<String>) -> ParseError {
        let (line, col) = self.position();
        self.error_at(line, col, message)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at)?.tok.clone();
        self.at += 1;
        Some(t)
    }

    fn peek_name(&self) -> Option<&str> {
        match &self.toks.get(self.at)?.tok {
            Tok::Name(n) => Some(n),
            _ => None,
        }
    }

    fn next_name(&mut self) -> Option<String> {
        let n = self.peek_name()?.to_string();
        self.at += 1;
        Some(n)
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.toks.get(self.at).is_some_and(|s| &s.tok == tok) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Tok, what: &str) -> Result<(), ParseError> {
        if self.eat(&tok) {
            Ok(())
        } else {
            Err(self.error_here(format!("expected {what}")))
        }
    }

    fn end(&self) -> Result<(), ParseError> {
        if self.at == self.toks.len() {
            Ok(())
        } else {
            Err(self.error_here("unexpected text after the end of the statement"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> ParseError {
        parse_file("t.py", src).unwrap_err()
    }

    #[test]
    fn reference_syntax_compiles_to_steps() {
        let src = "from dsl import *\n\n# a comment\ndef solve_x(I):\n    x1 = objects(I, T, F, T)  # trailing\n    x2 = compose(size, first)\n    x3 = x2(x1)\n    O = canvas(x3,\n               UNITY)\n    return O\n";
        let p = parse_program("t.py", src).unwrap();
        assert_eq!(p.name, "solve_x");
        assert_eq!(p.task_id(), Some("x"));
        assert_eq!(p.steps.len(), 4);
        assert!(matches!(p.steps[2].callee, Callee::Value(Operand::Step(1))));
        assert_eq!(p.output, Operand::Step(3));
        assert_eq!(p.steps[3].line, 8);
        // Printing gives back the same program.
        assert_eq!(
            parse_program("t.py", &p.to_string()).unwrap().to_string(),
            p.to_string()
        );
    }

    #[test]
    fn nested_calls_and_literals_are_flattened() {
        let p = parse_program(
            "t.py",
            "def solve(S, I, C):\n    O = fill(I, 3, ofcolor(I, -1))\n    return O\n",
        )
        .unwrap();
        assert_eq!(p.params, ["S", "I", "C"]);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[1].args[1], Operand::Const(ConstKey::Int(3)));
        assert_eq!(p.steps[0].args[1], Operand::Const(ConstKey::Int(-1)));
    }

    #[test]
    fn errors_name_the_place_and_the_problem() {
        let e = err("def solve_a(I):\n    x1 = objets(I, T, F, T)\n    return x1\n");
        assert_eq!((e.line, e.col), (2, 10));
        assert!(e.message.contains("similar primitives: objects"), "{e}");
        let e = err("def solve_a(I):\n    x1 = fill(I, ONE)\n    return x1\n");
        assert!(e.message.contains("fill takes 3 argument(s), 2 given"), "{e}");
        let e = err("def solve_a(I):\n    x1 = rot90(I\n");
        assert!(e.message.contains("unclosed"), "{e}");
        let e = err("def solve_a(I):\n    x1 = rot90(I)\n");
        assert!(e.message.contains("no 'return'"), "{e}");
        let e = err("def solve_a(I):\n    x1 = rot90(I) x\n    return x1\n");
        assert_eq!((e.line, e.col), (2, 19));
        let e = err("def solve_a(I):\n    x1 = ONE(I)\n    return x1\n");
        assert!(e.message.contains("constant, not a function"), "{e}");
        assert_eq!(err("x = 1\n").message, "expected 'def NAME(...):' at the top level");
        assert!(err("def solve_a(I):\n    x1 = rot90(I) $\n")
            .message
            .contains("unexpected character"));
    }
}
