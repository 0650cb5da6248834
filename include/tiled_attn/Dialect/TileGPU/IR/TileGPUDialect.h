//===- TileGPUDialect.h - The tilegpu dialect -------------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The GPU level of tiled-attn: its enums, interfaces, attributes and types.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_H
#define TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h.inc"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUEnums.h.inc"

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUTypes.h.inc"

namespace tiled_attn::tilegpu {

/// Shared and tensor memory as a resource of memory effects.
struct SharedMemoryResource
    : public mlir::SideEffects::Resource::Base<SharedMemoryResource> {
  llvm::StringRef getName() final { return "tilegpu::SharedMemory"; }
};

/// The distributed layout of a register tile, or null.
inline DistributedLayoutAttrInterface getDistributedLayout(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor ? llvm::dyn_cast_or_null<DistributedLayoutAttrInterface>(
                      tensor.getEncoding())
                : nullptr;
}

/// The shared encoding of a tile that lives in shared memory (a tensor at
/// the tile level, before convert-tile-to-tilegpu), or null.
inline SharedEncodingAttr getSharedEncoding(mlir::Type type) {
  if (auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type))
    return llvm::dyn_cast_or_null<SharedEncodingAttr>(tensor.getEncoding());
  if (auto buffer = llvm::dyn_cast<BufferType>(type))
    return llvm::dyn_cast<SharedEncodingAttr>(buffer.getEncoding());
  return nullptr;
}

/// The mma.sync layout whose registers a register layout has: mma.sync's
/// own, or wgmma's (the same quad fragments on 16 rows per warp); null for
/// any other layout.
MmaSyncLayoutAttr getQuadFragmentLayout(mlir::Attribute layout);

/// Whether an mma producing `type` runs asynchronously (wgmma's
/// accumulators): its result is read through tilegpu.mma_wait.
bool isAsyncMmaResult(mlir::Type type);

/// The module's target, or null.
TargetAttr getTarget(mlir::Operation *op);

/// Whether setmaxnreg takes `registers` as a warp's register budget: a
/// multiple of 8 in [24, 256]. (0, "keep the launch's", is the roles' and
/// the options' own convention, checked by each.)
inline bool isSetMaxNRegBudget(int64_t registers) {
  return registers >= 24 && registers <= 256 && registers % 8 == 0;
}

} // namespace tiled_attn::tilegpu

#endif // TILED_ATTN_DIALECT_TILEGPU_IR_TILEGPUDIALECT_H
