// objects.cu: connected components of each grid, for the 8 modes of `objects` / `o_g`
// (mode = 4 * univalued + 2 * diagonal + without_bg). One block per grid.
//
// Each cell's label starts as its own index (or NO_LABEL for a background cell) and falls to
// the smallest label among the cells it connects to, with pointer jumping, until a pass
// changes nothing (a `__syncthreads_or` vote). A label only ever takes the value of another
// label of its component, so at the fixed point every cell holds the index of its
// component's first cell in row-major order. Labels live in global memory (a grid may have up
// to 255 x 255 cells); the background is the reference's mostcolor: the most common colour,
// ties to the smallest.
//
// The output is a 16-bit word per cell (the host takes grids of at most 32767 cells): 0x8000
// for a background cell, 0x8000 + the component's size at its first cell (its root), the
// label (the root's index, below 0x8000) at any other cell. A phase counts each component's
// cells into the high half of its root's label (labels fit the low half), another writes
// the words. Then the objects' canonical order, as the host keeps them: by the colour of
// their first cell in the order of cells (least colour, then row-major; the root itself where
// objects have one colour), then by that cell's index. `order` gets the roots in that order,
// one 16-bit word each, as many as there are objects; its other words are left as they were.
// The host lists the objects from the order, checks it and the words (sizes that add up to
// the labelled cells, labels that name roots, an order that ascends) and builds the objects'
// cells where a step reads them.
//
// The order is one thread's walk over the cells, each object put at the next place of its
// colour: a sequence, which the other threads of the block cannot share without warp
// intrinsics; the block holds its SM's slot meanwhile, and the other resident blocks use it.
#include "portable.h"

KERNEL(arcb_objects, const GridMeta* metas, const i8* cells, u32* labels, u16* words, u16* order, u32 mode) {
    BLOCKS
    const GridMeta m = metas[BLOCK_ID];
    const u32 h = m.h, w = m.w, n = h * w;
    const i8* g = cells + m.offset;
    u32* lab = labels + m.offset;
    u16* out = words + m.offset;
    u16* ordered = order + m.offset;
    const int univalued = (mode & 4u) != 0, diagonal = (mode & 2u) != 0, without_bg = (mode & 1u) != 0;
    SHARED(u32, hist, 256);
    SHARED(int, bg_slot, 1);
    if (without_bg) {
        PHASE
        for (u32 s = tid; s < 256; s += NTHREADS) hist[s] = 0;
        END_PHASE
        PHASE
        for (u32 c = tid; c < n; c += NTHREADS) ATOMIC_ADD(&hist[COLOR_SLOT(g[c])], 1u);
        END_PHASE
        PHASE
        if (tid == 0) {
            // Ascending slots are ascending colours: the first maximum is the smallest colour.
            u32 best = 0;
            int slot = -1;
            for (int s = 0; s < 256; ++s) {
                if (hist[s] > best) {
                    best = hist[s];
                    slot = s;
                }
            }
            bg_slot[0] = slot;
        }
        END_PHASE
    } else {
        PHASE
        if (tid == 0) bg_slot[0] = -1;
        END_PHASE
    }
    const int bg = bg_slot[0];
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) lab[c] = (int)COLOR_SLOT(g[c]) == bg ? NO_LABEL : c;
    END_PHASE
    int changed = 1;
    while (changed) {
        PHASE_OR(changed)
        for (u32 c = tid; c < n; c += NTHREADS) {
            const u32 own = lab[c];
            if (own == NO_LABEL) continue;
            const int i = (int)(c / w), j = (int)(c % w);
            u32 best = lab[own];
            for (int di = -1; di <= 1; ++di) {
                for (int dj = -1; dj <= 1; ++dj) {
                    if ((di == 0 && dj == 0) || (!diagonal && di != 0 && dj != 0)) continue;
                    const int ni = i + di, nj = j + dj;
                    if (ni < 0 || nj < 0 || ni >= (int)h || nj >= (int)w) continue;
                    const u32 nc = (u32)ni * w + (u32)nj;
                    const u32 other = lab[nc];
                    if (other == NO_LABEL || (univalued && g[nc] != g[c])) continue;
                    if (other < best) best = other;
                }
            }
            if (best < own) {
                lab[c] = best;
                VOTE(1);
            }
        }
        END_PHASE_OR(changed)
    }
    // The sizes. A label's low half never changes here, so a cell reads its root through the
    // additions to its own label (it may be a root); a root's label stays below NO_LABEL.
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        const u32 own = lab[c];
        if (own != NO_LABEL) ATOMIC_ADD(&lab[own & 0xFFFFu], 0x10000u);
    }
    END_PHASE
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        const u32 own = lab[c];
        out[c] = own == NO_LABEL ? (u16)0x8000u : (own & 0xFFFFu) == c ? (u16)(0x8000u | (own >> 16)) : (u16)own;
    }
    END_PHASE
    // Each root's label becomes its object's key, (colour slot << 16) | index of its first
    // cell: with one colour, the root; otherwise the least key of its cells.
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        if (out[c] > 0x8000u) lab[c] = univalued ? (COLOR_SLOT(g[c]) << 16) | c : 0xFFFFFFFFu;
    }
    END_PHASE
    if (!univalued) {
        PHASE
        for (u32 c = tid; c < n; c += NTHREADS) {
            const u32 word = out[c];
            if (word != 0x8000u) ATOMIC_MIN(&lab[word > 0x8000u ? c : word], (COLOR_SLOT(g[c]) << 16) | c);
        }
        END_PHASE
    }
    // The objects of each colour.
    PHASE
    for (u32 s = tid; s < 256; s += NTHREADS) hist[s] = 0;
    END_PHASE
    PHASE
    for (u32 c = tid; c < n; c += NTHREADS) {
        if (out[c] > 0x8000u) ATOMIC_ADD(&hist[lab[c] >> 16], 1u);
    }
    END_PHASE
    PHASE
    if (tid == 0) {
        // Where each colour's objects start; then each object, met at its first cell in
        // row-major order, at its colour's next place.
        u32 at = 0;
        for (u32 s = 0; s < 256; ++s) {
            const u32 count = hist[s];
            hist[s] = at;
            at += count;
        }
        for (u32 c = 0; c < n; ++c) {
            const u32 word = out[c];
            if (word == 0x8000u) continue;
            const u32 root = word > 0x8000u ? c : word;
            const u32 key = lab[root];
            if ((key & 0xFFFFu) == c) ordered[hist[key >> 16]++] = (u16)root;
        }
    }
    END_PHASE
    END_BLOCKS
}
