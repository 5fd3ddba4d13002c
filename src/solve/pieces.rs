//! Outputs assembled from pieces drawn on a base: where a grid value (the input, a half of
//! it, a crop) has every train output's shape, a patch the enumerator builds is a *piece* when
//! filling it with one colour (or painting it, for an object) agrees with every train output
//! on every cell it covers, and changes some cell that must change. One piece, or two, whose
//! changes together are exactly the cells that differ between each base and its output make a
//! candidate `fill(fill(base, a, p), b, q)` (or three pieces, the third changing exactly what
//! the other two leave): the pieces are found as the patches are, a level
//! before a call of `fill` on them would be.

use hashbrown::HashMap;
use smallvec::SmallVec;

use crate::dsl::shared::Shared;
use crate::dsl::{Grid, Value};

/// Cells of a grid of at most 30x30, one bit each, row-major.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Cells([u64; 15]);

impl Cells {
    const EMPTY: Cells = Cells([0; 15]);

    fn set(&mut self, k: usize) {
        self.0[k / 64] |= 1 << (k % 64);
    }

    fn union(&self, other: &Cells) -> Cells {
        let mut out = *self;
        out.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a |= b);
        out
    }

    /// The cells of `self` not in `other`.
    fn minus(&self, other: &Cells) -> Cells {
        let mut out = *self;
        out.0.iter_mut().zip(&other.0).for_each(|(a, b)| *a &= !b);
        out
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

/// How a piece is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ink {
    /// `fill(grid, colour, patch)` with the colour of this node.
    Fill { colour: u32 },
    /// `paint(grid, object)`.
    Paint,
}

/// A patch node and how it is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub patch: u32,
    pub ink: Ink,
}

struct Found {
    piece: Piece,
    /// Per train pair, the cells it changes that must change.
    changes: Vec<Cells>,
}

/// The pieces of one task.
pub struct Pieces {
    inputs: Vec<Shared<Grid>>,
    outputs: Vec<Shared<Grid>>,
    /// Per train pair, the cells whose colour the output changes.
    differ: Vec<Cells>,
    found: Vec<Found>,
    /// The pieces kept, by the cells they change (for the third piece of three).
    by_changes: HashMap<Vec<Cells>, usize>,
}

/// Pieces kept for pairing; past this many, new pieces are still tried alone and against
/// the kept ones.
const MAX_KEPT: usize = 4000;

/// The kept pieces a new one is tried with as one of three (the first found, the cheapest).
const MAX_PAIRED: usize = 500;

impl Pieces {
    /// The pieces drawn on a base, if every base (one per train pair) has its output's shape
    /// and some differ from theirs.
    pub fn new(bases: &[Shared<Grid>], outputs: &[Shared<Grid>]) -> Option<Pieces> {
        let same_shapes = bases
            .iter()
            .zip(outputs)
            .all(|(i, o)| (i.h, i.w) == (o.h, o.w) && i.h * i.w <= 900);
        if !same_shapes {
            return None;
        }
        let differ: Vec<Cells> = bases
            .iter()
            .zip(outputs)
            .map(|(i, o)| {
                let mut cells = Cells::EMPTY;
                (0..i.cells.len())
                    .filter(|&k| i.cells[k] != o.cells[k])
                    .for_each(|k| cells.set(k));
                cells
            })
            .collect();
        if differ.iter().all(Cells::is_empty) {
            return None;
        }
        Some(Pieces {
            inputs: bases.to_vec(),
            outputs: outputs.to_vec(),
            differ,
            found: Vec::new(),
            by_changes: HashMap::new(),
        })
    }

    /// Considers a new patch node (`values`: its train values first). `colour_of` finds a
    /// colour node with the given train values. Returns the pieces, up to three, that make
    /// every train output from its base, if this patch completes such a set: alone, with any
    /// kept piece, or with a kept piece and a third that changes exactly the cells left.
    pub fn consider(
        &mut self,
        patch: u32,
        values: &[Value],
        colour_of: impl Fn(&[i64]) -> Option<u32>,
    ) -> Option<SmallVec<[Piece; 3]>> {
        let n = self.outputs.len();
        let (changes, ink) = self
            .fill_changes(&values[..n], colour_of)
            .or_else(|| self.paint_changes(&values[..n]))?;
        let piece = Piece { patch, ink };
        if changes == self.differ {
            return Some(SmallVec::from_slice(&[piece]));
        }
        let completes = self.found.iter().find(|f| {
            f.changes
                .iter()
                .zip(&changes)
                .zip(&self.differ)
                .all(|((a, b), d)| a.union(b) == *d)
        });
        if let Some(other) = completes {
            return Some(SmallVec::from_slice(&[other.piece, piece]));
        }
        for other in self.found.iter().take(MAX_PAIRED) {
            let left: Vec<Cells> = self
                .differ
                .iter()
                .zip(&changes)
                .zip(&other.changes)
                .map(|((d, a), b)| d.minus(&a.union(b)))
                .collect();
            if let Some(&third) = self.by_changes.get(&left) {
                return Some(SmallVec::from_slice(&[other.piece, self.found[third].piece, piece]));
            }
        }
        if self.found.len() < MAX_KEPT {
            self.by_changes.entry(changes.clone()).or_insert(self.found.len());
            self.found.push(Found { piece, changes });
        }
        None
    }

    /// The cells one colour per pair changes, if filling the patch with it agrees with every
    /// output and changes some cell, and a colour node holds those colours.
    fn fill_changes(&self, values: &[Value], colour_of: impl Fn(&[i64]) -> Option<u32>) -> Option<(Vec<Cells>, Ink)> {
        let mut colours = Vec::with_capacity(values.len());
        let mut changes = Vec::with_capacity(values.len());
        for (k, v) in values.iter().enumerate() {
            let (out, input) = (&self.outputs[k], &self.inputs[k]);
            let mut colour = None;
            let mut cells = Cells::EMPTY;
            let mut visit = |i: i32, j: i32| -> bool {
                let Some(at) = index(out, i, j) else { return true };
                let c = out.cells[at];
                if *colour.get_or_insert(c) != c {
                    return false;
                }
                if input.cells[at] != c {
                    cells.set(at);
                }
                true
            };
            let agrees = match v {
                Value::Indices(l) => l.iter().all(|l| visit(l.i, l.j)),
                Value::Object(o) => o.iter().all(|c| visit(c.i, c.j)),
                _ => false,
            };
            if !agrees {
                return None;
            }
            colours.push(colour.map_or(-1, i64::from));
            changes.push(cells);
        }
        if changes.iter().all(Cells::is_empty) {
            return None;
        }
        // A pair whose patch has no cell in the grid takes any colour: use another pair's.
        let known = colours.iter().copied().find(|&c| c >= 0)?;
        colours.iter_mut().filter(|c| **c < 0).for_each(|c| *c = known);
        Some((
            changes,
            Ink::Fill {
                colour: colour_of(&colours)?,
            },
        ))
    }

    /// The cells painting an object changes, if its every cell has the output's colour.
    fn paint_changes(&self, values: &[Value]) -> Option<(Vec<Cells>, Ink)> {
        let mut changes = Vec::with_capacity(values.len());
        for (k, v) in values.iter().enumerate() {
            let Value::Object(o) = v else { return None };
            let (out, input) = (&self.outputs[k], &self.inputs[k]);
            let mut cells = Cells::EMPTY;
            for c in o.iter() {
                if let Some(at) = index(out, c.i, c.j) {
                    if out.cells[at] != c.color {
                        return None;
                    }
                    if input.cells[at] != c.color {
                        cells.set(at);
                    }
                }
            }
            changes.push(cells);
        }
        (!changes.iter().all(Cells::is_empty)).then_some((changes, Ink::Paint))
    }
}

fn index(g: &Grid, i: i32, j: i32) -> Option<usize> {
    let (i, j) = (usize::try_from(i).ok()?, usize::try_from(j).ok()?);
    (i < g.h && j < g.w).then(|| i * g.w + j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dsl::Loc;

    fn grid(h: usize, w: usize, cells: &[i32]) -> Shared<Grid> {
        Shared::new(Grid::new(h, w, cells.to_vec()))
    }

    #[test]
    fn two_pieces_that_cover_the_changes_complete_the_outputs() {
        // Input all 0; output has a 1 at (0,0) and a 2 at (1,1).
        let mut pieces = Pieces::new(&[grid(2, 2, &[0, 0, 0, 0])], &[grid(2, 2, &[1, 0, 0, 2])]).unwrap();
        let colour_of = |c: &[i64]| Some(c[0] as u32 + 100);
        let at = |i, j| Value::indices(vec![Loc { i, j }]);
        // A patch that would overwrite a cell wrongly is no piece.
        assert!(pieces
            .consider(
                7,
                &[Value::indices(vec![Loc { i: 0, j: 0 }, Loc { i: 0, j: 1 }])],
                colour_of
            )
            .is_none());
        assert!(pieces.consider(8, &[at(0, 0)], colour_of).is_none());
        let done = pieces
            .consider(9, &[at(1, 1)], colour_of)
            .expect("two pieces cover the changes");
        assert_eq!(
            done.as_slice(),
            &[
                Piece {
                    patch: 8,
                    ink: Ink::Fill { colour: 101 }
                },
                Piece {
                    patch: 9,
                    ink: Ink::Fill { colour: 102 }
                }
            ]
        );
    }

    #[test]
    fn a_third_piece_completes_what_two_leave() {
        let mut pieces = Pieces::new(&[grid(1, 3, &[0, 0, 0])], &[grid(1, 3, &[1, 2, 3])]).unwrap();
        let colour_of = |c: &[i64]| Some(c[0] as u32 + 100);
        let at = |j| Value::indices(vec![Loc { i: 0, j }]);
        assert!(pieces.consider(1, &[at(0)], colour_of).is_none());
        assert!(pieces.consider(2, &[at(1)], colour_of).is_none());
        let done = pieces
            .consider(3, &[at(2)], colour_of)
            .expect("three pieces cover the changes");
        let mut patches: Vec<u32> = done.iter().map(|p| p.patch).collect();
        patches.sort();
        assert_eq!(patches, vec![1, 2, 3]);
    }

    #[test]
    fn bases_of_other_shapes_have_no_pieces() {
        assert!(Pieces::new(&[grid(1, 2, &[0, 0])], &[grid(2, 1, &[0, 0])]).is_none());
    }
}
