// REQUIRES: ptxas
// How tcgen05 code reaches B300 (sm_103a) with LLVM 22: MLIR's NVVM
// verifier accepts tcgen05 ops under an sm_100a target only, but LLVM's
// NVPTX backend selects them for sm_100a, the family target sm_100f (PTX
// that runs on compute capability 10.0 and 10.3) and sm_103a. So the
// route is: verify and lower the module as sm_100a, translate it to LLVM
// IR, and let the NVPTX backend emit PTX for sm_100f (or sm_103a). The PTX
// is still the compiler's; nothing edits it. Below, one tensor-memory
// round trip (alloc, relinquish, dealloc) takes that route and ptxas
// accepts it for each; Hopper cannot select it.

// RUN: split-file %s %t
// RUN: not mlir-opt %t/gpu-module.mlir 2>&1 | FileCheck %s --check-prefix=VERIFIER
// VERIFIER: error: 'nvvm.tcgen05.alloc' op is not supported on sm_103a
// RUN: sed 's/sm_103a/sm_100a/' %t/gpu-module.mlir | mlir-opt -o /dev/null

// RUN: mlir-translate --mlir-to-llvmir %t/kernel.mlir -o %t/kernel.ll
// RUN: llc -march=nvptx64 -mcpu=sm_100f -mattr=+ptx88 %t/kernel.ll -o %t/sm_100f.ptx
// RUN: FileCheck %s --input-file=%t/sm_100f.ptx -DCHIP=sm_100f
// RUN: ptxas -arch=sm_100f %t/sm_100f.ptx -o %t/sm_100f.cubin
// RUN: ptxas -arch=sm_103f %t/sm_100f.ptx -o %t/sm_103f.cubin
// RUN: llc -march=nvptx64 -mcpu=sm_103a -mattr=+ptx88 %t/kernel.ll -o %t/sm_103a.ptx
// RUN: FileCheck %s --input-file=%t/sm_103a.ptx -DCHIP=sm_103a
// RUN: ptxas -arch=sm_103a %t/sm_103a.ptx -o %t/sm_103a.cubin
// RUN: not --crash llc -march=nvptx64 -mcpu=sm_90a -mattr=+ptx88 %t/kernel.ll -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOPPER
// CHECK: .target [[CHIP]]
// CHECK: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// CHECK: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned
// CHECK: tcgen05.dealloc.cta_group::1.sync.aligned.b32
// HOPPER: Cannot select: intrinsic %llvm.nvvm.tcgen05

//--- gpu-module.mlir
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_103a", features = "+ptx88">] {
    llvm.func @alloc(%slot: !llvm.ptr<3>) {
      %cols = llvm.mlir.constant(128 : i32) : i32
      nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
      llvm.return
    }
  }
}

//--- kernel.mlir
module {
  llvm.mlir.global internal @tmem_base() {addr_space = 3 : i32, alignment = 16 : i64} : i32
  llvm.func @tmem_roundtrip(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %slot = llvm.mlir.addressof @tmem_base : !llvm.ptr<3>
    %cols = llvm.mlir.constant(128 : i32) : i32
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
    nvvm.tcgen05.relinquish_alloc_permit
    %base = llvm.load %slot : !llvm.ptr<3> -> i32
    llvm.store %base, %out : i32, !llvm.ptr<1>
    %tmem = llvm.inttoptr %base : i32 to !llvm.ptr<6>
    nvvm.tcgen05.dealloc %tmem, %cols : !llvm.ptr<6>, i32
    llvm.return
  }
}
