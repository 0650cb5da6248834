//===- TileDialect.h - The tile dialect -------------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The tile dialect, its types, enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_H
#define TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h.inc"
#include "tiled_attn/Dialect/Tile/IR/TileEnums.h.inc"
#include "tiled_attn/Kernels/KernelVariant.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Hashing.h"

namespace tiled_attn {
/// For `#tile.sdpa`'s storage.
inline llvm::hash_code hash_value(const KernelFeatures &features) {
  return llvm::hash_value(kernelFeatureBits(features));
}
} // namespace tiled_attn

namespace tiled_attn::tile {
/// `#tile.sdpa`'s `features`: `[softcap, lse]`, KernelVariant.def's names
/// in its order, each at most once.
mlir::FailureOr<KernelFeatures> parseKernelFeatures(mlir::AsmParser &parser);
void printKernelFeatures(mlir::AsmPrinter &printer,
                         const KernelFeatures &features);
} // namespace tiled_attn::tile

#define GET_ATTRDEF_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tiled_attn/Dialect/Tile/IR/TileTypes.h.inc"

namespace tiled_attn::tile {

/// The most elements a tile may have: 65536 32-bit registers are the
/// register file of one SM on every target (and 128 KiB of 16-bit elements
/// or 256 KiB of 32-bit ones exceed every target's shared memory per
/// block), so one CTA cannot hold a larger tile. Blocks of 256 x 256, the
/// largest the schedules make, are exactly this size.
inline constexpr int64_t kMaxTileElements = 65536;

/// Whether `size` is a block size the schedules take (block_m, block_n): a
/// multiple of 16 in [16, 256], 16 being the row quantum and k-step of
/// every target's matrix instructions.
inline bool isBlockSize(int64_t size) {
  return size >= 16 && size <= 256 && size % 16 == 0;
}

/// The elements of a static `shape`, saturating at INT64_MAX where the
/// product overflows.
int64_t saturatingElementCount(llvm::ArrayRef<int64_t> shape);

/// True when `type` has a static shape whose every dimension is a power of
/// two or a multiple of 16, with at most kMaxTileElements elements: the
/// shapes that tiles may take.
bool isTileShape(mlir::ShapedType type);

/// The role (`tile.arg`) of argument `index` of `func`, or null.
ArgAttr getArgAttr(mlir::FunctionOpInterface func, unsigned index);

/// The argument of `func` whose role is `role` (the first, for captured
/// inputs), or null.
mlir::BlockArgument findArgument(mlir::FunctionOpInterface func, ArgRole role);

/// The role of the function argument that `value` is, or is a `tile.slice`
/// of; null when it is no argument with a role.
ArgAttr getArgAttrOf(mlir::Value value);
std::optional<ArgRole> getArgRole(mlir::Value value);

/// The name the kernel ABI gives argument `index` of `func`: its role's
/// (ArgAttr::getArgumentName), or `arg<index>` without one.
std::string getArgumentName(mlir::FunctionOpInterface func, unsigned index);

} // namespace tiled_attn::tile

#endif // TILED_ATTN_DIALECT_TILE_IR_TILEDIALECT_H
