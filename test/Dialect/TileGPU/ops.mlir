// RUN: tiled-attn-opt %s -split-input-file | tiled-attn-opt -split-input-file | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --mlir-print-op-generic \
// RUN:   | tiled-attn-opt -split-input-file | FileCheck %s

// Round trip of every op, type and attribute of the tilegpu dialect, in the
// custom form and through the generic form. The ops are placed as the GPU
// lowering places them (see convert-tile-to-tilegpu), but only their syntax
// is checked here.

//===----------------------------------------------------------------------===//
// #tilegpu.target and the kernel attributes
//===----------------------------------------------------------------------===//

// CHECK: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
// CHECK-LABEL: func.func @kernel_attributes
// CHECK-SAME: attributes {tilegpu.shared_bytes = 36864 : i64, tilegpu.warps = 4 : i64}
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @kernel_attributes() attributes {tilegpu.shared_bytes = 36864 : i64, tilegpu.warps = 4 : i64} {
    return
  }
}

// -----

// CHECK: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>}
// CHECK-LABEL: func.func @target_sm_90a
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>} {
  func.func @target_sm_90a() attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 12 : i64} {
    return
  }
}

// -----

// CHECK: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>}
// CHECK-LABEL: func.func @target_sm_100a
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>} {
  func.func @target_sm_100a() {
    return
  }
}

// -----

//===----------------------------------------------------------------------===//
// Distributed layouts
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// CHECK-SAME: tensor<128xf32, #tilegpu.mma_sync<rows, warps = 4>>
// CHECK-SAME: tensor<64xi1, #tilegpu.mma_sync<cols, warps = 4>>
// CHECK-SAME: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>
// CHECK-SAME: tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
// CHECK-SAME: tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 1>>
// CHECK-SAME: tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
// CHECK-SAME: tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK-SAME: tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 16>>
func.func @layouts(%acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>,
                   %rows: tensor<128xf32, #tilegpu.mma_sync<rows, warps = 4>>,
                   %cols: tensor<64xi1, #tilegpu.mma_sync<cols, warps = 4>>,
                   %opa: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 8>>,
                   %wacc: tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>,
                   %wrows: tensor<64xf32, #tilegpu.wgmma<rows, warpgroups = 1>>,
                   %wsplit: tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>,
                   %tmem: tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>,
                   %tmem16: tensor<128x64xf32, #tilegpu.tmem_lanes<acc, warps = 16>>) {
  return
}

// -----

//===----------------------------------------------------------------------===//
// !tilegpu.buffer, #tilegpu.shared, #tilegpu.tensor_memory, tilegpu.alloc
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func private @buffer_types
// CHECK-SAME: !tilegpu.buffer<64x64xf16, #tilegpu.shared<>>
// CHECK-SAME: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
// CHECK-SAME: !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
// CHECK-SAME: !tilegpu.buffer<64x16xf16, #tilegpu.shared<swizzle = 32>>
// CHECK-SAME: !tilegpu.buffer<64x32xbf16, #tilegpu.shared<swizzle = 64>>
// CHECK-SAME: !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>
// CHECK-SAME: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>
// CHECK-SAME: !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<swizzle = 128>>
// CHECK-SAME: !tilegpu.buffer<2xi64, #tilegpu.shared<>>
// CHECK-SAME: !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
// CHECK-SAME: !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
// CHECK-SAME: !tilegpu.buffer<2x64x64xf32, #tilegpu.tensor_memory<>>
func.func private @buffer_types(
    !tilegpu.buffer<64x64xf16, #tilegpu.shared<>>,
    !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>,
    !tilegpu.buffer<64x16xf16, #tilegpu.shared<swizzle = 32>>,
    !tilegpu.buffer<64x32xbf16, #tilegpu.shared<swizzle = 64>>,
    !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>,
    !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    !tilegpu.buffer<3x64x64xf16, #tilegpu.shared<swizzle = 128>>,
    !tilegpu.buffer<2xi64, #tilegpu.shared<>>,
    !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>,
    !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>,
    !tilegpu.buffer<2x64x64xf32, #tilegpu.tensor_memory<>>)

// -----

// Default-valued parameters are left out when printed.

// CHECK-LABEL: func.func private @encoding_defaults
// CHECK-SAME: !tilegpu.buffer<64x64xf16, #tilegpu.shared<>>
// CHECK-SAME: !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
func.func private @encoding_defaults(
    !tilegpu.buffer<64x64xf16, #tilegpu.shared<swizzle = 0, pad = 0, transposed = false>>,
    !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<packed = false>>)

// -----

// CHECK-LABEL: func.func @alloc
func.func @alloc() {
  // CHECK: tilegpu.alloc : <128x64xf16, #tilegpu.shared<pad = 8>>
  %q = tilegpu.alloc : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: tilegpu.alloc offset(18432) : <2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %k = tilegpu.alloc offset(18432) : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // CHECK: tilegpu.alloc offset(1024) : <2x128x64xbf16, #tilegpu.shared<swizzle = 128>>
  %v = tilegpu.alloc offset(1024) : !tilegpu.buffer<2x128x64xbf16, #tilegpu.shared<swizzle = 128>>
  // CHECK: tilegpu.alloc offset(0) : <2xi64, #tilegpu.shared<>>
  %bars = tilegpu.alloc offset(0) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.alloc offset(0) : <128x128xf32, #tilegpu.tensor_memory<>>
  %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  // CHECK: tilegpu.alloc offset(128) : <128x128xf16, #tilegpu.tensor_memory<packed = true>>
  %p = tilegpu.alloc offset(128) : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

// CHECK-LABEL: func.func @slot
// CHECK-SAME: (%[[I:.*]]: index)
func.func @slot(%i: index)
    -> (!tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
        !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>) {
  // CHECK: %[[RING:.*]] = tilegpu.alloc offset(0) : <2x64x64xf16, #tilegpu.shared<pad = 8>>
  %ring = tilegpu.alloc offset(0) : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: %[[S:.*]] = tilegpu.slot %[[RING]][%[[I]]] : <2x64x64xf16, #tilegpu.shared<pad = 8>> -> <64x64xf16, #tilegpu.shared<pad = 8>>
  %s = tilegpu.slot %ring[%i]
      : !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: %[[TRING:.*]] = tilegpu.alloc : <2x128x64xf32, #tilegpu.tensor_memory<>>
  %tring = tilegpu.alloc : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>
  // CHECK: %[[T:.*]] = tilegpu.slot %[[TRING]][%[[I]]] : <2x128x64xf32, #tilegpu.tensor_memory<>> -> <128x64xf32, #tilegpu.tensor_memory<>>
  %t = tilegpu.slot %tring[%i]
      : !tilegpu.buffer<2x128x64xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  // CHECK: return %[[S]], %[[T]]
  return %s, %t : !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
                  !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
}

// -----

// CHECK-LABEL: func.func @transpose_view
func.func @transpose_view(%q: !tilegpu.buffer<64x128xbf16, #tilegpu.shared<pad = 8>>)
    -> !tilegpu.buffer<128x64xbf16, #tilegpu.shared<pad = 8, transposed = true>> {
  // CHECK: tilegpu.transpose_view %{{.*}} : <64x128xbf16, #tilegpu.shared<pad = 8>> -> <128x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
  %t = tilegpu.transpose_view %q : !tilegpu.buffer<64x128xbf16, #tilegpu.shared<pad = 8>>
      -> !tilegpu.buffer<128x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
  return %t : !tilegpu.buffer<128x64xbf16, #tilegpu.shared<pad = 8, transposed = true>>
}

// -----

// A swizzled panel's transpose: the same panels, read the other way by a
// wgmma descriptor (K-major one way, N-major the other).
// CHECK-LABEL: func.func @transpose_view_swizzled
func.func @transpose_view_swizzled(%q: !tilegpu.buffer<64x128xbf16, #tilegpu.shared<swizzle = 128>>)
    -> !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>> {
  // CHECK: tilegpu.transpose_view %{{.*}} : <64x128xbf16, #tilegpu.shared<swizzle = 128>> -> <128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  %t = tilegpu.transpose_view %q : !tilegpu.buffer<64x128xbf16, #tilegpu.shared<swizzle = 128>>
      -> !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  return %t : !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
}

// -----

//===----------------------------------------------------------------------===//
// Asynchronous copies and their waits
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @async_copy
// CHECK-SAME: (%[[Q:.*]]: !tile.view<?x?x?x64xf16>, %[[K:.*]]: !tile.view<?x?x?x64xf16>, %[[V:.*]]: !tile.view<?x?x?x64xbf16>, %[[I:.*]]: index)
func.func @async_copy(%qv: !tile.view<?x?x?x64xf16>, %kv: !tile.view<?x?x?x64xf16>,
                      %vv: !tile.view<?x?x?x64xbf16>, %i: index) {
  %qbuf = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: %[[QC:.*]] = tilegpu.async_copy %[[Q]][%[[I]], %[[I]], %[[I]], %[[I]]] into %{{.*}} : <?x?x?x64xf16>, <128x64xf16, #tilegpu.shared<pad = 8>>
  %q = tilegpu.async_copy %qv[%i, %i, %i, %i] into %qbuf
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // A transposed 64x128 tile stores rows of 64 elements: the view's rows.
  %kbuf = tilegpu.alloc offset(18432) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // CHECK: %[[KC:.*]] = tilegpu.async_copy %[[K]][%[[I]], %[[I]], %[[I]], %[[I]]] into %{{.*}} in_bounds : <?x?x?x64xf16>, <64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %k = tilegpu.async_copy %kv[%i, %i, %i, %i] into %kbuf in_bounds
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %vring = tilegpu.alloc offset(36864) : !tilegpu.buffer<2x64x64xbf16, #tilegpu.shared<swizzle = 128>>
  // CHECK: %[[VS:.*]] = tilegpu.slot
  %vslot = tilegpu.slot %vring[%i]
      : !tilegpu.buffer<2x64x64xbf16, #tilegpu.shared<swizzle = 128>>
      -> !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128>>
  // CHECK: %[[VC:.*]] = tilegpu.async_copy %[[V]][%[[I]], %[[I]], %[[I]], %[[I]]] into %[[VS]] in_bounds : <?x?x?x64xbf16>, <64x64xbf16, #tilegpu.shared<swizzle = 128>>
  %v = tilegpu.async_copy %vv[%i, %i, %i, %i] into %vslot in_bounds
      : !tile.view<?x?x?x64xbf16>, !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128>>
  // A block gathered from two pages of 32 rows.
  // CHECK: tilegpu.async_copy %[[K]][%[[I]], %[[I]], %[[I]], %[[I]]] gather(%[[I]], %[[I]]) into %{{.*}} : <?x?x?x64xf16>, <64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %kg = tilegpu.async_copy %kv[%i, %i, %i, %i] gather(%i, %i) into %kbuf
      : !tile.view<?x?x?x64xf16>, !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // CHECK: tilegpu.async_wait %[[QC]] pending(2) : <128x64xf16, #tilegpu.shared<pad = 8>>
  %qr = tilegpu.async_wait %q pending(2) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: tilegpu.async_wait %[[KC]] pending(0) : <64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  %kr = tilegpu.async_wait %k pending(0) : !tilegpu.buffer<64x128xf16, #tilegpu.shared<pad = 8, transposed = true>>
  // Before tilegpu-resolve-async-waits: no count yet.
  // CHECK: tilegpu.async_wait %[[VC]] : <64x64xbf16, #tilegpu.shared<swizzle = 128>>
  %vr = tilegpu.async_wait %v : !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128>>
  // CHECK: tilegpu.async_wait_all
  tilegpu.async_wait_all
  return
}

// -----

//===----------------------------------------------------------------------===//
// Registers: local_load, mma, staged_store
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @local_load
func.func @local_load(%qbuf: !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>,
                      %sbuf: !tilegpu.buffer<128x128xf32, #tilegpu.shared<>>,
                      %mbuf: !tilegpu.buffer<128xf32, #tilegpu.shared<>>) {
  // CHECK: tilegpu.local_load %{{.*}} : <128x64xf16, #tilegpu.shared<pad = 8>> -> tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  %q = tilegpu.local_load %qbuf : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
      -> tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>
  // CHECK: tilegpu.local_load %{{.*}} : <128x128xf32, #tilegpu.shared<>> -> tensor<128x128xf32, #tilegpu.mma_sync<acc, warps = 8>>
  %a = tilegpu.local_load %sbuf : !tilegpu.buffer<128x128xf32, #tilegpu.shared<>>
      -> tensor<128x128xf32, #tilegpu.mma_sync<acc, warps = 8>>
  // CHECK: tilegpu.local_load %{{.*}} : <128x128xf32, #tilegpu.shared<>> -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %w = tilegpu.local_load %sbuf : !tilegpu.buffer<128x128xf32, #tilegpu.shared<>>
      -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  // CHECK: tilegpu.local_load %{{.*}} : <128xf32, #tilegpu.shared<>> -> tensor<128xf32, #tilegpu.mma_sync<rows, warps = 4>>
  %m = tilegpu.local_load %mbuf : !tilegpu.buffer<128xf32, #tilegpu.shared<>>
      -> tensor<128xf32, #tilegpu.mma_sync<rows, warps = 4>>
  return
}

// -----

// The row factors a tcgen05 kernel's softmax hands to its correction warps.
// The correction warps' epilogue.
// CHECK-LABEL: func.func @tmem_scale_store
// CHECK: tilegpu.tmem_scale_store %{{.*}}, %{{.*}} to %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : <256x64xf32, #tilegpu.tensor_memory<>>, tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, <?x?x?x64xbf16>
func.func @tmem_scale_store(%o: !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>,
                            %inv: tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>,
                            %out: !tile.view<?x?x?x64xbf16>, %i: index) {
  tilegpu.tmem_scale_store %o, %inv to %out[%i, %i, %i, %i]
      : !tilegpu.buffer<256x64xf32, #tilegpu.tensor_memory<>>,
        tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, !tile.view<?x?x?x64xbf16>
  return
}

// -----

// CHECK-LABEL: func.func @local_store
func.func @local_store(%factors: !tilegpu.buffer<256xf32, #tilegpu.shared<>>,
                       %alpha: tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>) {
  // CHECK: tilegpu.local_store %{{.*}}, %{{.*}} : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>, <256xf32, #tilegpu.shared<>>
  tilegpu.local_store %alpha, %factors : tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>,
      !tilegpu.buffer<256xf32, #tilegpu.shared<>>
  // CHECK: tilegpu.local_load %{{.*}} : <256xf32, #tilegpu.shared<>> -> tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
  %back = tilegpu.local_load %factors : !tilegpu.buffer<256xf32, #tilegpu.shared<>>
      -> tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
  return
}

// -----

// A wgmma accumulator (dSᵀ) written as the stored rows of transposed
// swizzled panels, which a wgmma reads as its M-major lhs (dS).
// CHECK-LABEL: func.func @local_store_swizzled
func.func @local_store_swizzled(%ds: !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                                %dst: tensor<64x64xbf16, #tilegpu.wgmma<acc, warpgroups = 1>>) {
  // CHECK: tilegpu.local_store %{{.*}}, %{{.*}} : tensor<64x64xbf16, #tilegpu.wgmma<acc, warpgroups = 1>>, <64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  tilegpu.local_store %dst, %ds : tensor<64x64xbf16, #tilegpu.wgmma<acc, warpgroups = 1>>,
      !tilegpu.buffer<64x64xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
  return
}

// -----

// mma.sync: P in registers (the A-operand layout), V in shared memory.

// CHECK-LABEL: func.func @mma_register_lhs
// CHECK-SAME: (%[[P:.*]]: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, %[[V:.*]]: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>, %[[K:.*]]: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>, %[[ACC:.*]]: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>)
func.func @mma_register_lhs(
    %p: tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
    %v: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>,
    %k: !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>,
    %acc: tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>)
    -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>> {
  // CHECK: %[[O:.*]] = tilegpu.mma %[[P]], %[[V]], %[[ACC]] : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, <64x64xf16, #tilegpu.shared<pad = 8>> -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  %o = tilegpu.mma %p, %v, %acc
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  // A transposed rhs holds rhsᵀ (K for Kᵀ).
  // CHECK: %[[S:.*]] = tilegpu.mma %[[P]], %[[K]], %[[O]] : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>, <64x64xf16, #tilegpu.shared<pad = 8, transposed = true>> -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  %s = tilegpu.mma %p, %k, %o
      : tensor<128x64xf16, #tilegpu.mma_sync<opa, warps = 4>>,
        !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
        -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
  // CHECK: return %[[S]]
  return %s : tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
}

// -----

// wgmma: Q and Kᵀ both in swizzled shared memory.

// CHECK-LABEL: func.func @mma_shared_lhs
// CHECK-SAME: (%[[Q:.*]]: !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>, %[[K:.*]]: !tilegpu.buffer<64x128xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>, %[[ACC:.*]]: tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>)
func.func @mma_shared_lhs(
    %q: !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>,
    %k: !tilegpu.buffer<64x128xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
    %acc: tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>)
    -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>> {
  // The lhs, one of two types, is printed with its dialect prefix.
  // CHECK: %[[S:.*]] = tilegpu.mma %[[Q]], %[[K]], %[[ACC]] : !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>, <64x128xbf16, #tilegpu.shared<swizzle = 128, transposed = true>> -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  %s = tilegpu.mma %q, %k, %acc
      : !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xbf16, #tilegpu.shared<swizzle = 128, transposed = true>>
        -> tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
  // CHECK: return %[[S]]
  return %s : tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
}

// -----

// CHECK-LABEL: func.func @staged_store
// CHECK-SAME: (%[[O:.*]]: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, %[[OV:.*]]: !tile.view<?x?x?x64xf16>, %[[I:.*]]: index)
func.func @staged_store(%o: tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>,
                        %ov: !tile.view<?x?x?x64xf16>, %i: index) {
  // CHECK: %[[STAGE:.*]] = tilegpu.alloc offset(0) : <128x64xf16, #tilegpu.shared<pad = 8>>
  %stage = tilegpu.alloc offset(0) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  // CHECK: tilegpu.async_wait_all
  tilegpu.async_wait_all
  // CHECK: tilegpu.staged_store %[[O]], %[[OV]][%[[I]], %[[I]], %[[I]], %[[I]]] through %[[STAGE]] : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, <?x?x?x64xf16>, <128x64xf16, #tilegpu.shared<pad = 8>>
  tilegpu.staged_store %o, %ov[%i, %i, %i, %i] through %stage
      : tensor<128x64xf16, #tilegpu.mma_sync<acc, warps = 4>>, !tile.view<?x?x?x64xf16>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<pad = 8>>
  return
}

// -----

// A reduction to one value: across warps through one f32 per warp (rows
// lie in different warps), or with no buffer (every warp holds all columns).
// CHECK-LABEL: func.func @cta_reduce
func.func @cta_reduce(%rows: tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>,
                      %cols: tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>>) -> (f32, f32) {
  // CHECK: %[[SCRATCH:.*]] = tilegpu.alloc : <1x8xf32, #tilegpu.shared<>>
  %scratch = tilegpu.alloc : !tilegpu.buffer<1x8xf32, #tilegpu.shared<>>
  // CHECK: tilegpu.cta_reduce max %{{.*}} through %[[SCRATCH]] : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>, !tilegpu.buffer<1x8xf32, #tilegpu.shared<>> -> f32
  %a = tilegpu.cta_reduce max %rows through %scratch
      : tensor<128xf32, #tilegpu.mma_sync<rows, warps = 8>>,
        !tilegpu.buffer<1x8xf32, #tilegpu.shared<>> -> f32
  // CHECK: tilegpu.cta_reduce sum %{{.*}} : tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>> -> f32
  %b = tilegpu.cta_reduce sum %cols : tensor<64xf32, #tilegpu.mma_sync<cols, warps = 8>> -> f32
  return %a, %b : f32, f32
}

// -----

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @mbarriers
// CHECK-SAME: (%[[S:.*]]: index, %[[P:.*]]: i1)
func.func @mbarriers(%s: index, %p: i1) {
  // CHECK: %[[BARS:.*]] = tilegpu.alloc offset(0) : <2xi64, #tilegpu.shared<>>
  %bars = tilegpu.alloc offset(0) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mbarrier_init %[[BARS]][%[[S]]], count(1) : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_init %bars[%s], count(1) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mbarrier_arrive_expect_tx %[[BARS]][%[[S]]], bytes(16384) : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(16384) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // The largest transaction count an mbarrier holds: 2^20 - 1.
  // CHECK: tilegpu.mbarrier_arrive_expect_tx %[[BARS]][%[[S]]], bytes(1048575) : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(1048575) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mbarrier_wait %[[BARS]][%[[S]]], phase(%[[P]]) : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_wait %bars[%s], phase(%p) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mbarrier_arrive %[[BARS]][%[[S]]] : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_arrive %bars[%s] : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.mbarrier_arrive %[[BARS]][%[[S]]] predicated : <2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_arrive %bars[%s] predicated : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Warp specialization
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @warp_specialize
// CHECK-SAME: (%[[S:.*]]: index, %[[P:.*]]: i1)
func.func @warp_specialize(%s: index, %p: i1) attributes {tilegpu.warps = 12 : i64} {
  %bars = tilegpu.alloc offset(0) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  // CHECK: tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4, registers = 24>, #tilegpu.role<"consumer", warps = 8, registers = 240>] {
  // CHECK-NEXT: tilegpu.mbarrier_arrive_expect_tx %{{.*}}[%[[S]]], bytes(16384)
  // CHECK-NEXT: }, {
  // CHECK-NEXT: tilegpu.mbarrier_wait %{{.*}}[%[[S]]], phase(%[[P]])
  // CHECK-NEXT: }
  tilegpu.warp_specialize [#tilegpu.role<"producer", warps = 4, registers = 24>,
                           #tilegpu.role<"consumer", warps = 8, registers = 240>] {
    tilegpu.mbarrier_arrive_expect_tx %bars[%s], bytes(16384) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  }, {
    tilegpu.mbarrier_wait %bars[%s], phase(%p) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  }
  return
}

// -----

// CHECK-LABEL: func.func @turns
// CHECK: tilegpu.turn_start
// CHECK-NEXT: tilegpu.turn_take
// CHECK-NEXT: tilegpu.turn_pass
func.func @turns() {
  tilegpu.turn_start
  tilegpu.turn_take
  tilegpu.turn_pass
  return
}

// -----

// A producer warpgroup that gives its registers away and runs on one warp.
// CHECK-LABEL: func.func @warp_specialize_active
// CHECK: tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>, #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>] {
func.func @warp_specialize_active() {
  tilegpu.warp_specialize [#tilegpu.role<"consumer", warps = 8, registers = 240>,
                           #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>] {
  }, {
  }
  return
}

// -----

// A role without a register budget keeps the launch's (registers = 0, left
// out when printed); such a role may have any number of warps. Roles that
// share a warpgroup share its budget (FlashAttention-4's load and MMA
// warps).

// CHECK-LABEL: func.func @warp_specialize_no_budget
// CHECK: tilegpu.warp_specialize [#tilegpu.role<"load", warps = 1>, #tilegpu.role<"compute", warps = 3>, #tilegpu.role<"softmax", warps = 4, registers = 256>] {
// CHECK: }, {
// CHECK: }
func.func @warp_specialize_no_budget() {
  tilegpu.warp_specialize [#tilegpu.role<"load", warps = 1, registers = 0>,
                           #tilegpu.role<"compute", warps = 3>,
                           #tilegpu.role<"softmax", warps = 4, registers = 256>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// CHECK-LABEL: func.func @warp_specialize_shared_warpgroup
// CHECK: tilegpu.warp_specialize [#tilegpu.role<"softmax", warps = 8, registers = 232>, #tilegpu.role<"load", warps = 1, registers = 48>, #tilegpu.role<"mma", warps = 3, registers = 48, active = 1>] {
func.func @warp_specialize_shared_warpgroup() {
  tilegpu.warp_specialize [#tilegpu.role<"softmax", warps = 8, registers = 232>,
                           #tilegpu.role<"load", warps = 1, registers = 48>,
                           #tilegpu.role<"mma", warps = 3, registers = 48, active = 1>] {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }, {
    tilegpu.async_wait_all
  }
  return
}

// -----

// The kernel ABI: each argument of a lowered kernel says what it carries.
// CHECK-LABEL: func.func private @kernel_params(
// CHECK-SAME: memref<bf16> {tilegpu.param = #tilegpu.param<base, "q">}
// CHECK-SAME: index {tilegpu.param = #tilegpu.param<size, "q", dim = 2>}
// CHECK-SAME: i32 {tilegpu.param = #tilegpu.param<stride, "q", dim = 0>}
// CHECK-SAME: f32 {tilegpu.param = #tilegpu.param<scalar, "scale">}
func.func private @kernel_params(
    memref<bf16> {tilegpu.param = #tilegpu.param<base, "q">},
    index {tilegpu.param = #tilegpu.param<size, "q", dim = 2>},
    i32 {tilegpu.param = #tilegpu.param<stride, "q", dim = 0>},
    f32 {tilegpu.param = #tilegpu.param<scalar, "scale">})

// -----

// Tensor memory and tcgen05: a product into tensor memory from shared
// operands (S = Q.K^T) and from a packed tensor-memory lhs (O += P.V), the
// commit to an mbarrier, and the moves between tensor memory and registers.
// CHECK-LABEL: func.func @tcgen05_ops
// CHECK: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%{{.*}}) : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>, <64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, <128x128xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.mma_commit %{{.*}}[%{{.*}}] : <1xi64, #tilegpu.shared<>>
// CHECK: tilegpu.tmem_load %{{.*}} : <128x128xf32, #tilegpu.tensor_memory<>> -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
// CHECK: tilegpu.tmem_store %{{.*}}, %{{.*}} : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>, <128x128xf16, #tilegpu.tensor_memory<packed = true>>
// CHECK: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%{{.*}}) : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>, <128x64xf16, #tilegpu.shared<swizzle = 128>>, <128x64xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.tmem_scale_rows %{{.*}}, %{{.*}} : <128x64xf32, #tilegpu.tensor_memory<>>, tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
func.func @tcgen05_ops(%q: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                       %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                       %v: !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
                       %bars: !tilegpu.buffer<1xi64, #tilegpu.shared<>>,
                       %p16: tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>,
                       %alpha: tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>,
                       %flag: i1) {
  %c0 = arith.constant 0 : index
  %s = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  %p = tilegpu.alloc offset(0) : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
  %o = tilegpu.alloc offset(128) : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  tilegpu.tmem_mma %q, %k, %s, accumulate(%flag)
      : !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
  tilegpu.mma_commit %bars[%c0] : !tilegpu.buffer<1xi64, #tilegpu.shared<>>
  %sr = tilegpu.tmem_load %s : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      -> tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
  tilegpu.tmem_store %p16, %p : tensor<128x128xf16, #tilegpu.tmem_lanes<acc, warps = 4>>,
      !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
  tilegpu.tmem_mma %p, %v, %o, accumulate(%flag)
      : !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>,
        !tilegpu.buffer<128x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>
  tilegpu.tmem_scale_rows %o, %alpha : !tilegpu.buffer<128x64xf32, #tilegpu.tensor_memory<>>,
      tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
  return
}

// -----

// Two Q tiles per CTA: 256-row tiles in two blocks of 128, one per
// warpgroup (row_blocks), each group with its own mbarrier, barrier and
// products.
// CHECK-LABEL: func.func @tcgen05_row_blocks
// CHECK: %[[G:.*]] = tilegpu.group_id {groups = 2 : i64}
// CHECK: tilegpu.group_barrier {groups = 2 : i64}
// CHECK: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%{{.*}}) : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>, <64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>, <256x128xf32, #tilegpu.tensor_memory<>>
// CHECK: tilegpu.mma_commit %{{.*}}[%{{.*}}] {groups = 2 : i64} : <2xi64, #tilegpu.shared<>>
// CHECK: tilegpu.mma_commit %{{.*}}[%{{.*}}] {groups = 2 : i64, joint} : <2xi64, #tilegpu.shared<>>
// CHECK: tilegpu.mbarrier_wait %{{.*}}[%[[G]]]
// CHECK: tilegpu.tmem_mma %{{.*}}, %{{.*}}, %{{.*}}, accumulate(%{{.*}}) {row_block = 1 : i64} : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>
// CHECK: tilegpu.tmem_load %{{.*}} : <256x128xf32, #tilegpu.tensor_memory<>> -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
// CHECK: tilegpu.tmem_scale_rows %{{.*}}, %{{.*}} : <256x128xf32, #tilegpu.tensor_memory<>>, tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
func.func @tcgen05_row_blocks(%q: !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
                              %k: !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
                              %bars: !tilegpu.buffer<2xi64, #tilegpu.shared<>>,
                              %alpha: tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>,
                              %flag: i1, %phase: i1) {
  %c0 = arith.constant 0 : index
  %s = tilegpu.alloc offset(0) : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
  %g = tilegpu.group_id {groups = 2}
  tilegpu.group_barrier {groups = 2}
  tilegpu.tmem_mma %q, %k, %s, accumulate(%flag)
      : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
  tilegpu.mma_commit %bars[%c0] {groups = 2} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  tilegpu.mma_commit %bars[%c0] {groups = 2, joint} : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  tilegpu.mbarrier_wait %bars[%g], phase(%phase) : !tilegpu.buffer<2xi64, #tilegpu.shared<>>
  tilegpu.tmem_mma %q, %k, %s, accumulate(%flag) {row_block = 1}
      : !tilegpu.buffer<256x64xf16, #tilegpu.shared<swizzle = 128>>,
        !tilegpu.buffer<64x128xf16, #tilegpu.shared<swizzle = 128, transposed = true>>,
        !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
  %sr = tilegpu.tmem_load %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      -> tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
  tilegpu.tmem_scale_rows %s, %alpha : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>,
      tensor<256xf32, #tilegpu.tmem_lanes<rows, warps = 8, row_blocks = 2>>
  return
}

// P over S: packed P's row blocks start where S's do.
// CHECK-LABEL: func.func @tmem_alias
// CHECK: tilegpu.tmem_alias %{{.*}} : <256x128xf32, #tilegpu.tensor_memory<>> -> <256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
// CHECK: tilegpu.tmem_alias %{{.*}} : <128x128xf32, #tilegpu.tensor_memory<>> -> <128x128xf16, #tilegpu.tensor_memory<packed = true>>
func.func @tmem_alias(%s: !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>,
                      %s1: !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>) {
  %p = tilegpu.tmem_alias %s : !tilegpu.buffer<256x128xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
  %p1 = tilegpu.tmem_alias %s1 : !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
      -> !tilegpu.buffer<128x128xf16, #tilegpu.tensor_memory<packed = true>>
  return
}

// -----

// A wgmma accumulator split by columns between two warpgroups into an f32
// buffer of swizzled panels, added to a block of a view by TMA.
// CHECK-LABEL: func.func @tma_reduce
// CHECK: tilegpu.tma_reduce_wait %{{.*}} {read} : <64x128xf32, #tilegpu.shared<swizzle = 128>>
// CHECK: tilegpu.local_store %{{.*}}, %{{.*}} : tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>, <64x128xf32, #tilegpu.shared<swizzle = 128>>
// CHECK: tilegpu.tma_reduce %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : <64x128xf32, #tilegpu.shared<swizzle = 128>>, <64x32xf32, swizzle = 128>
// CHECK: tilegpu.tma_reduce_wait %{{.*}} : <64x128xf32, #tilegpu.shared<swizzle = 128>>
func.func @tma_reduce(%map: !tilegpu.tensor_map<64x32xf32, swizzle = 128>,
                      %dq: tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>,
                      %i: index) {
  %buf = tilegpu.alloc : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  tilegpu.tma_reduce_wait %buf {read} : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  gpu.barrier
  tilegpu.local_store %dq, %buf : tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>,
      !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  gpu.barrier
  tilegpu.tma_reduce %buf into %map[%i, %i, %i, %i] : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>,
      !tilegpu.tensor_map<64x32xf32, swizzle = 128>
  tilegpu.tma_reduce_wait %buf : !tilegpu.buffer<64x128xf32, #tilegpu.shared<swizzle = 128>>
  return
}
