// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline='builtin.module(gpu.module(tilegpu-tensor-map-params))' \
// RUN:   | FileCheck %s

// A kernel's tensor-map parameters become the 128-byte CUDA tensor map
// itself, passed by value in parameter space (byval, 64-byte aligned,
// grid_constant); its other parameters are left as they are.

// CHECK-LABEL: llvm.func @kernel
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64)
// CHECK-NOT: byval
gpu.module @kernels {
  llvm.func @kernel(%k: !llvm.ptr, %o: !llvm.ptr, %n: i64) attributes {nvvm.kernel,
      tilegpu.params = [#tilegpu.param<tensor_map, "k" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>,
                        #tilegpu.param<base, "o">, #tilegpu.param<size, "o", dim = 0>]} {
    llvm.return
  }
}

// -----

// A function without tilegpu.params is not a kernel of the lowering: left
// alone. (A tilegpu.params of another length than the arguments is refused
// by the dialect's verifier before the pass runs.)

// CHECK-LABEL: llvm.func @helper
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr)
// CHECK-NOT: byval
gpu.module @kernels {
  llvm.func @helper(%p: !llvm.ptr) {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{tilegpu-tensor-map-params: tensor map parameter #0 of 'negative_not_kernel' must be a pointer parameter of a kernel (run it after convert-gpu-to-nvvm)}}
  llvm.func @negative_not_kernel(%k: !llvm.ptr) attributes {
      tilegpu.params = [#tilegpu.param<tensor_map, "k" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>]} {
    llvm.return
  }
}

// -----

gpu.module @kernels {
  // expected-error @+1 {{tilegpu-tensor-map-params: tensor map parameter #0 of 'negative_not_pointer' must be a pointer parameter of a kernel (run it after convert-gpu-to-nvvm)}}
  llvm.func @negative_not_pointer(%k: i64) attributes {nvvm.kernel,
      tilegpu.params = [#tilegpu.param<tensor_map, "k" : !tilegpu.tensor_map<128x64xf16, swizzle = 128>>]} {
    llvm.return
  }
}
