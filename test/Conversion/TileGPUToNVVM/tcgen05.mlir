// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// The PTX, out of the gpu.binary's assembly string, and ptxas on it:
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// The correction with skip-unit-row-scales:
// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm="skip-unit-row-scales=1" | FileCheck %s --check-prefix=SKIP

// The tcgen05 family's lowering on one block of attention written at the
// GPU level (what convert-tile-to-tilegpu and tilegpu-allocate-memory would
// leave): S = Q.K^T into tensor memory, P = S in f16 written back packed
// over S, O = P.V with A from tensor memory, then O rescaled in place (the
// correction step: load, multiply, store). The buffers span 192 columns
// (S 0-127, P over S's first 64, O 128-191): the kernel allocates 256.
//
// The values below are worked out by hand from the PTX ISA (and checked
// field by field in test/Target/EncodingsTest.cpp):
// - instruction descriptors: D f32 (bit 4), A = B = f16, M >> 4 = 8 in bits
//   24-28, N >> 3 in 17-22; S: N = 128, both K-major: 0x08200010 =
//   136314896; O: N = 64, B (V) N-major (bit 16): 0x08110010 = 135331856.
// - shared descriptors (tcgen05: version 1 in bits 46-48, 128-byte swizzle
//   = 2 in 61-63, SBO = 1024 >> 4 = 64 in 32-45): K-major LBO 16 >> 4 = 1
//   gives 0x4000404000010000 = 4611756662049538048; N-major V, LBO = its
//   panel, 128 rows x 128 bytes = 16384 >> 4 = 1024 in 16-29, gives
//   4611756662116581376.

// At entry, warp 0 allocates 256 columns into the shared variable and
// gives up its permit; the fences around the CTA barrier publish it.
// CHECK: llvm.mlir.global internal @tiled_attn_tmem_base() {addr_space = 3 : i32, alignment = 16 : i64} : i32
// CHECK-LABEL: gpu.func @tcgen05_block
// CHECK-SAME: tilegpu.tmem_columns = 256 : i64
// CHECK-DAG: %[[KMAJOR:.*]] = arith.constant 65536 : i32
// CHECK-DAG: %[[HI:.*]] = arith.constant 4611756662049472512 : i64
// CHECK-DAG: %[[NMAJOR:.*]] = arith.constant 67108864 : i32
// CHECK-DAG: %[[IDESC_S:.*]] = arith.constant 136314896 : i32
// CHECK-DAG: %[[IDESC_O:.*]] = arith.constant 135331856 : i32
// CHECK: scf.if
// CHECK: nvvm.tcgen05.alloc %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: nvvm.tcgen05.fence <after>

// S = Q.K^T: thread 0 issues four k-steps of 16 over D = 64, the first
// overwriting S (accumulate = false), the others adding. The descriptors'
// constant bits are hoisted to the top; the start address is or'ed in.
// CHECK: scf.if
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: arith.ori %{{.*}}, %[[KMAJOR]] : i32
// CHECK: arith.ori %{{.*}}, %[[HI]] : i64
// CHECK-COUNT-4: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDESC_S]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>

// S read by each warp's quadrant: 128 columns, eight loads of 16, one
// wait.
// CHECK: nvvm.tcgen05.fence <after>
// CHECK-COUNT-8: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK-NEXT: nvvm.tcgen05.fence <before>

// P, 128 f16 per row packed into 64 columns: four stores of 16.
// CHECK: arith.truncf %{{.*}} : vector<128xf32> to vector<128xf16>
// CHECK: vector.bitcast %{{.*}} : vector<128xf16> to vector<64xi32>
// CHECK-COUNT-4: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// CHECK-NEXT: nvvm.tcgen05.fence <before>

// O = P.V: eight k-steps of 16 keys, A from tensor memory.
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: arith.ori %{{.*}}, %[[NMAJOR]] : i32
// CHECK: arith.ori %{{.*}}, %[[HI]] : i64
// CHECK-COUNT-8: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDESC_O]], %{{.*}} {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK: nvvm.tcgen05.commit

// The correction: O loaded (64 columns), scaled, stored back.
// CHECK-COUNT-4: nvvm.tcgen05.ld %{{.*}} : vector<16xi32>
// CHECK: nvvm.tcgen05.wait <load>
// CHECK: arith.mulf %{{.*}} : vector<64xf32>
// CHECK-COUNT-4: nvvm.tcgen05.st
// CHECK: nvvm.tcgen05.wait <store>

// At the end (after the store's own fence): fence, barrier, warp 0
// deallocates what it allocated.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} : !llvm.ptr<6>, i32
// CHECK: gpu.return

// The softmax kernel: this thread's row is 32 x (warp mod 4) + lane plus
// the query offset, its columns the key offset plus 0..127; the causal mask
// compares them register by register, the bounds mask its columns against
// S_k; the row max and sum combine the thread's 128 registers with no
// shuffle; the broadcasts repeat the one row element.
// CHECK-LABEL: gpu.func @tcgen05_softmax
// CHECK-SAME: tilegpu.tmem_columns = 128 : i64
// CHECK: nvvm.tcgen05.wait <load>
// CHECK: arith.cmpi sle, %{{.*}}, %{{.*}} : vector<128xindex>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<128xindex>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<128xi1>, vector<128xf32>
// CHECK-COUNT-127: arith.maximumf
// CHECK-NOT: gpu.shuffle
// CHECK: vector.broadcast %{{.*}} : f32 to vector<128xf32>
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<128xf32>
// CHECK-COUNT-127: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.tcgen05.st
// CHECK: nvvm.tcgen05.dealloc

// The correction in place, 16 columns at a time: load, wait, multiply by
// the row's scale, store; then the stores' wait and fence. With
// skip-unit-row-scales a warp whose rows all scale by 1 skips it (a warp
// vote: the tcgen05.ld/st are warp-collective).
// CHECK-LABEL: gpu.func @tcgen05_correction
// CHECK-NOT: nvvm.vote.sync
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.ld {{.*}} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: nvvm.tcgen05.st
// CHECK-COUNT-3: nvvm.tcgen05.st
// CHECK-NOT: nvvm.tcgen05.st
// CHECK: nvvm.tcgen05.wait <store>
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// SKIP-LABEL: gpu.func @tcgen05_correction
// SKIP: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// SKIP: nvvm.vote.sync any
// SKIP: scf.if
// SKIP: nvvm.tcgen05.fence <after>
// SKIP-COUNT-4: nvvm.tcgen05.st

// A window mask, one row per thread: the thread's 32 consecutive columns
// have diagonals (first column - row) + 0 .. 31, so the band is two i32
// compares of those constants with lo and hi moved to the other side and
// clamped to [-1, 32].
// CHECK-LABEL: gpu.func @tcgen05_window
// CHECK-DAG: %[[DIAGONALS:.*]] = arith.constant dense<[0, 1, 2, {{.*}}, 30, 31]> : vector<32xi32>
// CHECK-DAG: arith.constant -1 : index
// CHECK-DAG: arith.constant 32 : index
// CHECK: nvvm.tcgen05.wait <load>
// CHECK: %[[BASE:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: arith.subi %{{.*}}, %[[BASE]] : index
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.index_cast %{{.*}} : index to i32
// CHECK: arith.cmpi sle, %{{.*}}, %[[DIAGONALS]] : vector<32xi32>
// CHECK: arith.cmpi sge, %{{.*}}, %[[DIAGONALS]] : vector<32xi32>
// CHECK: arith.andi %{{.*}}, %{{.*}} : vector<32xi1>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>
// CHECK: nvvm.tcgen05.st

// In the PTX, one thread issues, the k-steps after the first accumulate
// (predicate), A of P.V is a tensor-memory address; ptxas takes it for
// sm_100a without spills.
// PTX: .target sm_100a
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [tiled_attn_tmem_base]
// PTX-NEXT: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// PTX-COUNT-4: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, %p{{[0-9]+}};
// PTX-NEXT: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX-COUNT-8: tcgen05.ld.sync.aligned.32x32b.x16.b32
// PTX: tcgen05.wait::ld.sync.aligned
// PTX-COUNT-4: tcgen05.st.sync.aligned.32x32b.x16.b32
// PTX: tcgen05.wait::st.sync.aligned
// PTX-COUNT-8: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r{{[0-9]+}}], [%r{{[0-9]+}}], %rd{{[0-9]+}}, %r{{[0-9]+}}, %p{{[0-9]+}};
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// PTX-LABEL: .entry tcgen05_softmax(
// PTX-NOT: shfl.sync
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// PTXAS-COUNT-4: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @tcgen05_block(%o: !tile.view<?x?x?x64xf32>, %scale: f32)
      attributes {tilegpu.shared_bytes = 49160 : i64, tilegpu.warps = 4 : i64} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %true = arith.constant true
    %q = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
    %k = tilegpu.alloc offset(16384) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %v = tilegpu.alloc offset(32768) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
    %bars = tilegpu.alloc offset(49152) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %p = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
    %acc = tilegpu.alloc offset(128) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    gpu.barrier
    tilegpu.tmem_mma %q, %k, %s, accumulate(%false)
        : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_wait %bars[%c0], phase(%false) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    %sr = tilegpu.tmem_load %s : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %pr = arith.truncf %sr : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
        to tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>
    tilegpu.tmem_store %pr, %p : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
    gpu.barrier
    tilegpu.tmem_mma %p, %v, %acc, accumulate(%false)
        : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>,
          !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_wait %bars[%c0], phase(%true) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    %or = tilegpu.tmem_load %acc : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %alpha = tensor.splat %scale : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %scaled = arith.mulf %or, %alpha : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tilegpu.tmem_store %scaled, %acc : tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    return
  }

  // The softmax of a block of S, one row per thread: masks from each
  // register's coordinates, row reductions without shuffles, broadcasts
  // from the thread's own registers.
  func.func @tcgen05_softmax(%o: !tile.view<?x?x?x64xf32>, %q0: index, %k0: index, %seq: index)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    %ninf = arith.constant dense<0xFF800000> : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    %p = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
    %sr = tilegpu.tmem_load %s : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %causal = tile.causal_mask %q0, %k0 : tensor<128x128xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
    %inside = tile.bounds_mask offsets(%k0) limits(%seq) : tensor<128xi1, #tilegpu.tmem_lanes<cols, warps = 4>>
    %inside2 = tile.broadcast %inside along 0 : tensor<128xi1, #tilegpu.tmem_lanes<cols, warps = 4>>
        -> tensor<128x128xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
    %visible = arith.andi %causal, %inside2 : tensor<128x128xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
    %masked = arith.select %visible, %sr, %ninf : tensor<128x128xi1, #tilegpu.tmem_lanes<acc, warps = 4>>,
        tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %m = tile.reduce max %masked along 1 : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
        -> tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    %mb = tile.broadcast %m along 1 : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %d = arith.subf %masked, %mb : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %e = math.exp2 %d : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %l = tile.reduce sum %e along 1 : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
        -> tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    %lb = tile.broadcast %l along 1 : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
        -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %n = arith.divf %e, %lb : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %ph = arith.truncf %n : tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
        to tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>
    tilegpu.tmem_store %ph, %p : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
    return
  }

  // The correction of O (64 columns) by the rows' scales, in place.
  func.func @tcgen05_correction(%o: !tile.view<?x?x?x64xf32>, %m: f32)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    %acc = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    %alpha = tensor.splat %m : tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    tilegpu.tmem_scale_rows %acc, %alpha : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
        tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    return
  }

  // A sliding window's mask on a block of S.
  func.func @tcgen05_window(%q0: index, %k0: index, %lo: index, %hi: index)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 4 : i64} {
    %ninf = arith.constant dense<0xFF800000> : tensor<128x32xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
    %sr = tilegpu.tmem_load %s : !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
        -> tensor<128x32xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    %band = tile.window_mask %q0, %k0 diagonals(%lo, %hi) : tensor<128x32xi1, #tilegpu.tmem_lanes<acc, warps = 4>>
    %masked = arith.select %band, %sr, %ninf : tensor<128x32xi1, #tilegpu.tmem_lanes<acc, warps = 4>>,
        tensor<128x32xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tilegpu.tmem_store %masked, %s : tensor<128x32xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
        !tilegpu.buffer<128x32xf32, #tilegpu.tensor_memory<>>
    return
  }
}
