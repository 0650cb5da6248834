//===- TileGPUAttrs.td - Attributes of the tilegpu dialect -*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD

include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.td"
include "tiled_attn/Dialect/TileGPU/IR/TileGPUInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/IR/EnumAttr.td"

class TileGPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TileGPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def TileGPU_MemorySpace : I32EnumAttr<"MemorySpace",
    "a memory a buffer lives in", [
    I32EnumAttrCase<"Shared", 0, "shared">,
    I32EnumAttrCase<"Tensor", 1, "tensor">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

def TileGPU_Family : I32EnumAttr<"Family", "a matrix-unit family", [
    I32EnumAttrCase<"MmaSync", 0, "mma_sync">,
    I32EnumAttrCase<"Wgmma", 1, "wgmma">,
    I32EnumAttrCase<"Tcgen05", 2, "tcgen05">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

def TileGPU_MmaSyncKind : I32EnumAttr<"MmaSyncKind",
    "the role of a tile in mma.sync m16n8k16 code", [
    I32EnumAttrCase<"Acc", 0, "acc">,
    I32EnumAttrCase<"Rows", 1, "rows">,
    I32EnumAttrCase<"Cols", 2, "cols">,
    I32EnumAttrCase<"OperandA", 3, "opa">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

def TileGPU_WgmmaKind : I32EnumAttr<"WgmmaKind",
    "the role of a tile in wgmma m64nNk16 code", [
    I32EnumAttrCase<"Acc", 0, "acc">,
    I32EnumAttrCase<"Rows", 1, "rows">,
    I32EnumAttrCase<"Cols", 2, "cols">,
    I32EnumAttrCase<"OperandA", 3, "opa">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

def TileGPU_ParamKind : I32EnumAttr<"ParamKind",
    "what one kernel parameter carries", [
    I32EnumAttrCase<"Base", 0, "base">,
    I32EnumAttrCase<"Size", 1, "size">,
    I32EnumAttrCase<"Stride", 2, "stride">,
    I32EnumAttrCase<"Scalar", 3, "scalar">,
    I32EnumAttrCase<"TensorMap", 4, "tensor_map">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

//===----------------------------------------------------------------------===//
// Distributed (register) layouts
//===----------------------------------------------------------------------===//

def TileGPU_MmaSyncLayoutAttr : TileGPU_Attr<"MmaSyncLayout", "mma_sync", [
    DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutAttrInterface>,
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A register tile in mma.sync m16n8k16 fragments";
  let description = [{
    `warps` warps split the rows of the CTA's tiles; g = lane / 4 and
    t = lane % 4.

    - `acc`: an MxN accumulator. Each warp owns M / warps consecutive rows,
      in m-tiles of 16; per (m-tile, n-tile of 8) a lane holds (g, 2t),
      (g, 2t+1), (g+8, 2t), (g+8, 2t+1).
    - `rows`: an M vector, a row of `acc` reduced: per m-tile, rows g, g+8.
    - `cols`: an N vector that every warp holds whole: per n-tile, columns
      2t, 2t+1.
    - `opa`: an MxK A operand; per (m-tile, k-step of 16) the eight elements
      of the A fragment: (g, 2t..2t+1), (g+8, 2t..), (g, 2t+8..),
      (g+8, 2t+8..). Over a pair of n-tiles its register order is `acc`'s,
      so P goes from accumulator to operand in place.

    With `column_blocks` = c > 1 the warps split the columns too: warp w
    owns rows 16 (w / c) .. +15 (per m-tile of 16 x warps / c rows) of the
    columns of block w % c (N / c each), so that a tile of fewer rows than
    16 x `warps` still has every warp at work (the backward's 64-key
    blocks at D = 192 and 256 on 8 warps). Each warp's registers are those
    of its block's tile (`getColumnBlockLayout`); `cols` holds its block's
    columns, `rows` its rows. Not for `opa`: an mma whose accumulator is
    split so reads its lhs from shared memory.

    Example:

    ```mlir
    tensor<128x64xf32, #tilegpu.mma_sync<acc, warps = 4>>
    tensor<64x256xf32, #tilegpu.mma_sync<acc, warps = 8, column_blocks = 2>>
    ```
  }];
  let parameters = (ins EnumParameter<TileGPU_MmaSyncKind>:$kind,
                        "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "1">:$column_blocks);
  let assemblyFormat = "`<` $kind `,` struct($warps, $column_blocks) `>`";
  let builders = [
    AttrBuilder<(ins "MmaSyncKind":$kind, "int64_t":$warps), [{
      return $_get($_ctxt, kind, warps, 1);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Rows each warp owns (0 for `cols`, which every warp holds whole).
    int64_t getRowsPerWarp(::llvm::ArrayRef<int64_t> shape) const {
      return getKind() == MmaSyncKind::Cols
                 ? 0
                 : shape[0] / (getWarps() / getColumnBlocks());
    }
    /// With column_blocks > 1: the layout of one column block's tile on the
    /// warps / column_blocks warps that share it, kind for kind.
    MmaSyncLayoutAttr getColumnBlockLayout() const;
    /// The shape of one column block's tile of a tile of `shape`.
    ::llvm::SmallVector<int64_t>
    getColumnBlockShape(::llvm::ArrayRef<int64_t> shape) const;
    /// Whether a store of an `acc` tile of `shape` and `elementType` can go
    /// through a staging buffer: 16-bit elements, and each warp's rows split
    /// into 16-byte pieces, a whole number per lane.
    bool canStageStore(::llvm::ArrayRef<int64_t> shape,
                       ::mlir::Type elementType) const;
  }];
}

def TileGPU_WgmmaLayoutAttr : TileGPU_Attr<"WgmmaLayout", "wgmma", [
    DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutAttrInterface>,
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A register tile in wgmma m64nNk16 warpgroup accumulators";
  let description = [{
    `warpgroups` warpgroups of four warps split the rows in blocks of 64;
    within a warpgroup, warp w % 4 owns rows 16 (w % 4) .. +15. With
    g = lane / 4 and t = lane % 4:

    - `acc`: per n-tile of 8 a lane holds (g, 2t), (g, 2t+1), (g+8, 2t),
      (g+8, 2t+1), n-tiles in order: the accumulator of one wgmma of width
      N is N / 2 registers per thread.
    - `rows`: an M vector, a row of `acc` reduced: rows g and g+8.
    - `cols`: an N vector that every warp holds whole: per n-tile, columns
      2t and 2t+1.
    - `opa`: an M x K A operand in registers (wgmma's register-A form, P in
      P·V): per k-step of 16 the eight elements (g, 2t..2t+1),
      (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..). Over a pair of n-tiles its
      register order is `acc`'s, so P goes from accumulator to operand in
      place.

    With `column_blocks` = c > 1 the warpgroups split the columns too:
    warpgroup w owns rows 64 (w / c) .. +63 of the columns of block w % c
    (N / c each), so that a tile of fewer rows than 64 x `warpgroups` still
    has every warpgroup at work (FlashAttention-3's backward puts its two
    warpgroups side by side on dQ's 64 rows, and at D = 192 and 256 on
    every product of a 64-key block). Each warpgroup's registers are those
    of its block's tile (`getColumnBlockLayout`): `acc` its N / c columns,
    `cols` the N / c columns of its block (a vector broadcast over such an
    accumulator's rows), `rows` its row block's rows (the same in every
    column block). Elementwise code, positions, gathers, broadcasts and
    stores take such tiles; a reduction across the columns would need the
    other warpgroups' registers, and the lowering refuses it.

    Per warp these are exactly the registers of `#tilegpu.mma_sync` with
    4 x `warpgroups` warps on 16 rows each (`getQuadFragmentLayout`), so the
    per-thread code of reductions, broadcasts, masks and stores is shared;
    what differs is the mma itself (a warpgroup-wide wgmma reading its B
    operand, and a shared A, through descriptors) and how operands reach
    shared memory (TMA). The layout of FlashAttention-3's consumer
    warpgroups.

    Example:

    ```mlir
    tensor<128x128xf32, #tilegpu.wgmma<acc, warpgroups = 2>>
    tensor<64x128xf32, #tilegpu.wgmma<acc, warpgroups = 2, column_blocks = 2>>
    ```
  }];
  let parameters = (ins EnumParameter<TileGPU_WgmmaKind>:$kind,
                        "int64_t":$warpgroups,
                        DefaultValuedParameter<"int64_t", "1">:$column_blocks);
  let assemblyFormat = "`<` $kind `,` struct($warpgroups, $column_blocks) `>`";
  let builders = [
    AttrBuilder<(ins "WgmmaKind":$kind, "int64_t":$warpgroups), [{
      return $_get($_ctxt, kind, warpgroups, 1);
    }]>
  ];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The mma.sync layout that puts the same elements in the same
    /// registers: kind for kind, on 4 x warpgroups warps (column_blocks 1).
    MmaSyncLayoutAttr getQuadFragmentLayout() const;
    /// With column_blocks > 1: the mma.sync layout of one column block's
    /// tile (64 x rowBlocks rows, N / column_blocks columns; of a `cols`
    /// vector its N / column_blocks columns), kind for kind, on the
    /// 4 x rowBlocks warps that share it.
    MmaSyncLayoutAttr getColumnBlockLayout() const;
    /// The shape of one column block's tile of a tile of `shape`.
    ::llvm::SmallVector<int64_t>
    getColumnBlockShape(::llvm::ArrayRef<int64_t> shape) const;
    int64_t getRowBlocks() const { return getWarpgroups() / getColumnBlocks(); }
  }];
}

def TileGPU_TmemLanesKind : I32EnumAttr<"TmemLanesKind",
    "the role of a tile in tcgen05 code, one row per thread", [
    I32EnumAttrCase<"Acc", 0, "acc">,
    I32EnumAttrCase<"Rows", 1, "rows">,
    I32EnumAttrCase<"Cols", 2, "cols">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::tiled_attn::tilegpu";
}

def TileGPU_TmemLanesLayoutAttr
    : TileGPU_Attr<"TmemLanesLayout", "tmem_lanes", [
    DeclareAttrInterfaceMethods<TileGPU_DistributedLayoutAttrInterface>,
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A register tile read from tensor memory by lane quadrants";
  let description = [{
    What `tcgen05.ld .32x32b` gives (`acc`, a 128 x N tile): a warp reaches
    only the quadrant of 32 tensor-memory lanes (rows) numbered warp % 4,
    and each lane reads one row, its registers being consecutive columns.
    `warps` (4, 8 or 16) warps cover the 128 rows; with 8 or 16 the warps of
    a quadrant split the columns evenly, in warp order. `rows` is a vector
    over the 128 rows: each thread holds its row's one element (the warps of
    a quadrant each hold it); `cols` is a vector over the columns: each
    thread holds the elements of its columns, the same in every lane.

    With `row_blocks` = R > 1 (FlashAttention-4's two Q tiles per CTA), an
    `acc` or `rows` tile has 128 x R rows, one block of 128 per group of
    warps / R consecutive warps: group g holds rows 128 g to 128 g + 127
    exactly as a 128-row tile on warps / R warps would, and a `cols` vector
    is held whole by every group. Each group is then a multiple of 4 warps.

    Example:

    ```mlir
    tensor<128x128xf32, #tilegpu.tmem_lanes<acc, warps = 4>>
    tensor<128xf32, #tilegpu.tmem_lanes<rows, warps = 4>>
    tensor<256x128xf32, #tilegpu.tmem_lanes<acc, warps = 8, row_blocks = 2>>
    ```
  }];
  let parameters = (ins EnumParameter<TileGPU_TmemLanesKind>:$kind,
                        "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "1">:$row_blocks);
  let assemblyFormat = "`<` $kind `,` struct($warps, $row_blocks) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The warps of one block of 128 rows.
    int64_t getWarpsPerRowBlock() const { return getWarps() / getRowBlocks(); }
    /// The warps of a quadrant of one row block, which split its columns.
    int64_t getColumnGroups() const { return getWarpsPerRowBlock() / 4; }
  }];
}

//===----------------------------------------------------------------------===//
// Memory encodings
//===----------------------------------------------------------------------===//

def TileGPU_SharedEncodingAttr : TileGPU_Attr<"SharedEncoding", "shared", [
    DeclareAttrInterfaceMethods<TileGPU_MemoryEncodingAttrInterface>,
    DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A tile in shared memory: row padding or a swizzle mode";
  let description = [{
    The tile is stored row by row (`transposed`: its transpose is, so that
    element (i, j) sits in stored row j, column i; K stored as it is in
    global memory serves Kᵀ). Either each stored row is followed by `pad`
    elements, so that ldmatrix reads are free of bank conflicts, or the
    tile is swizzled in the layout of TMA and of wgmma descriptors: the
    stored columns split into panels `swizzle` bytes wide (32, 64 or 128),
    panel after panel, each holding every stored row in `swizzle` bytes;
    within a panel the 16-byte chunk c of row r moves to chunk
    c xor (r mod (swizzle / 16)). One TMA box of `swizzle` bytes' width
    fills one panel; 8 rows of a panel are one swizzle atom of a wgmma
    descriptor. Swizzled buffers are aligned to 8 x swizzle bytes (1024 for
    128B); padded ones to 128.

    Examples:

    ```mlir
    !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8>>
    !tilegpu.buffer<128x64xbf16, #tilegpu.shared<swizzle = 128>>
    !tilegpu.buffer<64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"int64_t", "0">:$swizzle,
                        DefaultValuedParameter<"int64_t", "0">:$pad,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The shape of the stored matrix of a tile of `shape`: rows and
    /// columns, padding included.
    ::llvm::SmallVector<int64_t, 2>
    getStoredShape(::llvm::ArrayRef<int64_t> shape) const;
    /// A swizzled tile's panels: the stored columns one panel holds, and
    /// the bytes from one panel to the next (every stored row, `swizzle`
    /// bytes each).
    int64_t getPanelColumns(::mlir::Type elementType) const {
      return getSwizzle() * 8 / elementType.getIntOrFloatBitWidth();
    }
    int64_t getPanelBytes(::llvm::ArrayRef<int64_t> shape) const {
      return getStoredShape(shape)[0] * getSwizzle();
    }
  }];
}

def TileGPU_TensorMemoryEncodingAttr
    : TileGPU_Attr<"TensorMemoryEncoding", "tensor_memory", [
    DeclareAttrInterfaceMethods<TileGPU_MemoryEncodingAttrInterface>]> {
  let summary = "A tile in Blackwell tensor memory: 128 lanes x columns";
  let description = [{
    Row i of an M x N tile (M <= 128) is tensor-memory lane i; each 32-bit
    column holds one f32 element, or `packed` 16-bit elements side by side
    (P written back over S for P·V). A tile of 128 x R rows (R blocks of
    128 rows: two Q tiles per CTA) puts row block r beside the others: row
    128 r + i is lane i of the r-th group of the tile's columns, so the tile
    takes R times the columns of one block. With `block_columns` = C > 0,
    row block r starts C r columns in instead (C at least a block's own
    columns): P over S, where each block of packed P lies over the first
    columns of S's block. Allocations are in columns, a power of two
    between 32 and 512.

    Example:

    ```mlir
    !tilegpu.buffer<128x128xf32, #tilegpu.tensor_memory<>>
    !tilegpu.buffer<256x128xf16, #tilegpu.tensor_memory<packed = true, block_columns = 128>>
    ```
  }];
  let parameters = (ins DefaultValuedParameter<"bool", "false">:$packed,
                        DefaultValuedParameter<"int64_t", "0">:$block_columns);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// The columns of one block of 128 rows of a tile of `shape`.
    int64_t getColumnsPerBlock(llvm::ArrayRef<int64_t> shape,
                               mlir::Type elementType) const;
    /// The columns from one row block's start to the next's.
    int64_t getBlockStep(llvm::ArrayRef<int64_t> shape,
                         mlir::Type elementType) const;
  }];
}

//===----------------------------------------------------------------------===//
// Target and warp roles
//===----------------------------------------------------------------------===//

def TileGPU_TargetAttr : TileGPU_Attr<"Target", "target"> {
  let summary = "The chip a module is compiled for and its matrix-unit family";
  let description = [{
    Set on the module by `tilegpu-attach-target`. The chip keys the target
    description (`tiled_attn::TargetInfo`: shared memory per block,
    registers, PTX features, the families the chip has); `family` is the
    matrix unit the kernels use, one the chip has. It chooses the layouts
    `tilegpu-assign-layouts` gives and the patterns that lower them.

    Example:

    ```mlir
    module attributes {tilegpu.target = #tilegpu.target<chip = "sm_80", family = mma_sync>} {}
    ```
  }];
  let parameters = (ins StringRefParameter<"the chip, e.g. sm_90a">:$chip,
                        EnumParameter<TileGPU_Family>:$family);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TileGPU_RoleAttr : TileGPU_Attr<"Role", "role"> {
  let summary = "A warp role of a warp-specialized region";
  let description = [{
    `warps` consecutive warps hold the role; `registers` (0: keep the
    launch's) is the per-thread register budget they move to with
    `setmaxnreg` (24 to 256, a multiple of 8); the first `active` of them
    (0: all) then run the role's region, and the others exit. A TMA
    producer holds a whole warpgroup, so that it can give its registers
    away, and runs on one warp.

    Example:

    ```mlir
    #tilegpu.role<"producer", warps = 4, registers = 24, active = 1>
    ```
  }];
  let parameters = (ins StringRefParameter<"the role's name">:$name,
                        "int64_t":$warps,
                        DefaultValuedParameter<"int64_t", "0">:$registers,
                        DefaultValuedParameter<"int64_t", "0">:$active);
  let assemblyFormat = "`<` $name `,` struct($warps, $registers, $active) `>`";
  let genVerifyDecl = 1;
}

def TileGPU_KernelParamAttr : TileGPU_Attr<"KernelParam", "param"> {
  let summary = "What one kernel parameter carries: the kernel ABI";
  let description = [{
    Set by `convert-tilegpu-to-nvvm` on each argument of a kernel, under the
    name `tilegpu.param`, when it spells a view out as explicit parameters:
    the base address (a rank-0 memref, passed as a bare pointer), the size
    of each dynamic dimension and the stride, in elements, of each dimension
    whose stride is dynamic, all of `index` type (as wide as the kernel's
    index arithmetic). `name` is the argument's role in the kernel's
    `#tile.sdpa` signature (`q`, `k`, `v`, `o`, `scale`); `dim` is the
    dimension of a size or stride. A `tensor_map` parameter (wgmma kernels'
    TMA copies) is the 128-byte CUDA tensor map of the view `name`, passed
    by value as a grid constant; its `!tilegpu.tensor_map` type (after a
    colon: `#tilegpu.param<tensor_map, "k" : !tilegpu.tensor_map<...>>`)
    gives the box and swizzle the runtime encodes it with. The compiler writes this list into the
    library's manifest and the runtime packs the launch from it, so no
    parameter list is written by hand anywhere.

    Example:

    ```mlir
    gpu.func @sdpa_fwd(%q: memref<f16> {tilegpu.param = #tilegpu.param<base, "q">},
                       %q_s0: index {tilegpu.param = #tilegpu.param<size, "q", dim = 0>},
                       ...,
                       %scale: f32 {tilegpu.param = #tilegpu.param<scalar, "scale">}) kernel
    ```
  }];
  let parameters = (ins EnumParameter<TileGPU_ParamKind>:$kind,
                        StringRefParameter<"the argument's role">:$name,
                        DefaultValuedParameter<"int64_t", "-1">:$dim,
                        OptionalParameter<"::mlir::Type">:$map);
  let assemblyFormat =
      "`<` $kind `,` $name (`,` `dim` `=` $dim^)? (`:` $map^)? `>`";
  let genVerifyDecl = 1;
}

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUATTRS_TD
