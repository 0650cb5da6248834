// Softcap kernels (`tile-generate-sdpa{softcap}`: scores softcap *
// tanh(scale * s / softcap), one more f32 argument) against the float64
// reference with the same cap, with each mask, before and after the
// library's schedules (exp2, lazy rescale, mask split, prefetch): rounding
// changes, so the two must agree within 2e-3. A cap of 2 makes the tanh
// saturate on most scores (random inputs have |scale * s| around 1-3).

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x37,37x100,5x300

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_softcap" -o %t.none.mlir
// RUN: FileCheck %s --check-prefix=IR --input-file=%t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.none2.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.none2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 --softcap=2 | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=64 block-n=32 variant=top_left_softcap" -o %t.causal.mlir
// RUN: tiled-attn-opt %t.causal.mlir --tile-schedule="exp2=1 mask-split=1 heavy-first=1 stages=2" -o %t.causal2.mlir
// RUN: tiled-attn-run %t.causal.mlir --compare-with=%t.causal2.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=2 --softcap=50 | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=window_softcap" -o %t.window.mlir
// RUN: tiled-attn-opt %t.window.mlir --tile-schedule="exp2=1 mask-split=1 masked-first=1 stages=2" -o %t.window2.mlir
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=4 --kv-heads=2 --softcap=2 --window=20,0 --window-causal | FileCheck %s

// The cap's argument comes last; the tanh takes scale / softcap, the
// softmax the cap as its scale.
// IR: func.func @sdpa_fwd({{.*}}, %[[SCALE:[^:]*]]: f32 {tile.arg = #tile.arg<scale>}, %[[CAP:[^:]*]]: f32 {tile.arg = #tile.arg<softcap>})
// IR-SAME: features = [softcap]
// IR: %[[RATIO:.*]] = arith.divf %[[SCALE]], %[[CAP]] fastmath<afn> : f32
// IR: %[[S:.*]] = tile.mma
// IR: %[[F:.*]] = tensor.splat %[[RATIO]] : tensor<32x16xf32>
// IR: %[[X:.*]] = arith.mulf %[[S]], %[[F]] : tensor<32x16xf32>
// IR: math.tanh %[[X]] : tensor<32x16xf32>
// IR: tile.online_softmax %{{.*}}, %{{.*}}, %{{.*}} scale(%[[CAP]])

// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
