// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s
// RUN: tiled-attn-opt %s --tilegpu-to-ptx="chip=sm_100a" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// The backward's dQ = dS K on tcgen05 (issue 39), written at the GPU level
// as convert-tile-to-tilegpu leaves it: 8 warps hold dSᵀ (128 keys x 128
// queries) a row per tensor-memory lane, the two warps of a lane quadrant
// each 64 of the columns (#tilegpu.tmem_lanes<acc, warps = 8>); they write
// it as the stored rows of a transposed buffer of swizzled panels (each
// thread its row's 64 elements, 16 bytes at a time, the chunk xor-ed with
// row mod 8 as TMA stores it), and the product reads that buffer as dS, an
// M-major lhs.
//
// - The instruction descriptor: D f32 (bit 4), A = B = f16, A M-major
//   (bit 15), B (K) N-major (bit 16), N = 64 (8 in bits 17-22), M = 128 (8
//   in 24-28): 0x0811_8010 = 135364624 (without bit 15: 135331856, the
//   forward's P.V).
// - The lhs descriptor is an N-major rhs's: LBO = a panel (128 rows x 128
//   bytes = 16384 >> 4 = 1024 in bits 16-29), so that M's 128 queries span
//   two panels; the k-step k starts 16 stored rows (2048 bytes) on.

// CHECK-LABEL: gpu.func @tcgen05_transposed_lhs
// CHECK-DAG: %[[NMAJOR:.*]] = arith.constant 67108864 : i32
// CHECK-DAG: %[[IDESC:.*]] = arith.constant 135364624 : i32
// The store: this thread's row (32 x (warp mod 4) + lane) and its column
// group (warp / 4, 64 columns each), eight 16-byte pieces.
// CHECK: arith.divui %{{.*}}, %c4 : index
// CHECK: memref.collapse_shape %{{.*}} into memref<16384xf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: vector.store %{{.*}} {alignment = 16 : i64} : memref<16384xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// dS K: eight k-steps over the 128 keys, both descriptors N-/M-major.
// CHECK: nvvm.tcgen05.fence <after>
// CHECK: arith.ori %{{.*}}, %[[NMAJOR]] : i32
// CHECK-COUNT-8: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDESC]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: nvvm.tcgen05.commit

// PTX: .target sm_100a
// PTX-COUNT-8: st.shared.v4.b32
// PTX: fence.proxy.async.shared::cta;
// PTX-COUNT-8: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, %p{{[0-9]+}};
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @tcgen05_transposed_lhs(%x: f16)
      attributes {tilegpu.shared_bytes = 49160 : i64, tilegpu.warps = 8 : i64} {
    %c0 = arith.constant 0 : index
    %false = arith.constant false
    %ds = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    %k = tilegpu.alloc offset(32768) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>
    %bars = tilegpu.alloc offset(49152) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    %dq = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mbarrier_init %bars[%c0], count(1) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    gpu.barrier
    %dst = tensor.splat %x : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 8>>
    tilegpu.local_store %dst, %ds : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 8>>,
        !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
    gpu.barrier
    tilegpu.tmem_mma %ds, %k, %dq, accumulate(%false)
        : !tilegpu.buffer<128x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
          !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
          !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
    tilegpu.mma_commit %bars[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    tilegpu.mbarrier_wait %bars[%c0], phase(%false) : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
    return
  }
}
