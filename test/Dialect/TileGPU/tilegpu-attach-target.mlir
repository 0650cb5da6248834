// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target | FileCheck %s
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_86" \
// RUN:   | FileCheck %s --check-prefix=SM86
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_90a" \
// RUN:   | FileCheck %s --check-prefix=SM90A
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_90a family=mma_sync" \
// RUN:   | FileCheck %s --check-prefix=SM90A-MMA
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_100a" \
// RUN:   | FileCheck %s --check-prefix=SM100A
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_100a family=mma_sync" \
// RUN:   | FileCheck %s --check-prefix=SM100A-MMA
// RUN: tiled-attn-opt %s -split-input-file --tilegpu-attach-target="chip=sm_100f" \
// RUN:   | FileCheck %s --check-prefix=SM100F

// Errors: an unknown chip, an unknown family, a family the chip lacks.
// RUN: echo 'module {}' | not tiled-attn-opt --tilegpu-attach-target="chip=sm_70" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHIP
// RUN: echo 'module {}' | not tiled-attn-opt --tilegpu-attach-target="chip=sm_90a family=hmma" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FAMILY
// RUN: echo 'module {}' | not tiled-attn-opt --tilegpu-attach-target="chip=sm_80 family=wgmma" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LACKS
// RUN: echo 'module {}' | not tiled-attn-opt --tilegpu-attach-target="chip=sm_90a family=tcgen05" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LACKS-TCGEN05

// On the generated kernel: the chosen target reaches the module, and the
// layouts assigned after it are mma.sync's.
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2 refill-after-use=1" \
// RUN:   --tilegpu-attach-target="chip=sm_90a family=mma_sync" --tilegpu-assign-layouts --convert-tile-to-tilegpu \
// RUN:   | FileCheck %s --check-prefix=KERNEL
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa="head-dim=64 block-m=128" \
// RUN:   --tile-schedule="exp2=1 mask-split=1 stages=2" \
// RUN:   --tilegpu-attach-target="chip=sm_90a" --tilegpu-assign-layouts="warps=8" --convert-tile-to-tilegpu \
// RUN:   | FileCheck %s --check-prefix=WGMMA

// KERNEL: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = mma_sync>}
// KERNEL-LABEL: func.func @sdpa_fwd
// KERNEL: tilegpu.mma {{.*}} -> tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
// KERNEL-NOT: #tilegpu.wgmma
// WGMMA: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>}
// WGMMA: tilegpu.mma {{.*}} -> tensor<128x64xf32, #tilegpu.wgmma<acc, warpgroups = 2>>

// The pass records the chip and its family on the module; the default chip
// is sm_80, and the default family is the chip's fastest: wgmma on sm_90a,
// tcgen05 on sm_100a and on its family target sm_100f (B200 and B300),
// mma_sync everywhere else. A chip's other family may
// be named (mma_sync on sm_90a and sm_100a).

// CHECK: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
// CHECK-LABEL: func.func @kernel
// SM86: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_86", family = mma_sync>}
// SM86-LABEL: func.func @kernel
// SM90A: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>}
// SM90A-LABEL: func.func @kernel
// SM90A-MMA: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = mma_sync>}
// SM90A-MMA-LABEL: func.func @kernel
// SM100A: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>}
// SM100A-LABEL: func.func @kernel
// SM100A-MMA: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = mma_sync>}
// SM100A-MMA-LABEL: func.func @kernel
// SM100F: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100f", family = tcgen05>}
// SM100F-LABEL: func.func @kernel

// The errors (on an empty module).
// CHIP: error: tilegpu-attach-target: unknown chip 'sm_70' (known: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_100f, sm_120a, sm_121a)
// FAMILY: error: tilegpu-attach-target: unknown family 'hmma' (mma_sync, wgmma, tcgen05)
// LACKS: error: tilegpu-attach-target: sm_80 has no wgmma matrix units
// LACKS-TCGEN05: error: tilegpu-attach-target: sm_90a has no tcgen05 matrix units
module {
  func.func @kernel(%q: !tile.view<?x?x?x64xf16>) {
    return
  }
}

// -----

// A target already on the module is replaced; the module's other
// attributes stay.

// CHECK: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
// CHECK-LABEL: func.func @retarget
// SM86: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_86", family = mma_sync>}
// SM86-LABEL: func.func @retarget
// SM90A: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>}
// SM90A-LABEL: func.func @retarget
// SM90A-MMA: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_90a", family = mma_sync>}
// SM90A-MMA-LABEL: func.func @retarget
// SM100A: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>}
// SM100A-LABEL: func.func @retarget
// SM100A-MMA: module attributes {gpu.container_module, tilegpu.target = #tilegpu.target<chip = "sm_100a", family = mma_sync>}
// SM100A-MMA-LABEL: func.func @retarget
module attributes {tilegpu.target = #tilegpu.target<chip = "sm_89", family = mma_sync>, gpu.container_module} {
  func.func @retarget(%q: !tile.view<?x?x?x64xf16>) {
    return
  }
}

// -----

// A module that only declares kernels gets the target too.

// CHECK: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>}
// CHECK-LABEL: func.func private @declared
// SM86: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_86", family = mma_sync>}
// SM86-LABEL: func.func private @declared
// SM90A: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_90a", family = wgmma>}
// SM90A-LABEL: func.func private @declared
// SM100A: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = tcgen05>}
// SM100A-LABEL: func.func private @declared
// SM100A-MMA: module attributes {tilegpu.target = #tilegpu.target<chip = "sm_100a", family = mma_sync>}
// SM100A-MMA-LABEL: func.func private @declared
module {
  func.func private @declared(!tile.view<?x?x?x64xf16>)
}
