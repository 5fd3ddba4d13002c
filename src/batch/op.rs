//! The batched ops, one declarative entry each: [`OPS`].
//!
//! An [`Op`] is everything about one batched op: the primitives it batches (registry names,
//! checked when the dispatch table is built: a name the registry lacks is a panic, never a
//! silent skip), the constant its call takes (a mode, a transform), which lanes it accepts and
//! their arguments in compact form ([`Lane`], gathered into one [`Lanes`]), its CPU body (the
//! very function the scalar primitive is built on, so the op cannot drift from it), and its
//! [`Kernel`]: the entry point in `kernels/` (whose symbol, parameters and emulator binding
//! `build.rs` derives from the kernel's declaration), which lanes the kernel takes, how they
//! are packed for a launch and how its output bytes become the CPU body's results.
//!
//! The dispatcher ([`super::ops`]), both backends ([`super::CpuBackend`],
//! [`crate::device::DeviceBackend`]) and the device workloads read only this table.

use super::chain::{pack_steps, unpack_grids, GridStep};
use super::grids::{GridBatch, PatchBatch};
use super::kernel::{
    kernel_color, kernel_grid, par_unpack, par_unpack_runs, stage_grids, staged_cells, BadOutput, Entry, KernelArg,
    Packed, Plan, StagedGrids, UNPACK_CHUNK,
};
use super::staging::{u32s, Staging};
use super::{Arg, LaneResult};
use crate::dsl::labelled::Labelled;
use crate::dsl::prims::{common::background, grids, objects, patches};
use crate::dsl::{Cell, Color, Grid, Loc, Value};

/// One batched op.
pub struct Op {
    /// Its name in messages.
    pub name: &'static str,
    /// The primitives it batches, by registry name. A call's *variant* is its primitive's
    /// position here.
    pub prims: &'static [&'static str],
    /// The call's constant (the same on every lane, and the kernel's `u32` parameter where it
    /// takes one), from its variant and arguments; `None` sends every lane to the scalar
    /// primitive.
    pub param: fn(variant: usize, args: &[Arg<'_>]) -> Option<u32>,
    /// Lane `k`'s arguments in the compact form the op takes (the same parts of [`Lane`] on
    /// every lane), or `None`: that lane goes to the scalar primitive (which keeps odd shapes'
    /// results, errors included, the reference's).
    pub lane: for<'a> fn(args: &[Arg<'a>], k: usize) -> Option<Lane<'a>>,
    /// The CPU body: lane `k`'s result.
    pub cpu: fn(lanes: &Lanes, k: usize, param: u32) -> LaneResult,
    /// Its kernel, if it has one (else the device backends run it on the CPU).
    pub kernel: Option<Kernel>,
    /// The constant the start-up probe and `bench-gpu` run it with.
    pub probe: u32,
}

/// The kernel of an op.
pub struct Kernel {
    /// Its entry point (generated from its `KERNEL(...)` declaration).
    pub entry: Entry,
    /// Whether the kernel takes lane `k`; the op's other lanes run on the CPU backend.
    pub takes: fn(lanes: &Lanes, k: usize) -> bool,
    /// How its lanes are packed for a launch and its output decoded.
    pub layout: Layout,
}

/// How a kernel's lanes are packed and its output decoded.
pub enum Layout {
    /// By the op's own functions.
    Own { pack: Packer, unpack: Unpacker },
    /// As a grid step ([`GridStep`]): packed as a chain of one step, so that it also chains
    /// with the other grid steps on the device.
    Step(&'static GridStep),
}

impl Kernel {
    /// Stages the given lanes (all taken) for one job of one launch.
    pub fn pack(&self, lanes: &Lanes, taken: &[usize], param: u32, staging: &mut Staging) -> Plan {
        match self.layout {
            Layout::Own { pack, .. } => {
                let packed = pack(lanes, taken, param, staging);
                Plan {
                    output: packed.output.clone(),
                    launches: vec![(self.entry, packed)],
                }
            }
            Layout::Step(step) => pack_steps(&[(self.entry, step, param)], lanes, taken, staging),
        }
    }

    /// The results of the given lanes from the bytes of [`Plan::output`] that came back,
    /// `out`; `staged` is what was uploaded.
    pub fn unpack(&self, lanes: &Lanes, taken: &[usize], param: u32, staged: &[u8], out: &[u8]) -> Unpacked {
        match self.layout {
            Layout::Own { unpack, .. } => unpack(lanes, taken, param, staged, out),
            Layout::Step(step) => unpack_grids(&lanes.grids, taken, (step.transposes)(param), out),
        }
    }
}

/// Stages the given lanes (all taken) for one launch.
pub type Packer = fn(lanes: &Lanes, taken: &[usize], param: u32, staging: &mut Staging) -> Packed;

/// The results of the given lanes from a launch's output bytes, `out`; it may read the bytes
/// the launch staged (`staged`, the upload's, still on the host).
pub type Unpacker = fn(lanes: &Lanes, taken: &[usize], param: u32, staged: &[u8], out: &[u8]) -> Unpacked;

/// The results of the lanes of a launch, or why its output does not decode.
pub type Unpacked = Result<Vec<LaneResult>, BadOutput>;

/// One lane's arguments in compact form (each op fills the parts it takes).
#[derive(Clone, Copy, Debug, Default)]
pub struct Lane<'a> {
    /// A grid (the first argument of the ops on grids).
    pub grid: Option<&'a Grid>,
    /// Any other value (`colorfilter`'s set of objects).
    pub value: Option<&'a Value>,
    /// An integer (a colour).
    pub int: Option<i64>,
    /// A patch's locations (`fill`'s).
    pub locs: Option<Locs<'a>>,
    /// An object's cells (`paint`'s).
    pub cells: Option<&'a [Cell]>,
}

/// The locations of a patch, as an index set or an object holds them.
#[derive(Clone, Copy, Debug)]
pub enum Locs<'a> {
    Indices(&'a [Loc]),
    Object(&'a [Cell]),
}

/// The lanes of one batched call: each part holds one item per lane where the op takes that
/// part ([`Lane`]), nothing otherwise. Grids and patches lie in flat buffers, as kernels take
/// them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lanes {
    /// The lanes' [`Lane::grid`]s.
    pub grids: GridBatch,
    /// The lanes' [`Lane::value`]s.
    pub values: Vec<Value>,
    /// The lanes' [`Lane::int`]s.
    pub ints: Vec<i64>,
    /// The lanes' [`Lane::locs`].
    pub locs: PatchBatch<Loc>,
    /// The lanes' [`Lane::cells`].
    pub cells: PatchBatch<Cell>,
    /// Number of lanes.
    len: usize,
}

impl Lanes {
    /// No lanes yet, with room for `lanes` (appended next, by [`Lanes::push`]): each flat
    /// buffer is allocated once, not grown and copied as the lanes arrive.
    pub fn with_room_for<'a>(lanes: impl Iterator<Item = Lane<'a>>) -> Lanes {
        let (mut grids, mut grid_cells, mut values, mut ints) = (0, 0, 0, 0);
        let (mut patches, mut locs, mut objects, mut cells) = (0, 0, 0, 0);
        for lane in lanes {
            if let Some(g) = lane.grid {
                grids += 1;
                grid_cells += g.cells.len();
            }
            values += usize::from(lane.value.is_some());
            ints += usize::from(lane.int.is_some());
            if let Some(l) = lane.locs {
                patches += 1;
                locs += match l {
                    Locs::Indices(l) => l.len(),
                    Locs::Object(c) => c.len(),
                };
            }
            if let Some(c) = lane.cells {
                objects += 1;
                cells += c.len();
            }
        }
        Lanes {
            grids: GridBatch::with_capacity(grids, grid_cells),
            values: Vec::with_capacity(values),
            ints: Vec::with_capacity(ints),
            locs: PatchBatch::with_capacity(patches, locs),
            cells: PatchBatch::with_capacity(objects, cells),
            len: 0,
        }
    }

    /// Number of lanes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends a lane; `false` (and nothing appended) when its grid does not fit a
    /// [`GridBatch`] or the buffer would pass `u32::MAX` cells.
    pub fn push(&mut self, lane: Lane<'_>) -> bool {
        if let Some(g) = lane.grid {
            if !self.grids.push(g) {
                return false;
            }
        }
        self.values.extend(lane.value.cloned());
        self.ints.extend(lane.int);
        let pushed = match lane.locs {
            Some(Locs::Indices(locs)) => self.locs.push(locs.iter().copied()),
            Some(Locs::Object(cells)) => self.locs.push(cells.iter().map(|c| c.loc())),
            None => true,
        } && match lane.cells {
            Some(cells) => self.cells.push(cells.iter().copied()),
            None => true,
        };
        debug_assert!(pushed, "a batch of patches past u32::MAX items");
        self.len += 1;
        true
    }

    /// The same lanes with `grids` (one per lane) in place of their grids.
    pub fn with_grids(&self, grids: GridBatch) -> Lanes {
        debug_assert_eq!(grids.len(), self.len, "one grid per lane");
        Lanes {
            grids,
            values: self.values.clone(),
            ints: self.ints.clone(),
            locs: self.locs.clone(),
            cells: self.cells.clone(),
            len: self.len,
        }
    }

    /// The given lanes as lanes of their own.
    pub fn select(&self, lanes: &[usize]) -> Lanes {
        let full = |n: usize| n == self.len && n > 0;
        let mut sub = Lanes {
            len: lanes.len(),
            ..Lanes::default()
        };
        for &k in lanes {
            if full(self.grids.len()) {
                let pushed = sub.grids.push_view(self.grids.view(k));
                debug_assert!(pushed, "a grid of a batch fits a batch");
            }
            if full(self.values.len()) {
                sub.values.push(self.values[k].clone());
            }
            if full(self.ints.len()) {
                sub.ints.push(self.ints[k]);
            }
            if full(self.locs.len()) {
                sub.locs.push(self.locs.patch(k).iter().copied());
            }
            if full(self.cells.len()) {
                sub.cells.push(self.cells.patch(k).iter().copied());
            }
        }
        sub
    }
}

/// The arguments of every part of a lane drawn from one grid, for timing the ops (the
/// start-up probe of `auto`, `bench-gpu`): the grid's most common colour, its objects
/// (univalued, diagonal, without background), the cells of that colour as a patch, and its
/// largest object.
pub struct Sample {
    color: Color,
    objects: Value,
    patch: Vec<Loc>,
    largest: Vec<Cell>,
}

impl Sample {
    pub fn of(g: &Grid) -> Sample {
        let view = g.view();
        let color = background(&g.cells).unwrap_or(0);
        let objects = objects::objects_of(view, true, true, true).unwrap_or_else(|_| Value::set(Vec::new()));
        let largest = objects
            .members()
            .into_iter()
            .flatten()
            .filter_map(|o| match o {
                Value::Object(cells) => Some(cells.to_vec()),
                _ => None,
            })
            .max_by_key(Vec::len)
            .unwrap_or_default();
        let patch = match patches::ofcolor_of(view, color.into()) {
            Value::Indices(locs) => locs.to_vec(),
            _ => Vec::new(),
        };
        Sample {
            color,
            objects,
            patch,
            largest,
        }
    }

    /// The lane of grid `g` (the grid this sample was drawn from), with every part.
    pub fn lane<'a>(&'a self, g: &'a Grid) -> Lane<'a> {
        Lane {
            grid: Some(g),
            value: Some(&self.objects),
            int: Some(self.color.into()),
            locs: Some(Locs::Indices(&self.patch)),
            cells: Some(&self.largest),
        }
    }
}

/// Every batched op.
pub static OPS: [&Op; 8] = [
    &OBJECTS,
    &OFCOLOR,
    &COLORCOUNT,
    &PALETTE,
    &COLORFILTER,
    &FILL,
    &PAINT,
    &TRANSFORM,
];

impl Op {
    /// The op whose kernel is `entry`.
    pub fn of_kernel(entry: Entry) -> &'static Op {
        OPS.iter()
            .find(|op| op.kernel.as_ref().is_some_and(|k| k.entry == entry))
            .expect("every kernel belongs to an op")
    }
}

/// Lane `k`'s grid, when it can travel in a [`GridBatch`].
fn grid<'a>(args: &[Arg<'a>], k: usize) -> Option<&'a Grid> {
    match args[0].get(k) {
        Value::Grid(g) if GridBatch::fits(g) => Some(g),
        _ => None,
    }
}

/// Lane `k`'s argument `a`, when it is an integer.
fn int(args: &[Arg<'_>], a: usize, k: usize) -> Option<i64> {
    match args[a].get(k) {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

/// The lane of an op on a grid alone.
fn grid_lane<'a>(args: &[Arg<'a>], k: usize) -> Option<Lane<'a>> {
    Some(Lane {
        grid: Some(grid(args, k)?),
        ..Lane::default()
    })
}

/// The lane of an op on a grid and a colour.
fn grid_int_lane<'a>(args: &[Arg<'a>], k: usize) -> Option<Lane<'a>> {
    Some(Lane {
        int: Some(int(args, 1, k)?),
        ..grid_lane(args, k)?
    })
}

/// A constant that does not depend on the arguments: the call's variant.
fn variant(variant: usize, _: &[Arg<'_>]) -> Option<u32> {
    Some(variant as u32)
}

/// The grid is what the kernel needs to take a lane.
fn grid_takes(lanes: &Lanes, k: usize) -> bool {
    kernel_grid(&lanes.grids, k)
}

/// The flags of `objects`, when they are the same bool on every lane.
fn same_bool(a: &Arg<'_>) -> Option<bool> {
    match a {
        Arg::Same(Value::Bool(b)) => Some(*b),
        _ => None,
    }
}

/// The bytes of the objects kernel's words for `cells` cells, up to where its order starts:
/// the output's first half (sections start at multiples of 8 bytes).
fn objects_half(cells: usize) -> usize {
    (2 * cells).next_multiple_of(8)
}

/// `objects(grid, univalued, diagonal, without_bg)` and the search dialect's `o_g(grid, R)`;
/// the constant is the mode `R = 4 * univalued + 2 * diagonal + without_bg`. The kernel
/// labels each cell with its component's first cell, counts each component's cells and puts
/// the objects in their canonical order; the host checks all that, keeps the labels and a few
/// numbers per object ([`Labelled`]), and builds the objects where a step reads them.
pub static OBJECTS: Op = Op {
    name: "objects",
    prims: &["objects", "o_g"],
    param: |variant, args| match variant {
        0 => match (same_bool(&args[1]), same_bool(&args[2]), same_bool(&args[3])) {
            (Some(u), Some(d), Some(w)) => Some(4 * u as u32 + 2 * d as u32 + w as u32),
            _ => None,
        },
        _ => match args[1] {
            Arg::Same(Value::Int(mode @ 0..=7)) => Some(*mode as u32),
            _ => None,
        },
    },
    lane: grid_lane,
    cpu: |lanes, k, mode| objects::objects_of(lanes.grids.view(k), mode & 4 != 0, mode & 2 != 0, mode & 1 != 0),
    kernel: Some(Kernel {
        entry: Entry::Objects,
        // The kernel's 16-bit words hold a size or a label in 15 bits.
        takes: |lanes, k| grid_takes(lanes, k) && lanes.grids.metas[k].len() <= Labelled::MAX_CELLS,
        layout: Layout::Own {
            pack: |lanes, taken, mode, staging| {
                let g = stage_grids(&lanes.grids, taken, staging);
                let labels = staging.reserve(4 * g.total);
                // The words, then the order: one output.
                let half = objects_half(g.total);
                let words = staging.reserve(2 * half);
                g.packed(
                    &[
                        KernelArg::Ptr(labels),
                        KernelArg::Ptr(words),
                        KernelArg::Ptr(words + half),
                        KernelArg::U32(mode),
                    ],
                    words..words + 2 * half,
                )
            },
            unpack: |lanes, taken, mode, staged, out| {
                let (words, order) = out.split_at(out.len() / 2);
                let colors = staged_cells(staged, taken.len());
                par_unpack_runs(&lanes.grids, taken, |views, cells, results| {
                    let bytes = 2 * cells.start..2 * cells.end;
                    let (words, order) = (words.get(bytes.clone()), order.get(bytes));
                    let unpacked = Labelled::from_words(
                        views,
                        colors.get(cells).unwrap_or_default(),
                        words.unwrap_or_default(),
                        order.unwrap_or_default(),
                        mode & 4 != 0,
                    );
                    for (objects, result) in unpacked.into_iter().zip(results) {
                        let objects = objects
                            .ok_or_else(|| BadOutput("words that are no components' labels and sizes".into()))?;
                        *result = Ok(objects.into_value());
                    }
                    Ok(())
                })
            },
        },
    }),
    probe: 7,
};

/// The launch of a colour query: the grids, a colour (`i64`) per lane, and an output section
/// of `bytes(grids)` bytes.
fn color_query(
    lanes: &Lanes,
    taken: &[usize],
    staging: &mut Staging,
    bytes: impl FnOnce(&StagedGrids) -> usize,
) -> Packed {
    let g = stage_grids(&lanes.grids, taken, staging);
    let colors = staging.put(taken.iter().map(|&k| lanes.ints[k]));
    let n = bytes(&g);
    let out = staging.reserve(n);
    g.packed(&[KernelArg::Ptr(colors), KernelArg::Ptr(out)], out..out + n)
}

/// `ofcolor(grid, colour)`: the kernel writes a flag per cell.
pub static OFCOLOR: Op = Op {
    name: "ofcolor",
    prims: &["ofcolor"],
    param: variant,
    lane: grid_int_lane,
    cpu: |lanes, k, _| Ok(patches::ofcolor_of(lanes.grids.view(k), lanes.ints[k])),
    kernel: Some(Kernel {
        entry: Entry::Ofcolor,
        takes: grid_takes,
        layout: Layout::Own {
            pack: |lanes, taken, _, staging| color_query(lanes, taken, staging, |g| g.total),
            unpack: |lanes, taken, _, _, out| {
                par_unpack(&lanes.grids, taken, |v, range| {
                    let rows = out[range].chunks_exact(v.w);
                    let locs: Vec<Loc> = rows
                        .enumerate()
                        .flat_map(|(i, row)| {
                            let at = move |(j, _)| Loc {
                                i: i as i32,
                                j: j as i32,
                            };
                            row.iter().enumerate().filter(|&(_, &flag)| flag != 0).map(at)
                        })
                        .collect();
                    Ok(Ok(Value::indices_sorted(locs)))
                })
            },
        },
    }),
    probe: 0,
};

/// `colorcount(grid, colour)`: the kernel writes a count per grid.
pub static COLORCOUNT: Op = Op {
    name: "colorcount",
    prims: &["colorcount"],
    param: variant,
    lane: grid_int_lane,
    cpu: |lanes, k, _| Ok(patches::colorcount_of(lanes.grids.view(k).cells, lanes.ints[k])),
    kernel: Some(Kernel {
        entry: Entry::Colorcount,
        takes: grid_takes,
        layout: Layout::Own {
            pack: |lanes, taken, _, staging| color_query(lanes, taken, staging, |g| 4 * g.blocks as usize),
            unpack: |_, _, _, _, out| Ok(u32s(out).map(|n| Ok(Value::Int(n.into()))).collect()),
        },
    }),
    probe: 0,
};

/// `palette(grid)` and the search dialect's `p_g(grid)` (the palette as a tuple): the
/// constant is 1 for `p_g`. The kernel writes a 256-bit mask of colour slots per grid.
pub static PALETTE: Op = Op {
    name: "palette",
    prims: &["palette", "p_g"],
    param: variant,
    lane: grid_lane,
    cpu: |lanes, k, as_tuple| {
        let f = if as_tuple == 1 {
            objects::p_g_of
        } else {
            patches::palette_of
        };
        Ok(f(lanes.grids.view(k).cells))
    },
    kernel: Some(Kernel {
        entry: Entry::Palette,
        takes: grid_takes,
        layout: Layout::Own {
            pack: |lanes, taken, _, staging| {
                let g = stage_grids(&lanes.grids, taken, staging);
                let masks = staging.reserve(32 * taken.len());
                Packed {
                    blocks: g.blocks,
                    args: [g.metas, g.cells, masks].map(KernelArg::Ptr).to_vec(),
                    output: masks..masks + 32 * taken.len(),
                }
            },
            unpack: |_, _, as_tuple, _, out| {
                use rayon::prelude::*;
                let f = if as_tuple == 1 {
                    objects::p_g_of
                } else {
                    patches::palette_of
                };
                let words: Vec<u32> = u32s(out).collect();
                let results = words.par_chunks_exact(8).with_min_len(UNPACK_CHUNK).map(|mask| {
                    // Each colour present once, ascending: the palette of these is the grid's.
                    let mut colors: Vec<Color> = Vec::new();
                    for (k, &word) in mask.iter().enumerate() {
                        let mut bits = word;
                        while bits != 0 {
                            let s = 32 * k + bits.trailing_zeros() as usize;
                            colors.push(Color::from((s as u8 ^ 0x80) as i8));
                            bits &= bits - 1;
                        }
                    }
                    Ok(f(&colors))
                });
                Ok(results.collect())
            },
        },
    }),
    probe: 0,
};

/// The objects of lane `k` of `colorfilter`, when its kernel takes it: a listed set of
/// non-empty objects.
fn colorfilter_members(lanes: &Lanes, k: usize) -> Option<&[Value]> {
    match &lanes.values[k] {
        // A labelled set answers from its metadata on the CPU, without building its objects.
        Value::Set(items)
            if items.as_labelled().is_none()
                && items.iter().all(|o| matches!(o, Value::Object(c) if !c.is_empty())) =>
        {
            Some(&items[..])
        }
        _ => None,
    }
}

/// The members of the given lanes' sets, in lane order.
fn colorfilter_all<'s>(lanes: &'s Lanes, taken: &'s [usize]) -> impl Iterator<Item = &'s Value> + 's {
    taken
        .iter()
        .flat_map(|&k| colorfilter_members(lanes, k).unwrap_or_default())
}

/// `colorfilter(objects, colour)`: the kernel writes a keep flag per object, from its first
/// cell's colour.
pub static COLORFILTER: Op = Op {
    name: "colorfilter",
    prims: &["colorfilter"],
    param: variant,
    lane: |args, k| match args[0].get(k) {
        objects if objects.is_set() => Some(Lane {
            value: Some(objects),
            int: Some(int(args, 1, k)?),
            ..Lane::default()
        }),
        _ => None,
    },
    cpu: |lanes, k, _| patches::colorfilter_of(&lanes.values[k], &Value::Int(lanes.ints[k])),
    kernel: Some(Kernel {
        entry: Entry::Colorfilter,
        takes: |lanes, k| colorfilter_members(lanes, k).is_some(),
        layout: Layout::Own {
            pack: |lanes, taken, _, staging| {
                let mut at = 0u32;
                let starts = staging.put([0].into_iter().chain(taken.iter().map(|&k| {
                    at += colorfilter_members(lanes, k).map_or(0, |m| m.len() as u32);
                    at
                })));
                let first_colors = staging.put(colorfilter_all(lanes, taken).map(|o| match o {
                    Value::Object(cells) => cells[0].color,
                    _ => unreachable!("a taken lane holds non-empty objects only"),
                }));
                let values = staging.put(taken.iter().map(|&k| lanes.ints[k]));
                let keep = staging.reserve(at as usize);
                Packed {
                    blocks: taken.len() as u32,
                    args: [starts, first_colors, values, keep].map(KernelArg::Ptr).to_vec(),
                    output: keep..keep + at as usize,
                }
            },
            unpack: |lanes, taken, _, _, out| {
                let mut flags = out.iter();
                let results = taken.iter().map(|&k| {
                    let members = colorfilter_members(lanes, k).unwrap_or_default();
                    let kept = members
                        .iter()
                        .zip(flags.by_ref())
                        .filter(|&(_, &keep)| keep != 0)
                        .map(|(o, _)| o.clone())
                        .collect();
                    Ok(Value::set_sorted(kept))
                });
                Ok(results.collect())
            },
        },
    }),
    probe: 0,
};

/// `fill(grid, colour, patch)`: the kernel copies each grid and writes the colour at the
/// patch's locations.
pub static FILL: Op = Op {
    name: "fill",
    prims: &["fill"],
    param: variant,
    lane: |args, k| {
        let locs = match args[2].get(k) {
            Value::Indices(l) => Locs::Indices(l),
            Value::Object(c) => Locs::Object(c),
            _ => return None,
        };
        let color = int(args, 1, k).filter(|&c| Color::try_from(c).is_ok())?;
        Some(Lane {
            int: Some(color),
            locs: Some(locs),
            ..grid_lane(args, k)?
        })
    },
    cpu: |lanes, k, _| grids::fill_of(lanes.grids.view(k), lanes.ints[k], lanes.locs.patch(k)),
    kernel: Some(Kernel {
        entry: Entry::Fill,
        takes: |lanes, k| kernel_grid(&lanes.grids, k) && i8::try_from(lanes.ints[k]).is_ok(),
        layout: Layout::Step(&GridStep {
            transposes: |_| false,
            scratch_per_cell: 0,
            stage: |lanes, taken, staging| {
                let colors = staging.put(taken.iter().map(|&k| lanes.ints[k] as i8));
                let (starts, locs) = stage_patches(&lanes.locs, taken, staging, |l| [coord(l.i), coord(l.j)]);
                vec![colors, starts, locs]
            },
            // `inputs`: colours, starts, locations.
            args: |at, inputs, _| {
                [at.metas, at.cells, inputs[0], inputs[1], inputs[2], at.out]
                    .map(KernelArg::Ptr)
                    .to_vec()
            },
            scalar_args: |lanes, k| vec![Value::Int(lanes.ints[k]), Value::indices(lanes.locs.patch(k).to_vec())],
        }),
    }),
    probe: 0,
};

/// `paint(grid, object)`: the kernel copies each grid and writes the object's cells, the last
/// in the object's order winning a location.
pub static PAINT: Op = Op {
    name: "paint",
    prims: &["paint"],
    param: variant,
    lane: |args, k| match args[1].get(k) {
        Value::Object(cells) => Some(Lane {
            cells: Some(&cells[..]),
            ..grid_lane(args, k)?
        }),
        _ => None,
    },
    cpu: |lanes, k, _| grids::paint_of(lanes.grids.view(k), lanes.cells.patch(k)),
    kernel: Some(Kernel {
        entry: Entry::Paint,
        // A colour beyond `i8` is the CPU's to paint.
        takes: |lanes, k| kernel_grid(&lanes.grids, k) && lanes.cells.patch(k).iter().all(|c| kernel_color(c.color)),
        layout: Layout::Step(&GridStep {
            transposes: |_| false,
            // The winning cell's index per location.
            scratch_per_cell: 4,
            stage: |lanes, taken, staging| {
                // The colour fits an `i8` (`takes`), kept as its byte.
                let (starts, items) = stage_patches(&lanes.cells, taken, staging, |c| {
                    [c.color as u8, coord(c.i), coord(c.j)]
                });
                vec![starts, items]
            },
            // `inputs`: starts, items.
            args: |at, inputs, _| {
                [at.metas, at.cells, inputs[0], inputs[1], at.scratch, at.out]
                    .map(KernelArg::Ptr)
                    .to_vec()
            },
            scalar_args: |lanes, k| vec![Value::object(lanes.cells.patch(k).to_vec())],
        }),
    }),
    probe: 0,
};

/// Stages the given lanes' patches: their starts (one more than lanes, rebased to the packed
/// items), then their items, each as `N` bytes; returns the two sections' offsets.
fn stage_patches<T: Sync, const N: usize>(
    patches: &PatchBatch<T>,
    taken: &[usize],
    staging: &mut Staging,
    fields: impl Fn(&T) -> [u8; N] + Sync,
) -> (usize, usize) {
    let mut at = 0u32;
    let starts = staging.put([0].into_iter().chain(taken.iter().map(|&k| {
        at += patches.patch(k).len() as u32;
        at
    })));
    let items = staging.put_parts(
        taken,
        |k| patches.patch(k).len(),
        |k| patches.patch(k).iter().map(&fields),
    );
    (starts, items)
}

/// A location's row or column as the kernels take it: a byte, 255 for any coordinate off
/// every grid (a grid's sides are at most 255 cells, so its rows and columns are below 255).
fn coord(x: i32) -> u8 {
    u8::try_from(x).unwrap_or(u8::MAX)
}

/// The rotations and mirrors of a grid: the constant is the primitive's position in `prims`,
/// which is the kernel's transform index (`t` in `grids.cu`).
pub static TRANSFORM: Op = Op {
    name: "transform",
    prims: &["rot90", "rot180", "rot270", "hmirror", "vmirror", "dmirror", "cmirror"],
    param: variant,
    lane: grid_lane,
    cpu: |lanes, k, t| {
        let f = [
            grids::rot90_of,
            grids::rot180_of,
            grids::rot270_of,
            grids::hmirror_of,
            grids::vmirror_of,
            grids::dmirror_of,
            grids::cmirror_of,
        ][t as usize];
        Ok(f(lanes.grids.view(k)))
    },
    kernel: Some(Kernel {
        entry: Entry::Transform,
        takes: grid_takes,
        layout: Layout::Step(&GridStep {
            transposes,
            scratch_per_cell: 0,
            stage: |_, _, _| Vec::new(),
            args: |at, _, t| {
                let transposed = u32::from(transposes(t));
                let grids = [at.metas, at.cells, at.out].map(KernelArg::Ptr);
                [&grids[..], &[KernelArg::U32(t), KernelArg::U32(transposed)]].concat()
            },
            scalar_args: |_, _| Vec::new(),
        }),
    }),
    probe: 0,
};

/// Whether transform `t` swaps a grid's height and width (rot90, rot270, dmirror, cmirror):
/// the only statement of it, which the kernel receives as its `transposed` argument.
fn transposes(t: u32) -> bool {
    matches!(t, 0 | 2 | 5 | 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::ops::has_batched_op;
    use crate::dsl::PrimId;

    #[test]
    fn every_op_names_registered_primitives_and_every_kernel_belongs_to_one_op() {
        for op in OPS {
            for name in op.prims {
                let id = PrimId::of(name).unwrap_or_else(|| panic!("{}: no primitive {name:?}", op.name));
                assert!(has_batched_op(id), "{name}");
            }
        }
        for entry in Entry::ALL {
            let owners = OPS
                .iter()
                .filter(|op| op.kernel.as_ref().is_some_and(|k| k.entry == entry));
            assert_eq!(owners.count(), 1, "{entry:?}");
            assert_eq!(Op::of_kernel(entry).kernel.as_ref().map(|k| k.entry), Some(entry));
        }
    }

    #[test]
    fn the_transforms_that_transpose_are_those_whose_primitive_swaps_the_shape() {
        let grid = Grid::new(2, 3, vec![1, 2, 3, 4, 5, 6]);
        let sample = Sample::of(&grid);
        let mut lanes = Lanes::default();
        assert!(lanes.push(sample.lane(&grid)));
        for (t, name) in TRANSFORM.prims.iter().enumerate() {
            let out = (TRANSFORM.cpu)(&lanes, 0, t as u32)
                .and_then(|v| v.as_grid().map(crate::dsl::GridRef::into_shared))
                .expect("a grid");
            let shape = (out.h, out.w);
            let expected = if transposes(t as u32) { (3, 2) } else { (2, 3) };
            assert_eq!(shape, expected, "{name}");
        }
    }

    #[test]
    fn the_docs_name_exactly_the_primitives_that_have_a_kernel() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/engine.md"));
        let start = doc
            .find("Kernels exist for ")
            .expect("the sentence on kernels in docs/engine.md");
        let text = &doc[start..];
        let sentence = &text[..text
            .find(".\n")
            .into_iter()
            .chain(text.find(". "))
            .min()
            .expect("its end")];
        let mut named: Vec<&str> = sentence.split('`').skip(1).step_by(2).collect();
        let mut with_kernel: Vec<&str> = OPS
            .iter()
            .filter(|op| op.kernel.is_some())
            .flat_map(|op| op.prims.iter().copied())
            .collect();
        named.sort_unstable();
        with_kernel.sort_unstable();
        assert_eq!(named, with_kernel, "docs/engine.md: {sentence}");
    }

    #[test]
    fn selected_lanes_keep_every_part_of_their_lanes() {
        let grids = [
            Grid::new(1, 2, vec![1, 2]),
            Grid::new(2, 1, vec![3, 4]),
            Grid::new(1, 1, vec![5]),
        ];
        let samples: Vec<Sample> = grids.iter().map(Sample::of).collect();
        let mut lanes = Lanes::default();
        for (g, s) in grids.iter().zip(&samples) {
            assert!(lanes.push(s.lane(g)));
        }
        let picked = lanes.select(&[2, 0]);
        assert_eq!(picked.len(), 2);
        let mut expected = Lanes::default();
        for k in [2, 0] {
            assert!(expected.push(samples[k].lane(&grids[k])));
        }
        assert_eq!(picked, expected);
        assert_eq!(Lanes::default().select(&[]), Lanes::default());
    }

    /// Lanes made with room for the lanes they then take hold what lanes grown one lane at a
    /// time hold, and taking them grows none of their buffers.
    #[test]
    fn lanes_made_with_room_take_their_lanes_without_growing() {
        let grids = [
            Grid::new(1, 2, vec![1, 2]),
            Grid::new(2, 3, vec![3, 4, 5, 6, 7, 8]),
            Grid::new(1, 1, vec![5]),
        ];
        let samples: Vec<Sample> = grids.iter().map(Sample::of).collect();
        let lane = |k: usize| samples[k].lane(&grids[k]);
        let capacities = |l: &Lanes| {
            [
                l.grids.cells.capacity(),
                l.grids.metas.capacity(),
                l.values.capacity(),
                l.ints.capacity(),
                l.locs.items.capacity(),
                l.locs.offsets.capacity(),
                l.cells.items.capacity(),
                l.cells.offsets.capacity(),
            ]
        };
        let mut roomy = Lanes::with_room_for((0..grids.len()).map(lane));
        let room = capacities(&roomy);
        let mut grown = Lanes::default();
        for k in 0..grids.len() {
            assert!(roomy.push(lane(k)));
            assert!(grown.push(lane(k)));
        }
        assert_eq!(roomy, grown);
        assert_eq!(capacities(&roomy), room, "no buffer grew");
        assert!(
            room.iter().all(|&c| c > 0),
            "every part of a sample's lane has room: {room:?}"
        );
    }
}
