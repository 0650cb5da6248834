// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 variant=top_left" --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 dtype=bf16" --tile-schedule --tile-to-ptx="chip=sm_80" | FileCheck %s --check-prefix=BF16
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule --tile-to-ptx="chip=sm_80 staged-stores=0" | FileCheck %s --check-prefix=DIRECT
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0" --tile-to-ptx="chip=sm_80 skip-unit-row-scales=1" | FileCheck %s --check-prefix=SKIP
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 variant=top_left" --tile-schedule="block-m=128 mask-split=1 mask-guard=1 exp2=1 stages=2 refill-after-use=1" --tile-to-ptx="chip=sm_80 smem-lhs=1" | FileCheck %s --check-prefix=GUARD
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=128" --tile-schedule --tile-to-ptx="chip=sm_80 warps=8" | FileCheck %s --check-prefix=WARPS8
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_80 index-bitwidth=32" | FileCheck %s --check-prefix=INDEX32
// RUN: rm -rf %t && tiled-attn-compile --head-dim=128 --block-m=128 --schedule="exp2=1 stages=2 prefetch-streams=1 refill-after-use=1" --lowering="chip=sm_80 smem-lhs=1 merge-barriers=1" --out-dir=%t
// RUN: FileCheck %s --check-prefix=FA2 --input-file=%t/sdpa_fwd_sm_80_f16_d128_none.ptx
// RUN: FileCheck %s --check-prefix=FA2-MANIFEST --input-file=%t/manifest.json
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 variant=top_left" --tile-schedule="exp2=1 mask-split=1" --tile-to-ptx="chip=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 dtype=bf16 variant=top_left" --tile-schedule="exp2=1" --tile-to-ptx="chip=sm_120a" | FileCheck %s --check-prefix=SM120A
// tile-to-ptx{family tma}: Hopper keeps its mma.sync path when asked, here
// fed by TMA (what the sm_120a kernels run, on a chip this project can run).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule="exp2=1 stages=2" --tile-to-ptx="chip=sm_90a family=mma_sync tma=1" | FileCheck %s --check-prefix=HOPPER-MMA-SYNC
// RUN: not tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" --tile-schedule --tile-to-ptx="chip=sm_90a family=tcgen05" 2>&1 | FileCheck %s --check-prefix=BAD-FAMILY
// HOPPER-MMA-SYNC: .target sm_90a
// HOPPER-MMA-SYNC-NOT: wgmma
// HOPPER-MMA-SYNC: cp.async.bulk.tensor
// HOPPER-MMA-SYNC: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// HOPPER-MMA-SYNC: mma.sync.aligned.m16n8k16
// HOPPER-MMA-SYNC-NOT: wgmma
// BAD-FAMILY: error: tilegpu-attach-target: sm_90a has no tcgen05 matrix units

// The whole pipeline, from a generated kernel to a gpu.binary holding PTX
// (the input is an empty module). The PTX is one string attribute: newlines
// and tabs print as \0A and \09.

// SM80-NOT: gpu.module
// SM80-NOT: tile.
// SM80: gpu.binary @tiled_attn
// SM80-SAME: #nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">
// SM80-SAME: .target sm_80
// exp2 and fma come from libdevice, linked and inlined: no call is left to
// resolve (an unresolved __nv_exp2f makes ptxas and the driver reject the
// PTX). The declarations would sit before the entry.
// SM80-NOT: .extern .func
// SM80-SAME: .entry sdpa_fwd(
// SM80-SAME: .maxntid 128, 1, 1
// Q, K and V: 16-byte asynchronous copies to shared memory.
// SM80-DAG: cp.async.cg.shared.global
// SM80-DAG: cp.async.commit_group;
// K is waited for while V's copy stays in flight.
// SM80-DAG: cp.async.wait_group \091;
// A operands (Q) and B operands of Kᵀ: ldmatrix.x4; of V: transposed.
// SM80-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM80-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SM80-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// Row max and sum over the quad.
// SM80-DAG: shfl.sync.bfly.b32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 1, 31, -1;
// SM80-DAG: shfl.sync.bfly.b32 \09%r{{[0-9]+}}, %r{{[0-9]+}}, 2, 31, -1;
// exp2 = 1: one ex2.approx.ftz per probability (no denormal fix-up).
// SM80-DAG: ex2.approx.ftz.f32
// SM80-DAG: bar.sync
// The staged store: O leaves in 16-byte pieces; every async copy has landed
// before its staging buffer (over the loads' buffers) is written.
// SM80-DAG: cp.async.wait_group \090;
// SM80-DAG: st.global.v4.b32
// Each warp reads back only the rows it staged: a warp barrier.
// SM80-DAG: bar.warp.sync
// SM80-NOT: st.global.b16
// SM80-NOT: ldmatrix.sync.aligned.m8n8.x2
// SM80-NOT: bf16

// BF16: .target sm_80
// BF16-NOT: .extern .func
// BF16-SAME: .entry sdpa_fwd(
// BF16-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// BF16-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// BF16-NOT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// Direct stores: each lane writes its pairs (with no alignment known beyond
// the element's, as two 16-bit stores).
// DIRECT: .entry sdpa_fwd(
// DIRECT: st.global.b16
// DIRECT-NOT: st.global.v4

// Masks under a branch (tile-mask-split{guard}): a uniform branch around
// the mask arithmetic in the one K/V loop.
// GUARD: .entry sdpa_fwd(
// GUARD: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// GUARD: bra.uni
// GUARD: st.global.v4.b32

// Lazy rescale with the per-warp skip: a warp vote on alpha != 1 around the
// rescale of O.
// SKIP: .entry sdpa_fwd(
// SKIP: vote.sync.any.pred
// SKIP: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// WARPS8: .target sm_80
// WARPS8-SAME: .maxntid 256, 1, 1
// WARPS8: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// SM90: #nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// SM90-SAME: .version 8.0
// SM90-SAME: .target sm_90
// SM90-NOT: .extern .func
// SM90-SAME: .entry sdpa_fwd(
// SM90-SAME: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// SM120A: #nvvm.target<O = 3, chip = "sm_120a", features = "+ptx87">
// SM120A-SAME: .version 8.7
// SM120A-SAME: .target sm_120a
// SM120A-NOT: .extern .func
// SM120A-SAME: .entry sdpa_fwd(
// SM120A-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// FlashAttention-2's loop (K prefetched, V copied in its iteration, barriers
// merged): two bar.sync before the loop (before the Q copy, after it
// lands), two per K/V block in the loop (each right after a
// cp.async.wait_group 0), one before the staged store; unmerged, the loop
// has four.
// FA2-COUNT-5: bar.sync 0;
// FA2-NOT: bar.sync
// FA2-MANIFEST: "merge_barriers": true
// FA2-MANIFEST: "options": "exp2=1 stages=2 prefetch-streams=1 refill-after-use=1"

// 32-bit index arithmetic: sizes and strides are 32-bit parameters.
// INDEX32: .param .u64 .ptr .align 1 sdpa_fwd_param_0,\0A\09.param .u32 sdpa_fwd_param_1,
// INDEX32: mul.lo.s32
// INDEX32: cp.async.cg.shared.global
