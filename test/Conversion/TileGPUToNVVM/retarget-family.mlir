// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(gpu.module(tilegpu-retarget-family{chip=sm_100f features=+ptx88 verified-as=sm_100a}))' \
// RUN:   | FileCheck %s
// RUN: echo 'module { gpu.module @k [#nvvm.target<chip = "sm_100a">] {} }' \
// RUN:   | not tiled-attn-opt --pass-pipeline='builtin.module(gpu.module(tilegpu-retarget-family{chip=sm_100f}))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OPTIONS
// The whole pipeline for the family target: the module is verified as
// sm_100a (the target the lowering attaches) and its PTX is for sm_100f,
// which ptxas assembles for B200 (sm_100f) and B300 (sm_103f).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128 block-n=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2" --tile-to-ptx="chip=sm_100f" \
// RUN:   | sed -n 's/.*assembly = "\([^"]*\)".*/\1/p' | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' > %t.ptx
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t.ptx
// RUN: %if ptxas %{ ptxas -arch=sm_100f %t.ptx -o %t.sm_100f.cubin %}
// RUN: %if ptxas %{ ptxas -arch=sm_103f %t.ptx -o %t.sm_103f.cubin %}

// The chip and features change; the SM check of the ops is off, since they
// were checked under sm_100a; the other parameters stay.
// CHECK: gpu.module @tcgen05 [#nvvm.target<O = 3, chip = "sm_100f", features = "+ptx88", verifyTarget = false>]
// CHECK: nvvm.tcgen05.alloc
module attributes {gpu.container_module} {
  gpu.module @tcgen05 [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">] {
    llvm.func @alloc(%slot: !llvm.ptr<3>) {
      %cols = llvm.mlir.constant(128 : i32) : i32
      nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
      llvm.return
    }
  }
}

// -----

// A module verified for another chip is not vouched for.
module attributes {gpu.container_module} {
  // expected-error @+1 {{tilegpu-retarget-family: the module's target is sm_90a, not sm_100a: its ops were not verified for the chip this pass vouches for}}
  gpu.module @hopper [#nvvm.target<chip = "sm_90a">] {
  }
}

// -----

module attributes {gpu.container_module} {
  // expected-error @+1 {{tilegpu-retarget-family: expects one #nvvm.target on the module}}
  gpu.module @none {
  }
}

// OPTIONS: error: tilegpu-retarget-family: needs chip= (the family target) and verified-as= (the chip the module was verified for)

// PTX: .version 8.8
// PTX: .target sm_100f
// PTX: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
// PTX: tcgen05.mma.cta_group::1.kind::f16
// PTX: tcgen05.dealloc.cta_group::1.sync.aligned.b32
