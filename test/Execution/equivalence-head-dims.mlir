// Head dims other than 64 and 128 (any multiple of 16 up to 256): Phi's 96
// and Gemma's 256, with grouped KV heads, against the float64 reference,
// before and after the library's sm_80 schedule for them (64-row blocks,
// exp2, lazy rescale, mask split, a refill after use), with each mask, the
// log-sum-exps and a softcap included.

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x37,37x100,5x300

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=96 block-m=64 block-n=64" -o %t.d96.mlir
// RUN: tiled-attn-opt %t.d96.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.d96s.mlir
// RUN: tiled-attn-run %t.d96.mlir --compare-with=%t.d96s.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=4 --kv-heads=2 | FileCheck %s --check-prefixes=CHECK,D96

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=256 block-m=64 block-n=32 variant=top_left" -o %t.d256.mlir
// RUN: tiled-attn-opt %t.d256.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.d256s.mlir
// RUN: tiled-attn-run %t.d256.mlir --compare-with=%t.d256s.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=2 --kv-heads=1 | FileCheck %s --check-prefixes=CHECK,D256

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=256 block-m=64 block-n=32 variant=window_softcap_lse" -o %t.w256.mlir
// RUN: tiled-attn-opt %t.w256.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1" -o %t.w256s.mlir
// RUN: tiled-attn-run %t.w256.mlir --compare-with=%t.w256s.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 --softcap=50 --window=20,0 --window-causal | FileCheck %s --check-prefixes=CHECK,W256

// D96: D=96 f16 causal=none
// D256: D=256 bf16 causal=top_left
// W256: D=256 f16 causal=window band=[-20,0] {{.*}} lse_err=
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed
