// portable.h: one kernel source, two compilers (DESIGN.md §5).
//
// Under NVRTC (`__CUDACC__`) the macros below are plain CUDA. Compiled as host C++ (the `cc`
// crate, `-x c++`), a launch becomes loops: `BLOCKS` loops over the blocks, each `PHASE`
// loops over the threads of the block in the order the emulator chose (forward, reverse or
// shuffled), and the end of a phase is the barrier. Rules a kernel follows so that both
// readings agree:
//   - memory is written only inside a phase; code between phases runs once per block on the
//     host but once per thread on the GPU, so it may only read and compute block-uniform
//     values;
//   - a value one thread keeps across a barrier lives in `THREAD_VAR` storage;
//   - a block-wide decision (a loop condition) comes from `PHASE_OR` / `VOTE`, which is
//     `__syncthreads_or` on the GPU, never from a read of shared memory;
//   - no warp intrinsics.
// Every kernel is declared with `KERNEL(name, params...)`: on the GPU an `extern "C"
// __global__` entry point `name`; on the host an `extern "C"` function `name_host(ctx, args)`
// whose `args` are the launch arguments as 64-bit slots (pointers, or u32 scalars).
#ifndef ARCBATCH_PORTABLE_H
#define ARCBATCH_PORTABLE_H

typedef unsigned int u32;
typedef int i32;
typedef long long i64;
typedef unsigned short u16;
typedef unsigned char u8;
typedef signed char i8;

// One grid of a batch: the twin of Rust's `GridMeta` (8 bytes, 2 of them padding).
struct GridMeta {
    u32 offset;
    u8 h;
    u8 w;
};

// The label of a cell that belongs to no object (a background cell).
#define NO_LABEL 0xFFFFFFFFu

#ifdef __CUDACC__

#define KERNEL(name, ...) extern "C" __global__ void name(__VA_ARGS__)
#define BLOCKS {
#define END_BLOCKS }
#define BLOCK_ID blockIdx.x
#define NTHREADS blockDim.x
#define PHASE { const u32 tid = threadIdx.x; (void)tid; {
#define END_PHASE } __syncthreads(); }
#define PHASE_OR(flag) { const u32 tid = threadIdx.x; int vote_ = 0; (void)tid; {
#define VOTE(x) (vote_ |= (x) ? 1 : 0)
#define END_PHASE_OR(flag) } flag = __syncthreads_or(vote_); }
#define SHARED(type, name, n) __shared__ type name[n]
#define THREAD_VAR(type, name) type name##_tv
#define TV(name) name##_tv
#define ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define ATOMIC_OR(p, v) atomicOr((p), (v))
#define ATOMIC_MAX(p, v) atomicMax((p), (v))
#define ATOMIC_MIN(p, v) atomicMin((p), (v))

#else

// Host side only: these headers never reach NVRTC.
#include <stdint.h>

// Most threads per block the emulator runs (CUDA's limit).
#define EMU_MAX_THREADS 1024

// One emulated launch: `blocks` blocks of `threads` threads; within a phase, the threads run
// in the order `order[0..threads]` (a permutation of 0..threads).
struct EmuCtx {
    u32 blocks;
    u32 threads;
    const u32* order;
};

// Calls `f(ctx, args...)` with each 64-bit slot converted to the parameter's type.
template <typename T> struct EmuArg {
    static T get(uint64_t v) { return (T)(uintptr_t)v; }
};
template <> struct EmuArg<u32> {
    static u32 get(uint64_t v) { return (u32)v; }
};
template <unsigned... I> struct EmuSeq {};
template <unsigned N, unsigned... I> struct EmuMakeSeq : EmuMakeSeq<N - 1, N - 1, I...> {};
template <unsigned... I> struct EmuMakeSeq<0, I...> {
    typedef EmuSeq<I...> type;
};
template <typename... A, unsigned... I>
static void emu_call(void (*f)(const EmuCtx*, A...), const EmuCtx* ctx, const uint64_t* args, EmuSeq<I...>) {
    f(ctx, EmuArg<A>::get(args[I])...);
}
template <typename... A> static void emu_invoke(void (*f)(const EmuCtx*, A...), const EmuCtx* ctx, const uint64_t* args) {
    emu_call(f, ctx, args, typename EmuMakeSeq<sizeof...(A)>::type());
}

#define KERNEL(name, ...)                                                                                           \
    static void name##_body(const EmuCtx* ctx_, __VA_ARGS__);                                                        \
    extern "C" void name##_host(const EmuCtx* ctx, const uint64_t* args) { emu_invoke(name##_body, ctx, args); }   \
    static void name##_body(const EmuCtx* ctx_, __VA_ARGS__)
#define BLOCKS for (u32 block_ = 0; block_ < ctx_->blocks; ++block_) {
#define END_BLOCKS }
#define BLOCK_ID block_
#define NTHREADS ctx_->threads
#define PHASE for (u32 t_ = 0; t_ < ctx_->threads; ++t_) { const u32 tid = ctx_->order[t_]; {
#define END_PHASE } }
#define PHASE_OR(flag) { int vote_ = 0; for (u32 t_ = 0; t_ < ctx_->threads; ++t_) { const u32 tid = ctx_->order[t_]; {
#define VOTE(x) (vote_ |= (x) ? 1 : 0)
#define END_PHASE_OR(flag) } } flag = vote_; }
#define SHARED(type, name, n) type name[n]
#define THREAD_VAR(type, name) type name##_tv[EMU_MAX_THREADS]
#define TV(name) name##_tv[tid]
#define ATOMIC_ADD(p, v) (*(p) += (v))
#define ATOMIC_OR(p, v) (*(p) |= (v))
#define ATOMIC_MAX(p, v) (*(p) = *(p) > (v) ? *(p) : (v))
#define ATOMIC_MIN(p, v) (*(p) = *(p) < (v) ? *(p) : (v))

#endif

// The histogram slot of a colour: ascending slots are ascending colours (-128 -> 0, 0 -> 128).
#define COLOR_SLOT(c) ((u32)(u8)(c) ^ 0x80u)

#endif
