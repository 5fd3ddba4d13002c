//! Rows of argument columns remembered by identity: what lets the column engine run a function
//! once per distinct argument row, however often and wherever that row comes back.
//!
//! A row is the values of one element in each argument column. Two rows are the same when each
//! of their values is the same by [`Identity`]: numbers, pairs and cells by value, containers,
//! grids and functions by allocation (so recognising a row never walks data, and two equal
//! containers in different allocations count as different rows, which costs only the repeat).
//! Every primitive is a function of its arguments' values, so the same row gives the same result
//! or the same error. [`RowMemo`] keeps every row it has run alive, so no allocation it names can
//! be freed and reused by another value while it remembers the row.

use std::sync::Arc;

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};
use smallvec::SmallVec;

use super::column::Mapped;
use super::value::{Cell, Value};

/// A value's identity for [`RowMemo`]: its kind and up to 128 bits of payload (the value
/// itself for scalars and small tuples, the allocation's address for the rest).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Identity(u8, u64, u64);

impl Identity {
    fn of(v: &Value) -> Identity {
        let pair = |a: i32, b: i32| (a as u32 as u64) << 32 | b as u32 as u64;
        // Each coordinate of a `SmallCell` fits 16 bits.
        let small = |c: Cell| (c.color as u16 as u64) << 32 | (c.i as u16 as u64) << 16 | c.j as u16 as u64;
        match v {
            Value::None => Identity(0, 0, 0),
            Value::Bool(b) => Identity(1, *b as u64, 0),
            Value::Int(x) => Identity(2, *x as u64, 0),
            Value::Pair(a, b) => Identity(3, *a as u64, *b as u64),
            Value::Cell(c) => Identity(4, c.color as u32 as u64, pair(c.i, c.j)),
            Value::LocPair(a, b) => Identity(5, pair(a.i, a.j), pair(b.i, b.j)),
            Value::CellPair(a, b) => Identity(6, small(a.cell()), small(b.cell())),
            Value::Ints(x) => Identity(7, x.as_ptr() as u64, x.len() as u64),
            Value::Grid(x) => Identity(8, Arc::as_ptr(x) as u64, 0),
            Value::Indices(x) => Identity(9, Arc::as_ptr(x) as u64, 0),
            Value::Object(x) => Identity(10, Arc::as_ptr(x) as u64, 0),
            Value::Tuple(x) => Identity(11, x.as_ptr() as u64, 0),
            Value::Set(x) => Identity(12, x.as_ptr() as u64, 0),
            Value::Func(x) => Identity(13, Arc::as_ptr(x) as u64, 0),
        }
    }
}

/// The results of the rows a function has run on, for running it on more rows of the same
/// columns: each row it has met is run once.
#[derive(Default)]
pub struct RowMemo {
    /// Each remembered row's number, by the hash of its identities (a table of small entries,
    /// so that a look-up touches little memory).
    numbers: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// The identities of each remembered row's values, row after row.
    identities: Vec<Identity>,
    /// The remembered rows, column by column (kept alive for their identities).
    rows: Vec<Vec<Value>>,
    /// The result of each remembered row.
    results: Vec<Value>,
    /// Rows looked up, and rows that were remembered.
    looked: usize,
    found: usize,
}

impl RowMemo {
    /// `run` over `n` rows of `columns`: it runs once on the rows not met before (in the order
    /// of their first occurrence), and every row gets its result. When `run` fails on a new row,
    /// every row before that row's first occurrence has a result (it was met earlier, or its
    /// first occurrence comes first), and the failure is that occurrence's: the same values and
    /// error as `run` over all the rows.
    pub fn eval(&mut self, columns: &[&[Value]], n: usize, run: impl FnOnce(&[&[Value]], usize) -> Mapped) -> Mapped {
        if self.rows.len() != columns.len() {
            *self = RowMemo {
                rows: vec![Vec::new(); columns.len()],
                ..RowMemo::default()
            };
        }
        let width = columns.len();
        let known = self.results.len() as u32;
        let mut numbers = Vec::with_capacity(n);
        let mut firsts: Vec<usize> = Vec::new();
        let mut key: SmallVec<[Identity; 4]> = SmallVec::new();
        for row in 0..n {
            key.clear();
            for column in columns {
                key.push(Identity::of(&column[row]));
            }
            let hash = self.hasher.hash_one(&key[..]);
            let identities = &self.identities;
            let same = |&number: &u32| identities[number as usize * width..][..width] == key[..];
            let number = match self.numbers.find(hash, same) {
                Some(&number) => number,
                None => {
                    let number = known + firsts.len() as u32;
                    let (identities, hasher) = (&self.identities, &self.hasher);
                    self.numbers.insert_unique(hash, number, |&k| {
                        hasher.hash_one(&identities[k as usize * width..][..width])
                    });
                    self.identities.extend_from_slice(&key);
                    firsts.push(row);
                    number
                }
            };
            numbers.push(number);
        }
        self.looked += n;
        self.found += n - firsts.len();
        let new: Vec<Vec<Value>> = columns
            .iter()
            .map(|c| firsts.iter().map(|&r| c[r].clone()).collect())
            .collect();
        let mapped = {
            let new_columns: SmallVec<[&[Value]; 4]> = new.iter().map(Vec::as_slice).collect();
            run(&new_columns, firsts.len())
        };
        let end = match mapped.error {
            Some(_) => firsts[mapped.values.len()],
            None => n,
        };
        self.results.extend(mapped.values);
        for (kept, column) in self.rows.iter_mut().zip(new) {
            kept.extend(column);
        }
        if mapped.error.is_some() {
            // The rows after the failing one are not run; forget what was numbered for them.
            let ran = self.results.len() as u32;
            self.numbers.retain(|number| *number < ran);
            self.identities.truncate(ran as usize * width);
            for kept in &mut self.rows {
                kept.truncate(ran as usize);
            }
        }
        Mapped {
            values: numbers[..end]
                .iter()
                .map(|&d| self.results[d as usize].clone())
                .collect(),
            error: mapped.error,
        }
    }

    /// Whether at least a quarter of the rows looked up so far were met before.
    pub fn repeats(&self) -> bool {
        self.found * 4 >= self.looked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::value::Items;
    use crate::dsl::DslError;

    fn ints(xs: &[i64]) -> Vec<Value> {
        xs.iter().map(|&x| Value::Int(x)).collect()
    }

    /// A function on rows that records the rows it ran on and fails on a row whose first value
    /// is negative.
    fn run_recording<'a>(log: &'a mut Vec<Vec<Value>>) -> impl FnOnce(&[&[Value]], usize) -> Mapped + 'a {
        move |columns, n| {
            let mut values = Vec::new();
            for row in 0..n {
                log.push(columns.iter().map(|c| c[row].clone()).collect());
                match &columns[0][row] {
                    Value::Int(x) if *x < 0 => {
                        return Mapped {
                            values,
                            error: Some(DslError::Value("negative".into())),
                        }
                    }
                    Value::Int(x) => values.push(Value::Int(x * 10)),
                    _ => unreachable!("the test passes integers"),
                }
            }
            Mapped { values, error: None }
        }
    }

    #[test]
    fn each_row_runs_once_across_calls() {
        let mut memo = RowMemo::default();
        let (a, b) = (ints(&[1, 2, 1, 3]), ints(&[7, 7, 7, 8]));
        let mut log = Vec::new();
        let out = memo.eval(&[&a, &b], 4, run_recording(&mut log));
        assert_eq!(out.values, ints(&[10, 20, 10, 30]));
        assert_eq!(log, vec![ints(&[1, 7]), ints(&[2, 7]), ints(&[3, 8])]);
        let (a, b) = (ints(&[3, 2, 4]), ints(&[8, 8, 8]));
        let mut log = Vec::new();
        let out = memo.eval(&[&a, &b], 3, run_recording(&mut log));
        assert_eq!(out.values, ints(&[30, 20, 40]));
        assert_eq!(log, vec![ints(&[2, 8]), ints(&[4, 8])]);
        assert!(memo.repeats());
    }

    #[test]
    fn a_failing_row_fails_at_its_first_occurrence() {
        let mut memo = RowMemo::default();
        let a = ints(&[1, 2, 1, -3, 2, -3, 5]);
        let mut log = Vec::new();
        let out = memo.eval(&[&a], 7, run_recording(&mut log));
        assert_eq!(out.values, ints(&[10, 20, 10]));
        assert!(out.error.is_some());
        // The rows after the failing one were not run, and are not remembered as run.
        let b = ints(&[5, 1]);
        let mut log = Vec::new();
        let out = memo.eval(&[&b], 2, run_recording(&mut log));
        assert_eq!(out.values, ints(&[50, 10]));
        assert_eq!(log, vec![ints(&[5])]);
    }

    #[test]
    fn kinds_and_allocations_are_told_apart() {
        let x = Items::new(vec![Value::Int(1)]);
        let same = Value::Tuple(x.clone());
        let equal_elsewhere = Value::Tuple(Items::new(vec![Value::Int(1)]));
        let keys: Vec<Identity> = [Value::Bool(true), Value::Int(1), Value::Tuple(x), same, equal_elsewhere]
            .iter()
            .map(Identity::of)
            .collect();
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[1], keys[2]);
        assert_eq!(keys[2], keys[3]);
        assert_ne!(keys[3], keys[4]);
    }
}
