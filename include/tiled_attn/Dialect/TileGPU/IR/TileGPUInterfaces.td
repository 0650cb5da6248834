//===- TileGPUInterfaces.td - Layout and memory interfaces -*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUINTERFACES_TD
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUINTERFACES_TD

include "mlir/IR/OpBase.td"

def TileGPU_DistributedLayoutAttrInterface
    : AttrInterface<"DistributedLayoutAttrInterface"> {
  let cppNamespace = "::tiled_attn::tilegpu";
  let description = [{
    How a register tile is spread over the threads of a CTA: the tensor
    encoding of a tile that lives in registers. Every matrix unit has its own
    layouts (mma.sync fragments, wgmma warpgroup accumulators, tcgen05
    tensor-memory lanes); the lowering of target-independent ops
    (elementwise math, constants, the kernel's types) asks only this
    interface.

    The mapping is total and one-to-one per thread: register `r` of lane
    `l` of warp `w` holds exactly one tile element, and every element is
    held by at least one thread (layouts may replicate, e.g. a column vector
    that every warp holds whole).
  }];
  let methods = [
    InterfaceMethod<"The number of warps the layout spreads a tile over.",
      "int64_t", "getWarpCount", (ins)>,
    InterfaceMethod<[{
        Checks that a tile of `shape` can take this layout; emits an error
        through `emitError` otherwise.
      }],
      "::mlir::LogicalResult", "verifyTileShape",
      (ins "::llvm::ArrayRef<int64_t>":$shape,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
    InterfaceMethod<"The registers (elements) each thread holds of a tile of "
                    "`shape`.",
      "int64_t", "getRegisterCount", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<[{
        The coordinates, in a tile of `shape`, of the element that register
        `reg` of lane `lane` in warp `warp` holds.
      }],
      "::llvm::SmallVector<int64_t>", "getElementCoordinates",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$warp,
           "int64_t":$lane, "int64_t":$reg)>,
  ];
}

def TileGPU_MemoryEncodingAttrInterface
    : AttrInterface<"MemoryEncodingAttrInterface"> {
  let cppNamespace = "::tiled_attn::tilegpu";
  let description = [{
    How a tile is laid out in a memory that is not registers: the encoding
    of a `!tilegpu.buffer`. It names the memory space (shared or tensor
    memory), the size of one tile of a given shape in that space's units
    (bytes of shared memory, columns of tensor memory) and the alignment an
    allocation needs.
  }];
  let methods = [
    InterfaceMethod<"The memory space of buffers with this encoding.",
      "::tiled_attn::tilegpu::MemorySpace", "getMemorySpace", (ins)>,
    InterfaceMethod<[{
        The size of one tile of `shape` and `elementType` (bytes for shared
        memory, columns for tensor memory), rounded up to the alignment so
        that the slots of a ring follow each other.
      }],
      "int64_t", "getTileSize",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType)>,
    InterfaceMethod<"The alignment of an allocation, in the same units.",
      "int64_t", "getAlignment", (ins)>,
    InterfaceMethod<[{
        Checks that a tile of `shape` and `elementType` can take this
        encoding; emits an error through `emitError` otherwise.
      }],
      "::mlir::LogicalResult", "verifyTileShape",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
  ];
}

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUINTERFACES_TD
