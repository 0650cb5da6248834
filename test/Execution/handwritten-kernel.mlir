// The hand-written kernel in examples/ computes SDPA, before and after its
// online softmax is decomposed.

// RUN: tiled-attn-run %repo/examples/sdpa_fwd.mlir | FileCheck %s
// RUN: tiled-attn-opt %repo/examples/sdpa_fwd.mlir --tile-decompose-online-softmax | tiled-attn-run --layout=bshd | FileCheck %s

// CHECK-NOT: FAIL
// CHECK-COUNT-7: causal=top_left {{.*}} PASS
// CHECK: {{^}}7 passed, 0 failed
