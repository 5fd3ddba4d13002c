// colors.cu: colour queries, one block per lane: `ofcolor` (a flag per cell), `colorcount`
// (a count per grid), `palette` / `p_g` (a 256-bit mask of colour slots per grid), and
// `colorfilter` (a keep flag per object, from each object's first colour). Colours to match
// arrive as 64-bit integers, as the DSL's ints: one outside the i8 range matches no cell.
#include "portable.h"

KERNEL(arcb_ofcolor, const GridMeta* metas, const i8* cells, const i64* colors, u8* out) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 n = (u32)m.h * m.w;
    const i64 color = colors[BLOCK_ID];
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) out[m.offset + c] = (i64)cells[m.offset + c] == color;
    END_PHASE
    END_BLOCKS
}

KERNEL(arcb_colorcount, const GridMeta* metas, const i8* cells, const i64* colors, u32* counts) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 n = (u32)m.h * m.w;
    const i64 color = colors[BLOCK_ID];
    SHARED(u32, total, 1);
    THREAD_VAR(u32, mine);
    PHASE
    if (tid == 0) total[0] = 0;
    u32 k = 0;
    for (u32 c = tid; c < n; c += NTHREADS) k += (i64)cells[m.offset + c] == color;
    TV(mine) = k;
    END_PHASE
    PHASE
    ATOMIC_ADD(&total[0], TV(mine));
    END_PHASE
    PHASE
    if (tid == 0) counts[BLOCK_ID] = total[0];
    END_PHASE
    END_BLOCKS
}

KERNEL(arcb_palette, const GridMeta* metas, const i8* cells, u32* masks) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 n = (u32)m.h * m.w;
    SHARED(u32, mask, 8);
    PHASE
    for (u32 s = tid; s < 8; s += NTHREADS) mask[s] = 0;
    END_PHASE
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        const u32 s = COLOR_SLOT(cells[m.offset + c]);
        ATOMIC_OR(&mask[s >> 5], 1u << (s & 31u));
    }
    END_PHASE
    PHASE
    for (u32 s = tid; s < 8; s += NTHREADS) masks[BLOCK_ID * 8 + s] = mask[s];
    END_PHASE
    END_BLOCKS
}

KERNEL(arcb_colorfilter, const u32* starts, const i32* first_colors, const i64* values, u8* keep) {
    BLOCKS
    const u32 from = starts[BLOCK_ID], to = starts[BLOCK_ID + 1];
    const i64 value = values[BLOCK_ID];
    PHASE
    for (u32 k = from + tid; k < to; k += NTHREADS) keep[k] = (i64)first_colors[k] == value;
    END_PHASE
    END_BLOCKS
}
