// tilegpu-simulate-roles runs a kernel's synchronization on the host: its
// roles' loops, mbarriers, TMA copies, wgmma groups and tcgen05 products
// under random schedules, for one query block. No Blackwell GPU is lent
// here, so this is how the library's tcgen05 warp-role handshakes are run
// at all.

// The backward pass's main kernel on sm_90a (two consumer warpgroups, a
// producer warp, dQ's part added by TMA reductions: tma-reduce): each
// step's write of the dQ buffer waits until the previous reduction has read
// it, and the last is waited for after the loop, before the epilogue's
// staging buffers reuse its memory (they did, before that wait: a hazard
// this simulation found).
// RUN: tiled-attn-compile --spec=%repo/test/Pipelines/Inputs/backward-tma-reduce.json --keep-ir --ptxas=none \
// RUN:   --out-dir=%t.bwd > /dev/null
// RUN: tiled-attn-opt %t.bwd/sdpa_bwd_sm_90a_bf16_d128_top_left.tile.mlir --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 tma-reduce=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" -o %t.bwd.mlir
// RUN: tiled-attn-opt %t.bwd.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=12 seq-q=300 seq-k=200 block=1" 2>&1 | FileCheck %s --check-prefix=BWD
// RUN: tiled-attn-opt %t.bwd.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=12 seq-q=200 seq-k=700" 2>&1 | FileCheck %s --check-prefix=BWD
// BWD: remark: tilegpu-simulate-roles: 12 schedules ran to the end ({{[0-9]+}} steps; {{.*}}; no deadlock, no hazard)
// Without lengths, a kernel without #tile.sdpa (a backward one) runs one
// key, more keys than queries (two query heads per key head) and fewer
// (the library's backward configurations run these with simulate-roles):
// RUN: tiled-attn-opt %t.bwd.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=3" 2>&1 | FileCheck %s --check-prefix=BWD-CORNERS
// BWD-CORNERS: 3 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0; seq-q 199, seq-k 323, block 1, group 2; seq-q 323, seq-k 199, block 0; no deadlock, no hazard)

// The tcgen05 backward (sm_100a, D = 64, causal): the tensor-memory
// accumulators of the three loops of the mask split share columns (each
// loop's Sᵀ, dPᵀ and dQ live while their loop runs), inside the loop over a
// group's query heads, here three of them; the corner cases run two query
// heads per key head on the longer key sequence.
// BWD-TCGEN05: remark: tilegpu-simulate-roles: 6 schedules ran to the end ({{[0-9]+}} steps; seq-q 700, seq-k 300, block 1, group 3; no deadlock, no hazard)
// BWD-TCGEN05-CORNERS: 2 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0; seq-q 199, seq-k 323, block 1, group 2; seq-q 323, seq-k 199, block 0; no deadlock, no hazard)

// The same backward, non-causal, with an MMA warp (mma-warp): at one query
// and one key the mask split's middle loop runs no step, and the Q and dO
// slots prefetched for it are dropped unread, released by the consumers
// right after their waits. The MMA warps do not wait for them: they did,
// and the producer, free to refill the slot once the consumers released
// it, could complete its next phase first, which left the MMA warps
// waiting for a phase that never came (a deadlock under some schedules;
// schedule 7 of these).
// RUN: tiled-attn-compile --spec=%repo/kernels/library.json --entry=sdpa_bwd_sm_100a_bf16_d64_none \
// RUN:   --keep-ir --ptxas=none --out-dir=%t.tcnone > /dev/null
// RUN: tiled-attn-opt %t.tcnone/sdpa_bwd_sm_100a_bf16_d64_none.tile.mlir --tilegpu-attach-target=chip=sm_100a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1 tma-reduce=1 share-transposes=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240 mma-warp=1" -o %t.tcmma.mlir
// RUN: tiled-attn-opt %t.tcmma.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=12" 2>&1 | FileCheck %s --check-prefix=BWD-MMA-WARP
// BWD-MMA-WARP: remark: tilegpu-simulate-roles: 12 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0; seq-q 199, seq-k 323, block 1, group 2; seq-q 323, seq-k 199, block 0; no deadlock, no hazard)

// A write of a buffer that a TMA reduction still reads (no wait for it
// first), and a kernel that ends with one in flight:
// RUN: tiled-attn-compile --spec=%repo/kernels/library.json --entry=sdpa_bwd_sm_100a_bf16_d64_top_left \
// RUN:   --keep-ir --ptxas=none --out-dir=%t.tc > /dev/null
// RUN: tiled-attn-opt %t.tc/sdpa_bwd_sm_100a_bf16_d64_top_left.tile.mlir --tilegpu-attach-target=chip=sm_100a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 p-over-s=1 tma-reduce=1 share-transposes=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" -o %t.tc.mlir
// RUN: tiled-attn-opt %t.tc.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=6 seq-q=700 seq-k=300 block=1 group=3" 2>&1 | FileCheck %s --check-prefix=BWD-TCGEN05
// RUN: tiled-attn-opt %t.tc.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=2" 2>&1 | FileCheck %s --check-prefix=BWD-TCGEN05-CORNERS
// RUN: not tiled-attn-opt %S/Inputs/simulate-tma-reduce.mlir -split-input-file -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=4 seq-q=64 seq-k=64" 2>&1 | FileCheck %s --check-prefix=REDUCE
// REDUCE: error: tilegpu-simulate-roles: writes shared memory that a TMA reduction still reads
// REDUCE: error: tilegpu-simulate-roles: the kernel ends with this TMA reduction in flight (no tilegpu.tma_reduce_wait after it)
// REDUCE: remark: tilegpu-simulate-roles: 4 schedules ran to the end
// share-transposes gives the moves of one type into shared memory (an
// mma's lhs on warpgroups side by side on the columns) one buffer; a
// program that reads the first again after the second is written breaks
// that, and the simulation says so (every library kernel runs it):
// RUN: tiled-attn-opt %S/Inputs/simulate-shared-lhs-reuse.mlir --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="share-transposes=1" \
// RUN:   --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=4 seq-q=64 seq-k=64" 2>&1 | FileCheck %s --check-prefix=LHS-REUSE
// LHS-REUSE: error: tilegpu-simulate-roles: writes shared memory that a product still reads
// LHS-REUSE: note: still in flight: this op
// An mbarrier used after a buffer over its bytes was written is an error
// naming the write (the allocator handing its memory on too early); its
// initialization again makes it whole:
// RUN: not tiled-attn-opt %S/Inputs/simulate-barrier-overwrite.mlir -split-input-file -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=4 seq-q=64 seq-k=64" 2>&1 | FileCheck %s --check-prefix=OVERWRITE
// OVERWRITE: error: tilegpu-simulate-roles: uses an mbarrier whose shared memory a buffer placed over it has overwritten
// OVERWRITE: note: overwritten by this op
// OVERWRITE: remark: tilegpu-simulate-roles: 4 schedules ran to the end

// The library's D=64 causal kernel (mma-warp, p-over-s, two Q tiles, an MMA
// warp per tile): diagonal blocks of a 1000-key sequence and its ends.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 producer-registers=56 consumer-registers=224" \
// RUN:   --canonicalize --cse -o %t.d64.mlir
// RUN: tiled-attn-opt %t.d64.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=40 seq-q=1000 seq-k=1000 block=3" 2>&1 | FileCheck %s --check-prefix=D64-LAST
// RUN: tiled-attn-opt %t.d64.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=40 seq-q=1000 seq-k=1000 block=1" 2>&1 | FileCheck %s --check-prefix=D64-MID
// RUN: tiled-attn-opt %t.d64.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=40 seq-q=1 seq-k=1" 2>&1 | FileCheck %s --check-prefix=D64-ONE
// A block-sparse kernel (the library's sm_100a document masking: one Q tile
// of 128 rows): its loops run over block lists, whose lengths the
// simulation takes from each configuration's block mask (no block, partial
// blocks only, full ones only, both).
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir \
// RUN:   --tile-generate-sdpa="head-dim=128 dtype=bf16 block-m=128 block-n=64 variant=none_sparse+document" \
// RUN:   --tile-vectorize-apply \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=4 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 producer-registers=48 consumer-registers=232" \
// RUN:   --canonicalize --cse -o %t.sparse.mlir
// RUN: tiled-attn-opt %t.sparse.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8 seq-q=1000 seq-k=1000 block=2" 2>&1 | FileCheck %s --check-prefix=SPARSE
// SPARSE: remark: tilegpu-simulate-roles: 8 schedules ran to the end ({{[0-9]+}} steps; seq-q 1000, seq-k 1000, block 2; seq-q 1000, seq-k 1000, block 2, blocks 2+0; seq-q 1000, seq-k 1000, block 2, blocks 0+3; seq-q 1000, seq-k 1000, block 2, blocks 1+2; no deadlock, no hazard)

// D64-LAST: remark: tilegpu-simulate-roles: 40 schedules ran to the end ({{[0-9]+}} steps; seq-q 1000, seq-k 1000, block 3; no deadlock, no hazard)
// D64-MID: remark: tilegpu-simulate-roles: 40 schedules ran to the end ({{[0-9]+}} steps; seq-q 1000, seq-k 1000, block 1; no deadlock, no hazard)
// D64-ONE: remark: tilegpu-simulate-roles: 40 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0; no deadlock, no hazard)

// A window kernel (the band of diagonals at run time) runs each length
// under three bands: a causal sliding window (-(2 * 128 + 3), 0), a
// two-sided one (-(256 / 2), 128 + 1) and an empty one (2 > 1), with the
// left edge's masked loop first (masked-first, as the library's tcgen05
// window entries).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128 variant=window" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 masked-first=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 producer-registers=56 consumer-registers=224" \
// RUN:   --canonicalize --cse -o %t.window.mlir
// RUN: tiled-attn-opt %t.window.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=20 seq-q=1000 seq-k=1000 block=3" 2>&1 | FileCheck %s --check-prefix=WINDOW
// RUN: tiled-attn-opt %t.window.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=4" 2>&1 | FileCheck %s --check-prefix=WINDOW-CORNERS
// WINDOW: remark: tilegpu-simulate-roles: 20 schedules ran to the end ({{[0-9]+}} steps; seq-q 1000, seq-k 1000, block 3, band [-259, 0]; seq-q 1000, seq-k 1000, block 3, band [-128, 129]; seq-q 1000, seq-k 1000, block 3, band [2, 1]; no deadlock, no hazard)
// WINDOW-CORNERS: remark: tilegpu-simulate-roles: 4 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0, band [-259, 0];
// WINDOW-CORNERS-SAME: seq-q 256, seq-k 647, block 0, band [2, 1]; no deadlock, no hazard)

// The sm_90a D=64 window kernel (one warpgroup, TMA rings without empty
// mbarriers, P.V deferred into a three-slot V ring): between the mask
// split's loops, the last refill of a loop is a prefetch no loop reads, and
// the next loop's first refill goes into its slot without a wait. The load
// that starts the next loop must first wait for the latest load of every
// slot; when it waited for its own slot's only, the simulation caught a
// copy into a slot another copy still wrote (one key and an empty first
// loop; two-sided bands at 251 keys, with a softcap's extra ops).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64 variant=window_softcap" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" \
// RUN:   --tilegpu-attach-target=chip=sm_90a --tilegpu-assign-layouts=warps=4 --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory -o %t.sm90-window.mlir
// RUN: tiled-attn-opt %t.sm90-window.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8 seq-q=251 seq-k=251 block=1" 2>&1 | FileCheck %s --check-prefix=SM90-WINDOW
// RUN: tiled-attn-opt %t.sm90-window.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8 seq-q=1 seq-k=1" 2>&1 | FileCheck %s --check-prefix=SM90-WINDOW-ONE
// SM90-WINDOW: remark: tilegpu-simulate-roles: 8 schedules ran to the end ({{[0-9]+}} steps; {{.*}}band [-32, 65]; {{.*}} no deadlock, no hazard)
// SM90-WINDOW-ONE: remark: tilegpu-simulate-roles: 8 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0, band [-131, 0]; {{.*}} no deadlock, no hazard)

// The library's D=128 kernel, not causal: a partial last key block, and
// exactly one block.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 producer-registers=56 consumer-registers=224" \
// RUN:   --canonicalize --cse -o %t.d128.mlir
// RUN: tiled-attn-opt %t.d128.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=40 seq-q=300 seq-k=1100" 2>&1 | FileCheck %s --check-prefix=D128
// RUN: tiled-attn-opt %t.d128.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=40 seq-q=300 seq-k=128" 2>&1 | FileCheck %s --check-prefix=D128-ONE
// D128: remark: tilegpu-simulate-roles: 40 schedules ran to the end ({{[0-9]+}} steps; seq-q 300, seq-k 1100, block 0; no deadlock, no hazard)
// D128-ONE: remark: tilegpu-simulate-roles: 40 schedules ran to the end ({{[0-9]+}} steps; seq-q 300, seq-k 128, block 0; no deadlock, no hazard)

// Without an MMA warp (each softmax warpgroup issues its own products),
// with and without warp roles.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" \
// RUN:   --tilegpu-simulate-roles="schedules=20 seq-q=1000 seq-k=1000 block=3" \
// RUN:   -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CONSUMERS
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=256 block-n=64" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-simulate-roles="schedules=20 seq-q=1000 seq-k=1000 block=2" \
// RUN:   -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOROLES
// CONSUMERS: remark: tilegpu-simulate-roles: 20 schedules ran to the end
// NOROLES: remark: tilegpu-simulate-roles: 20 schedules ran to the end

// It finds what is wrong. Each case edits the D=64 kernel's IR:
// - readiness that never comes (ready mbarriers expecting 8 warps of 4):
//   a deadlock, with each agent's wait;
// RUN: sed 's/count(4)/count(8)/' %t.d64.mlir | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=2 seq-q=1000 seq-k=1000 block=3" 2>&1 | FileCheck %s --check-prefix=DEADLOCK
// DEADLOCK: error: tilegpu-simulate-roles: deadlock after {{[0-9]+}} steps: every agent waits and nothing is in flight
// DEADLOCK-DAG: note: consumer 0 waits here
// DEADLOCK-DAG: note: consumer 1 waits here
// DEADLOCK-DAG: note: producer 0 waits here
// DEADLOCK-DAG: note: mma 0 waits here
// DEADLOCK-DAG: note: mma 1 waits here
// DEADLOCK: remark: tilegpu-simulate-roles: schedule 0 (seed 1) of seq-q 1000, seq-k 1000, block 3 failed
// - a K/V slot given back after one issuer of two (empty mbarriers
//   expecting one commit): a refill over a slot a product still reads, a
//   product of a slot whose copy has not landed, or (the second issuer's
//   commit landing in the next phase, which the producer's parity wait
//   then misreads) a deadlock, whichever the first failing schedule meets;
// RUN: sed 's/count(2)/count(1)/' %t.d64.mlir | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8 seq-q=1000 seq-k=1000 block=3" 2>&1 | FileCheck %s --check-prefix=EARLY
// EARLY: error: tilegpu-simulate-roles: {{a TMA copy into shared memory that a product still reads|a product reads shared memory whose TMA copy has not landed|deadlock after}}
// - S read without waiting for its product (the softmax warpgroups' wait
//   on S's mbarrier, %5, removed): S read while its product writes it, or
//   (the softmax then arriving for the next S ahead of its phase) a
//   deadlock, whichever the first failing schedule meets.
// RUN: sed '/tilegpu.mbarrier_wait %5\[/d' %t.d64.mlir | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8 seq-q=1000 seq-k=1000 block=3" 2>&1 | FileCheck %s --check-prefix=UNWAITED
// UNWAITED: error: tilegpu-simulate-roles: {{tensor memory that a product in flight writes|deadlock after}}

// Options are checked, and what the simulation does not model is an error.
// RUN: not tiled-attn-opt %t.d64.mlir --tilegpu-simulate-roles="schedules=0" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// RUN: not tiled-attn-opt %t.d64.mlir --tilegpu-simulate-roles="group=0" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// OPTIONS: error: tilegpu-simulate-roles: schedules, max-steps and group must be positive, seq-q and seq-k both positive (or both 0: the kernel's corner cases) and block not negative
// RUN: not tiled-attn-opt %t.d64.mlir --tilegpu-simulate-roles="max-steps=100" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=STEPS
// STEPS: error: tilegpu-simulate-roles: no end after 100 steps
// cp.async copies (mma.sync kernels without TMA) are not modelled.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tilegpu-attach-target=chip=sm_80 --tilegpu-assign-layouts=warps=4 \
// RUN:   --convert-tile-to-tilegpu --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   | not tiled-attn-opt --tilegpu-simulate-roles -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPASYNC
// CPASYNC: error: tilegpu-simulate-roles: tilegpu.async_copy is not modelled (the simulation covers TMA, mbarriers, wgmma, mma.sync and tcgen05)

// The model is checked on the library's Hopper kernels, which ran clean on
// an H100 under compute-sanitizer: wgmma groups, TMA rings with a producer
// warp, three consumer warpgroups, and ping-pong turns; each passes its
// corner cases (half the schedules lazy: asynchronous work finishes only
// when no thread can go on).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=192 block-n=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=12 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=160" \
// RUN:   --tilegpu-simulate-roles="schedules=16" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HOPPER
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=4 --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-simulate-roles="schedules=16" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HOPPER
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory --tilegpu-pingpong \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" \
// RUN:   --tilegpu-simulate-roles="schedules=16" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=HOPPER
// HOPPER: remark: tilegpu-simulate-roles: 16 schedules ran to the end
// And it rejects a Hopper kernel whose wait leaves its own wgmma product in
// flight (pending raised by one).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=128 block-n=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --tilegpu-attach-target=chip=sm_90a \
// RUN:   --tilegpu-assign-layouts=warps=8 --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="producer-registers=24 consumer-registers=240" \
// RUN:   | sed 's/pending(1)/pending(2)/' \
// RUN:   | not tiled-attn-opt --tilegpu-simulate-roles="schedules=8" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=WGMMA-PENDING
// WGMMA-PENDING: error: tilegpu-simulate-roles: waits for a wgmma product but leaves it in flight (pending counts more groups than were issued after it)

// Without lengths: the corner cases of the kernel's blocks (256 x 128).
// RUN: tiled-attn-opt %t.d64.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=10" 2>&1 | FileCheck %s --check-prefix=CORNERS
// CORNERS: remark: tilegpu-simulate-roles: 10 schedules ran to the end ({{[0-9]+}} steps; seq-q 1, seq-k 1, block 0; seq-q 1019, seq-k 1019, block 1; seq-q 1019, seq-k 1019, block 3; seq-q 256, seq-k 647, block 0; no deadlock, no hazard)
// RUN: not tiled-attn-opt %t.d64.mlir --tilegpu-simulate-roles="seq-q=5" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LENGTHS
// LENGTHS: error: tilegpu-simulate-roles: schedules, max-steps and group must be positive, seq-q and seq-k both positive (or both 0: the kernel's corner cases) and block not negative

// In the pipeline (the library's tcgen05 entries use it): simulate-roles=N
// runs the corner cases before lowering, silently when they pass.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=256 block-n=128" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tile-to-ptx="chip=sm_100a warps=8 warp-specialize=1 ring-slots=2 mma-warp=1 p-over-s=1 producer-registers=56 consumer-registers=224 simulate-roles=4" \
// RUN:   2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE-NOT: remark
// PIPELINE: gpu.binary
// RUN: echo 'module {}' | not tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="exp2=1 stages=2" --tile-to-ptx="chip=sm_80 warps=4 simulate-roles=2" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE-CPASYNC
// PIPELINE-CPASYNC: error: tilegpu-simulate-roles: tilegpu.async_copy is not modelled

// The correction warpgroups (correction=1: the softmax hands its row factors
// through shared memory to a warpgroup per Q tile that scales O in tensor
// memory) pass their corner cases. Edited, the model rejects them: without
// the correction's wait on the factors' mbarrier (the wait right before a
// tilegpu.local_load), the factors are read before they are written; with
// the ready mbarriers of P.V expecting the softmax's warps alone (count 4,
// not 8), a P.V goes while the correction scales O (or, the correction's
// arrivals then landing in later phases, a deadlock: whichever the first
// failing schedule meets).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=128 block-m=256 block-n=128 variant=top_left" \
// RUN:   --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target=chip=sm_100a --tilegpu-assign-layouts=warps=8 \
// RUN:   --convert-tile-to-tilegpu="empty-barriers=1 ring-slots=2 mma-warp=1 p-over-s=1 correction=1" \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits --tilegpu-allocate-memory \
// RUN:   --tilegpu-warp-specialize="mma-warp=1 correction=1 producer-registers=48 consumer-registers=184 correction-registers=48" \
// RUN:   --canonicalize --cse -o %t.corr.mlir
// RUN: tiled-attn-opt %t.corr.mlir -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=24" 2>&1 | FileCheck %s --check-prefix=CORR
// CORR: remark: tilegpu-simulate-roles: 24 schedules ran to the end
// RUN: sed -e '$!N' -e '/mbarrier_wait[^\n]*\n[^\n]*tilegpu.local_load/s/^[^\n]*\n//' -e 'P;D' %t.corr.mlir \
// RUN:   | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8" 2>&1 | FileCheck %s --check-prefix=CORR-UNREAD
// CORR-UNREAD: error: tilegpu-simulate-roles: reads row factors from shared memory that were not written since they were last read
// RUN: sed 's/count(8)/count(4)/' %t.corr.mlir | not tiled-attn-opt -mlir-print-op-on-diagnostic=false -o /dev/null \
// RUN:   --tilegpu-simulate-roles="schedules=8" 2>&1 | FileCheck %s --check-prefix=CORR-READY
// CORR-READY: error: tilegpu-simulate-roles: {{tensor memory that a product in flight writes|deadlock after}}

// Tensor memory is freed once the first role and the roles whose threads
// read or write it (the lowering's release barrier) have ended: a product
// that another role issues after that is an error (here nothing orders the
// second role's product, which the first role never waits for).
// RUN: not tiled-attn-opt %s --tilegpu-simulate-roles="schedules=8 seq-q=128 seq-k=128" \
// RUN:   -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FREED
// FREED: error: tilegpu-simulate-roles: issues a product into tensor memory after the roles that hold it (the first, and those that read or write it) have ended and freed it
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @product_after_the_release(%o: !tile.view<?x?x?x16xf32>)
      attributes {tilegpu.shared_bytes = 32768 : i64, tilegpu.warps = 8 : i64} {
    %false = arith.constant false
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(16384) : !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    tilegpu.warp_specialize [#tilegpu.role<"first", warps = 4>, #tilegpu.role<"second", warps = 4>] {
      tilegpu.async_wait_all
    }, {
      tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
          : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
            !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
            !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    }
    return
  }
}

