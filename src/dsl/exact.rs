//! Collecting what may fail into a vector sized once. `collect::<Option<Vec<_>>>()` and
//! `collect::<Result<Vec<_>, _>>()` hide the iterator's length from the vector, which then
//! starts at four items and doubles: a shifted patch of 40 cells was four reallocations and
//! copies, a recoloured 30 x 30 grid eight. These take the length of an exact-size iterator
//! once the first item is in (a first item that fails allocates nothing, which the
//! constructors that try one unboxed form after another rely on).

/// `items.collect::<Result<Vec<T>, E>>()`: every item, or the first error.
pub fn try_collect<T, E>(mut items: impl ExactSizeIterator<Item = Result<T, E>>) -> Result<Vec<T>, E> {
    let Some(first) = items.next() else {
        return Ok(Vec::new());
    };
    let first = first?;
    let mut out = Vec::with_capacity(items.len() + 1);
    out.push(first);
    for item in items {
        out.push(item?);
    }
    Ok(out)
}

/// `items.collect::<Option<Vec<T>>>()`: every item, or `None` at the first that is `None`.
pub fn collect_some<T>(items: impl ExactSizeIterator<Item = Option<T>>) -> Option<Vec<T>> {
    try_collect(items.map(|item| item.ok_or(()))).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The same as the standard library's collect, and sized for every item.
        #[test]
        fn collecting_gives_what_collect_gives_sized_once(items: Vec<Option<u8>>) {
            let got = collect_some(items.iter().copied());
            proptest::prop_assert_eq!(&got, &items.iter().copied().collect::<Option<Vec<u8>>>());
            if let Some(got) = got.filter(|v| !v.is_empty()) {
                proptest::prop_assert_eq!(got.capacity(), items.len());
            }
            let results = items.iter().enumerate().map(|(k, x)| x.ok_or(k));
            proptest::prop_assert_eq!(try_collect(results.clone()), results.collect::<Result<Vec<u8>, usize>>());
        }
    }

    #[test]
    fn collecting_stops_at_the_first_failure() {
        let mut calls = 0;
        let got = collect_some([Some(1u8), None, Some(2)].into_iter().inspect(|_| calls += 1));
        assert_eq!((got, calls), (None, 2));
    }
}
