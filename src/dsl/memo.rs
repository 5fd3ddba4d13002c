//! Rows of argument columns remembered by identity: what lets the column engine run a function
//! once per distinct argument row, however often and wherever that row comes back.
//!
//! A row is the values of one element in each argument column. Two rows are the same when each
//! of their values is the same by [`identity`]: numbers, pairs and cells by value, containers,
//! grids and functions by allocation (so recognising a row never walks data, and two equal
//! containers in different allocations count as different rows, which costs only the repeat).
//! Every primitive is a function of its arguments' values, so the same row gives the same result
//! or the same error. [`RowMemo`] keeps every row it has run alive, so no allocation it names can
//! be freed and reused by another value while it remembers the row.
//!
//! An identity is one word. Each column numbers the identities it meets (a small table: a
//! column's distinct values are few, and a captured value comes for all of its container's
//! members in a row), and a row's number sits in a dense table indexed by those numbers, the
//! member's varying fastest, so that the rows of a container's members read neighbouring slots.
//! On `batt --cross` of solve_d22278a0, whose inner rows come back once per other object, a
//! hash table of whole rows was 40 % of the time, most of it waiting on memory.
//! A value whose identity does not fit a word (a pair of numbers beyond 30 bits, say) makes its
//! row one that is run every time it comes, as if never met.

use super::column::Mapped;
use super::shared::Shared;
use super::value::Value;

/// The most values in a row that is remembered; wider rows are run every time.
const MAX_WIDTH: usize = 3;

/// `x` as a `bits`-bit two's complement field, if it fits.
fn field(x: i64, bits: u32) -> Option<u64> {
    let half = 1i64 << (bits - 1);
    (-half..half).contains(&x).then(|| x as u64 & ((1u64 << bits) - 1))
}

/// Fields packed from the low bits up, if each fits its width.
fn fields(parts: &[(i64, u32)]) -> Option<u64> {
    let mut word = 0;
    let mut shift = 0;
    for &(x, bits) in parts {
        word |= field(x, bits)? << shift;
        shift += bits;
    }
    Some(word)
}

/// A value's identity in one word: its kind in the top 4 bits, and in the other 60 the value
/// itself for scalars, pairs and cells (when it fits), the allocation's address for the rest.
#[inline(always)]
pub(super) fn identity(v: &Value) -> Option<u64> {
    let (kind, payload) = match v {
        Value::None => (0, Some(0)),
        Value::Bool(b) => (1, Some(*b as u64)),
        Value::Int(x) => (2, field(*x, 60)),
        Value::Pair(a, b) => (3, field(*a, 30).zip(field(*b, 30)).map(|(a, b)| a | b << 30)),
        Value::Cell(c) => (4, fields(&[(c.color.into(), 12), (c.i.into(), 24), (c.j.into(), 24)])),
        Value::LocPair(a, b) => (
            5,
            fields(&[(a.i.into(), 15), (a.j.into(), 15), (b.i.into(), 15), (b.j.into(), 15)]),
        ),
        Value::CellPair(a, b) => {
            let (a, b) = (a.cell(), b.cell());
            (
                6,
                fields(&[a.color, a.i, a.j, b.color, b.i, b.j].map(|x| (x.into(), 10))),
            )
        }
        Value::Ints(x) => (7, Some(x.as_ptr() as u64)),
        Value::Grid(x) => (8, Some(Shared::as_ptr(x) as u64)),
        Value::Indices(x) => (9, Some(Shared::as_ptr(x).cast::<u8>() as u64)),
        Value::Object(x) => (10, Some(Shared::as_ptr(x).cast::<u8>() as u64)),
        Value::Tuple(x) => (11, Some(x.as_ptr() as u64)),
        Value::Set(x) => (12, Some(x.as_ptr() as u64)),
        Value::Func(x) => (13, Some(Shared::as_ptr(x) as *const u8 as u64)),
    };
    // Addresses are far below 2^60 on every 64-bit platform; fields are packed below it.
    payload.filter(|&p| p < 1 << 60).map(|p| kind << 60 | p)
}

/// The most slots of [`RowMemo`]'s table of row numbers (16 MiB of them); a row whose ids fall
/// outside a table this large is run every time it comes, as if never met.
const MAX_SLOTS: usize = 1 << 22;

/// Below [`MAX_SLOTS`], the table grows to at most this many slots per row looked up (or
/// [`FREE_SLOTS`], whichever is more): rows whose values all differ (each member met with one
/// captured value only) would otherwise fill a table quadratic in their number.
const SLOTS_PER_ROW: usize = 8;
const FREE_SLOTS: usize = 1 << 16;

/// A slot of no row met.
const NOT_MET: u32 = u32::MAX;

/// The values met in one argument column, numbered densely in the order they were first met:
/// an open-addressing table of identities with linear probing. A lookup is a multiplication
/// and a probe or two; the general hash map it replaced cost solve_d22278a0 1.5 % more
/// instructions (callgrind).
struct Ids {
    /// Each slot's identity ([`NO_IDENTITY`] where empty) and id; a power of two of them.
    slots: Vec<(u64, u32)>,
    /// The bits of a hash that index `slots`.
    bits: u32,
    len: u32,
    /// The last identity looked up, and its id: a captured value comes once for each of its
    /// container's members in a row.
    last: Option<(u64, u32)>,
}

/// No value's identity: every kind is below 15 (see [`identity`]), so no identity has all
/// bits set.
const NO_IDENTITY: u64 = u64::MAX;

impl Default for Ids {
    fn default() -> Ids {
        Ids::with_bits(4)
    }
}

impl Ids {
    fn with_bits(bits: u32) -> Ids {
        Ids {
            slots: vec![(NO_IDENTITY, 0); 1 << bits],
            bits,
            len: 0,
            last: None,
        }
    }

    /// Where to look for `identity` first (Fibonacci hashing: the top bits of a product).
    #[inline]
    fn home(&self, identity: u64) -> usize {
        (identity.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    #[inline(always)]
    fn id(&mut self, identity: u64) -> u32 {
        if let Some((last, id)) = self.last {
            if last == identity {
                return id;
            }
        }
        // At most half full, so that probes stay short and one always ends on an empty slot.
        if 2 * (self.len as usize + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut at = self.home(identity);
        let id = loop {
            match self.slots[at] {
                (met, id) if met == identity => break id,
                (NO_IDENTITY, _) => {
                    self.slots[at] = (identity, self.len);
                    self.len += 1;
                    break self.len - 1;
                }
                _ => at = (at + 1) & mask,
            }
        };
        self.last = Some((identity, id));
        id
    }

    /// Twice the slots, every identity moved to its place among them.
    fn grow(&mut self) {
        let mut grown = Ids::with_bits(self.bits + 1);
        let mask = grown.slots.len() - 1;
        for &(identity, id) in self.slots.iter().filter(|(met, _)| *met != NO_IDENTITY) {
            let mut at = grown.home(identity);
            while grown.slots[at].0 != NO_IDENTITY {
                at = (at + 1) & mask;
            }
            grown.slots[at] = (identity, id);
        }
        grown.len = self.len;
        grown.last = self.last;
        *self = grown;
    }
}

/// Row numbers by the ids of a row's values: a dense table, the first column's id varying
/// fastest (a container's members, laid end to end, come in that column, so that the rows of
/// consecutive members read neighbouring slots).
struct Slots {
    /// Each column's capacity of ids (a power of two).
    caps: Vec<usize>,
    numbers: Vec<u32>,
    limit: usize,
}

impl Slots {
    fn new(width: usize, limit: usize) -> Slots {
        Slots {
            caps: vec![1; width],
            numbers: vec![NOT_MET],
            limit,
        }
    }

    /// The slot of a row's ids, the table grown to hold them; `None` past the size limit, or
    /// past [`SLOTS_PER_ROW`] times the rows `looked` up so far.
    fn slot(&mut self, ids: &[u32], looked: usize) -> Option<usize> {
        if ids.iter().zip(&self.caps).any(|(&id, &cap)| id as usize >= cap) {
            let caps: Vec<usize> = ids
                .iter()
                .zip(&self.caps)
                .map(|(&id, &cap)| cap.max((id as usize + 1).next_power_of_two()))
                .collect();
            let budget = looked.saturating_mul(SLOTS_PER_ROW).max(FREE_SLOTS).min(self.limit);
            if caps.iter().product::<usize>() > budget {
                return None;
            }
            self.relayout(caps);
        }
        let mut slot = 0;
        let mut stride = 1;
        for (&id, &cap) in ids.iter().zip(&self.caps) {
            slot += id as usize * stride;
            stride *= cap;
        }
        Some(slot)
    }

    /// Moves every number to its slot under larger capacities.
    fn relayout(&mut self, caps: Vec<usize>) {
        let mut numbers = vec![NOT_MET; caps.iter().product()];
        for (old, &number) in self.numbers.iter().enumerate().filter(|(_, &n)| n != NOT_MET) {
            let (mut rest, mut slot, mut stride) = (old, 0, 1);
            for (&old_cap, &cap) in self.caps.iter().zip(&caps) {
                slot += rest % old_cap * stride;
                rest /= old_cap;
                stride *= cap;
            }
            numbers[slot] = number;
        }
        self.numbers = numbers;
        self.caps = caps;
    }

    /// Forgets the rows numbered `from` or later.
    fn forget_from(&mut self, from: u32) {
        for n in self.numbers.iter_mut().filter(|n| **n >= from) {
            *n = NOT_MET;
        }
    }
}

/// The results of the rows a function has run on, for running it on more rows of the same
/// columns: each row it has met is run once.
pub struct RowMemo {
    /// Each column's values met, by identity.
    ids: Vec<Ids>,
    /// The number of each row met, by its values' ids.
    slots: Slots,
    /// The rows run, column by column (kept alive for their identities).
    rows: Vec<Vec<Value>>,
    /// The result of each row run, by its number.
    results: Vec<Value>,
    /// Rows looked up, and rows that were remembered.
    looked: usize,
    found: usize,
}

impl Default for RowMemo {
    fn default() -> RowMemo {
        RowMemo::with_limit(0, MAX_SLOTS)
    }
}

impl RowMemo {
    /// A memo for rows of `width` values whose table of row numbers holds at most `limit`
    /// slots.
    fn with_limit(width: usize, limit: usize) -> RowMemo {
        RowMemo {
            ids: (0..width).map(|_| Ids::default()).collect(),
            slots: Slots::new(width, limit),
            rows: vec![Vec::new(); width],
            results: Vec::new(),
            looked: 0,
            found: 0,
        }
    }

    /// The slot of row `row` of `columns`, if each value has an identity and the table holds
    /// their ids.
    fn slot(&mut self, columns: &[&[Value]], row: usize) -> Option<usize> {
        let mut ids = [0; MAX_WIDTH];
        for ((id, column), seen) in ids.iter_mut().zip(columns).zip(&mut self.ids) {
            *id = seen.id(identity(&column[row])?);
        }
        self.slots.slot(&ids[..columns.len()], self.looked)
    }

    /// [`RowMemo::slot`] of a row of one value, whose slot is its id where the table holds it
    /// (`apply(f, pair)` looks up every pair it meets: the lookup is most of its work).
    #[inline]
    fn slot_of_one(&mut self, column: &[Value], row: usize) -> Option<usize> {
        let id = self.ids[0].id(identity(&column[row])?);
        if id as usize >= self.slots.caps[0] {
            return self.slots.slot(&[id], self.looked);
        }
        Some(id as usize)
    }

    /// `run` over `n` rows of `columns`: it runs once on the rows not met before (in the order
    /// of their first occurrence), and every row gets its result. When `run` fails on a new row,
    /// every row before that row's first occurrence has a result (it was met earlier, or its
    /// first occurrence comes first), and the failure is that occurrence's: the same values and
    /// error as `run` over all the rows. Rows of more than [`MAX_WIDTH`] values are all run.
    pub fn eval(&mut self, columns: &[&[Value]], n: usize, run: impl FnOnce(&[&[Value]], usize) -> Mapped) -> Mapped {
        if columns.len() > MAX_WIDTH {
            self.looked += n;
            return run(columns, n);
        }
        if self.rows.len() != columns.len() {
            *self = RowMemo::with_limit(columns.len(), self.slots.limit);
        }
        self.looked += n;
        let known = self.results.len() as u32;
        let mut numbers = Vec::with_capacity(n);
        let mut firsts: Vec<usize> = Vec::new();
        for row in 0..n {
            let new = known + firsts.len() as u32;
            let slot = match columns {
                [column] => self.slot_of_one(column, row),
                _ => self.slot(columns, row),
            };
            let number = match slot {
                Some(slot) if self.slots.numbers[slot] != NOT_MET => self.slots.numbers[slot],
                Some(slot) => {
                    self.slots.numbers[slot] = new;
                    firsts.push(row);
                    new
                }
                // Not identifiable, or past the table's limit: run as a new row, and not
                // remembered.
                None => {
                    firsts.push(row);
                    new
                }
            };
            numbers.push(number);
        }
        self.found += n - firsts.len();
        let new: Vec<Vec<Value>> = columns
            .iter()
            .map(|c| firsts.iter().map(|&r| c[r].clone()).collect())
            .collect();
        let mapped = {
            let new_columns: Vec<&[Value]> = new.iter().map(Vec::as_slice).collect();
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
            self.slots.forget_from(ran);
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
    use crate::dsl::value::{Cell, Items, Loc, SmallCell};
    use crate::dsl::DslError;
    use proptest::prelude::*;

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
        let keys: Vec<Option<u64>> = [Value::Bool(true), Value::Int(1), Value::Tuple(x), same, equal_elsewhere]
            .iter()
            .map(identity)
            .collect();
        assert!(keys.iter().all(Option::is_some));
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[1], keys[2]);
        assert_eq!(keys[2], keys[3]);
        assert_ne!(keys[3], keys[4]);
    }

    /// Numbers, pairs and cells are identified by value: two of them have the same identity
    /// exactly when they are the same value, negative coordinates included; one beyond what a
    /// word holds has none.
    #[test]
    fn scalars_are_identified_by_value() {
        let loc = |i, j| Loc { i, j };
        let cell = |color, i, j| Cell { color, i, j };
        let pack = |c| SmallCell::pack(c).expect("fits");
        let values = [
            Value::None,
            Value::Bool(false),
            Value::Bool(true),
            Value::Int(0),
            Value::Int(-1),
            Value::Int(1),
            Value::Pair(0, 0),
            Value::Pair(-1, 0),
            Value::Pair(0, -1),
            Value::Pair(1, -1),
            Value::Cell(cell(0, 0, 0)),
            Value::Cell(cell(9, -1, 2)),
            Value::Cell(cell(9, 2, -1)),
            Value::LocPair(loc(0, 0), loc(0, 0)),
            Value::LocPair(loc(-1, 3), loc(3, -1)),
            Value::LocPair(loc(3, -1), loc(-1, 3)),
            Value::CellPair(pack(cell(1, 2, 3)), pack(cell(1, 2, -3))),
            Value::CellPair(pack(cell(1, 2, -3)), pack(cell(1, 2, 3))),
        ];
        for (k, a) in values.iter().enumerate() {
            for (l, b) in values.iter().enumerate() {
                assert_eq!(identity(a) == identity(b), k == l, "{a:?} and {b:?}");
            }
        }
        for wide in [
            Value::Int(1 << 59),
            Value::Int(-(1 << 59) - 1),
            Value::Pair(1 << 29, 0),
            Value::LocPair(loc(1 << 14, 0), loc(0, 0)),
            Value::CellPair(pack(cell(1, 512, 0)), pack(cell(1, 0, 0))),
        ] {
            assert_eq!(identity(&wide), None, "{wide:?}");
        }
        assert!(identity(&Value::Int((1 << 59) - 1)).is_some());
        assert!(identity(&Value::Int(-(1 << 59))).is_some());
    }

    /// A row holding a value without a one-word identity is run every time it comes, with the
    /// same results as any other row.
    #[test]
    fn rows_without_an_identity_run_every_time() {
        let mut memo = RowMemo::default();
        let a = ints(&[1, 1 << 59, 1, 1 << 59]);
        let mut log = Vec::new();
        let out = memo.eval(&[&a], 4, run_recording(&mut log));
        assert_eq!(out.values, ints(&[10, 10 << 59, 10, 10 << 59]));
        assert_eq!(log, vec![ints(&[1]), ints(&[1 << 59]), ints(&[1 << 59])]);
    }

    /// Rows over many values in each column (the table of row numbers grown again and again,
    /// in either column) are each run once, and every row gets its own result, within a call
    /// and across calls.
    #[test]
    fn rows_run_once_while_the_table_grows() {
        let mut memo = RowMemo::default();
        // Member 0..40 fastest, then captured 0..30 (as a nested mapping lays them out), the
        // second call over the first one's rows and as many new ones, in another order.
        let rows = |members: std::ops::Range<i64>, captured: std::ops::Range<i64>| {
            let pairs: Vec<(i64, i64)> = captured.flat_map(|c| members.clone().map(move |m| (m, c))).collect();
            (
                ints(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()),
                ints(&pairs.iter().map(|p| p.1).collect::<Vec<_>>()),
            )
        };
        fn sums(a: &[Value], b: &[Value]) -> Vec<Value> {
            a.iter()
                .zip(b)
                .map(|(x, y)| match (x, y) {
                    (Value::Int(x), Value::Int(y)) => Value::Int(x * 10 + y * 1000),
                    _ => unreachable!("the test passes integers"),
                })
                .collect()
        }
        fn run(ran: &std::cell::Cell<usize>) -> impl FnOnce(&[&[Value]], usize) -> Mapped + '_ {
            move |columns, n| {
                ran.set(ran.get() + n);
                Mapped {
                    values: sums(columns[0], columns[1]),
                    error: None,
                }
            }
        }
        let (a, b) = rows(0..40, 0..30);
        let ran = std::cell::Cell::new(0);
        let out = memo.eval(&[&a, &b], a.len(), run(&ran));
        assert_eq!(out.values, sums(&a, &b));
        assert_eq!(ran.get(), 40 * 30);
        let (mut a, mut b) = rows(0..80, 0..30);
        a.reverse();
        b.reverse();
        let ran = std::cell::Cell::new(0);
        let out = memo.eval(&[&a, &b], a.len(), run(&ran));
        assert_eq!(out.values, sums(&a, &b));
        assert_eq!(ran.get(), 40 * 30);
        let (a, b) = rows(0..80, 0..60);
        let ran = std::cell::Cell::new(0);
        let out = memo.eval(&[&a, &b], a.len(), run(&ran));
        assert_eq!(out.values, sums(&a, &b));
        assert_eq!(ran.get(), 80 * 30);
    }

    /// A row whose ids do not fit the table's size limit is run every time it comes, with the
    /// same results, while the rows that fit are remembered.
    #[test]
    fn rows_past_the_table_limit_run_every_time() {
        let mut memo = RowMemo::with_limit(1, 4);
        let a = ints(&[0, 1, 2, 3, 4, 5, 0, 4, 3, 5]);
        let mut log = Vec::new();
        let out = memo.eval(&[&a], a.len(), run_recording(&mut log));
        assert_eq!(out.values, ints(&[0, 10, 20, 30, 40, 50, 0, 40, 30, 50]));
        assert_eq!(log, [0, 1, 2, 3, 4, 5, 4, 5].map(|x| ints(&[x])));
    }

    /// Rows whose values all differ do not grow the table past its budget per row looked up:
    /// those past it are run every time, with the same results.
    #[test]
    fn rows_of_distinct_values_keep_the_table_within_its_budget() {
        let mut memo = RowMemo::default();
        let a = ints(&(0..300).collect::<Vec<_>>());
        let b = ints(&(1000..1300).collect::<Vec<_>>());
        for expected_runs in [300, 300 - 256] {
            let mut log = Vec::new();
            let out = memo.eval(&[&a, &b], a.len(), run_recording(&mut log));
            assert_eq!(out.values, ints(&(0..3000).step_by(10).collect::<Vec<_>>()));
            assert_eq!(log.len(), expected_runs);
        }
        // 256 ids a column: the most that FREE_SLOTS holds for two columns.
        assert_eq!(memo.slots.numbers.len(), FREE_SLOTS);
    }

    proptest! {
        /// Ids number identities densely in the order they are first met, the same identity
        /// always the same id, through every growth of the table (identities that share their
        /// low or high bits included, which probe past each other).
        #[test]
        fn ids_number_identities_in_first_met_order(
            keys in prop::collection::vec(
                prop_oneof![0u64..64, (0u64..64).prop_map(|k| k << 54), 0u64..(15 << 60)],
                0..400,
            ),
        ) {
            let mut ids = Ids::default();
            let mut model: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
            for key in keys {
                let next = model.len() as u32;
                let expected = *model.entry(key).or_insert(next);
                prop_assert_eq!(ids.id(key), expected);
            }
            prop_assert!(2 * model.len() <= ids.slots.len());
        }
    }
}
