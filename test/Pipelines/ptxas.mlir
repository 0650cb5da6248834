// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t

// ptxas accepts the PTX of every target of the kernel library, in both
// dtypes, and reports its resources (manifest.json, "ptxas": registers and
// spill bytes).

// RUN: tiled-attn-compile --head-dim=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_80" --cubin=sm_80 --out-dir=%t/sm_80
// RUN: tiled-attn-compile --head-dim=64 --dtype=bf16 --schedule="exp2=1" --lowering="chip=sm_80" --cubin=sm_80 --out-dir=%t/sm_80
// RUN: FileCheck %s --input-file=%t/sm_80/manifest.json -DCHIP=sm_80
// RUN: test -s %t/sm_80/sdpa_fwd_sm_80_f16_d64_top_left.sm_80.cubin
// RUN: test -s %t/sm_80/sdpa_fwd_sm_80_bf16_d64_none.sm_80.cubin

// RUN: tiled-attn-compile --head-dim=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_89" --cubin=sm_89 --out-dir=%t/sm_89
// RUN: tiled-attn-compile --head-dim=64 --dtype=bf16 --schedule="exp2=1" --lowering="chip=sm_89" --cubin=sm_89 --out-dir=%t/sm_89
// RUN: FileCheck %s --input-file=%t/sm_89/manifest.json -DCHIP=sm_89

// RUN: tiled-attn-compile --head-dim=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_90" --cubin=sm_90 --out-dir=%t/sm_90
// RUN: tiled-attn-compile --head-dim=64 --dtype=bf16 --schedule="exp2=1" --lowering="chip=sm_90" --cubin=sm_90 --out-dir=%t/sm_90
// RUN: FileCheck %s --input-file=%t/sm_90/manifest.json -DCHIP=sm_90

// RUN: tiled-attn-compile --head-dim=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_120a" --cubin=sm_120a --out-dir=%t/sm_120a
// RUN: tiled-attn-compile --head-dim=64 --dtype=bf16 --schedule="exp2=1" --lowering="chip=sm_120a" --cubin=sm_120a --out-dir=%t/sm_120a
// RUN: FileCheck %s --input-file=%t/sm_120a/manifest.json -DCHIP=sm_120a

// RUN: tiled-attn-compile --head-dim=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_121a" --cubin=sm_121a --out-dir=%t/sm_121a
// RUN: tiled-attn-compile --head-dim=64 --dtype=bf16 --schedule="exp2=1" --lowering="chip=sm_121a" --cubin=sm_121a --out-dir=%t/sm_121a
// RUN: FileCheck %s --input-file=%t/sm_121a/manifest.json -DCHIP=sm_121a

// Consumer Blackwell as the library builds it (tma=1): K and V arrive by
// TMA into 128-byte swizzled panels paced by mbarriers and feed mma.sync
// through ldmatrix (plain and .trans); no wgmma; no spills; 50 KB of shared
// memory at D=128, within the chip's 99 KB.
// RUN: tiled-attn-compile --head-dim=128 --variant=top_left --block-m=64 --block-n=64 --dtype=bf16 --schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" --lowering="chip=sm_120a warps=4 tma=1" --cubin=sm_120a --out-dir=%t/sm_120a_tma
// RUN: tiled-attn-compile --head-dim=64 --block-m=64 --block-n=64 --dtype=f16 --schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" --lowering="chip=sm_121a warps=4 tma=1" --cubin=sm_121a --out-dir=%t/sm_121a_tma
// RUN: FileCheck %s --input-file=%t/sm_120a_tma/manifest.json --check-prefix=SM120-TMA
// RUN: FileCheck %s --input-file=%t/sm_120a_tma/manifest.json --check-prefix=SM90A-SPILLS
// RUN: FileCheck %s --input-file=%t/sm_121a_tma/manifest.json --check-prefix=SM90A-SPILLS
// RUN: FileCheck %s --input-file=%t/sm_120a_tma/sdpa_fwd_sm_120a_bf16_d128_top_left.ptx --check-prefix=SM120-TMA-PTX -DCHIP=sm_120a -DT=bf16
// RUN: FileCheck %s --input-file=%t/sm_121a_tma/sdpa_fwd_sm_121a_f16_d64_none.ptx --check-prefix=SM120-TMA-PTX -DCHIP=sm_121a -DT=f16
// RUN: FileCheck %s --input-file=%t/sm_120a_tma/sdpa_fwd_sm_120a_bf16_d128_top_left.ptx --check-prefix=SM120-NO-WGMMA
// RUN: test -s %t/sm_121a_tma/sdpa_fwd_sm_121a_f16_d64_none.sm_121a.cubin
// SM120-TMA-DAG: "shared_bytes": 51200
// SM120-TMA-DAG: "tma": true
// SM120-TMA-DAG: "kind": "tensor_map"
// SM120-TMA-PTX: .target [[CHIP]]
// SM120-NO-WGMMA-NOT: wgmma
// SM120-TMA-PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM120-TMA-PTX: mbarrier.try_wait.parity.shared.b64
// SM120-TMA-PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SM120-TMA-PTX: mma.sync.aligned.m16n8k16.row.col.f32.[[T]].[[T]].f32
// SM120-TMA-PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16

// sm_90a: the wgmma family (TMA, mbarriers, wgmma with A in shared memory
// or registers), both dtypes and head dims, no spills; the tensor maps are
// 128-byte grid-constant parameters whose box and swizzle the manifest
// records for the runtime.
// The library's configurations: D=128 on two consumer warpgroups and a
// producer warpgroup (384 threads, setmaxnreg 240 / 24, ptxas sizes the
// launch for 168 registers), two slots per ring, causal with ping-pong
// (named barriers 3 and 4 by register); D=64 non-causal on three consumer
// warpgroups of a 192-row tile (512 threads, setmaxnreg 160 / 24, 128 at
// launch, the consumers' barrier 1 counts 384 threads), D=64 causal on one
// warpgroup; P.V deferred (one wgmma group left in flight at the softmax's
// wait).
// RUN: tiled-attn-compile --head-dim=64 --block-m=64 --block-n=64 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --lowering="chip=sm_90a warps=4" --cubin=sm_90a --out-dir=%t/sm_90a
// RUN: tiled-attn-compile --head-dim=128 --block-m=128 --block-n=128 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --lowering="chip=sm_90a warps=8 warp-specialize=1 ring-slots=2 pingpong=1 producer-registers=24 consumer-registers=240" --cubin=sm_90a --out-dir=%t/sm_90a
// RUN: tiled-attn-compile --head-dim=64 --block-m=192 --block-n=128 --dtype=bf16 --schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" --lowering="chip=sm_90a warps=12 warp-specialize=1 ring-slots=2 producer-registers=24 consumer-registers=160" --cubin=sm_90a --out-dir=%t/sm_90a
// RUN: FileCheck %s --input-file=%t/sm_90a/sdpa_fwd_sm_90a_bf16_d64_none.ptx --check-prefix=SM90A-THREE
// RUN: FileCheck %s --input-file=%t/sm_90a/manifest.json --check-prefix=SM90A
// RUN: FileCheck %s --input-file=%t/sm_90a/manifest.json --check-prefix=SM90A-SPILLS
// RUN: FileCheck %s --input-file=%t/sm_90a/sdpa_fwd_sm_90a_f16_d128_top_left.ptx --check-prefix=SM90A-PTX
// RUN: test -s %t/sm_90a/sdpa_fwd_sm_90a_f16_d128_top_left.sm_90a.cubin
// RUN: test -s %t/sm_90a/sdpa_fwd_sm_90a_bf16_d64_none.sm_90a.cubin
// RUN: test -s %t/sm_90a/sdpa_fwd_sm_90a_f16_d64_top_left.sm_90a.cubin
// SM90A-DAG: "name": "sdpa_fwd_sm_90a_f16_d128_top_left"
// SM90A-DAG: "name": "sdpa_fwd_sm_90a_bf16_d64_none"
// SM90A-DAG: "block": [{{[[:space:]]*}}384,
// SM90A-DAG: "registers": 168,
// SM90A-DAG: "warp_specialize": true
// SM90A-DAG: "consumer_registers": 240
// SM90A-DAG: "ring_slots": 2
// SM90A-DAG: "pingpong": true
// SM90A-DAG: "block": [{{[[:space:]]*}}512,
// SM90A-DAG: "registers": 128,
// SM90A-DAG: "consumer_registers": 160
// SM90A-DAG: "block_m": 192
// SM90A-DAG: "block": [{{[[:space:]]*}}128,
// SM90A-DAG: "defer_pv": true
// SM90A-DAG: "spill_store_bytes": 0
// SM90A-SPILLS-NOT: "spill_{{store|load}}_bytes": {{[1-9]}}
// SM90A-DAG: "kind": "tensor_map",
// SM90A-DAG: "box": [{{[[:space:]]*}}128,{{[[:space:]]*}}64{{[[:space:]]*}}],
// SM90A-DAG: "swizzle": 128,
// SM90A-DAG: "type": "tensor_map"
// SM90A-PTX: .target sm_90a
// SM90A-PTX: .param .align 64 .b8 sdpa_fwd_param_29[128],
// SM90A-PTX: .param .align 64 .b8 sdpa_fwd_param_30[128],
// SM90A-PTX: .param .align 64 .b8 sdpa_fwd_param_31[128]
// SM90A-PTX: .maxntid 384, 1, 1
// SM90A-PTX: .minnctapersm 1
// SM90A-PTX: mbarrier.init.shared.b64
// SM90A-PTX: setmaxnreg.inc.sync.aligned.u32 240;
// SM90A-PTX: bar.sync %r{{[0-9]+}}, 256;
// SM90A-PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// SM90A-PTX: wgmma.commit_group.sync.aligned
// SM90A-PTX: bar.arrive %r{{[0-9]+}}, %r{{[0-9]+}};
// SM90A-PTX: wgmma.wait_group.sync.aligned 1
// SM90A-PTX: @%p{{[0-9]+}} mbarrier.arrive.expect_tx.shared.b64 _, [%r{{[0-9]+}}], %r{{[0-9]+}};
// SM90A-PTX: wgmma.wait_group.sync.aligned 0
// SM90A-PTX: bar.sync 1, 256;
// SM90A-PTX: setmaxnreg.dec.sync.aligned.u32 24;
// SM90A-PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90A-THREE: .target sm_90a
// SM90A-THREE: .maxntid 512, 1, 1
// SM90A-THREE: setmaxnreg.inc.sync.aligned.u32 160;
// SM90A-THREE: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90A-THREE: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// SM90A-THREE: bar.sync 1, 384;
// SM90A-THREE: setmaxnreg.dec.sync.aligned.u32 24;
// SM90A-THREE: cp.async.bulk.tensor.4d

// D = 128, causal, f16 on sm_80: the largest kernel of the library.
// RUN: tiled-attn-compile --head-dim=128 --variant=top_left --dtype=f16 --schedule="exp2=1 mask-split=1" --lowering="chip=sm_80" --cubin=sm_80 --out-dir=%t/d128 | FileCheck %s --check-prefix=D128-OUT
// RUN: FileCheck %s --input-file=%t/d128/manifest.json --check-prefix=D128

// 32-bit index arithmetic: ptxas takes it too, and the manifest names its
// ABI (sizes and strides are 32-bit parameters).
// RUN: tiled-attn-compile --head-dim=128 --variant=top_left --block-m=128 --schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" --lowering="chip=sm_80 smem-lhs=1 index-bitwidth=32" --cubin=sm_80,sm_90 --out-dir=%t/index32
// RUN: FileCheck %s --input-file=%t/index32/manifest.json --check-prefix=INDEX32
// RUN: FileCheck %s --input-file=%t/index32/manifest.json --check-prefix=INDEX32-PARAMS
// RUN: FileCheck %s --input-file=%t/index32/sdpa_fwd_sm_80_f16_d128_top_left_index32.ptx --check-prefix=INDEX32-PTX
// RUN: test -s %t/index32/sdpa_fwd_sm_80_f16_d128_top_left_index32.sm_90.cubin
// RUN: not tiled-attn-compile --lowering="index-bitwidth=16" --out-dir=%t/index16 2>&1 | FileCheck %s --check-prefix=INDEX16
// INDEX32-DAG: "name": "sdpa_fwd_sm_80_f16_d128_top_left_index32",
// INDEX32-DAG: "abi": "tiled-attn-v2",
// INDEX32-DAG: "index_bits": 32,
// The manifest lists the kernel's parameters as the compiler lowered them:
// the runtime packs the launch from this list.
// INDEX32-PARAMS: "params": [
// INDEX32-PARAMS-NEXT: {
// INDEX32-PARAMS-NEXT: "kind": "base",
// INDEX32-PARAMS-NEXT: "name": "q",
// INDEX32-PARAMS-NEXT: "type": "ptr"
// INDEX32-PARAMS-NEXT: },
// INDEX32-PARAMS-NEXT: {
// INDEX32-PARAMS-NEXT: "dim": 0,
// INDEX32-PARAMS-NEXT: "kind": "size",
// INDEX32-PARAMS-NEXT: "name": "q",
// INDEX32-PARAMS-NEXT: "type": "i32"
// INDEX32-PARAMS: "kind": "scalar",
// INDEX32-PARAMS-NEXT: "name": "scale",
// INDEX32-PARAMS-NEXT: "type": "f32"
// INDEX32-PARAMS-NEXT: }
// INDEX32-PARAMS-NEXT: ],
// INDEX32-PTX: .param .u64 .ptr .align 1 sdpa_fwd_param_0,
// INDEX32-PTX-NEXT: .param .u32 sdpa_fwd_param_1,
// INDEX32-PTX: cp.async.cg.shared.global
// INDEX32-PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// INDEX16: error: the command line: lowering "index-bitwidth=16": tile-to-ptx: index-bitwidth must be 32 or 64, got 16

// D = 128 non-causal as the library builds it (FlashAttention-2's loop:
// the partial key block first, then K prefetched in bounds, merged
// barriers): ptxas takes it for sm_80 and sm_90, and the unmasked loop's
// copies carry no source-size operand (no bounds check).
// RUN: tiled-attn-compile --head-dim=128 --block-m=128 --schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" --lowering="chip=sm_80 smem-lhs=1 merge-barriers=1 skip-unit-row-scales=1" --cubin=sm_80,sm_90 --out-dir=%t/fa2-loop
// RUN: test -s %t/fa2-loop/sdpa_fwd_sm_80_f16_d128_none.sm_90.cubin
// RUN: FileCheck %s --input-file=%t/fa2-loop/sdpa_fwd_sm_80_f16_d128_none.ptx --check-prefix=FA2-LOOP
// FA2-LOOP: cp.async.cg.shared.global [%r{{[0-9]+}}{{(\+[0-9]+)?}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// FA2-LOOP: cp.async.cg.shared.global [%r{{[0-9]+}}{{(\+[0-9]+)?}}], [%rd{{[0-9]+}}], 16;
// FA2-LOOP: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTX assembled for an older chip than its .target is rejected, with
// ptxas's message.
// RUN: not tiled-attn-compile --lowering="chip=sm_120a" --cubin=sm_80 --out-dir=%t/mismatch 2>&1 | FileCheck %s --check-prefix=MISMATCH

// CHECK: "kernels": [
// CHECK: "arch": "[[CHIP]]",
// CHECK: "causal": "top_left",
// CHECK: "cubin": {
// CHECK-NEXT: "[[CHIP]]": "sdpa_fwd_[[CHIP]]_f16_d64_top_left.[[CHIP]].cubin"
// CHECK: "dtype": "f16",
// CHECK: "name": "sdpa_fwd_[[CHIP]]_f16_d64_top_left",
// CHECK: "ptx": "sdpa_fwd_[[CHIP]]_f16_d64_top_left.ptx",
// CHECK-NEXT: "ptxas": {
// CHECK-NEXT: "[[CHIP]]": {
// CHECK-NEXT: "registers": {{[1-9][0-9]*}},
// CHECK-NEXT: "spill_load_bytes": {{[0-9]+}},
// CHECK-NEXT: "spill_store_bytes": {{[0-9]+}},
// CHECK: "mask_split": true,
// CHECK: "arch": "[[CHIP]]",
// CHECK: "causal": "none",
// CHECK: "cubin": {
// CHECK-NEXT: "[[CHIP]]": "sdpa_fwd_[[CHIP]]_bf16_d64_none.[[CHIP]].cubin"
// CHECK: "dtype": "bf16",
// CHECK: "name": "sdpa_fwd_[[CHIP]]_bf16_d64_none",
// CHECK: "ptxas": {
// CHECK-NEXT: "[[CHIP]]": {
// CHECK-NEXT: "registers": {{[1-9][0-9]*}},
// CHECK-NEXT: "spill_load_bytes": {{[0-9]+}},
// CHECK-NEXT: "spill_store_bytes": {{[0-9]+}},

// D128-OUT: sdpa_fwd_sm_80_f16_d128_top_left: {{.*}}sdpa_fwd_sm_80_f16_d128_top_left.ptx (128 threads, {{[0-9]+}} bytes of shared memory)
// D128: "head_dim": 128,
// D128: "name": "sdpa_fwd_sm_80_f16_d128_top_left",
// D128: "ptxas": {
// D128-NEXT: "sm_80": {
// D128-NEXT: "registers": {{[1-9][0-9]*}},
// D128-NEXT: "spill_load_bytes": {{[0-9]+}},
// D128-NEXT: "spill_store_bytes": {{[0-9]+}},

// MISMATCH: tiled-attn-compile: ptxas -arch=sm_80 rejected the PTX:
// MISMATCH: ptxas fatal {{.*}}SM version specified by .target is higher than default SM version
