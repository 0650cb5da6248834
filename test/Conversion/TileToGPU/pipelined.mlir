// A K/V loop pipelined at the tile level (tile-prefetch) lowers to a ring of
// shared buffers per stream, chosen by block index mod stages, and to mma
// operands that wait for their own copy group while later ones stay in
// flight.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2" --tile-assign-layouts --convert-tile-to-gpu \
// RUN:   | FileCheck %s --check-prefix=STAGES2
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=3" --tile-assign-layouts --convert-tile-to-gpu \
// RUN:   | FileCheck %s --check-prefix=STAGES3

// Q (9216 bytes), then K and V with two 9216-byte buffers each.
// STAGES2: gpu.func @sdpa_fwd
// STAGES2-SAME: tile.shared_bytes = 46080
// Prologue: blocks 0 of K and V into slot 0 of their rings (the K ring
// starts at byte 9216, the V ring at 27648); nobody waits for them here.
// STAGES2: memref.view %{{.*}}[%c9216][]
// STAGES2: nvgpu.device_async_create_group
// STAGES2: memref.view %{{.*}}[%c27648][]
// STAGES2: nvgpu.device_async_create_group
// STAGES2-NOT: nvgpu.device_async_wait
// STAGES2: scf.for
// Steady state: block j+1 of K and V goes to slot (j+1) mod 2, issued first...
// STAGES2: %[[SLOT:.*]] = arith.remui %{{.*}}, %c2
// STAGES2: arith.muli %[[SLOT]], %c9216
// STAGES2: nvgpu.device_async_create_group
// STAGES2: nvgpu.device_async_create_group
// STAGES2-NOT: nvgpu.device_async_wait
// ...then Q·Kᵀ waits for block j of K (V_j, K_j+1, V_j+1 may be in flight)
// STAGES2: nvvm.cp.async.wait.group 3
// STAGES2-NEXT: gpu.barrier
// STAGES2: nvgpu.mma.sync
// ...and P·V for block j of V (K_j+1, V_j+1 in flight).
// STAGES2: nvvm.cp.async.wait.group 2
// STAGES2-NEXT: gpu.barrier
// STAGES2: scf.yield

// With three stages two more groups per stream may be in flight.
// STAGES3: tile.shared_bytes = 64512
// STAGES3: scf.for
// STAGES3: nvvm.cp.async.wait.group 5
// STAGES3: nvvm.cp.async.wait.group 4
