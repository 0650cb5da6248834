//===- Encodings.cpp - Bit layouts of Hopper and Blackwell operands -------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Target/Encodings.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

using namespace tiled_attn;
using namespace tiled_attn::encoding;

namespace {

llvm::Error fieldError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A byte quantity encoded >> 4 in 14 bits: a multiple of 16 below 2^18.
llvm::Expected<uint64_t> encode16ByteUnits(uint64_t bytes, const char *field) {
  if (bytes % 16 != 0)
    return fieldError(llvm::Twine(field) +
                      " must be a multiple of 16 bytes, "
                      "got " +
                      llvm::Twine(bytes));
  if (bytes >= (uint64_t{1} << 18))
    return fieldError(llvm::Twine(field) +
                      " must be below 2^18 bytes (14 bits of 16-byte "
                      "units), got " +
                      llvm::Twine(bytes));
  return bytes >> 4;
}

/// Bits 0-45 and 49-51, which wgmma and tcgen05 share.
llvm::Expected<uint64_t> commonDescriptorBits(const SharedMatrix &matrix) {
  llvm::Expected<uint64_t> start =
      encode16ByteUnits(matrix.startAddress, "start address");
  if (!start)
    return start.takeError();
  llvm::Expected<uint64_t> leading =
      encode16ByteUnits(matrix.leadingByteOffset, "leading byte offset");
  if (!leading)
    return leading.takeError();
  llvm::Expected<uint64_t> stride =
      encode16ByteUnits(matrix.strideByteOffset, "stride byte offset");
  if (!stride)
    return stride.takeError();
  if (matrix.baseOffset > 7)
    return fieldError("base offset must be in [0, 7], got " +
                      llvm::Twine(matrix.baseOffset));
  return *start | (*leading << 16) | (*stride << 32) |
         (matrix.baseOffset << 49);
}

} // namespace

std::optional<Swizzle> tiled_attn::encoding::swizzleOfBytes(int64_t bytes) {
  switch (bytes) {
  case 0:
    return Swizzle::None;
  case 32:
    return Swizzle::Bytes32;
  case 64:
    return Swizzle::Bytes64;
  case 128:
    return Swizzle::Bytes128;
  default:
    return std::nullopt;
  }
}

llvm::Expected<uint64_t>
encoding::encodeWgmmaDescriptor(const SharedMatrix &matrix) {
  uint64_t mode = 0;
  switch (matrix.swizzle) {
  case Swizzle::None:
    mode = 0;
    break;
  case Swizzle::Bytes128:
    mode = 1;
    break;
  case Swizzle::Bytes64:
    mode = 2;
    break;
  case Swizzle::Bytes32:
    mode = 3;
    break;
  case Swizzle::Bytes128Atom32:
    return fieldError("wgmma has no 128-byte swizzle with 32-byte atoms "
                      "(tcgen05 only)");
  }
  if (matrix.leadingIsAbsolute)
    return fieldError("wgmma's leading field is always an offset (an "
                      "absolute leading address is tcgen05 only)");
  llvm::Expected<uint64_t> bits = commonDescriptorBits(matrix);
  if (!bits)
    return bits.takeError();
  return *bits | (mode << 62);
}

llvm::Expected<uint64_t>
encoding::encodeTcgen05Descriptor(const SharedMatrix &matrix) {
  uint64_t mode = 0;
  switch (matrix.swizzle) {
  case Swizzle::None:
    mode = 0;
    break;
  case Swizzle::Bytes128Atom32:
    mode = 1;
    break;
  case Swizzle::Bytes128:
    mode = 2;
    break;
  case Swizzle::Bytes64:
    mode = 4;
    break;
  case Swizzle::Bytes32:
    mode = 6;
    break;
  }
  llvm::Expected<uint64_t> bits = commonDescriptorBits(matrix);
  if (!bits)
    return bits.takeError();
  constexpr uint64_t kVersion = 0b001; // bits 46-48
  return *bits | (kVersion << 46) | (uint64_t{matrix.leadingIsAbsolute} << 52) |
         (mode << 61);
}

llvm::Expected<uint32_t>
encoding::encodeTcgen05F16Mma(const Tcgen05F16Mma &mma) {
  if (mma.m != 64 && mma.m != 128)
    return fieldError("tcgen05.mma .cta_group::1 takes M = 64 or 128, got " +
                      llvm::Twine(mma.m));
  int64_t nStep = mma.m == 64 ? 8 : 16;
  if (mma.n < nStep || mma.n > 256 || mma.n % nStep != 0)
    return fieldError("tcgen05.mma with M = " + llvm::Twine(mma.m) +
                      " takes N a multiple of " + llvm::Twine(nStep) + " in [" +
                      llvm::Twine(nStep) + ", 256], got " + llvm::Twine(mma.n));
  if (mma.a != mma.b)
    return fieldError("tcgen05.mma .kind::f16 takes A and B of one type");
  uint32_t bits = 0;
  bits |= uint32_t(mma.d) << 4;
  bits |= uint32_t(mma.a) << 7;
  bits |= uint32_t(mma.b) << 10;
  bits |= uint32_t(mma.negateA) << 13;
  bits |= uint32_t(mma.negateB) << 14;
  bits |= uint32_t(mma.transposeA) << 15;
  bits |= uint32_t(mma.transposeB) << 16;
  bits |= uint32_t(mma.n >> 3) << 17;
  bits |= uint32_t(mma.m >> 4) << 24;
  return bits;
}

llvm::Expected<uint32_t> encoding::encodeTmemAddress(int64_t lane,
                                                     int64_t column) {
  if (lane < 0 || lane >= kTmemLanes)
    return fieldError("tensor-memory lane must be in [0, 127], got " +
                      llvm::Twine(lane));
  if (column < 0 || column >= kTmemColumns)
    return fieldError("tensor-memory column must be in [0, 511], got " +
                      llvm::Twine(column));
  return (uint32_t(lane) << 16) | uint32_t(column);
}

llvm::Error encoding::checkTmemAllocColumns(int64_t columns) {
  if (columns < 32 || columns > kTmemColumns || !llvm::isPowerOf2_64(columns))
    return fieldError("tcgen05.alloc takes a power of two of columns in "
                      "[32, 512], got " +
                      llvm::Twine(columns));
  return llvm::Error::success();
}
