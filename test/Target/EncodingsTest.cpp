//===- EncodingsTest.cpp - Descriptors against the PTX ISA ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every expected value below is worked out by hand from the PTX ISA's
// tables (PTX ISA 8.7/9.0: "Matrix Descriptor Format" for wgmma, "Shared
// Memory Descriptor" and "Instruction descriptor format for .kind::f16"
// for tcgen05, "Tensor Memory Addressing"), field by field, in the comment
// above it; none is copied from the encoder's output.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Target/Encodings.h"

#include <gtest/gtest.h>

#include <string>

using namespace tiled_attn::encoding;

namespace {

template <typename T> T ok(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T{};
  }
  return *value;
}

template <typename T> std::string error(llvm::Expected<T> value) {
  if (value)
    return "no error";
  return llvm::toString(value.takeError());
}

std::string error(llvm::Error err) {
  if (!err)
    return "no error";
  return llvm::toString(std::move(err));
}

/// A K-major operand in 128-byte swizzled panels, as TMA writes it and as
/// the Hopper kernels read Q and K: rows of 64 f16 (128 bytes), 8-row
/// groups 1024 bytes apart; the ISA ignores the leading offset of a
/// swizzled K-major operand and 16 is the convention.
SharedMatrix kMajorSwizzled128(uint64_t start) {
  SharedMatrix m;
  m.startAddress = start;
  m.leadingByteOffset = 16;
  m.strideByteOffset = 1024;
  m.swizzle = Swizzle::Bytes128;
  return m;
}

//===----------------------------------------------------------------------===//
// wgmma (sm_90a)
//===----------------------------------------------------------------------===//

// A shared tile's panel width (#tilegpu.shared<swizzle = N>) names the
// descriptors' swizzle mode.
TEST(Swizzle, OfPanelBytes) {
  EXPECT_EQ(swizzleOfBytes(0), Swizzle::None);
  EXPECT_EQ(swizzleOfBytes(32), Swizzle::Bytes32);
  EXPECT_EQ(swizzleOfBytes(64), Swizzle::Bytes64);
  EXPECT_EQ(swizzleOfBytes(128), Swizzle::Bytes128);
  for (int64_t bytes : {-128, 16, 96, 256})
    EXPECT_EQ(swizzleOfBytes(bytes), std::nullopt) << bytes;
}

TEST(WgmmaDescriptor, KMajorSwizzled128) {
  // start 0x400 >> 4 = 0x40            -> bits 0-13:  0x0000000000000040
  // leading 16 >> 4 = 1                -> bit 16:     0x0000000000010000
  // stride 1024 >> 4 = 64 = 0x40       -> bits 32-45: 0x0000004000000000
  // swizzle 128B = 1 in bits 62-63     -> bit 62:     0x4000000000000000
  EXPECT_EQ(ok(encodeWgmmaDescriptor(kMajorSwizzled128(0x400))),
            0x4000004000010040ull);
}

TEST(WgmmaDescriptor, ConstantBitsOfTheLibrarysOperands) {
  // The lowering adds the start address at run time to the bits of a
  // descriptor at address 0. K-major: 0x4000004000010000.
  EXPECT_EQ(ok(encodeWgmmaDescriptor(kMajorSwizzled128(0))),
            0x4000004000010000ull);
  // V read N-major (transposed) from 64-column panels of 128 rows:
  // leading 128 x 128 = 16384 bytes >> 4 = 1024 = 0x400 -> bits 16-29:
  // 0x0000000004000000; stride 1024 as above; swizzle 128B.
  SharedMatrix v = kMajorSwizzled128(0);
  v.leadingByteOffset = 16384;
  EXPECT_EQ(ok(encodeWgmmaDescriptor(v)), 0x4000004004000000ull);
}

TEST(WgmmaDescriptor, OtherSwizzlesAndBaseOffset) {
  // No swizzle, start 0x23450 >> 4 = 0x2345, leading 128 >> 4 = 8 (bit 19:
  // 0x80000), stride 256 >> 4 = 16 (bit 36: 0x1000000000), base offset 5
  // in bits 49-51 (5 << 49 = 0x000A000000000000), mode 0.
  SharedMatrix m;
  m.startAddress = 0x23450;
  m.leadingByteOffset = 128;
  m.strideByteOffset = 256;
  m.baseOffset = 5;
  EXPECT_EQ(ok(encodeWgmmaDescriptor(m)), 0x000A001000082345ull);
  // 64B = 2 and 32B = 3 in bits 62-63.
  m.baseOffset = 0;
  m.swizzle = Swizzle::Bytes64;
  EXPECT_EQ(ok(encodeWgmmaDescriptor(m)), 0x8000001000082345ull);
  m.swizzle = Swizzle::Bytes32;
  EXPECT_EQ(ok(encodeWgmmaDescriptor(m)), 0xC000001000082345ull);
}

TEST(WgmmaDescriptor, Errors) {
  EXPECT_EQ(error(encodeWgmmaDescriptor(kMajorSwizzled128(0x408))),
            "start address must be a multiple of 16 bytes, got 1032");
  // 14 bits of 16-byte units: 2^18 bytes is one past the last.
  EXPECT_EQ(error(encodeWgmmaDescriptor(kMajorSwizzled128(1u << 18))),
            "start address must be below 2^18 bytes (14 bits of 16-byte "
            "units), got 262144");
  EXPECT_EQ(ok(encodeWgmmaDescriptor(kMajorSwizzled128((1u << 18) - 16))),
            0x4000004000013FFFull);
  SharedMatrix m = kMajorSwizzled128(0);
  m.strideByteOffset = 1 << 18;
  EXPECT_EQ(error(encodeWgmmaDescriptor(m)),
            "stride byte offset must be below 2^18 bytes (14 bits of "
            "16-byte units), got 262144");
  m = kMajorSwizzled128(0);
  m.leadingByteOffset = 8;
  EXPECT_EQ(error(encodeWgmmaDescriptor(m)),
            "leading byte offset must be a multiple of 16 bytes, got 8");
  m = kMajorSwizzled128(0);
  m.baseOffset = 8;
  EXPECT_EQ(error(encodeWgmmaDescriptor(m)),
            "base offset must be in [0, 7], got 8");
  m = kMajorSwizzled128(0);
  m.swizzle = Swizzle::Bytes128Atom32;
  EXPECT_EQ(error(encodeWgmmaDescriptor(m)),
            "wgmma has no 128-byte swizzle with 32-byte atoms (tcgen05 "
            "only)");
  m = kMajorSwizzled128(0);
  m.leadingIsAbsolute = true;
  EXPECT_EQ(error(encodeWgmmaDescriptor(m)),
            "wgmma's leading field is always an offset (an absolute leading "
            "address is tcgen05 only)");
}

//===----------------------------------------------------------------------===//
// tcgen05 shared-memory descriptor (sm_100a)
//===----------------------------------------------------------------------===//

TEST(Tcgen05Descriptor, KMajorSwizzled128) {
  // Bits 0-45 as wgmma's:                0x0000004000010040
  // version 0b001 in bits 46-48 -> bit 46: 0x0000400000000000
  // swizzle 128B = 2 in bits 61-63 -> bit 62: 0x4000000000000000
  // (the same bit as wgmma's 1 in bits 62-63).
  EXPECT_EQ(ok(encodeTcgen05Descriptor(kMajorSwizzled128(0x400))),
            0x4000404000010040ull);
}

TEST(Tcgen05Descriptor, EverySwizzleMode) {
  // start 0x23450, leading 128, stride 256 as in the wgmma case, version bit
  // 46: 0x0000401000082345; mode << 61 on top.
  SharedMatrix m;
  m.startAddress = 0x23450;
  m.leadingByteOffset = 128;
  m.strideByteOffset = 256;
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0x0000401000082345ull);
  m.swizzle = Swizzle::Bytes128Atom32; // 1 << 61 = 0x2000000000000000
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0x2000401000082345ull);
  m.swizzle = Swizzle::Bytes128; // 2 << 61 = 0x4000000000000000
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0x4000401000082345ull);
  m.swizzle = Swizzle::Bytes64; // 4 << 61 = 0x8000000000000000
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0x8000401000082345ull);
  m.swizzle = Swizzle::Bytes32; // 6 << 61 = 0xC000000000000000
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0xC000401000082345ull);
}

TEST(Tcgen05Descriptor, BaseOffsetAndAbsoluteLeadingMode) {
  // base offset 3 in bits 49-51: 3 << 49 = 0x0006000000000000; leading
  // mode 1 in bit 52: 0x0010000000000000.
  SharedMatrix m = kMajorSwizzled128(0x400);
  m.baseOffset = 3;
  m.leadingIsAbsolute = true;
  EXPECT_EQ(ok(encodeTcgen05Descriptor(m)), 0x4016404000010040ull);
}

TEST(Tcgen05Descriptor, Errors) {
  EXPECT_EQ(error(encodeTcgen05Descriptor(kMajorSwizzled128(0x3))),
            "start address must be a multiple of 16 bytes, got 3");
  SharedMatrix m = kMajorSwizzled128(0);
  m.leadingByteOffset = 1 << 20;
  EXPECT_EQ(error(encodeTcgen05Descriptor(m)),
            "leading byte offset must be below 2^18 bytes (14 bits of "
            "16-byte units), got 1048576");
}

//===----------------------------------------------------------------------===//
// tcgen05.mma .kind::f16 instruction descriptor
//===----------------------------------------------------------------------===//

TEST(Tcgen05F16Mma, M128N128F16ToF32KMajor) {
  // D f32 = 1 in bits 4-5        -> 0x00000010
  // A, B f16 = 0 in 7-9, 10-12   -> 0
  // N 128 >> 3 = 16 in 17-22     -> 16 << 17 = 0x00200000
  // M 128 >> 4 = 8 in 24-28      -> 8 << 24 = 0x08000000
  // (FlashAttention-4's S = Q.K^T at D=128 with 128-key blocks.)
  EXPECT_EQ(ok(encodeTcgen05F16Mma({})), 0x08200010u);
}

TEST(Tcgen05F16Mma, Bf16AndWideN) {
  // D f32 0x10; A bf16 = 1 << 7 = 0x80; B bf16 = 1 << 10 = 0x400;
  // N 256 >> 3 = 32 -> 32 << 17 = 0x00400000; M 128 -> 0x08000000.
  Tcgen05F16Mma mma;
  mma.n = 256;
  mma.a = mma.b = Tcgen05Input::BF16;
  EXPECT_EQ(ok(encodeTcgen05F16Mma(mma)), 0x08400490u);
}

TEST(Tcgen05F16Mma, PTimesVWithVNMajor) {
  // O += P.V at D=128: A (P) from tensor memory, K-major; B (V) read
  // N-major: transpose B = bit 16 = 0x00010000 on top of 0x08200010.
  Tcgen05F16Mma mma;
  mma.transposeB = true;
  EXPECT_EQ(ok(encodeTcgen05F16Mma(mma)), 0x08210010u);
}

TEST(Tcgen05F16Mma, SmallestShapeNegateAndF16Accumulator) {
  // M 64 >> 4 = 4 -> 0x04000000; N 8 >> 3 = 1 -> 0x00020000; D f16 = 0;
  // negate A bit 13 = 0x2000, negate B bit 14 = 0x4000, transpose A bit
  // 15 = 0x8000.
  Tcgen05F16Mma mma;
  mma.m = 64;
  mma.n = 8;
  mma.d = Tcgen05Accumulator::F16;
  mma.negateA = mma.negateB = mma.transposeA = true;
  EXPECT_EQ(ok(encodeTcgen05F16Mma(mma)), 0x0402E000u);
}

TEST(Tcgen05F16Mma, ShapeErrors) {
  Tcgen05F16Mma mma;
  mma.m = 256;
  EXPECT_EQ(error(encodeTcgen05F16Mma(mma)),
            "tcgen05.mma .cta_group::1 takes M = 64 or 128, got 256");
  mma.m = 128;
  mma.n = 8; // N steps by 16 at M = 128
  EXPECT_EQ(error(encodeTcgen05F16Mma(mma)),
            "tcgen05.mma with M = 128 takes N a multiple of 16 in [16, 256], "
            "got 8");
  mma.n = 272;
  EXPECT_EQ(error(encodeTcgen05F16Mma(mma)),
            "tcgen05.mma with M = 128 takes N a multiple of 16 in [16, 256], "
            "got 272");
  mma.m = 64;
  mma.n = 12;
  EXPECT_EQ(error(encodeTcgen05F16Mma(mma)),
            "tcgen05.mma with M = 64 takes N a multiple of 8 in [8, 256], "
            "got 12");
  // FlashAttention-3's 176-key block: N 176 >> 3 = 22 -> 22 << 17 =
  // 0x002C0000; M 64 -> 0x04000000; D f32 0x10.
  mma.n = 176;
  EXPECT_EQ(ok(encodeTcgen05F16Mma(mma)), 0x042C0010u);
  mma.a = Tcgen05Input::BF16;
  EXPECT_EQ(error(encodeTcgen05F16Mma(mma)),
            "tcgen05.mma .kind::f16 takes A and B of one type");
}

//===----------------------------------------------------------------------===//
// Tensor memory
//===----------------------------------------------------------------------===//

TEST(TensorMemory, Addresses) {
  // Lane in bits 16-31, column in bits 0-15.
  EXPECT_EQ(ok(encodeTmemAddress(0, 0)), 0x00000000u);
  // FlashAttention-4 at D=128: O1 at column 384 (S0, S1, O0 before it), in
  // warp 1's lane quadrant (lane 32): (32 << 16) | 384 = 0x00200180.
  EXPECT_EQ(ok(encodeTmemAddress(32, 384)), 0x00200180u);
  EXPECT_EQ(ok(encodeTmemAddress(127, 511)), 0x007F01FFu);
  EXPECT_EQ(error(encodeTmemAddress(128, 0)),
            "tensor-memory lane must be in [0, 127], got 128");
  EXPECT_EQ(error(encodeTmemAddress(0, 512)),
            "tensor-memory column must be in [0, 511], got 512");
  EXPECT_EQ(error(encodeTmemAddress(-1, 0)),
            "tensor-memory lane must be in [0, 127], got -1");
}

TEST(TensorMemory, AllocationColumns) {
  for (int64_t columns : {32, 64, 128, 256, 512})
    EXPECT_EQ(error(checkTmemAllocColumns(columns)), "no error") << columns;
  for (int64_t columns : {0, 16, 48, 96, 1024})
    EXPECT_EQ(error(checkTmemAllocColumns(columns)),
              "tcgen05.alloc takes a power of two of columns in [32, 512], "
              "got " +
                  std::to_string(columns));
}

} // namespace
