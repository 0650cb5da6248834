// Knob coverage on the host: every knob of tile-schedule over two values, and
// the combinations that interact (mask split + prefetch, retile + lazy
// rescale, everything at once), each compared with the unscheduled kernel on
// the same inputs. Tolerances: 2e-3 (f16) and 1e-2 (bf16) where rounding
// changes (retile, exp2, lazy rescale); bitwise where it cannot.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 variant=top_left" -o %t.c.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=128 dtype=bf16 variant=bottom_right block-m=32 block-n=32" -o %t.br.mlir
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64" -o %t.n.mlir

// Mask split + prefetch, stages 2 and 3: bitwise.
// RUN: tiled-attn-opt %t.c.mlir --tile-schedule="mask-split=1 stages=2" -o %t.1.mlir
// RUN: tiled-attn-run %t.c.mlir --compare-with=%t.1.mlir --kernel=sdpa_fwd --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="mask-split=1 stages=3" -o %t.2.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.2.mlir --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s

// Retile + lazy rescale (thresholds 4 and 8).
// RUN: tiled-attn-opt %t.c.mlir --tile-schedule="block-m=32 block-n=16 lazy-rescale=4" -o %t.3.mlir
// RUN: tiled-attn-run %t.c.mlir --compare-with=%t.3.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s
// RUN: tiled-attn-opt %t.br.mlir --tile-schedule="block-m=64 block-n=16 lazy-rescale=8 exp2=1" -o %t.4.mlir
// RUN: tiled-attn-run %t.br.mlir --compare-with=%t.4.mlir --equivalence-tolerance=1e-2 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s

// Every knob at once, and every knob at another value.
// RUN: tiled-attn-opt %t.c.mlir --tile-schedule="block-m=128 block-n=32 mask-split=1 exp2=1 lazy-rescale=8 stages=2" -o %t.5.mlir
// RUN: tiled-attn-run %t.c.mlir --compare-with=%t.5.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s
// RUN: tiled-attn-opt %t.n.mlir --tile-schedule="block-m=16 block-n=64 exp2=0 lazy-rescale=1 stages=4" -o %t.6.mlir
// RUN: tiled-attn-run %t.n.mlir --compare-with=%t.6.mlir --equivalence-tolerance=2e-3 --batch=1 --heads=2 --shapes=1x1,17x17,100x37,37x100,200x200 | FileCheck %s

// CHECK-NOT: FAIL
// CHECK-COUNT-5: diff={{.*}} PASS
// CHECK: {{^}}5 passed, 0 failed
