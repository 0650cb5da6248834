// tile-mask-split is bitwise neutral: each kernel, causal or not, is run
// before and after the split on the same random inputs, and the two outputs
// must agree exactly (diff=0; both are also checked against the float64
// reference). The host executor also fails any load marked in_bounds that
// reads outside its view, so the unmasked loop's loads are checked too.
// The shapes put the diagonal inside and across blocks, with S_q != S_k both
// ways; bottom-right with S_q > S_k has query rows that see no key (their
// output is 0). Block sizes: BLOCK_M above, equal to and below BLOCK_N.

// DEFINE: %{shapes} = 1x1,17x17,64x64,100x100,257x257,100x37,37x100,5x300,300x5

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=SPLIT --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=128 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=16 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left block-m=16 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=16 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=bottom_right block-m=64 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// Blocks that do not divide each other (192 rows over 176 or 80 keys): the
// diagonal crosses key blocks at a different column in every row block.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-m=192 block-n=176" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=bottom_right block-m=48 block-n=80" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// With the online softmax decomposed afterwards (and in the kernel it is
// compared with), the split is still exact.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right block-m=64 block-n=32" -o %t.gen.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-mask-split --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left block-m=128 block-n=32" -o %t.gen.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %t.gen.mlir --tile-mask-split --tile-decompose-online-softmax -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// Without a causal mask: only the partial last key block is masked. S_k of 1,
// 5, 17, 37, 100, 257, 300 leaves a partial block, 64 none; with stages 2 and
// 3 the prefetched loads run past the unmasked loop.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=64 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=SPLIT-NC --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split --tile-prefetch="stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=16 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split --tile-prefetch="stages=3" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s
// Guard mode (one loop, masks under a branch), causal and not, with and
// without prefetching.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=guard=1 -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=guard=1 --tile-prefetch="stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 block-m=64 block-n=32" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=guard=1 --tile-prefetch="stages=3" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s
// Causal splits, pipelined as one: the masked loop starts with the blocks
// the unmasked loop left in flight (tile-prefetch chains them).
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=top_left block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split --tile-prefetch="stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=CHAINED --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split --tile-prefetch="stages=3" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=CHAINED --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s

// Masked first (tile-mask-split{masked-first}): the masked blocks run before
// the unmasked loop, so the sums run in another order; the outputs agree to
// rounding (and exactly when the key blocks are all masked, as at 1x1). The
// unmasked loop's prefetches are in_bounds (the executor checks that they
// stay inside their views) and its last refill reloads the last block.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=masked-first=1 --tile-prefetch="stages=2 streams=1 refill-after-use=1" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=MASKED-FIRST --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --equivalence-tolerance=1e-2 --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s --check-prefix=CLOSE
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %t.before.mlir --tile-mask-split=masked-first=1 --tile-prefetch="stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --equivalence-tolerance=2e-3 --shapes=%{shapes} --batch=1 --heads=2 | FileCheck %s --check-prefix=CLOSE

// MASKED-FIRST: mask_split = true
// MASKED-FIRST: scf.for
// MASKED-FIRST: tile.bounds_mask
// MASKED-FIRST: scf.yield
// MASKED-FIRST: scf.for
// MASKED-FIRST-NOT: tile.bounds_mask
// MASKED-FIRST: arith.minsi
// MASKED-FIRST: tile.load {{.*}} transpose in_bounds
// MASKED-FIRST: return

// CLOSE-NOT: FAIL
// CLOSE: Sq=1 Sk=1 {{.*}} diff=0.000e+00 {{.*}}PASS
// CLOSE-NOT: FAIL
// CLOSE: {{^}}9 passed, 0 failed

// SPLIT-NC: mask_split = true
// SPLIT-NC: scf.for
// SPLIT-NC: tile.load {{.*}} transpose in_bounds
// SPLIT-NC-NOT: tile.bounds_mask
// SPLIT-NC: tile.load {{.*}} in_bounds
// SPLIT-NC: scf.for
// SPLIT-NC: tile.bounds_mask

// SPLIT: mask_split = true
// SPLIT: scf.for
// SPLIT-NOT: tile.causal_mask
// SPLIT: scf.for
// SPLIT: tile.causal_mask

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=17 Sk=17 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=64 Sk=64 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=100 Sk=100 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=257 Sk=257 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=100 Sk=37 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=37 Sk=100 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=5 Sk=300 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: Sq=300 Sk=5 {{.*}} diff=0.000e+00 {{.*}}PASS
// CHECK: {{^}}9 passed, 0 failed

// CHAINED: %[[FIRST:.*]]:{{[0-9]+}} = scf.for
// CHAINED: scf.yield
// CHAINED-NOT: tile.load
// CHAINED: scf.for %{{.*}} iter_args(%{{.*}} = %[[FIRST]]#0,
