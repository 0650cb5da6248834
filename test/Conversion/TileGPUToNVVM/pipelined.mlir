// A K/V loop pipelined at the tile level (tile-prefetch) lowers to a ring of
// shared buffers per stream, chosen by block index mod stages, and to mma
// operands that wait for their own copy group while later ones stay in
// flight.

// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=STAGES2
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=3" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=STAGES3
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=AFTER2
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=3 refill-after-use=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=AFTER3
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="stages=2" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts="smem-lhs=1" --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=SMEMQ
// RUN: tiled-attn-opt %s --tile-generate-sdpa="head-dim=64 block-m=64 block-n=64" \
// RUN:   --tile-schedule="mask-split=1 masked-first=1 stages=2 refill-after-use=1 prefetch-streams=1" --tilegpu-attach-target="chip=sm_80" \
// RUN:   --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   --tilegpu-merge-barriers --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s --check-prefix=FIRST

// Masked first (K prefetched, V not): the masked loop ends with a padded K
// refill in flight, and the unmasked loop's prologue copies block 0 into the
// same buffer; every thread first waits for all its copies. The unmasked
// loop's K refills read block min(j + 1, n_full - 1) and check no bounds
// (no source-size operand).
// FIRST: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}]
// FIRST-NEXT: %[[K:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}]
// FIRST: %[[MASKED:.*]]:4 = scf.for
// FIRST-NOT: nvvm.cp.async.wait.group 0
// FIRST: scf.yield {{.*}}, memref<64x72xf16, #gpu.address_space<workgroup>>
// FIRST-NEXT: }
// FIRST-NEXT: nvvm.cp.async.wait.group 0
// FIRST: nvgpu.device_async_create_group
// FIRST: scf.for %{{.*}} = %c0 to %{{.*}} iter_args(%{{.*}} = %[[MASKED]]#0,
// FIRST: arith.minsi
// FIRST: nvgpu.device_async_copy %[[K]][{{.*}}], %{{.*}}[{{.*}}], 8 {bypassL1}

// Q (9216 bytes), then K and V with two 9216-byte buffers each.
// STAGES2: gpu.func @sdpa_fwd
// STAGES2-SAME: tilegpu.shared_bytes = 46080
// Prologue: blocks 0 of K and V into slot 0 of their rings (the K ring
// starts at byte 9216, the V ring at 27648); nobody waits for them here.
// STAGES2: memref.view %{{.*}}[%c9216][]
// STAGES2: nvgpu.device_async_create_group
// STAGES2: memref.view %{{.*}}[%c27648][]
// STAGES2: nvgpu.device_async_create_group
// STAGES2-NOT: nvvm.cp.async.wait.group
// STAGES2: scf.for
// Steady state: block j+1 of K and V goes to slot (j+1) mod 2, issued first...
// STAGES2: %[[SLOT:.*]] = arith.remui %{{.*}}, %c2
// STAGES2: arith.muli %[[SLOT]], %c9216
// STAGES2: nvgpu.device_async_create_group
// STAGES2: nvgpu.device_async_create_group
// STAGES2-NOT: nvvm.cp.async.wait.group
// ...then Q·Kᵀ waits for block j of K (V_j, K_j+1, V_j+1 may be in flight)
// STAGES2: nvvm.cp.async.wait.group 3
// STAGES2-NEXT: gpu.barrier
// STAGES2: nvgpu.mma.sync
// ...and P·V for block j of V (K_j+1, V_j+1 in flight).
// STAGES2: nvvm.cp.async.wait.group 2
// STAGES2-NEXT: gpu.barrier
// STAGES2: scf.yield

// With three stages two more groups per stream may be in flight.
// STAGES3: tilegpu.shared_bytes = 64512
// STAGES3: scf.for
// STAGES3: nvvm.cp.async.wait.group 5
// STAGES3: nvvm.cp.async.wait.group 4

// With refill-after-use each refill is issued after the last read of the
// block it replaces and takes its buffer: one K and one V buffer with two
// stages. Q (9216 bytes), K at 9216, V at 18432.
// AFTER2: gpu.func @sdpa_fwd
// AFTER2-SAME: tile.sdpa = #tile.sdpa<{{.*}}stages = 2, refill_after_use = true>
// AFTER2-SAME: tilegpu.shared_bytes = 27648
// The buffers are views at fixed offsets, made once at the top.
// AFTER2: %[[KBUF:.*]] = memref.view %{{.*}}[%c9216][]
// AFTER2: %[[VBUF:.*]] = memref.view %{{.*}}[%c18432][]
// Prologue: blocks 0 of K and V, nobody waits for them here.
// AFTER2: nvgpu.device_async_copy {{.*}}, %[[KBUF]][
// AFTER2: nvgpu.device_async_create_group
// AFTER2: nvgpu.device_async_copy {{.*}}, %[[VBUF]][
// AFTER2: nvgpu.device_async_create_group
// AFTER2-NOT: nvvm.cp.async.wait.group
// AFTER2: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[KBUF]], %{{.*}} = %[[VBUF]])
// Q·Kᵀ waits for K_j first: only V_j, issued after it, may stay in flight.
// AFTER2: nvvm.cp.async.wait.group 1
// AFTER2-NEXT: gpu.barrier
// AFTER2-NOT: nvgpu.device_async_create_group
// AFTER2: nvgpu.mma.sync
// AFTER2-NOT: nvvm.cp.async.wait.group
// Then K_j+1 goes into K_j's buffer (a fixed offset: no ring), once every
// warp is past reading it...
// AFTER2: gpu.barrier
// AFTER2-NOT: nvvm.cp.async.wait.group
// AFTER2: nvgpu.device_async_copy {{.*}}, %[[KBUF]][
// AFTER2: nvgpu.device_async_create_group
// ...P·V waits for V_j while K_j+1 may stay in flight...
// AFTER2-NOT: nvgpu.device_async_create_group
// AFTER2: nvvm.cp.async.wait.group 1
// AFTER2-NEXT: gpu.barrier
// AFTER2: nvgpu.mma.sync
// AFTER2-NOT: nvvm.cp.async.wait.group
// ...and V_j+1 goes into V_j's buffer at the end of the body.
// AFTER2: gpu.barrier
// AFTER2-NOT: nvvm.cp.async.wait.group
// AFTER2: nvgpu.device_async_copy {{.*}}, %[[VBUF]][
// AFTER2: nvgpu.device_async_create_group
// AFTER2-NOT: nvgpu.mma.sync
// AFTER2: scf.yield

// With three stages a stream has a ring of two buffers (one fewer than
// stages): 46080 bytes instead of 64512. The refill of block j+2 takes
// slot (j+2) mod 2, the one block j leaves; at Q·Kᵀ V_j, K_j+1 and V_j+1 may
// be in flight, at P·V K_j+1, V_j+1 and K_j+2.
// AFTER3: gpu.func @sdpa_fwd
// AFTER3-SAME: tilegpu.shared_bytes = 46080
// AFTER3: memref.view %{{.*}}[%c9216][]
// AFTER3: memref.view %{{.*}}[%c27648][]
// AFTER3: memref.view %{{.*}}[%c18432][]
// AFTER3: memref.view %{{.*}}[%c36864][]
// AFTER3-NOT: nvvm.cp.async.wait.group
// AFTER3: scf.for
// AFTER3-NEXT: %[[J2:.*]] = arith.addi %{{.*}}, %c2 : index
// AFTER3-NEXT: nvvm.cp.async.wait.group 3
// AFTER3-NEXT: gpu.barrier
// AFTER3: nvgpu.mma.sync
// AFTER3-NOT: nvvm.cp.async.wait.group
// AFTER3: %[[KSLOT:.*]] = arith.remui %[[J2]], %c2 : index
// AFTER3-NEXT: %[[KOFF:.*]] = arith.muli %[[KSLOT]], %c9216 : index
// AFTER3-NEXT: %[[KBASE:.*]] = arith.addi %[[KOFF]], %c9216 : index
// AFTER3-NEXT: gpu.dynamic_shared_memory
// AFTER3-NEXT: memref.view %{{.*}}[%[[KBASE]]][]
// AFTER3: nvgpu.device_async_create_group
// AFTER3-NOT: nvgpu.device_async_create_group
// AFTER3: nvvm.cp.async.wait.group 3
// AFTER3-NEXT: gpu.barrier
// AFTER3: nvgpu.mma.sync
// AFTER3-NOT: nvvm.cp.async.wait.group
// AFTER3: %[[VSLOT:.*]] = arith.remui %[[J2]], %c2 : index
// AFTER3-NEXT: %[[VOFF:.*]] = arith.muli %[[VSLOT]], %c9216 : index
// AFTER3-NEXT: %[[VBASE:.*]] = arith.addi %[[VOFF]], %c27648 : index
// AFTER3-NEXT: gpu.dynamic_shared_memory
// AFTER3-NEXT: memref.view %{{.*}}[%[[VBASE]]][]
// AFTER3: nvgpu.device_async_create_group
// AFTER3-NOT: nvgpu.mma.sync
// AFTER3: scf.yield

// Q in shared memory (tilegpu-assign-layouts{smem-lhs}) is loaded once, before
// the loop: one buffer, not a ring of `stages` (the same 46080 bytes as with
// Q in registers). The loop waits for it with K_0 and V_0 in flight, and
// Q·Kᵀ reads it with one ldmatrix per k-step (64 / 16 = 4), each before the
// four B-fragment loads of that k-step.
// SMEMQ: gpu.func @sdpa_fwd
// SMEMQ-SAME: tilegpu.shared_bytes = 46080
// SMEMQ: %[[QBUF:.*]] = memref.view %{{.*}}[%c0][]
// SMEMQ: nvgpu.device_async_create_group
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: memref.view %{{.*}}[%c9216][]
// SMEMQ: memref.view %{{.*}}[%c27648][]
// SMEMQ: nvgpu.device_async_create_group
// SMEMQ-NEXT: nvvm.cp.async.wait.group 2
// SMEMQ-NEXT: gpu.barrier
// SMEMQ-NEXT: scf.for
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: nvvm.cp.async.wait.group 3
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-COUNT-4: nvgpu.ldmatrix %[[KB:arg[0-9]+]][
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-COUNT-4: nvgpu.ldmatrix %[[KB]][
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-COUNT-4: nvgpu.ldmatrix %[[KB]][
// SMEMQ-NOT: nvgpu.ldmatrix
// SMEMQ: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ-COUNT-4: nvgpu.ldmatrix %[[KB]][
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ: nvvm.cp.async.wait.group 2
// SMEMQ-NOT: nvgpu.ldmatrix %[[QBUF]][
// SMEMQ: scf.yield
