// Kernels that write the rows' log-sum-exps (`tile-generate-sdpa{lse}`: one
// more view, [B, H_q, S_q] f32) against the float64 reference's, with each
// mask, before and after the library's schedules (exp2, which changes the
// max's units and so the log-sum-exp's formula; lazy rescale, which leaves
// the max behind; mask split; prefetch). tiled-attn-run poisons the
// log-sum-exps with NaN, checks each within 1e-3 of the reference's and
// -inf exactly where a row sees no key (bottom-right causal with S_q > S_k,
// the empty band of a two-sided window). A softcap kernel's are those of
// the capped scores.

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x37,37x100,5x300

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=none_lse" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.none2.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.none2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=2 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=64 block-n=32 variant=bottom_right_lse" -o %t.br.mlir
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="exp2=1 mask-split=1 heavy-first=1 stages=2" -o %t.br2.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.br2.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s --check-prefixes=CHECK,EMPTY

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=32 block-n=16 variant=window_softcap_lse" -o %t.window.mlir
// RUN: tiled-attn-opt %t.window.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 masked-first=1 stages=2" -o %t.window2.mlir
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=4 --kv-heads=2 --softcap=2 --window=20,0 --window-causal | FileCheck %s
// RUN: tiled-attn-run %t.window.mlir --compare-with=%t.window2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 --softcap=30 --window=3,5 --window-align=bottom-right | FileCheck %s

// Each line reports the log-sum-exps' largest error.
// CHECK: lse_err=
// EMPTY: Sq=100 Sk=37 {{.*}} lse_err={{[0-9.e+-]+}} vs {{.*}} PASS
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed

// A wrong log-sum-exp fails: a tolerance no float32 result meets.
// RUN: not tiled-attn-run %t.none.mlir --shapes=64x64 --lse-tolerance=1e-12 | FileCheck %s --check-prefix=STRICT
// STRICT: FAIL
// STRICT: 0 passed, 1 failed
