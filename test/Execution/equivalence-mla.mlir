// DeepSeek's MLA head dims: Q and K of 192 columns, V and O of 128
// (head_dim_v), and the plain D=192, against the float64 reference, before
// and after the library's sm_80 schedule for them (64-row blocks, exp2, lazy
// rescale, mask split, a refill after use), with grouped KV heads, each
// mask, the log-sum-exps, a softcap and a variable-length batch.

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x37,37x100,5x300
// DEFINE: %{schedule} = exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=192 head-dim-v=128 block-m=64 block-n=64" -o %t.mla.mlir
// RUN: tiled-attn-opt %t.mla.mlir --tile-schedule="%{schedule}" -o %t.mlas.mlir
// RUN: tiled-attn-run %t.mla.mlir --compare-with=%t.mlas.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=4 --kv-heads=2 | FileCheck %s --check-prefixes=CHECK,MLA

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=192 head-dim-v=128 block-m=64 block-n=64 variant=top_left" -o %t.mlac.mlir
// RUN: tiled-attn-opt %t.mlac.mlir --tile-schedule="%{schedule}" -o %t.mlacs.mlir
// RUN: tiled-attn-run %t.mlac.mlir --compare-with=%t.mlacs.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=2 --heads=2 | FileCheck %s --check-prefixes=CHECK,MLAC

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=192 head-dim-v=128 block-m=64 block-n=64 variant=window_softcap_lse" -o %t.mlaw.mlir
// RUN: tiled-attn-opt %t.mlaw.mlir --tile-schedule="%{schedule}" -o %t.mlaws.mlir
// RUN: tiled-attn-run %t.mlaw.mlir --compare-with=%t.mlaws.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 --softcap=50 --window=20,0 --window-causal | FileCheck %s --check-prefixes=CHECK,MLAW

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=192 block-m=64 block-n=64 variant=top_left" -o %t.d192.mlir
// RUN: tiled-attn-opt %t.d192.mlir --tile-schedule="%{schedule}" -o %t.d192s.mlir
// RUN: tiled-attn-run %t.d192.mlir --compare-with=%t.d192s.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s --check-prefixes=CHECK,D192

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=192 head-dim-v=128 block-m=64 block-n=64 variant=window_lse_varlen" -o %t.mlav.mlir
// RUN: tiled-attn-opt %t.mlav.mlir --tile-schedule="%{schedule}" -o %t.mlavs.mlir
// RUN: tiled-attn-run %t.mlav.mlir --compare-with=%t.mlavs.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes},0x5 --heads=4 --kv-heads=1 --window=-1,-1 --window-causal --window-align=bottom-right | FileCheck %s --check-prefix=VARLEN

// MLA: D=192 Dv=128 bf16 causal=none
// MLAC: D=192 Dv=128 f16 causal=top_left
// MLAW: D=192 Dv=128 f16 causal=window band=[-20,0] {{.*}} lse_err=
// D192: D=192 f16 causal=top_left
// CHECK-NOT: FAIL
// CHECK: {{^}}6 passed, 0 failed

// VARLEN: seqs=1x1,17x17,64x64,100x37,37x100,5x300,0x5 D=192 Dv=128 bf16 causal=window {{.*}} PASS
