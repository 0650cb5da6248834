//===- TileGPUTypes.td - Types of the tilegpu dialect ------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD

include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrs.td"
include "mlir/IR/AttrTypeBase.td"

def TileGPU_BufferType : TypeDef<TileGPU_Dialect, "Buffer"> {
  let mnemonic = "buffer";
  let summary = "A tile, or a ring of tiles, in shared or tensor memory";
  let description = [{
    A rank-2 tile shape, optionally preceded by the number of slots of a
    ring (`2x64x64xf16`: two 64x64 tiles one after the other, each at
    `getTileSize` from the last). The encoding says how a tile is laid out
    and in which memory (`#tilegpu.shared`, `#tilegpu.tensor_memory`), so
    the memory space is part of the type. A buffer of rank 1 (`2xi64`) in
    shared memory holds mbarriers.

    Example:

    ```mlir
    !tilegpu.buffer<2x64x64xf16, #tilegpu.shared<pad = 8, transposed = true>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$encoding);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The memory encoding (shared or tensor memory).
    MemoryEncodingAttrInterface getMemoryEncoding() const {
      return ::llvm::cast<MemoryEncodingAttrInterface>(getEncoding());
    }
    MemorySpace getMemorySpace() const {
      return getMemoryEncoding().getMemorySpace();
    }
    /// Whether the buffer is a ring of tiles (rank 3).
    bool isRing() const { return getShape().size() == 3; }
    /// The shape of one tile (the last two dimensions).
    ::llvm::ArrayRef<int64_t> getTileShape() const {
      return getShape().take_back(2);
    }
    /// The size of one tile (a ring's slot stride) and of the whole buffer,
    /// in the memory's units.
    int64_t getTileSize() const;
    int64_t getAllocationSize() const;
    /// A tensor-memory buffer's blocks of 128 rows: the columns of one, and
    /// the columns from one's start to the next's.
    int64_t getRowBlockColumns() const;
    int64_t getRowBlockStep() const;
    /// The same bytes read transposed (`tilegpu.transpose_view`'s result):
    /// a 2-D shared tile's shape swapped and its encoding's `transposed`
    /// flag flipped, pad and swizzle kept; null for any other buffer.
    BufferType getTransposedView() const;
  }];
}

def TileGPU_TensorMapType : TypeDef<TileGPU_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "A TMA descriptor of a view: the box it copies, its swizzle";
  let description = [{
    A CUDA tensor map (the 128-byte `CUtensorMap`) over a rank-4 view
    [B, H, S, D], which the runtime builds on the host
    (`cuTensorMapEncodeTiled`) and passes as a grid-constant kernel
    parameter. One copy moves a box of `rows x cols` elements of the last
    two dimensions, at one (batch, head), into shared memory in the
    `swizzle` mode (0, 32, 64 or 128 bytes; the box is one panel of a
    `#tilegpu.shared<swizzle = ...>` tile, so `cols` elements span
    `swizzle` bytes); what lies outside the view reads as zero.

    Example:

    ```mlir
    !tilegpu.tensor_map<128x64xf16, swizzle = 128>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$box,
                        "::mlir::Type":$elementType,
                        "int64_t":$swizzle);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getBox()[0]; }
    int64_t getCols() const { return getBox()[1]; }
    /// The bytes one copy moves.
    int64_t getBoxBytes() const {
      return getRows() * getCols() * getElementType().getIntOrFloatBitWidth() / 8;
    }
  }];
}

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUTYPES_TD
