// Soft-capping as a score function (kernels/functions/tanh_softcap.mlir:
// cap * tanh(score / cap) with a captured f32 cap), the library's other way
// to the `softcap` feature: against the float64 reference with the
// function, with a cap small enough that tanh bends most scores, before
// and after the library's schedules of sm_80 and sm_90a (tile-vectorize-
// apply, exp2, early gathers, defer-pv), causal and not, GQA.

// DEFINE: %{shapes} = 1x1,17x17,100x37,37x100,130x70
// RUN: tiled-attn-opt %repo/kernels/functions/tanh_softcap.mlir --tile-generate-sdpa="dtype=bf16 head-dim=64 block-m=64 block-n=32 variant=none+tanh_softcap" -o %t.none.mlir
// RUN: tiled-attn-opt %t.none.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 stages=2 refill-after-use=1 early-gathers=1" -o %t.nones.mlir
// RUN: tiled-attn-run %t.none.mlir --compare-with=%t.nones.mlir --equivalence-tolerance=1e-2 --capture=cap=1.5 --scale=1 --shapes=%{shapes} --batch=2 --heads=4 --kv-heads=2 | FileCheck %s
// RUN: tiled-attn-opt %repo/kernels/functions/tanh_softcap.mlir --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=64 block-n=64 variant=top_left+tanh_softcap" -o %t.causal.mlir
// RUN: tiled-attn-opt %t.causal.mlir --tile-schedule="exp2=1 mask-split=1 stages=2 defer-pv=1" -o %t.causals.mlir
// RUN: tiled-attn-run %t.causal.mlir --compare-with=%t.causals.mlir --equivalence-tolerance=2e-3 --capture=cap=1.5 --scale=1 --shapes=%{shapes} --batch=2 --heads=4 --kv-heads=2 | FileCheck %s

// The cap is the function's captured input, given by name.
// RUN: not tiled-attn-run %t.none.mlir --shapes=17x17 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: captured input 'cap' has no value: give it with --capture

// CHECK-NOT: FAIL
// CHECK: {{^}}5 passed, 0 failed
