// Window kernels (`tile-generate-sdpa{window}`: the band of diagonals each
// query sees, lo <= j - i <= hi, given at run time) against the float64
// reference, before and after tile-mask-split, which must be bitwise neutral
// (diff=0) in each of its forms, and after the library's schedules. The bands
// come from FlashAttention's window_size (--window=LEFT,RIGHT, -1: no bound),
// optionally intersected with a causal mask (--window-causal) and aligned
// top-left or bottom-right (--window-align). The host executor also fails
// any in_bounds load outside its view, so the unmasked loop's loads are
// checked too. The shapes put the band's edges inside and across blocks,
// with S_q != S_k both ways; with S_q > S_k bottom-right, and with narrow
// bands, rows see no key (output 0).

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x100,257x257,100x37,37x100,5x300,300x5

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=window block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.split.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=masked-first=1 -o %t.first.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=guard=1 -o %t.guard.mlir

// A sliding causal window (Mistral's), narrower and wider than a block.
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=40,0 --window-causal | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=7,7 --window-causal --window-align=bottom-right | FileCheck %s
// Two-sided windows, either alignment; a window wider than S_k.
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=20,33 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=3,100 --window-align=bottom-right | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=1000,1000 | FileCheck %s
// One side only; the diagonal alone.
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=-1,5 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=0,0 | FileCheck %s
// Causal masks of either alignment as bands.
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window-causal | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.split.mlir --shapes=%{shapes} --batch=1 --heads=2 --window-causal --window-align=bottom-right | FileCheck %s
// The split's other forms.
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.first.mlir --equivalence-tolerance=1e-6 --shapes=%{shapes} --batch=1 --heads=2 --window=40,0 --window-causal | FileCheck %s --check-prefix=NEAR
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.guard.mlir --shapes=%{shapes} --batch=1 --heads=2 --window=20,33 --window-align=bottom-right | FileCheck %s

// Blocks that do not divide each other, and grouped KV heads.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=window block-m=48 block-n=80" -o %t.before2.mlir
// RUN: tiled-attn-opt %t.before2.mlir --tile-mask-split -o %t.split2.mlir
// RUN: tiled-attn-run %t.before2.mlir --compare-with=%t.split2.mlir --shapes=%{shapes} --batch=1 --heads=4 --kv-heads=2 --window=90,0 --window-causal | FileCheck %s

// The library's schedules (mask split, heavy-first, prefetch, exp2, lazy
// rescale; masked-first as the tcgen05 entries have it): rounding changes.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=window block-m=64 block-n=32" -o %t.gen.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 heavy-first=1 heavy-first-heads=2 stages=2 refill-after-use=1" -o %t.lib1.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-schedule="exp2=1 lazy-rescale=8 lazy-rescale-guard=0 mask-split=1 masked-first=1 stages=2" -o %t.lib2.mlir
// RUN: tiled-attn-run %t.gen.mlir --compare-with=%t.lib1.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=2 --heads=2 --window=50,0 --window-causal | FileCheck %s --check-prefix=NEAR
// RUN: tiled-attn-run %t.gen.mlir --compare-with=%t.lib2.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=2 --heads=2 --window=30,12 --window-align=bottom-right | FileCheck %s --check-prefix=NEAR

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}}causal=window band=[{{.*}}] {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=5 Sk=300 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=300 Sk=5 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: {{^}}9 passed, 0 failed

// NEAR-NOT: FAIL
// NEAR: {{^}}9 passed, 0 failed

// The window options are for window kernels only, and checked.
// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --window=4,0 2>&1 | FileCheck %s --check-prefix=NOT-WINDOW
// NOT-WINDOW: error: --window, --window-causal and --window-align are for `window` kernels; this one is #tile.sdpa<
// RUN: not tiled-attn-run %t.before.mlir --window=-2,0 2>&1 | FileCheck %s --check-prefix=BAD-WINDOW
// BAD-WINDOW: error: --window: expected LEFT,RIGHT with each -1 or more, got '-2,0'
// RUN: not tiled-attn-run %t.before.mlir --window-align=middle 2>&1 | FileCheck %s --check-prefix=BAD-ALIGN
// BAD-ALIGN: error: --window-align must be top-left or bottom-right, got 'middle'
