// RUN: tiled-attn-opt %s --convert-nvgpu-to-nvvm-index-bitwidth=index-bitwidth=32 | FileCheck %s
// RUN: tiled-attn-opt %s --convert-nvgpu-to-nvvm-index-bitwidth | FileCheck %s --check-prefix=I64
// RUN: not tiled-attn-opt %s --convert-nvgpu-to-nvvm-index-bitwidth=index-bitwidth=16 2>&1 | FileCheck %s --check-prefix=BAD

// The nvgpu ops lower as upstream's convert-nvgpu-to-nvvm lowers them, but
// the memref descriptors they take apart have fields of the asked-for
// index width (upstream's pass always uses 64 bits), and the copy-group
// token is an i32.

// CHECK-LABEL: gpu.func @copy_and_read
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : memref<16x16xf16> to !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : memref<16x16xf16, 3> to !llvm.struct<(ptr<3>, ptr<3>, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: nvvm.ldmatrix
// CHECK-NOT: nvgpu.
// CHECK: gpu.return

// I64: !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>

// BAD: error: convert-nvgpu-to-nvvm-index-bitwidth: index-bitwidth must be 32 or 64, got 16
gpu.module @m {
  gpu.func @copy_and_read(%g: memref<16x16xf16>, %s: memref<16x16xf16, 3>) kernel {
    %c0 = arith.constant 0 : index
    %t = nvgpu.device_async_copy %g[%c0, %c0], %s[%c0, %c0], 8 : memref<16x16xf16> to memref<16x16xf16, 3>
    %grp = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %grp {numGroups = 0 : i32}
    %r = nvgpu.ldmatrix %s[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, 3> -> vector<4x2xf16>
    gpu.return
  }
}
