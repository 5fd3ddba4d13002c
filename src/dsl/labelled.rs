//! `objects` in the form a device computes them: a label per cell (the row-major index of the
//! first cell of the cell's component) plus a few numbers per object (its size and its first
//! cell in the canonical order), kept in the canonical order of the objects.
//!
//! The CPU path builds every object's sorted cell vector; from labels that is most of the work.
//! A [`Labelled`] set answers `len`, `size`, `sizefilter`, `colorfilter` and `argmax`/`argmin`
//! by `size` from the numbers alone (filters give a labelled subset, `argmax` builds only the
//! object it picks). Any other use reads its members through
//! [`Labelled::members`], which builds them once, exactly as the CPU path does (same objects,
//! same order), and keeps them.

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use super::value::{Cell, Color, GridView, Items, Value};

/// No label: a background cell, as the kernels write it.
const NONE: u32 = u32::MAX;

/// No label, as a [`Plane`] keeps it; also no place in a list being built. Device grids have
/// at most 255x255 cells, so every cell index is below it.
const NO_LABEL: u16 = u16::MAX;

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

/// The labels of one grid, and its colours where an object may have several, shared by a
/// labelled set and the subsets filtered from it.
struct Plane {
    w: usize,
    labels: Arc<[u16]>,
    /// `None` with `univalued`: each object has its first cell's colour.
    colors: Option<Arc<[i8]>>,
}

/// A set of objects of one grid held as labels plus [`ObjectMeta`] (in the canonical order),
/// its members built on first use.
pub struct Labelled {
    plane: Plane,
    objects: Box<[ObjectMeta]>,
    members: OnceLock<Vec<Value>>,
}

/// Working arrays, reused across calls on a thread.
#[derive(Default)]
struct Scratch {
    /// Per cell (row-major index): how many cells have it as their label; then, per root, its
    /// object's place in a list being built.
    per_cell: Vec<u32>,
    /// The roots found so far, and one more entry (written before it is known whether the
    /// cell is one).
    roots: Vec<u16>,
    /// The objects found so far.
    objects: Vec<ObjectMeta>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Labelled {
    /// The objects of grid `g` from a label per cell, row-major: the index of the first cell
    /// (row-major) of the cell's component, or `u32::MAX` for a background cell. `None` when
    /// a label is not such an index (one above its cell, or one whose own label is not itself),
    /// when there are not as many labels as cells, or when the grid is no device grid (a side
    /// past 255, a colour past `i8`). With `univalued` every component has one colour (its
    /// first cell's); otherwise its cells are sorted when built.
    pub fn from_labels(
        g: GridView<'_>,
        labels: impl ExactSizeIterator<Item = u32>,
        univalued: bool,
    ) -> Option<Labelled> {
        let n = g.cells.len();
        if labels.len() != n || g.h > 255 || g.w > 255 {
            return None;
        }
        SCRATCH.with_borrow_mut(|scratch| Labelled::scan(g, labels, univalued, scratch))
    }

    /// [`Labelled::from_labels`] once the sizes agree, with the thread's working arrays.
    fn scan(
        g: GridView<'_>,
        labels: impl ExactSizeIterator<Item = u32>,
        univalued: bool,
        scratch: &mut Scratch,
    ) -> Option<Labelled> {
        let n = g.cells.len();
        let Scratch {
            per_cell,
            roots,
            objects,
        } = scratch;
        per_cell.clear();
        per_cell.resize(n, 0);
        objects.clear();
        // Pass 1: the labels narrowed (one past every index, `NO_LABEL - 1`, stands for any
        // label too large, which pass 2 refuses).
        let labels: Arc<[u16]> = labels
            .map(|l| {
                if l == NONE {
                    NO_LABEL
                } else {
                    l.min(NO_LABEL as u32 - 1) as u16
                }
            })
            .collect();
        let mut bad = false;
        // Pass 2, without branches: every label names a root (a cell labelled with itself),
        // the roots are listed (in row-major order), and the cells of each root are
        // counted. A background cell counts itself (no root reads that count), so that
        // background cells do not all wait on one counter.
        // Each entry of `roots` is written before it is read: only its length matters.
        if roots.len() <= n {
            roots.resize(n + 1, 0);
        }
        // Plain slices, so that the loop keeps their addresses in registers.
        let (counts, listed) = (&mut per_cell[..n], &mut roots[..=n]);
        let mut found = 0;
        for (c, &l) in labels.iter().enumerate() {
            let l = usize::from(l);
            let at = l.min(c);
            bad |= (l > c) & (l != usize::from(NO_LABEL)) | (usize::from(labels[at]) != l);
            counts[at] += 1;
            listed[found] = c as u16;
            found += usize::from(l == c);
        }
        // The objects, each with its first cell's colour.
        objects.extend(roots[..found].iter().map(|&root| ObjectMeta {
            root,
            first: root,
            color: g.cells[usize::from(root)],
            size: per_cell[usize::from(root)],
        }));
        if bad {
            return None;
        }
        let colors = if univalued {
            None
        } else {
            let colors: Arc<[i8]> = g.cells.iter().map(|&c| c as i8).collect();
            if colors.iter().zip(g.cells).any(|(&c8, &c)| Color::from(c8) != c) {
                return None;
            }
            // Pass 3: each object's first cell in the canonical order, its least colour.
            for (k, o) in objects.iter().enumerate() {
                per_cell[o.root as usize] = k as u32;
            }
            for (c, (&l, &color)) in labels.iter().zip(g.cells).enumerate() {
                if l != NO_LABEL {
                    let o = &mut objects[per_cell[l as usize] as usize];
                    if color < o.color {
                        (o.color, o.first) = (color, c as u16);
                    }
                }
            }
            Some(colors)
        };
        // Two objects never share a cell, so their first cells decide the canonical order.
        // One-coloured objects come in the order of their first cells already: a stable
        // sort by colour orders them.
        if univalued {
            objects.sort_by_key(|o| o.color);
        } else {
            objects.sort_unstable_by_key(|o| (o.color, o.first));
        }
        Some(Labelled {
            plane: Plane { w: g.w, labels, colors },
            objects: objects.as_slice().into(),
            members: OnceLock::new(),
        })
    }

    /// The set of these objects.
    pub fn into_value(self) -> Value {
        Value::Set(Items::labelled(self))
    }

    /// The objects' metadata, in the canonical order.
    pub fn objects(&self) -> &[ObjectMeta] {
        &self.objects
    }

    /// The set of the objects that `keep` keeps: still labelled, or (where the members were
    /// built already) those members.
    pub fn filter(&self, keep: impl Fn(&ObjectMeta) -> bool) -> Value {
        if let Some(members) = self.members.get() {
            let kept = self.objects.iter().zip(members).filter(|(o, _)| keep(o));
            return Value::set_sorted(kept.map(|(_, m)| m.clone()).collect());
        }
        let objects: Box<[ObjectMeta]> = self.objects.iter().filter(|o| keep(o)).copied().collect();
        if objects.is_empty() {
            return Value::empty_set();
        }
        Labelled {
            plane: Plane {
                w: self.plane.w,
                labels: Arc::clone(&self.plane.labels),
                colors: self.plane.colors.clone(),
            },
            objects,
            members: OnceLock::new(),
        }
        .into_value()
    }

    /// The objects as values, in the canonical order: built on the first call, exactly as the
    /// CPU path builds them (cells in canonical order), and kept.
    pub fn members(&self) -> &[Value] {
        self.members.get_or_init(|| self.build())
    }

    /// Whether the members were built already.
    pub fn is_built(&self) -> bool {
        self.members.get().is_some()
    }

    fn build(&self) -> Vec<Value> {
        let Plane { w, labels, colors } = &self.plane;
        let mut comps: Vec<Vec<Cell>> = self
            .objects
            .iter()
            .map(|o| Vec::with_capacity(o.size as usize))
            .collect();
        SCRATCH.with_borrow_mut(|Scratch { per_cell, .. }| {
            // Per root, its object's place in the output (none for an object filtered out).
            per_cell.clear();
            per_cell.resize(labels.len(), NO_LABEL.into());
            for (k, o) in self.objects.iter().enumerate() {
                per_cell[o.root as usize] = k as u32;
            }
            for (c, &l) in labels.iter().enumerate() {
                if l == NO_LABEL {
                    continue;
                }
                let k = per_cell[l as usize] as usize;
                let Some(comp) = comps.get_mut(k) else { continue };
                let color = match colors {
                    Some(colors) => colors[c].into(),
                    None => self.objects[k].color,
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
                Value::Object(Arc::new(cells))
            })
            .collect()
    }
}
