// Every option of the tile-schedule and tile-to-ptx pipelines is checked
// before a pass is built, whichever passes would act: a bad value is a
// diagnostic naming the option and what it takes, never an abort in the
// middle of the pipeline (LLVM's report_fatal_error or the NVPTX backend's).

// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa --tile-schedule > %t.mlir

// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="index-bitwidth=1" 2>&1 | FileCheck %s --check-prefix=INDEX
// INDEX: error: tile-to-ptx: index-bitwidth must be 32 or 64, got 1

// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="features=+ptx60" 2>&1 | FileCheck %s --check-prefix=PTX60
// PTX60: error: tile-to-ptx: features must be a PTX version +ptxNN from +ptx80 (what sm_80 needs) to +ptx90, got '+ptx60'
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=sm_100a features=+ptx80" 2>&1 | FileCheck %s --check-prefix=PTX-BLACKWELL
// PTX-BLACKWELL: error: tile-to-ptx: features must be a PTX version +ptxNN from +ptx86 (what sm_100a needs) to +ptx90, got '+ptx80'
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="features=+ptx99" 2>&1 | FileCheck %s --check-prefix=PTX99
// PTX99: error: tile-to-ptx: features must be a PTX version +ptxNN from +ptx80 (what sm_80 needs) to +ptx90, got '+ptx99'
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="features=+sm_90" 2>&1 | FileCheck %s --check-prefix=NOT-PTX
// NOT-PTX: error: tile-to-ptx: features must be a PTX version +ptxNN {{.*}}, got '+sm_90'

// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: tile-to-ptx: chip 'sm_75' is not a supported chip (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100a, sm_100f, sm_120a, sm_121a)
// The other spellings of the issue (sm_70 is too old, the others are not
// CUDA chips as tile-to-ptx names them):
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=CHIP-OTHER
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=SM_80" 2>&1 | FileCheck %s --check-prefix=CHIP-OTHER
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP-OTHER
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=compute_80" 2>&1 | FileCheck %s --check-prefix=CHIP-OTHER
// CHIP-OTHER: error: tile-to-ptx: chip '{{sm_70|SM_80|gfx90a|compute_80}}' is not a supported chip (sm_80,
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="chip=" 2>&1 | FileCheck %s --check-prefix=EMPTY-CHIP
// EMPTY-CHIP: error: tile-to-ptx: chip '' is not a supported chip
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="family=mfma" 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: error: tile-to-ptx: family must be mma_sync, wgmma or tcgen05, got 'mfma'

// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="warps=0" 2>&1 | FileCheck %s --check-prefix=WARPS
// WARPS: error: tile-to-ptx: warps must be in [1, 32], got 0
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="opt-level=7" 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: error: tile-to-ptx: opt-level must be in [0, 3], got 7
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="ring-slots=-1" 2>&1 | FileCheck %s --check-prefix=SLOTS
// SLOTS: error: tile-to-ptx: ring-slots must be in [0, 8], got -1
// Register budgets are checked without warp-specialize too.
// RUN: not tiled-attn-opt %t.mlir --tile-to-ptx="producer-registers=20" 2>&1 | FileCheck %s --check-prefix=REGS
// REGS: error: tile-to-ptx: producer-registers must be 0 (the launch's) or a multiple of 8 in [24, 256], got 20
// RUN: not tiled-attn-opt %t.mlir --tilegpu-to-ptx="exp2-poly-every=-2" 2>&1 | FileCheck %s --check-prefix=POLY
// POLY: error: tile-to-ptx: exp2-poly-every must be in [0, 1048576], got -2

// tile-schedule: the options of passes that would not act are checked too
// (prefetch-streams with stages=1).
// RUN: echo 'module {}' | tiled-attn-opt --tile-generate-sdpa > %t.tile.mlir
// RUN: not tiled-attn-opt %t.tile.mlir --tile-schedule="stages=1 prefetch-streams=-1" 2>&1 | FileCheck %s --check-prefix=STREAMS
// STREAMS: error: tile-schedule: prefetch-streams must be in [0, 4], got -1
// RUN: not tiled-attn-opt %t.tile.mlir --tile-schedule="stages=0" 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES: error: tile-schedule: stages must be in [1, 4], got 0
// RUN: not tiled-attn-opt %t.tile.mlir --tile-schedule="block-m=40" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: tile-schedule: block-m must be 0 (the kernel's) or a multiple of 16 in [16, 256], got 40
// RUN: not tiled-attn-opt %t.tile.mlir --tile-schedule="lazy-rescale=99" 2>&1 | FileCheck %s --check-prefix=LAZY
// LAZY: error: tile-schedule: lazy-rescale must be in [1, 16], got 99
// RUN: not tiled-attn-opt %t.tile.mlir --tile-schedule="heavy-first=1 heavy-first-heads=-3" 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: tile-schedule: heavy-first-heads must be in [0, 2147483647], got -3

// Good options still build (the defaults, and a PTX version above the
// chip's).
// RUN: tiled-attn-opt %t.mlir --tile-to-ptx="features=+ptx85" -o /dev/null
