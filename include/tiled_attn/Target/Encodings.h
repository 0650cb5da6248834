//===- Encodings.h - Descriptors of Hopper and Blackwell -------*- C++ -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The bit layouts that the asynchronous tensor cores read from registers,
// as the PTX ISA defines them:
//
// - the 64-bit shared-memory matrix descriptor of wgmma (sm_90a) and its
//   tcgen05 version (sm_100a), which differ in a version field and in where
//   the swizzle mode sits;
// - the 32-bit instruction descriptor of tcgen05.mma .kind::f16;
// - the 32-bit tensor-memory address (lane, column) and the column counts
//   tcgen05.alloc takes.
//
// Each encoder checks every field against its width and the ISA's rules
// and returns an llvm::Error naming the field otherwise, so that nothing is
// silently truncated. The lowerings call these; test/Target checks them
// against values worked out by hand from the ISA's tables.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_TARGET_ENCODINGS_H
#define TILED_ATTN_TARGET_ENCODINGS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace tiled_attn::encoding {

/// How the rows of a matrix operand are swizzled in shared memory.
enum class Swizzle {
  None,
  Bytes32,
  Bytes64,
  Bytes128,
  /// tcgen05 only: 128-byte swizzle with 32-byte atoms.
  Bytes128Atom32,
};

/// The swizzle of rows in panels of `bytes` (128, 64 or 32; 0 is none), or
/// none for another width.
std::optional<Swizzle> swizzleOfBytes(int64_t bytes);

/// A matrix operand in shared memory, as a descriptor describes it. All
/// byte quantities are encoded >> 4 in 14 bits, so they must be multiples
/// of 16 below 2^18.
struct SharedMatrix {
  /// Byte address in the shared window.
  uint64_t startAddress = 0;
  /// Leading-dimension byte offset: between core-matrix columns along the
  /// leading dimension (for K-major swizzled operands the ISA ignores it;
  /// 16 by convention).
  uint64_t leadingByteOffset = 0;
  /// Stride-dimension byte offset: between groups of 8 rows.
  uint64_t strideByteOffset = 0;
  /// The swizzle pattern's phase (3 bits) when the matrix does not start on
  /// a pattern boundary.
  uint64_t baseOffset = 0;
  /// tcgen05 only: the leading field holds an absolute address rather than
  /// an offset.
  bool leadingIsAbsolute = false;
  Swizzle swizzle = Swizzle::None;
};

/// wgmma's descriptor: start >> 4 in bits 0-13, leading offset >> 4 in
/// 16-29, stride offset >> 4 in 32-45, base offset in 49-51, swizzle in
/// 62-63 (0 none, 1 128B, 2 64B, 3 32B).
llvm::Expected<uint64_t> encodeWgmmaDescriptor(const SharedMatrix &matrix);

/// tcgen05's descriptor: as wgmma's in bits 0-45, then the fixed version
/// 0b001 in bits 46-48, base offset in 49-51, leading mode in 52, swizzle
/// in 61-63 (0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B).
llvm::Expected<uint64_t> encodeTcgen05Descriptor(const SharedMatrix &matrix);

/// Element types of tcgen05.mma .kind::f16.
enum class Tcgen05Input { F16 = 0, BF16 = 1 };
enum class Tcgen05Accumulator { F16 = 0, F32 = 1 };

/// One dense tcgen05.mma .kind::f16 .cta_group::1 (D[M x N] += A[M x K] .
/// B[K x N], K = 16 per instruction).
struct Tcgen05F16Mma {
  int64_t m = 128, n = 128;
  Tcgen05Input a = Tcgen05Input::F16, b = Tcgen05Input::F16;
  Tcgen05Accumulator d = Tcgen05Accumulator::F32;
  bool negateA = false, negateB = false;
  /// false: K-major (each row of A, each column of B, contiguous along K);
  /// true: M-major A or N-major B. An A in tensor memory must be K-major.
  bool transposeA = false, transposeB = false;
};

/// The instruction descriptor: D type in bits 4-5, A and B types in 7-9 and
/// 10-12, negations in 13-14, transposes in 15-16, N >> 3 in 17-22,
/// M >> 4 in 24-28; dense (bits 0-2 zero), no saturation (bit 3), no
/// weight-stationary shift (bits 30-31). M is 64 or 128; N a multiple of 8
/// (M = 64) or 16 (M = 128) in [8 or 16, 256]; A and B of one type.
llvm::Expected<uint32_t> encodeTcgen05F16Mma(const Tcgen05F16Mma &mma);

/// Tensor memory: 128 lanes x 512 columns of 32 bits per SM. An address is
/// the lane in bits 16-31 and the column in bits 0-15.
constexpr int64_t kTmemLanes = 128;
constexpr int64_t kTmemColumns = 512;
llvm::Expected<uint32_t> encodeTmemAddress(int64_t lane, int64_t column);

/// tcgen05.alloc takes a power of two of columns in [32, 512].
llvm::Error checkTmemAllocColumns(int64_t columns);

} // namespace tiled_attn::encoding

#endif // TILED_ATTN_TARGET_ENCODINGS_H
