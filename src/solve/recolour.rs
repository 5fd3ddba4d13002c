//! A colour map learned from the train pairs, as the last step of a program: where a grid
//! value has each train output's shape and every cell of one colour becomes one colour of the
//! output (the same map on every pair), the program followed by that map is a candidate. The
//! map is written as `replace` steps, through the free colour `TEN` where it permutes colours.

use crate::dsl::{Grid, Value};

/// What each colour 0..9 becomes (`None`: unchanged, or not seen on the train pairs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColourMap([Option<i32>; 10]);

impl ColourMap {
    /// The map taking every train value to its target, if there is one and it changes some
    /// colour; `values` and `targets` are the train pairs' grids, in order.
    pub fn learn(values: &[Value], targets: &[Value]) -> Option<ColourMap> {
        let mut map = [None; 10];
        // In how many pairs each colour changes: a change seen in one pair of several is what
        // fits anything (each pair's output one cell of its own colour), not a rule.
        let mut pairs_changing = [0usize; 10];
        for (v, t) in values.iter().zip(targets) {
            let mut changes = [false; 10];
            let (Value::Grid(v), Value::Grid(t)) = (v, t) else {
                return None;
            };
            if (v.h, v.w) != (t.h, t.w) {
                return None;
            }
            for (&a, &b) in v.cells.iter().zip(&t.cells) {
                let k = usize::try_from(a).ok()?;
                let slot = map.get_mut(k)?;
                changes[k] |= a != b;
                match slot {
                    None => *slot = Some(b),
                    Some(seen) if *seen == b => {}
                    Some(_) => return None,
                }
            }
            pairs_changing
                .iter_mut()
                .zip(changes)
                .for_each(|(n, c)| *n += c as usize);
        }
        let needed = values.len().min(2);
        let changed: Vec<usize> = (0..10).filter(|&a| map[a].is_some_and(|b| b != a as i32)).collect();
        let supported = changed.iter().all(|&a| pairs_changing[a] >= needed);
        (!changed.is_empty() && supported).then_some(ColourMap(map))
    }

    /// Whether the map says what every colour of `g` becomes: a map learned from colours the
    /// test input does not have says nothing of it (each pair swapping its own two colours
    /// fits every pair and none of the tests).
    pub fn covers(&self, g: &Grid) -> bool {
        g.cells.iter().all(|&c| {
            usize::try_from(c)
                .ok()
                .and_then(|k| self.0.get(k))
                .is_some_and(Option::is_some)
        })
    }

    pub fn apply(&self, g: &Grid) -> Grid {
        let cells = g
            .cells
            .iter()
            .map(|&c| {
                usize::try_from(c)
                    .ok()
                    .and_then(|k| self.0.get(k).copied().flatten())
                    .unwrap_or(c)
            })
            .collect();
        Grid::new(g.h, g.w, cells)
    }

    /// The map as `replace(grid, from, to)` steps in order: a colour is replaced only once
    /// nothing still to be replaced maps onto it; a cycle goes through `TEMPORARY`.
    pub fn replacements(&self) -> Vec<(i32, i32)> {
        let mut pending: Vec<(i32, i32)> = (0..10)
            .filter_map(|a| self.0[a as usize].filter(|&b| b != a).map(|b| (a, b)))
            .collect();
        let mut steps = Vec::new();
        while !pending.is_empty() {
            let free = pending.iter().position(|&(_, b)| !pending.iter().any(|&(a, _)| a == b));
            match free {
                Some(k) => steps.push(pending.remove(k)),
                None => {
                    let (a, b) = pending[0];
                    steps.push((a, TEMPORARY));
                    pending[0] = (TEMPORARY, b);
                }
            }
        }
        steps
    }
}

/// A colour no ARC grid has (`TEN`), for permutations.
const TEMPORARY: i32 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::shared::Shared;

    fn grid(rows: &[&[i32]]) -> Value {
        let cells = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Value::Grid(Shared::new(Grid::new(rows.len(), rows[0].len(), cells)))
    }

    fn replaced(g: &Value, steps: &[(i32, i32)]) -> Value {
        let Value::Grid(g) = g else { unreachable!() };
        let cells = g
            .cells
            .iter()
            .map(|&c| steps.iter().fold(c, |c, &(a, b)| if c == a { b } else { c }))
            .collect();
        Value::Grid(Shared::new(Grid::new(g.h, g.w, cells)))
    }

    #[test]
    fn a_swap_is_learned_and_its_replacements_give_the_targets() {
        let values = [grid(&[&[1, 2], &[0, 1]]), grid(&[&[2, 1], &[0, 0]])];
        let targets = [grid(&[&[2, 1], &[0, 2]]), grid(&[&[1, 2], &[0, 0]])];
        let map = ColourMap::learn(&values, &targets).expect("a consistent map");
        let steps = map.replacements();
        for (v, t) in values.iter().zip(&targets) {
            assert_eq!(&replaced(v, &steps), t);
            let Value::Grid(g) = v else { unreachable!() };
            assert_eq!(&Value::Grid(Shared::new(map.apply(g))), t);
        }
    }

    #[test]
    fn a_change_seen_in_one_pair_of_several_is_refused() {
        let values = [grid(&[&[1]]), grid(&[&[2]])];
        assert_eq!(ColourMap::learn(&values, &[grid(&[&[5]]), grid(&[&[6]])]), None);
        let values = [grid(&[&[1, 2]]), grid(&[&[2, 1]])];
        assert!(ColourMap::learn(&values, &[grid(&[&[5, 6]]), grid(&[&[6, 5]])]).is_some());
    }

    #[test]
    fn inconsistent_shapes_or_colours_and_identity_are_refused() {
        let a = grid(&[&[1, 1]]);
        assert_eq!(ColourMap::learn(std::slice::from_ref(&a), &[grid(&[&[2, 3]])]), None);
        assert_eq!(ColourMap::learn(std::slice::from_ref(&a), &[grid(&[&[2], &[2]])]), None);
        assert_eq!(
            ColourMap::learn(std::slice::from_ref(&a), std::slice::from_ref(&a)),
            None
        );
    }
}
