// grids.cu: grids out, one block per grid: `fill` (a colour written at a patch's locations),
// `paint` (an object's cells written, the last cell in the object's order winning a location,
// decided by an atomic max over cell indices), and the rotations and mirrors. Each writes
// output cell c of grid k at the offset of input cell c, so that they chain on the device
// (src/batch/chain.rs). A location is two bytes, row then column, 255 standing for any
// coordinate off every grid (no grid has a side over 255 cells).
#include "portable.h"

KERNEL(arcb_fill, const GridMeta* metas, const i8* cells, const i8* colors, const u32* starts, const u8* locs,
       i8* out) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 h = m.h, w = m.w, n = h * w;
    const i8 color = colors[BLOCK_ID];
    const u32 from = starts[BLOCK_ID], to = starts[BLOCK_ID + 1];
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) out[m.offset + c] = cells[m.offset + c];
    END_PHASE
    PHASE
    for (u32 k = from + tid; k < to; k += NTHREADS) {
        const u32 i = locs[2 * k], j = locs[2 * k + 1];
        if (i < h && j < w) out[m.offset + i * w + j] = color;
    }
    END_PHASE
    END_BLOCKS
}

// `items` holds (colour, i, j) per cell, a byte each; `winner` is scratch, one int per grid cell.
KERNEL(arcb_paint, const GridMeta* metas, const i8* cells, const u32* starts, const u8* items, i32* winner,
       i8* out) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 h = m.h, w = m.w, n = h * w;
    const u32 from = starts[BLOCK_ID], to = starts[BLOCK_ID + 1];
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) winner[m.offset + c] = -1;
    END_PHASE
    PHASE
    for (u32 k = from + tid; k < to; k += NTHREADS) {
        const u32 i = items[3 * k + 1], j = items[3 * k + 2];
        if (i < h && j < w) ATOMIC_MAX(&winner[m.offset + i * w + j], (i32)(k - from));
    }
    END_PHASE
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        const i32 k = winner[m.offset + c];
        out[m.offset + c] = k >= 0 ? (i8)items[3 * (from + (u32)k)] : cells[m.offset + c];
    }
    END_PHASE
    END_BLOCKS
}

// `t`: 0 rot90, 1 rot180, 2 rot270, 3 hmirror, 4 vmirror, 5 dmirror, 6 cmirror. `transposed`
// (non-zero where the output's height is the input's width) comes from the host, which alone
// says which transforms swap the two (`TRANSFORM` in src/batch/op.rs). Output cell c of grid k
// lies at the same offset as the input's (the cell count does not change).
KERNEL(arcb_transform, const GridMeta* metas, const i8* cells, i8* out, u32 t, u32 transposed) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 h = m.h, w = m.w, n = h * w;
    const u32 ow = transposed ? h : w;
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        const u32 r = c / ow, q = c % ow;
        u32 i, j;
        switch (t) {
        case 0: i = h - 1 - q; j = r; break;
        case 1: i = h - 1 - r; j = w - 1 - q; break;
        case 2: i = q; j = w - 1 - r; break;
        case 3: i = h - 1 - r; j = q; break;
        case 4: i = r; j = w - 1 - q; break;
        case 5: i = q; j = r; break;
        default: i = h - 1 - q; j = w - 1 - r; break;
        }
        out[m.offset + c] = cells[m.offset + i * w + j];
    }
    END_PHASE
    END_BLOCKS
}
