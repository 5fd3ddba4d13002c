//! `objects` in the form a device computes them: a word per cell that gives its label (the
//! row-major index of the first cell of the cell's component, its root) plus a few numbers per
//! object (its size and its first cell in the canonical order), kept in the canonical order of
//! the objects.
//!
//! The CPU path builds every object's sorted cell vector; from labels that is most of the work.
//! A [`Labelled`] set answers `len`, `size`, `sizefilter`, `colorfilter` and `argmax`/`argmin`
//! by `size` from the numbers alone (filters give a labelled subset, `argmax` builds only the
//! object it picks). Any other use reads its members through
//! [`Labelled::members`], which builds them once, exactly as the CPU path does (same objects,
//! same order), and keeps them.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::shared::{unconfined, Shared};
use super::value::{Cell, Color, GridView, Items, Value};

/// A background cell's word, as the objects kernel writes it. A root's word (its component's
/// first cell's) is this plus the component's size; any other cell's is its label.
const BACKGROUND: u16 = 0x8000;

/// No place in a list being built: what `per_cell` holds for a cell that is no object's
/// root. Every place is below it.
const NO_PLACE: u32 = u32::MAX;

/// The label of cell `c` from its word: its root's index; `None` for the background.
fn label(word: u16, c: usize) -> Option<usize> {
    match word {
        BACKGROUND => None,
        root if root > BACKGROUND => Some(c),
        label => Some(label.into()),
    }
}

/// What a labelled set knows of one of its objects without listing its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The row-major index of its first cell: its label.
    root: u16,
    /// Its first cell in the canonical order: the row-major index, and the colour.
    first: u16,
    pub color: Color,
    /// Its number of cells.
    pub size: u32,
}

impl ObjectMeta {
    /// Its place in the canonical order: by its first cell in the order of cells, colour
    /// first (two objects never share a cell).
    fn key(&self) -> i64 {
        i64::from(self.color) << 16 | i64::from(self.first)
    }
}

/// A colour as the kernels got it: a staged byte, an `i8`.
fn staged_color(byte: u8) -> Color {
    Color::from(byte as i8)
}

/// How many grids ahead of the one being unpacked its order is asked for.
const PREFETCH_AHEAD: usize = 4;

/// Asks for the cache line that `bytes` starts in, ahead of its first read: a hint, which
/// does nothing where there is no prefetch instruction.
#[inline]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(first) = bytes.first() {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing and cannot fault; SSE is part of every x86_64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(first).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Marks each object's root in `per_cell` (one entry per cell of a grid of `cells` cells)
/// with the object's place in `objects`; false where a root comes twice.
fn place_roots(objects: &[ObjectMeta], cells: usize, per_cell: &mut Vec<u32>) -> bool {
    per_cell.clear();
    per_cell.resize(cells, NO_PLACE);
    for (k, o) in objects.iter().enumerate() {
        let place = &mut per_cell[o.root as usize];
        if *place != NO_PLACE {
            return false;
        }
        *place = k as u32;
    }
    true
}

/// What the grids unpacked together share, so that a grid's set takes no allocation but its
/// value's: their words back to back, their colours where an object may have several, and
/// their objects.
struct Run {
    words: Box<[u16]>,
    /// `None` with `univalued`: each object has its first cell's colour.
    colors: Option<Box<[i8]>>,
    objects: Box<[ObjectMeta]>,
}

/// One grid of a run, shared by a labelled set and the subsets filtered from it: its words
/// (which give its labels) and colours are the run's `cells`.
#[derive(Clone)]
struct Plane {
    run: Arc<Run>,
    cells: Range<u32>,
    w: u16,
}

impl Plane {
    fn cells(&self) -> Range<usize> {
        self.cells.start as usize..self.cells.end as usize
    }

    fn words(&self) -> &[u16] {
        &self.run.words[self.cells()]
    }

    fn colors(&self) -> Option<&[i8]> {
        Some(&self.run.colors.as_ref()?[self.cells()])
    }
}

/// The objects of a labelled set: some of its run's, or a list of its own (a subset filtered
/// from another set).
enum Objects {
    Run(Range<u32>),
    Own(Arc<[ObjectMeta]>),
}

/// A set of objects of one grid held as its words (its labels) plus [`ObjectMeta`] (in the
/// canonical order), its members built on first use.
pub struct Labelled {
    plane: Plane,
    objects: Objects,
    members: OnceLock<Vec<Value>>,
}

/// Working arrays, reused across calls on a thread.
#[derive(Default)]
struct Scratch {
    /// Per root (row-major index): its object's place in a list being built.
    per_cell: Vec<u32>,
    /// The objects of the grids being unpacked, before they go to their run.
    objects: Vec<ObjectMeta>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Labelled {
    /// The most cells of a grid whose objects come as words: a word holds a size or a label
    /// in 15 bits.
    pub const MAX_CELLS: usize = 0x7FFF;

    /// The objects of each of `grids`, whose colours the kernel got as `colors` (a byte, an
    /// `i8`, per cell, the grids back to back), from what the objects kernel wrote for them,
    /// two sections of a little-endian 16-bit word per cell, the grids back to back in each:
    /// - `words`: 0x8000 for a background cell, 0x8000 plus its component's size for the
    ///   first cell (row-major) of a component, the root, and the root's index, the cell's
    ///   label, for any other cell;
    /// - `order`: the roots in the canonical order of their objects, as many as there are
    ///   objects (a grid's other words there are not read).
    ///
    /// The grids' words, colours and objects share one buffer each.
    ///
    /// A grid's set is `None` when its words are no such thing: a label not before its cell,
    /// sizes that do not add up to the labelled cells (in count, and in the sum of their
    /// labels: a cell counted to the wrong root, or labelled with a cell that is no root), an
    /// order that names a cell that is no root or does not ascend; also when the grid is no
    /// device grid (a side past 255, more than [`MAX_CELLS`](Labelled::MAX_CELLS) cells).
    /// Every set is `None` when there are not as many colours and words of each as cells. With
    /// `univalued` every component has one colour (its first cell's); otherwise its cells are
    /// sorted when built.
    pub fn from_words(
        grids: &[GridView<'_>],
        colors: &[u8],
        words: &[u8],
        order: &[u8],
        univalued: bool,
    ) -> impl Iterator<Item = Option<Labelled>> {
        let cells: usize = grids.iter().map(|g| g.cells.len()).sum();
        let decodes = colors.len() == cells && words.len() == 2 * cells && order.len() == 2 * cells;
        let words: Box<[u16]> = if decodes {
            words
                .chunks_exact(2)
                .map(|w| u16::from_le_bytes([w[0], w[1]]))
                .collect()
        } else {
            Box::default()
        };
        let kept_colors: Option<Box<[i8]>> = (!univalued && decodes).then(|| colors.iter().map(|&c| c as i8).collect());
        // Per grid, its cells and its objects in the run, and its width.
        let mut spans = Vec::with_capacity(grids.len());
        let objects: Box<[ObjectMeta]> = SCRATCH.with_borrow_mut(|Scratch { per_cell, objects }| {
            objects.clear();
            // Each grid's order lies a grid's words past the one before's, out of the
            // hardware prefetcher's reach: waiting for it was a tenth of the host's time. It
            // is asked for `PREFETCH_AHEAD` grids before it is read.
            let mut ahead = grids.iter().scan(0, |at, g| {
                *at += g.cells.len();
                Some(*at)
            });
            for start in ahead.by_ref().take(PREFETCH_AHEAD - 1) {
                prefetch(order.get(2 * start..).unwrap_or_default());
            }
            let mut at = 0;
            // Where they do not decode, no grid is listed.
            for g in grids.iter().filter(|_| decodes) {
                let range = at..at + g.cells.len();
                at = range.end;
                if let Some(start) = ahead.next() {
                    prefetch(order.get(2 * start..).unwrap_or_default());
                }
                let first = objects.len();
                let grid = Unpacking {
                    g,
                    words: &words[range.clone()],
                    order: &order[2 * range.start..2 * range.end],
                    colors: &colors[range.clone()],
                    univalued,
                };
                let listed = grid.list_objects(objects) && grid.in_order(&mut objects[first..], per_cell);
                if !listed {
                    objects.truncate(first);
                }
                let span = |r: Range<usize>| r.start as u32..r.end as u32;
                spans.push(listed.then(|| (span(range), span(first..objects.len()), g.w as u16)));
            }
            objects.as_slice().into()
        });
        spans.resize(grids.len(), None);
        let run = Arc::new(Run {
            words,
            colors: kept_colors,
            objects,
        });
        spans.into_iter().map(move |span| {
            let (cells, objects, w) = span?;
            Some(Labelled {
                plane: Plane {
                    run: Arc::clone(&run),
                    cells,
                    w,
                },
                objects: Objects::Run(objects),
                members: OnceLock::new(),
            })
        })
    }

    /// The set of these objects.
    pub fn into_value(self) -> Value {
        Value::Set(Items::labelled(self))
    }

    /// The objects' metadata, in the canonical order.
    pub fn objects(&self) -> &[ObjectMeta] {
        match &self.objects {
            Objects::Run(objects) => &self.plane.run.objects[objects.start as usize..objects.end as usize],
            Objects::Own(objects) => objects,
        }
    }

    /// The set of the objects that `keep` keeps: still labelled, or (where the members were
    /// built already) those members.
    pub fn filter(&self, keep: impl Fn(&ObjectMeta) -> bool) -> Value {
        if let Some(members) = self.members.get() {
            let kept = self.objects().iter().zip(members).filter(|(o, _)| keep(o));
            return Value::set_sorted(kept.map(|(_, m)| m.clone()).collect());
        }
        let objects: Arc<[ObjectMeta]> = self.objects().iter().filter(|o| keep(o)).copied().collect();
        if objects.is_empty() {
            return Value::empty_set();
        }
        Labelled {
            plane: self.plane.clone(),
            objects: Objects::Own(objects),
            members: OnceLock::new(),
        }
        .into_value()
    }

    /// The objects as values, in the canonical order: built on the first call, exactly as the
    /// CPU path builds them (cells in canonical order), and kept, shared (any thread holding
    /// the set may read them).
    pub fn members(&self) -> &[Value] {
        self.members.get_or_init(|| unconfined(|| self.build()))
    }

    /// Whether the members were built already.
    pub fn is_built(&self) -> bool {
        self.members.get().is_some()
    }

    fn build(&self) -> Vec<Value> {
        let (w, words, colors) = (usize::from(self.plane.w), self.plane.words(), self.plane.colors());
        let objects = self.objects();
        let mut comps: Vec<Vec<Cell>> = objects.iter().map(|o| Vec::with_capacity(o.size as usize)).collect();
        SCRATCH.with_borrow_mut(|Scratch { per_cell, .. }| {
            // Per root, its object's place in the output (none for an object filtered out).
            let distinct = place_roots(objects, words.len(), per_cell);
            debug_assert!(distinct, "a labelled set's objects have distinct roots");
            for (c, &word) in words.iter().enumerate() {
                let Some(l) = label(word, c) else { continue };
                let k = per_cell[l] as usize;
                let Some(comp) = comps.get_mut(k) else { continue };
                let color = match colors {
                    Some(colors) => colors[c].into(),
                    None => objects[k].color,
                };
                comp.push(Cell {
                    color,
                    i: (c / w) as i32,
                    j: (c % w) as i32,
                });
            }
        });
        comps
            .into_iter()
            .map(|mut cells| {
                // Row-major order is the canonical order within a one-coloured object.
                if colors.is_some() {
                    cells.sort_unstable();
                }
                Value::Object(Shared::from(cells))
            })
            .collect()
    }
}

/// What [`Unpacking::list_objects`] checks of a grid's words, counted over its cells.
#[cfg_attr(test, derive(Debug, PartialEq))]
struct WordSums {
    /// Whether a label is not before its cell.
    bad: bool,
    /// The background's cells.
    background: u32,
    /// The cells that are labelled (neither background nor a root).
    labels: u32,
    /// The sum of their labels.
    label_sum: u32,
}

impl WordSums {
    /// The sums of `words`, on the widest vectors the CPU has: this loop over every cell is
    /// most of what listing the objects costs.
    fn of(words: &[u16]) -> WordSums {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[target_feature(enable = "avx2")]
            fn on_avx2(words: &[u16]) -> WordSums {
                WordSums::on_any_cpu(words)
            }
            // SAFETY: the CPU has AVX2.
            return unsafe { on_avx2(words) };
        }
        WordSums::on_any_cpu(words)
    }

    /// Without branches, so that it runs on vectors. The sums fit 32 bits, as a grid has at
    /// most [`Labelled::MAX_CELLS`] cells.
    #[inline(always)]
    fn on_any_cpu(words: &[u16]) -> WordSums {
        let (mut bad, mut background, mut labels, mut label_sum) = (false, 0u32, 0u32, 0u32);
        for (c, &w) in words.iter().enumerate() {
            let labelled = w < BACKGROUND;
            bad |= labelled & (w >= c as u16);
            background += u32::from(w == BACKGROUND);
            labels += u32::from(labelled);
            // All ones where labelled.
            label_sum += u32::from(w & u16::from(labelled).wrapping_neg());
        }
        WordSums {
            bad,
            background,
            labels,
            label_sum,
        }
    }
}

/// One grid's part of the colours, the words and the order being unpacked.
struct Unpacking<'a> {
    g: &'a GridView<'a>,
    /// An `i8` per cell.
    colors: &'a [u8],
    words: &'a [u16],
    order: &'a [u8],
    univalued: bool,
}

impl Unpacking<'_> {
    /// Checks the grid's words (see [`Labelled::from_words`]) and appends an object per root,
    /// in the kernel's order, each with its root's colour. False where they do not decode.
    fn list_objects(&self, objects: &mut Vec<ObjectMeta>) -> bool {
        let Unpacking {
            g,
            colors,
            words,
            order,
            univalued,
        } = *self;
        if g.h > 255 || g.w > 255 || words.len() > Labelled::MAX_CELLS {
            return false;
        }
        let WordSums {
            bad,
            background,
            labels,
            label_sum,
        } = WordSums::of(words);
        if bad {
            return false;
        }
        // Every cell is background, labelled or a root.
        let roots = words.len() as u32 - background - labels;
        // As many objects as roots, each named by a root. With one colour per object, the
        // root is its first cell, and the objects ascend by (colour, root), so none comes
        // twice; otherwise `in_order` checks. Then the roots named are all the roots, and
        // their sums are the words' (in 64 bits, as a root named twice can add past 32).
        let (mut sizes, mut root_sum, mut root_moment) = (0u64, 0u64, 0u64);
        let (mut last, mut ascending) = (i64::MIN, true);
        objects.reserve(roots as usize);
        for named in order.chunks_exact(2).take(roots as usize) {
            let r = u16::from_le_bytes([named[0], named[1]]);
            let c = usize::from(r);
            let Some(word) = words.get(c).filter(|&&w| w > BACKGROUND) else {
                return false;
            };
            let size = u32::from(word & !BACKGROUND);
            sizes += u64::from(size);
            root_sum += u64::from(r);
            root_moment += u64::from(size) * u64::from(r);
            let object = ObjectMeta {
                root: r,
                first: r,
                color: staged_color(colors[c]),
                size,
            };
            ascending &= object.key() > last;
            last = object.key();
            objects.push(object);
        }
        // The sizes add up to the cells that are not background, and each cell's label is
        // counted to its root (a root labels itself): so the sizes are right, unless errors
        // cancel.
        let labelled = u64::from(labels + roots);
        sizes == labelled && u64::from(label_sum) + root_sum == root_moment && (ascending || !univalued)
    }

    /// Where an object may have several colours, finds each one's first cell (its least
    /// colour, then row-major) and whether the objects come in the canonical order
    /// ([`ObjectMeta::key`]). False where they do not, or where a label names no root or a
    /// root comes twice (errors in the words that cancelled in the sums). With one colour per
    /// object, [`Unpacking::list_objects`] has checked the order.
    fn in_order(&self, objects: &mut [ObjectMeta], per_cell: &mut Vec<u32>) -> bool {
        let Unpacking {
            colors,
            words,
            univalued,
            ..
        } = *self;
        if univalued {
            return true;
        }
        if !place_roots(objects, words.len(), per_cell) {
            return false;
        }
        for (c, (&word, &color)) in words.iter().zip(colors).enumerate() {
            let Some(l) = label(word, c) else { continue };
            let color = staged_color(color);
            // A label names a root, unless the words' errors cancelled in the sums.
            let Some(o) = objects.get_mut(per_cell[l] as usize) else {
                return false;
            };
            if color < o.color {
                (o.color, o.first) = (color, c as u16);
            }
        }
        objects.windows(2).all(|pair| pair[0].key() < pair[1].key())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The vector loop, on whichever vectors this CPU has, counts as a loop over the
        /// cells with a branch per kind of word does.
        #[test]
        fn word_sums_on_vectors_are_the_cells_counted_one_by_one(
            words in prop::collection::vec(prop_oneof![Just(BACKGROUND), 0x8001u16.., 0u16..0x8000, 0u16..64], 0..2000)
        ) {
            let mut want = WordSums { bad: false, background: 0, labels: 0, label_sum: 0 };
            for (c, &w) in words.iter().enumerate() {
                match w {
                    BACKGROUND => want.background += 1,
                    root if root > BACKGROUND => {}
                    label => {
                        want.labels += 1;
                        want.label_sum += u32::from(label);
                        want.bad |= usize::from(label) >= c;
                    }
                }
            }
            prop_assert_eq!(WordSums::of(&words), want);
        }
    }
}
