// The numerical check can fail: a kernel that claims to be causal but has
// lost its causal mask is caught, and so is one that never stores.

// RUN: sed -e 's/%keep = arith.andi %in_bounds, %visible/%keep = arith.ori %in_bounds, %in_bounds/' %repo/examples/sdpa_fwd.mlir \
// RUN:   | not tiled-attn-run --shapes=17x17,100x37 | FileCheck %s --check-prefix=NOMASK
// NOMASK: Sq=17 Sk=17 {{.*}} FAIL
// NOMASK: Sq=100 Sk=37 {{.*}} FAIL
// NOMASK: 0 passed, 2 failed

// RUN: grep -v 'tile.store\|: tensor<64x64xf16>, !tile.view' %repo/examples/sdpa_fwd.mlir \
// RUN:   | not tiled-attn-run --shapes=17x17 | FileCheck %s --check-prefix=NOSTORE
// NOSTORE: Sq=17 Sk=17 {{.*}} unwritten=6528 FAIL
