// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule --tilegpu-attach-target="chip=sm_80" --tilegpu-assign-layouts \
// RUN:   --convert-tile-to-tilegpu --tilegpu-resolve-async-waits \
// RUN:   --tilegpu-allocate-memory --convert-tilegpu-to-nvvm \
// RUN:   | FileCheck %s
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 variant=top_left" \
// RUN:   --tile-schedule --tile-to-ptx="index-bitwidth=32" | FileCheck %s --check-prefix=PTX
// RUN: tiled-attn-opt %s --convert-tilegpu-to-nvvm | FileCheck %s --check-prefix=POS

// The kernel ABI (tiled-attn-v2). Each view argument of the SDPA kernel,
// (q, k, v, o: !tile.view<?x?x?x64xf16>, scale: f32), becomes its base
// pointer, the sizes of its three dynamic dimensions and the strides of its
// first three (the last is 1): 7 parameters per view, 29 in all, each named
// after its role in the #tile.sdpa signature.
// CHECK-LABEL: gpu.func @sdpa_fwd(
// CHECK-SAME: %[[Q:[^:]*]]: memref<f16> {tilegpu.param = #tilegpu.param<base, "q">},
// CHECK-SAME: %[[QS0:[^:]*]]: index {tilegpu.param = #tilegpu.param<size, "q", dim = 0>},
// CHECK-SAME: %[[QS1:[^:]*]]: index {tilegpu.param = #tilegpu.param<size, "q", dim = 1>},
// CHECK-SAME: %[[QS2:[^:]*]]: index {tilegpu.param = #tilegpu.param<size, "q", dim = 2>},
// CHECK-SAME: %[[QT0:[^:]*]]: index {tilegpu.param = #tilegpu.param<stride, "q", dim = 0>},
// CHECK-SAME: %[[QT1:[^:]*]]: index {tilegpu.param = #tilegpu.param<stride, "q", dim = 1>},
// CHECK-SAME: %[[QT2:[^:]*]]: index {tilegpu.param = #tilegpu.param<stride, "q", dim = 2>},
// CHECK-SAME: memref<f16> {tilegpu.param = #tilegpu.param<base, "k">},
// CHECK-SAME: memref<f16> {tilegpu.param = #tilegpu.param<base, "v">},
// CHECK-SAME: memref<f16> {tilegpu.param = #tilegpu.param<base, "o">},
// CHECK-SAME: index {tilegpu.param = #tilegpu.param<stride, "o", dim = 2>},
// CHECK-SAME: %[[SCALE:[^:]*]]: f32 {tilegpu.param = #tilegpu.param<scalar, "scale">}) kernel
// The body sees each view as the strided memref it was, starting at the base.
// CHECK: memref.reinterpret_cast %[[Q]] to offset: [%{{.*}}], sizes: [%[[QS0]], %[[QS1]], %[[QS2]], 64], strides: [%[[QT0]], %[[QT1]], %[[QT2]], 1] : memref<f16> to memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>

// Lowered with the bare-pointer calling convention, each parameter is one
// PTX parameter: a pointer, then 32-bit sizes and strides (7 per view), and
// the f32 scale last.
// PTX: .param .u64 .ptr .align 1 sdpa_fwd_param_0,\0A\09.param .u32 sdpa_fwd_param_1,
// PTX-SAME: .param .u32 sdpa_fwd_param_6,\0A\09.param .u64 .ptr .align 1 sdpa_fwd_param_7,
// PTX-SAME: .param .u64 .ptr .align 1 sdpa_fwd_param_21,
// PTX-SAME: .param .u32 sdpa_fwd_param_27,\0A\09.param .f32 sdpa_fwd_param_28\0A)

// A kernel without #tile.sdpa names its parameters by position; a scalar
// keeps its type.
// POS-LABEL: gpu.func @positional_names(
// POS-SAME: memref<f32> {tilegpu.param = #tilegpu.param<base, "arg0">}
// POS-SAME: index {tilegpu.param = #tilegpu.param<size, "arg0", dim = 0>}
// POS-SAME: index {tilegpu.param = #tilegpu.param<stride, "arg0", dim = 0>}
// POS-SAME: i32 {tilegpu.param = #tilegpu.param<scalar, "arg1">})
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {
  func.func @positional_names(%o: !tile.view<?x16xf32>, %n: i32)
      attributes {tilegpu.shared_bytes = 0 : i64, tilegpu.warps = 1 : i64} {
    return
  }
}
