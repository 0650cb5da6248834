//===- TensorMap.h - TMA descriptors of kernel parameters -------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_LIB_RUNTIME_TENSORMAP_H
#define TILED_ATTN_LIB_RUNTIME_TENSORMAP_H

#include "Driver.h"
#include "Manifest.h"

namespace tiled_attn::runtime {

/// Builds the 128-byte CUtensorMap of `param` over the [B, H, S, D] tensor
/// `t` into `out` (64-byte aligned): a rank-4 tiled map, dims innermost
/// first {D, S, H, B}, byte strides {S, H, B}, box {cols, rows, 1, 1},
/// element strides 1, no interleave, the parameter's swizzle, 128-byte L2
/// promotion and zeros out of bounds. Checks what the driver needs of the
/// tensor (a 16-byte aligned address, positive strides that are multiples
/// of 16 bytes and below 2^40) with messages naming the tensor.
Status encodeTensorMap(const Driver *driver, const KernelEntry &kernel,
                       const Param &param, const ta_tensor &t, ta_dtype dtype,
                       unsigned char *out);

/// The same for a captured rank-4 view the kernel copies by blocks (a bias
/// or mask tensor [B|1, H|1, S_q, S_k] of f32, f16, bf16, i32 or bytes): a
/// dimension broadcast by stride 0 keeps its zero stride, so that the
/// copies read the same memory at each of its indices.
Status encodeCaptureTensorMap(const Driver *driver, const KernelEntry &kernel,
                              const Param &param, const ta_capture &c,
                              unsigned char *out);

} // namespace tiled_attn::runtime

#endif // TILED_ATTN_LIB_RUNTIME_TENSORMAP_H
