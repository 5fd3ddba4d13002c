//! Outputs tiled from transforms of the input: where every train output is `down` x `across`
//! blocks of its input's shape (the same numbers for every pair), each block is looked up
//! among the grid values enumerated (the input mirrored, rotated, recoloured...), by its
//! values on the train pairs. When every block has a value, `vconcat(hconcat(a, b), ...)` of
//! them is a candidate, found as soon as its blocks are rather than levels of concatenations
//! later.

use crate::dsl::shared::Shared;
use crate::dsl::{Grid, Value};

/// The blocks the train outputs are cut into.
pub struct Tiles {
    pub down: usize,
    pub across: usize,
    /// Per block (row-major), its train values.
    pub blocks: Vec<Vec<Value>>,
}

/// The most blocks a side has.
const MAX_SIDE: usize = 4;

impl Tiles {
    /// The blocks of the train outputs, if each is `down` x `across` blocks of its input's
    /// shape, for one `down` and `across` (not both 1).
    pub fn new(train: &[(Shared<Grid>, Shared<Grid>)]) -> Option<Tiles> {
        let (i, o) = train.first()?;
        if i.h == 0 || i.w == 0 || o.h % i.h != 0 || o.w % i.w != 0 {
            return None;
        }
        let (down, across) = (o.h / i.h, o.w / i.w);
        let fits =
            |(i, o): &(Shared<Grid>, Shared<Grid>)| i.h > 0 && i.w > 0 && o.h == down * i.h && o.w == across * i.w;
        if down * across == 1 || down > MAX_SIDE || across > MAX_SIDE || !train.iter().all(fits) {
            return None;
        }
        let blocks = (0..down * across)
            .map(|b| {
                let (r, c) = (b / across, b % across);
                train
                    .iter()
                    .map(|(i, o)| {
                        let cells = (0..i.h)
                            .flat_map(|y| {
                                let row = (r * i.h + y) * o.w + c * i.w;
                                o.cells[row..row + i.w].iter().copied()
                            })
                            .collect();
                        Value::Grid(Shared::new(Grid::new(i.h, i.w, cells)))
                    })
                    .collect()
            })
            .collect();
        Some(Tiles { down, across, blocks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_cut_into_blocks_of_the_input_shape() {
        let input = Shared::new(Grid::new(1, 2, vec![1, 2]));
        let output = Shared::new(Grid::new(2, 4, vec![1, 2, 2, 1, 3, 4, 5, 6]));
        let tiles = Tiles::new(&[(input.clone(), output)]).unwrap();
        assert_eq!((tiles.down, tiles.across), (2, 2));
        let block = |b: usize| match &tiles.blocks[b][0] {
            Value::Grid(g) => g.cells.clone(),
            _ => unreachable!(),
        };
        assert_eq!(
            (block(0), block(1), block(2), block(3)),
            (vec![1, 2], vec![2, 1], vec![3, 4], vec![5, 6])
        );
        assert!(Tiles::new(&[(input.clone(), input)]).is_none());
    }
}
