// tile-prefetch changes when K and V blocks are loaded, never what is
// computed: the prefetched kernel must give the same output as the generated
// one, bit for bit (--compare-with at its default tolerance of 0), on the
// shapes that break kernels, and on loops shorter than the pipeline (5x3
// with block-n=16 and stages=4 runs a single iteration; 1x1 and 100x37 with
// block-n=64 too). Each kernel file is also checked to be pipelined.

// Stages 2, 3 and 4; f16 and bf16; D 64 and 128; no, top-left and
// bottom-right causal masks.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" --tile-prefetch=stages=2 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR2 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left" --tile-prefetch=stages=3 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR3 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=128 variant=bottom_right block-m=32 block-n=16" --tile-prefetch=stages=4 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR4 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=128 block-n=64" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 block-m=128 block-n=64" --tile-prefetch=stages=4 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR4 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// K only (streams=1, FlashAttention-2's schedule), refilled after use:
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-schedule="mask-split=1" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-schedule="mask-split=1 stages=2 prefetch-streams=1 refill-after-use=1" -o %t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=16 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=16 block-n=16" --tile-prefetch=stages=2 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR2 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left block-n=16" --tile-prefetch=stages=3 -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR3 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// With the online softmax decomposed after prefetching. Both kernels are
// decomposed, so that only the prefetch differs between them.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-prefetch=stages=3 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR3 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" --tile-prefetch=stages=4 --tile-decompose-online-softmax -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=IR4 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// With refill-after-use (each refill issued after the last read of the
// block it replaces): stages 2 and 3, f16 and bf16, causal masks of both
// alignments, the online softmax decomposed, and the loops tile-mask-split
// leaves (each pipelined on its own).

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64 variant=top_left" --tile-prefetch="stages=2 refill-after-use=1" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=AFTER2 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=128 variant=bottom_right block-m=32 block-n=16" --tile-prefetch="stages=3 refill-after-use=1" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=AFTER3 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" --tile-decompose-online-softmax -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=f16 head-dim=64" --tile-prefetch="stages=2 refill-after-use=1" --tile-decompose-online-softmax -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=AFTER2 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left block-n=16" -o %t.before.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="dtype=bf16 head-dim=64 variant=top_left block-n=16" --tile-mask-split --tile-prefetch="stages=3 refill-after-use=1" -o %t.after.mlir
// RUN: FileCheck %s --check-prefix=SPLIT3 --input-file=%t.after.mlir
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=1x1,17x17,100x37,37x100,5x3 | FileCheck %s
// RUN: tiled-attn-run %t.before.mlir --compare-with=%t.after.mlir --shapes=257x257 --batch=1 --heads=2 | FileCheck %s --check-prefix=BIG

// The K/V loop carries acc, m and l plus (stages - 1) blocks of K and of V.
// IR2: tile.sdpa = #tile.sdpa<{{.*}}stages = 2>
// IR2: %{{.*}}:5 = scf.for
// IR3: tile.sdpa = #tile.sdpa<{{.*}}stages = 3>
// IR3: %{{.*}}:7 = scf.for
// IR4: tile.sdpa = #tile.sdpa<{{.*}}stages = 4>
// IR4: %{{.*}}:9 = scf.for

// With refill-after-use the loop carries the same blocks, and each refill
// follows the mma that reads the oldest block of its stream (Q·Kᵀ for K,
// P·V for V).
// AFTER2: tile.sdpa = #tile.sdpa<{{.*}}stages = 2, refill_after_use = true>
// AFTER2: %{{.*}}:5 = scf.for {{.*}} iter_args({{.*}}, %[[K:[^ ]+]] = %{{[^ ]+}}, %[[V:[^ ]+]] = %{{[^ ]+}})
// AFTER2-NOT: tile.load
// AFTER2: tile.mma %{{.*}}, %[[K]], %{{.*}}
// AFTER2-NEXT: tile.load {{.*}} transpose
// AFTER2-NOT: tile.load
// AFTER2: tile.mma %{{.*}}, %[[V]], %{{.*}}
// AFTER2-NEXT: tile.load
// AFTER2-NEXT: scf.yield
// AFTER3: tile.sdpa = #tile.sdpa<{{.*}}stages = 3, refill_after_use = true>
// AFTER3: %{{.*}}:7 = scf.for {{.*}} iter_args({{.*}}, %[[K:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}, %[[V:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}})
// AFTER3-NOT: tile.load
// AFTER3: tile.mma %{{.*}}, %[[K]], %{{.*}}
// AFTER3-NEXT: tile.load {{.*}} transpose
// AFTER3-NOT: tile.load
// AFTER3: tile.mma %{{.*}}, %[[V]], %{{.*}}
// AFTER3-NEXT: tile.load
// AFTER3-NEXT: scf.yield
// After tile-mask-split, in both loops (unmasked, then diagonal).
// SPLIT3: tile.sdpa = #tile.sdpa<{{.*}}stages = 3, refill_after_use = true, mask_split = true>
// SPLIT3: %{{.*}}:7 = scf.for {{.*}} iter_args({{.*}}, %[[K:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}, %[[V:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}})
// SPLIT3-NOT: tile.load
// SPLIT3: tile.mma %{{.*}}, %[[K]], %{{.*}}
// SPLIT3-NEXT: tile.load {{.*}} transpose
// SPLIT3-NOT: tile.load
// SPLIT3: tile.mma %{{.*}}, %[[V]], %{{.*}}
// SPLIT3-NEXT: tile.load
// SPLIT3-NEXT: scf.yield
// SPLIT3: %{{.*}}:7 = scf.for {{.*}} iter_args({{.*}}, %[[K:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}}, %[[V:[^ ]+]] = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}})
// SPLIT3-NOT: tile.load
// SPLIT3: tile.mma %{{.*}}, %[[K]], %{{.*}}
// SPLIT3-NEXT: tile.load {{.*}} transpose
// SPLIT3-NOT: tile.load
// SPLIT3: tile.mma %{{.*}}, %[[V]], %{{.*}}
// SPLIT3-NEXT: tile.load
// SPLIT3-NEXT: scf.yield

// CHECK-NOT: FAIL
// CHECK: Sq=1 Sk=1 {{.*}} diff=0.000e+00 {{.*}} PASS
// CHECK: Sq=17 Sk=17 {{.*}} diff=0.000e+00 {{.*}} PASS
// CHECK: Sq=100 Sk=37 {{.*}} diff=0.000e+00 {{.*}} PASS
// CHECK: Sq=37 Sk=100 {{.*}} diff=0.000e+00 {{.*}} PASS
// CHECK: Sq=5 Sk=3 {{.*}} diff=0.000e+00 {{.*}} PASS
// CHECK: {{^}}5 passed, 0 failed

// BIG: B=1 H=2 Sq=257 Sk=257 {{.*}} diff=0.000e+00 {{.*}} PASS
// BIG: {{^}}1 passed, 0 failed
