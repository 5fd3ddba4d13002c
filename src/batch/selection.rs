//! Taking some lanes out of a batch and putting their results back: the one way every layer
//! does "these lanes go to the fast path (a batched op, a device, a call that can run), the
//! others elsewhere, results in lane order".

use rayon::prelude::*;

use super::Arg;

/// Fewest lanes a thread tests at a time in [`Selection::par_new`].
const PARALLEL_LANES: usize = 256;

/// The lanes of `0..total` a predicate took, ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    total: usize,
    taken: Vec<usize>,
}

impl Selection {
    /// The lanes of `0..total` for which `take` holds (called once per lane, in order).
    pub fn new(total: usize, take: impl FnMut(&usize) -> bool) -> Selection {
        Selection {
            total,
            taken: (0..total).filter(take).collect(),
        }
    }

    /// [`Selection::new`] with `take` called on the thread pool, for a predicate that reads
    /// each lane's data (a kernel's test of every cell's colour). A batch one thread would
    /// test at once is tested here, without a trip to the pool.
    pub fn par_new(total: usize, take: impl Fn(usize) -> bool + Sync) -> Selection {
        if total <= PARALLEL_LANES {
            return Selection::new(total, |&k| take(k));
        }
        Selection {
            total,
            taken: (0..total)
                .into_par_iter()
                .with_min_len(PARALLEL_LANES)
                .filter(|&k| take(k))
                .collect(),
        }
    }

    /// The lanes taken, ascending.
    pub fn taken(&self) -> &[usize] {
        &self.taken
    }

    /// How many lanes were taken.
    pub fn len(&self) -> usize {
        self.taken.len()
    }

    pub fn is_empty(&self) -> bool {
        self.taken.is_empty()
    }

    /// Whether every lane was taken.
    pub fn is_all(&self) -> bool {
        self.taken.len() == self.total
    }

    /// The lanes not taken.
    pub fn rest(&self) -> Selection {
        let mut next = self.taken.iter().peekable();
        Selection::new(self.total, |&k| next.next_if(|&&t| t == k).is_none())
    }

    /// The arguments on the taken lanes only.
    pub fn args<'a>(&self, args: &[Arg<'a>]) -> Vec<Arg<'a>> {
        args.iter().map(|a| a.select(&self.taken)).collect()
    }

    /// One result per lane, in lane order: the taken lanes' from `taken`, which gives one per
    /// taken lane in the order of [`taken`](Self::taken) (a batched op's results on them), the
    /// others' from `rest(lane)`.
    ///
    /// # Panics
    /// If `taken` gives fewer results than lanes were taken: a backend broke its contract.
    pub fn merge<T>(&self, taken: impl IntoIterator<Item = T>, mut rest: impl FnMut(usize) -> T) -> Vec<T> {
        let mut taken = taken.into_iter();
        let mut next = self.taken.iter().peekable();
        (0..self.total)
            .map(|k| match next.next_if(|&&t| t == k) {
                Some(_) => taken.next().expect("one result per taken lane"),
                None => rest(k),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The taken lanes and the rest partition the lanes, and merging results computed on
        /// each puts every lane's result back at its lane.
        #[test]
        fn merge_puts_every_result_back_at_its_lane(picks in proptest::collection::vec(any::<bool>(), 0..40)) {
            let taken = Selection::new(picks.len(), |&k| picks[k]);
            let rest = taken.rest();
            prop_assert_eq!(taken.len() + rest.len(), picks.len());
            prop_assert!(taken.taken().iter().all(|&k| picks[k]));
            prop_assert!(rest.taken().iter().all(|&k| !picks[k]));
            prop_assert_eq!(taken.is_all(), rest.is_empty());
            let on_taken: Vec<(usize, &str)> = taken.taken().iter().map(|&k| (k, "taken")).collect();
            let mut on_rest = rest.taken().iter().map(|&k| (k, "rest"));
            let merged = taken.merge(on_taken, |_| on_rest.next().unwrap());
            for (k, (lane, side)) in merged.into_iter().enumerate() {
                prop_assert_eq!(lane, k);
                prop_assert_eq!(side, if picks[k] { "taken" } else { "rest" });
            }
        }

        /// On the thread pool, the same lanes in the same order as one lane at a time (past
        /// the lanes a thread tests at once, so that the work is split).
        #[test]
        fn par_new_takes_what_new_takes(picks in proptest::collection::vec(any::<bool>(), 0..3 * PARALLEL_LANES)) {
            prop_assert_eq!(Selection::par_new(picks.len(), |k| picks[k]), Selection::new(picks.len(), |&k| picks[k]));
        }
    }

    #[test]
    fn arguments_follow_the_taken_lanes() {
        let values: Vec<crate::dsl::Value> = (0..5).map(crate::dsl::Value::Int).collect();
        let each = Arg::Each(values.iter().collect());
        let same = Arg::Same(&values[4]);
        let odd = Selection::new(5, |&k| k % 2 == 1);
        let args = odd.args(&[each, same]);
        assert_eq!((args[0].get(0), args[0].get(1)), (&values[1], &values[3]));
        assert_eq!(args[1].get(1), &values[4]);
    }
}
