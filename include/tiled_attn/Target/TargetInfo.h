//===- TargetInfo.h - What the compiler knows of each chip ------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One table, keyed by chip, of the facts the GPU lowering depends on: the
// matrix-unit families the chip has, its shared memory per block and
// register file, the PTX version it needs, and whether it has TMA and
// setmaxnreg. The family a module is compiled for is chosen once, in
// tilegpu-attach-target, from this table; everything after reads it from
// the module's #tilegpu.target.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TARGET_TARGETINFO_H
#define TILED_ATTN_TARGET_TARGETINFO_H

#include "tiled_attn/Dialect/TileGPU/IR/TileGPUDialect.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace tiled_attn {

struct TargetInfo {
  llvm::StringRef chip;
  /// The matrix-unit families the chip runs, fastest first.
  llvm::SmallVector<tilegpu::Family, 2> families;
  /// PTX features the NVVM target needs for this chip (e.g. +ptx80).
  llvm::StringRef ptxFeatures;
  /// Dynamic shared memory one block may use, in bytes.
  int64_t sharedBytesPerBlock;
  /// 32-bit registers per SM, and at most per thread.
  int64_t registersPerSM = 65536, registersPerThread = 255;
  bool hasTMA = false;
  bool hasSetMaxNReg = false;
  /// A family target (sm_100f) whose ops MLIR's NVVM verifier knows only
  /// under an arch-specific chip: the module is lowered and verified for
  /// that chip (sm_100a) and emitted for this one (tilegpu-retarget-family).
  /// Empty for the chips the verifier knows.
  llvm::StringRef verifiedAs = {};

  /// The chip the NVVM target of the lowered module names: verifiedAs, or
  /// the chip itself.
  llvm::StringRef nvvmChip() const {
    return verifiedAs.empty() ? chip : verifiedAs;
  }

  /// The description of `chip`, or none for a chip the compiler does not
  /// know.
  static std::optional<TargetInfo> lookup(llvm::StringRef chip);
  /// The chips lookup knows, for diagnostics.
  static std::string knownChips();

  /// Grid dependency control (griddepcontrol: programmatic dependent
  /// launch), which came with TMA in sm_90.
  bool hasGridDependencyControl() const { return hasTMA; }

  bool hasFamily(tilegpu::Family family) const {
    return llvm::is_contained(families, family);
  }
  /// The chip's fastest family (the first of `families`).
  tilegpu::Family defaultFamily() const { return families.front(); }
};

} // namespace tiled_attn

#endif // TILED_ATTN_TARGET_TARGETINFO_H
