// tile-retile keeps the kernel's results: the retiled kernel agrees with the
// original on the same inputs, up to the rounding that a different blocking
// of the online softmax brings (measured below 3e-4 for f16 and 3e-3 for
// bf16; the tolerances are the reference's). --cse first merges equal
// constants, which the pass must pull apart again.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 variant=top_left" --cse -o %t.f16.mlir
// RUN: tiled-attn-opt %t.f16.mlir --tile-retile="block-m=128 block-n=32" -o %t.f16.r1.mlir
// RUN: tiled-attn-run %t.f16.mlir --compare-with=%t.f16.r1.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s
// RUN: tiled-attn-opt %t.f16.mlir --tile-retile="block-m=16 block-n=16" -o %t.f16.r2.mlir
// RUN: tiled-attn-run %t.f16.mlir --compare-with=%t.f16.r2.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s
// RUN: tiled-attn-opt %t.f16.mlir --tile-retile="block-m=192 block-n=176" -o %t.f16.r4.mlir
// RUN: tiled-attn-run %t.f16.mlir --compare-with=%t.f16.r4.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 dtype=bf16 variant=bottom_right block-m=32 block-n=32" -o %t.bf16.mlir
// RUN: tiled-attn-opt %t.bf16.mlir --tile-retile="block-m=64 block-n=128" -o %t.bf16.r.mlir
// RUN: tiled-attn-run %t.bf16.mlir --compare-with=%t.bf16.r.mlir --equivalence-tolerance=1e-2 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s

// Retile composes with the other transforms (decomposed, exp2).
// RUN: tiled-attn-opt %t.f16.mlir --tile-retile="block-m=32 block-n=128" --tile-exp2 --tile-decompose-online-softmax -o %t.f16.r3.mlir
// RUN: tiled-attn-run %t.f16.mlir --compare-with=%t.f16.r3.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 | FileCheck %s

// CHECK-NOT: FAIL
// CHECK-COUNT-5: diff={{.*}} PASS
// CHECK: {{^}}5 passed, 0 failed

// An `lse` kernel: the log-sum-exps (tile.log_sum_exp and the store into
// the lse view) take the new block_m with O.
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 variant=window_lse block-m=32 block-n=16" --cse -o %t.lse.mlir
// RUN: tiled-attn-opt %t.lse.mlir --tile-retile="block-m=64 block-n=32" -o %t.lse.r.mlir
// RUN: FileCheck %s --check-prefix=LSE-IR --input-file=%t.lse.r.mlir
// RUN: tiled-attn-run %t.lse.mlir --compare-with=%t.lse.r.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,257x257 --window=20,3 | FileCheck %s --check-prefix=LSE
// LSE-IR: tile.log_sum_exp {{.*}} : tensor<64xf32>
// LSE-IR: tile.store {{.*}} : tensor<64xf32>, <?x?x?xf32>
// LSE: lse_err=
// LSE-NOT: FAIL
// LSE: {{^}}5 passed, 0 failed
