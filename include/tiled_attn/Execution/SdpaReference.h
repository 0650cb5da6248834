//===- SdpaReference.h - Float64 reference for SDPA -------------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_EXECUTION_SDPAREFERENCE_H
#define TILED_ATTN_EXECUTION_SDPAREFERENCE_H

#include "tiled_attn/Dialect/Tile/IR/TileDialect.h"
#include "tiled_attn/Execution/HostExecutor.h"

namespace tiled_attn::exec {

/// softmax(scale * Q Kᵀ + mask) V in float64 for [B, H, S, D] tensors,
/// written into `out` (same shape as `q`). K and V may have fewer heads,
/// H_kv dividing H: query head h reads K/V head h / (H / H_kv). A query row
/// that sees no key gets an output of zero.
void sdpaReference(HostTensor &q, HostTensor &k, HostTensor &v, HostTensor &out,
                   double scale, tile::CausalMode causal);

/// ||a - b|| / ||b|| over all elements (||a - b|| when b is all zero).
double relativeL2(HostTensor &a, HostTensor &b);

} // namespace tiled_attn::exec

#endif // TILED_ATTN_EXECUTION_SDPAREFERENCE_H
