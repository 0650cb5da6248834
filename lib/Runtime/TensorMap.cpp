//===- TensorMap.cpp - TMA descriptors of kernel parameters ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A kernel that loads a tensor with the Tensor Memory Accelerator takes a
// CUtensorMap by value (a __grid_constant__ parameter). The map describes
// the whole [B, H, S, D] view to the hardware, innermost dimension first:
//
//   globalDim     = {D, S, H, B}
//   globalStrides = {stride_S, stride_H, stride_B} * itemsize   (bytes)
//   boxDim        = {cols, rows, 1, 1}
//
// so that one copy brings a rows x cols tile of one (batch, head) slice.
// The driver wants the address 16-byte aligned and each byte stride a
// multiple of 16 below 2^40. A dimension of size 1 is only indexed at 0, so
// its stride is free: it is replaced by the contiguous one (rounded up to
// 16 bytes), which lets through the arbitrary strides frameworks give such
// dimensions.
//
// A captured view read by blocks (a bias or mask tensor [B|1, H|1, S_q,
// S_k], a score or mask function's input) gets the same map over its own
// element type. Such a view is often broadcast by stride 0 (a mask shared
// by the heads, or a padding row shared by the queries); the driver takes
// a zero byte stride (tried on an H100 with CUDA 13's driver, 2026-12-06),
// and the copies then read the same memory at every index of that
// dimension, as the view means.
//
//===----------------------------------------------------------------------===//

#include "TensorMap.h"

#include <cstdio>

using namespace tiled_attn::runtime;

namespace {

constexpr uint64_t kMaxStrideBytes = uint64_t(1) << 40;
constexpr uint64_t kMaxGlobalDim = uint64_t(1) << 32;

CUtensorMapSwizzle swizzleMode(uint16_t bytes) {
  switch (bytes) {
  case 32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  default:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

/// What a tensor map describes: a rank-4 view's address, sizes and
/// strides (in elements, outermost first) and its element type.
struct MapSource {
  const char *name;
  uint64_t data;
  const int64_t *sizes, *strides;
  CUtensorMapDataType type;
  uint64_t itemSize;
};

/// The byte strides of dims S, H, B (TMA dims 1, 2, 3).
Status byteStrides(const KernelEntry &kernel, const MapSource &t,
                   const cuuint64_t dims[4], cuuint64_t strides[3]) {
  const char *name = t.name;
  const uint64_t itemSize = t.itemSize;
  cuuint64_t contiguous = dims[0] * itemSize;
  for (int i = 0; i < 3; ++i) {
    int dim = 2 - i; // S, H, B in ta_tensor order.
    int64_t stride = t.strides[dim];
    if (t.sizes[dim] <= 1) {
      strides[i] = (contiguous + 15) / 16 * 16;
    } else if (stride < 0 ||
               static_cast<uint64_t>(stride) >= kMaxStrideBytes / itemSize) {
      return invalidArgument(name, "'s stride along dimension ", dim, " (",
                             stride, " elements) must be positive and below ",
                             "2^40 bytes for the TMA descriptor of kernel ",
                             kernel.name);
    } else if ((static_cast<uint64_t>(stride) * itemSize) % 16) {
      return invalidArgument(
          name, "'s stride along dimension ", dim, " (", stride, " elements, ",
          stride * itemSize, " bytes) is not a multiple of 16 bytes, which ",
          "the TMA descriptor of kernel ", kernel.name, " needs");
    } else {
      strides[i] = static_cast<uint64_t>(stride) * itemSize;
    }
    if (strides[i] >= kMaxStrideBytes)
      return invalidArgument(name, " is too large for the TMA descriptor of ",
                             "kernel ", kernel.name);
    // Saturates: a later dimension of size 1 then reports the tensor as
    // too large.
    if (__builtin_mul_overflow(strides[i], dims[i + 1], &contiguous))
      contiguous = kMaxStrideBytes;
  }
  return Status();
}

} // namespace

namespace {

Status encode(const Driver *driver, const KernelEntry &kernel,
              const Param &param, const MapSource &t, unsigned char *out) {
  const char *name = t.name;
  if (!driver || !driver->api().tensorMapEncodeTiled)
    return driverError(
        "kernel ", kernel.name, " takes a TMA descriptor of ", name,
        ", which needs cuTensorMapEncodeTiled (CUDA 12.0 or later); the ",
        "CUDA driver", driver ? " " + driver->path() : std::string(),
        driver ? " lacks it" : " is not loaded");
  if (t.data % 16) {
    char pointer[24];
    std::snprintf(pointer, sizeof(pointer), "%#llx",
                  static_cast<unsigned long long>(t.data));
    return invalidArgument(name, "'s data pointer ", pointer,
                           " is not 16-byte aligned, which the TMA ",
                           "descriptor of kernel ", kernel.name, " needs");
  }
  cuuint64_t dims[4];
  for (int i = 0; i < 4; ++i) {
    int64_t size = t.sizes[3 - i];
    if (size < 1 || static_cast<uint64_t>(size) > kMaxGlobalDim)
      return invalidArgument(name, "'s size along dimension ", 3 - i, " (",
                             size, ") must be from 1 to 2^32 for the TMA ",
                             "descriptor of kernel ", kernel.name);
    dims[i] = static_cast<cuuint64_t>(size);
  }
  cuuint64_t strides[3];
  TA_RETURN_IF_ERROR(byteStrides(kernel, t, dims, strides));
  cuuint32_t box[4] = {param.boxCols, param.boxRows, 1, 1};
  cuuint32_t elementStrides[4] = {1, 1, 1, 1};
  CUresult result = driver->api().tensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap *>(out), t.type, 4,
      reinterpret_cast<void *>(static_cast<uintptr_t>(t.data)), dims, strides,
      box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzleMode(param.swizzle), CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (__builtin_expect(result == CUDA_SUCCESS, 1))
    return Status();
  return driver->failure(
      result,
      concat("cuTensorMapEncodeTiled(", name, " of kernel ", kernel.name, ")"),
      concat("dims {", dims[0], ", ", dims[1], ", ", dims[2], ", ", dims[3],
             "}, byte strides {", strides[0], ", ", strides[1], ", ",
             strides[2], "}, box {", box[0], ", ", box[1], ", 1, 1}, swizzle ",
             param.swizzle));
}

} // namespace

Status tiled_attn::runtime::encodeTensorMap(const Driver *driver,
                                            const KernelEntry &kernel,
                                            const Param &param,
                                            const ta_tensor &t, ta_dtype dtype,
                                            unsigned char *out) {
  // A view of the call's dtype, or a float32 one of the workspace (the
  // backward's dq_accum; no int32 view is read by TMA).
  const bool f32 = kTensorBytes[param.tensor] == 4;
  MapSource source{kTensorNames[param.tensor],
                   t.data,
                   t.sizes,
                   t.strides,
                   f32                      ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                   : dtype == TA_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                            : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                   f32 ? 4u : itemSize(dtype)};
  return encode(driver, kernel, param, source, out);
}

Status tiled_attn::runtime::encodeCaptureTensorMap(const Driver *driver,
                                                   const KernelEntry &kernel,
                                                   const Param &param,
                                                   const ta_capture &c,
                                                   unsigned char *out) {
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  switch (c.type) {
  case TA_CAPTURE_I8:
    type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    break;
  case TA_CAPTURE_I32:
    type = CU_TENSOR_MAP_DATA_TYPE_INT32;
    break;
  case TA_CAPTURE_F16:
    type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    break;
  case TA_CAPTURE_BF16:
    type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    break;
  case TA_CAPTURE_F32:
    break;
  }
  // (The manifest reader takes tensor maps of rank-4 captures only, and
  // findCapture has checked the caller's rank against it.)
  MapSource source{c.name, c.data, c.sizes, c.strides, type, itemSize(c.type)};
  return encode(driver, kernel, param, source, out);
}
