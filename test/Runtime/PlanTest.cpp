//===- PlanTest.cpp - Kernel selection and parameter packing --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_plan: which kernel runs on which device (the arch rules, the
// 32-bit-index preference, names), the grid, and the parameters packed as
// the manifest lists them, TMA descriptors included (built by the fake
// driver).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tatest;
using testing::HasSubstr;

namespace {

Json entry(const std::string &name, const std::string &arch,
           int indexBits = 64) {
  Json e = kernelEntry(name);
  e["arch"] = arch;
  e["index_bits"] = indexBits;
  return e;
}

/// A library of `entries`, and plans on it.
class Plan : public testing::Test {
protected:
  void open(const std::vector<Json> &entries) {
    writeLibrary(dir, manifestOf(entries));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }

  /// The name of the kernel planned for capability cc, or the error.
  std::string chosen(int major, int minor) {
    ta_status status = ta_sdpa_plan(library.get(), &args, major, minor, &plan);
    if (status != TA_OK)
      return "error " + std::to_string(status) + ": " + lastError();
    ta_kernel_info info;
    EXPECT_EQ(ta_library_kernel(library.get(), plan.kernel, &info), TA_OK);
    return info.name;
  }

  TempDir dir;
  Library library;
  ta_sdpa_args args = problem(2, 3, 77, 131, 64);
  ta_launch_plan plan;
};

} // namespace

TEST_F(Plan, HighestArchNotAboveTheDevice) {
  open({entry("a80", "sm_80"), entry("a90", "sm_90"), entry("a86", "sm_86"),
        entry("a120", "sm_120")});
  EXPECT_EQ(chosen(8, 0), "a80");
  EXPECT_EQ(chosen(8, 6), "a86");
  EXPECT_EQ(chosen(8, 9), "a86");
  EXPECT_EQ(chosen(9, 0), "a90");
  EXPECT_EQ(chosen(10, 0), "a90");
  EXPECT_EQ(chosen(12, 1), "a120");
  EXPECT_THAT(chosen(7, 5), HasSubstr("error 2: no kernel in the library for "
                                      "sm_75, f16, D=64, causal=none"));
}

TEST_F(Plan, ArchSpecificAndFamilyCode) {
  open({entry("plain90", "sm_90"), entry("a90", "sm_90a"),
        entry("f100", "sm_100f"), entry("a100", "sm_100a")});
  // "a" code runs on its own capability only, and wins there.
  EXPECT_EQ(chosen(9, 0), "a90");
  EXPECT_EQ(chosen(10, 0), "a100");
  // "f" code runs on the same major, equal or later minor.
  EXPECT_EQ(chosen(10, 3), "f100");
  EXPECT_EQ(chosen(12, 0), "plain90");
}

TEST_F(Plan, Index32WinsUnlessAnOffsetReaches2To31) {
  open({entry("wide", "sm_80", 64), entry("narrow", "sm_80", 32),
        entry("wide90", "sm_90", 64)});
  EXPECT_EQ(chosen(8, 0), "narrow");
  // A higher arch beats the index width.
  EXPECT_EQ(chosen(9, 0), "wide90");
  // q's largest element offset: (2-1)*2^31 + ... >= 2^31.
  args.q.strides[0] = int64_t(1) << 31;
  EXPECT_EQ(chosen(8, 0), "wide");
  args = problem(2, 3, 77, 131, 64);
  args.o.data = kFarAway; // Its batch entries 4 GiB below, clear of v.
  args.o.strides[0] = -(int64_t(1) << 31); // |stride| counts
  EXPECT_EQ(chosen(8, 0), "wide");
  // Just below the limit stays narrow.
  args = problem(2, 3, 77, 131, 64);
  args.v.strides[0] = (int64_t(1) << 31) - 1 - 2 * 131 * 64 - 130 * 64 - 63;
  EXPECT_EQ(chosen(8, 0), "narrow");
}

TEST_F(Plan, OnlyNarrowKernelsAndLargeOffsets) {
  open({entry("narrow", "sm_80", 32)});
  args.k.strides[1] = int64_t(1) << 31;
  args.o.data = kFarAway; // Clear of k's 16 GiB.
  EXPECT_EQ(chosen(8, 0),
            "error 2: no kernel in the library for sm_80, f16, D=64, "
            "causal=none, 64-bit indices (an element offset reaches 2**31) "
            "(library " +
                dir.path() +
                ": available: narrow (sm_80, f16, D=64, "
                "causal=none))");
}

TEST_F(Plan, TiesGoToManifestOrder) {
  open({entry("first", "sm_80"), entry("second", "sm_80")});
  EXPECT_EQ(chosen(9, 0), "first");
}

TEST_F(Plan, DtypeMaskAndName) {
  Json bf16 = entry("bf16", "sm_80");
  bf16["dtype"] = "bf16";
  Json causal = entry("causal", "sm_80");
  causal["causal"] = "top_left";
  Json br = entry("br", "sm_80");
  br["causal"] = "bottom_right";
  open({entry("plain", "sm_80"), entry("plain90", "sm_90"), bf16, causal, br});
  args.dtype = TA_DTYPE_BF16;
  EXPECT_EQ(chosen(9, 0), "bf16");
  args.dtype = TA_DTYPE_F16;
  args.mask = TA_MASK_CAUSAL_TOP_LEFT;
  EXPECT_EQ(chosen(9, 0), "causal");
  args.mask = TA_MASK_CAUSAL_BOTTOM_RIGHT;
  EXPECT_EQ(chosen(9, 0), "br");
  args.mask = TA_MASK_NONE;
  args.kernel = "plain";
  EXPECT_EQ(chosen(9, 0), "plain");
  args.kernel = "plain90";
  EXPECT_THAT(chosen(8, 0),
              HasSubstr("no kernel in the library for sm_80, f16, D=64, "
                        "causal=none, name=plain90 (library "));
  args.kernel = "causal"; // A kernel of another mask.
  EXPECT_THAT(chosen(9, 0), HasSubstr("name=causal"));
  args.kernel = "nosuch";
  EXPECT_THAT(chosen(9, 0),
              HasSubstr("available: plain (sm_80, f16, D=64, causal=none); "
                        "plain90 (sm_90, f16, D=64, causal=none); bf16 "));
}

TEST_F(Plan, GridBlockAndSharedBytes) {
  Json e = entry("k", "sm_80");
  e["block"] = {128, 2, 1};
  e["block_m"] = 64;
  e["shared_bytes"] = 100000;
  open({e});
  ASSERT_EQ(chosen(8, 0), "k");
  EXPECT_EQ(plan.grid[0], 2u); // ceil(77 / 64)
  EXPECT_EQ(plan.grid[1], 3u);
  EXPECT_EQ(plan.grid[2], 2u);
  EXPECT_EQ(plan.block[0], 128u);
  EXPECT_EQ(plan.block[1], 2u);
  EXPECT_EQ(plan.block[2], 1u);
  EXPECT_EQ(plan.shared_bytes, 100000u);
  args = problem(1, 1, 64, 1, 64);
  ASSERT_EQ(chosen(8, 0), "k");
  EXPECT_EQ(plan.grid[0], 1u);
  args = problem(1, 1, 1, 1, 64);
  ASSERT_EQ(chosen(8, 0), "k");
  EXPECT_EQ(plan.grid[0], 1u);
}

TEST_F(Plan, StandardParamsI64) {
  open({entry("k", "sm_80")});
  ASSERT_EQ(chosen(8, 0), "k");
  ASSERT_EQ(plan.num_params, 37);
  const ta_tensor *tensors[4] = {&args.q, &args.k, &args.v, &args.o};
  uint32_t offset = 0;
  for (int t = 0; t < 4; ++t) {
    int base = t * 9;
    EXPECT_EQ(plan.param_offsets[base], offset);
    EXPECT_EQ(plan.param_sizes[base], 8u);
    EXPECT_EQ(paramAs<uint64_t>(plan, base), tensors[t]->data);
    offset += 8;
    for (int dim = 0; dim < 4; ++dim) {
      EXPECT_EQ(plan.param_offsets[base + 1 + dim], offset + 8 * dim);
      EXPECT_EQ(paramAs<int64_t>(plan, base + 1 + dim), tensors[t]->sizes[dim]);
      EXPECT_EQ(paramAs<int64_t>(plan, base + 5 + dim),
                tensors[t]->strides[dim]);
    }
    offset += 64;
  }
  EXPECT_EQ(plan.param_offsets[36], offset);
  EXPECT_EQ(plan.param_sizes[36], 4u);
  EXPECT_EQ(paramAs<float>(plan, 36), 0.125f);
}

TEST_F(Plan, MixedTypesAtNaturalAlignment) {
  Json e = entry("k", "sm_80");
  e["params"] = Json::array(
      {{{"name", "scale"}, {"kind", "scalar"}, {"type", "f32"}},
       {{"name", "v"}, {"kind", "base"}, {"type", "ptr"}},
       {{"name", "k"}, {"kind", "size"}, {"dim", 2}, {"type", "i32"}},
       {{"name", "o"}, {"kind", "stride"}, {"dim", 1}, {"type", "i64"}},
       {{"name", "q"}, {"kind", "stride"}, {"dim", 2}, {"type", "i32"}},
       {{"name", "q"}, {"kind", "size"}, {"dim", 0}, {"type", "i32"}}});
  open({e});
  ASSERT_EQ(chosen(8, 0), "k");
  ASSERT_EQ(plan.num_params, 6);
  const uint32_t offsets[] = {0, 8, 16, 24, 32, 36};
  const uint32_t sizes[] = {4, 8, 4, 8, 4, 4};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(plan.param_offsets[i], offsets[i]) << i;
    EXPECT_EQ(plan.param_sizes[i], sizes[i]) << i;
  }
  EXPECT_EQ(paramAs<float>(plan, 0), 0.125f);
  EXPECT_EQ(paramAs<uint64_t>(plan, 1), args.v.data);
  EXPECT_EQ(paramAs<int32_t>(plan, 2), 131);
  EXPECT_EQ(paramAs<int64_t>(plan, 3), 77 * 64);
  EXPECT_EQ(paramAs<int32_t>(plan, 4), 64);
  EXPECT_EQ(paramAs<int32_t>(plan, 5), 2);
  // The padding after the scale is zero.
  uint32_t padding;
  __builtin_memcpy(&padding, plan.param_data + 4, 4);
  EXPECT_EQ(padding, 0u);
}

TEST_F(Plan, I32Overflow) {
  Json e = entry("k", "sm_80", 64);
  e["params"] = standardParams("i32");
  open({e});
  // A stride that does not fit an i32 along a dimension longer than 1.
  args.q.strides[0] = int64_t(1) << 32;
  EXPECT_EQ(chosen(8, 0),
            "error 1: q's stride along dimension 0 is 4294967296, which does "
            "not fit the i32 parameter params[5] of kernel k");
  // Along a dimension of size 1 it is never used, and passed as 0.
  args = problem(1, 3, 77, 131, 64);
  args.q.strides[0] = int64_t(1) << 32;
  ASSERT_EQ(chosen(8, 0), "k");
  EXPECT_EQ(paramAs<int32_t>(plan, 5), 0);
  EXPECT_EQ(paramAs<int32_t>(plan, 6), 77 * 64);
  // Negative values that fit are kept.
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[1] = -131 * 64;
  ASSERT_EQ(chosen(8, 0), "k");
  EXPECT_EQ(paramAs<int32_t>(plan, 15), -131 * 64);
}

TEST_F(Plan, AlignBytesOfTheKernel) {
  Json e = entry("k", "sm_80");
  e["align_bytes"] = 128;
  open({e});
  args.k.data += 64;
  EXPECT_THAT(chosen(8, 0),
              HasSubstr("k cannot be passed to kernel k as it is: its data "
                        "pointer 0x200000040 is not 128-byte aligned"));
  args = problem(2, 3, 77, 131, 64);
  args.q.strides[2] = 96; // 192 bytes
  EXPECT_THAT(chosen(8, 0), HasSubstr("its stride along dimension 2 (96 "
                                      "elements) is not a multiple of 128 "
                                      "bytes"));
}

TEST_F(Plan, TensorMapParameter) {
  fakecuda::reset();
  Json e = entry("tma", "sm_90a");
  e["params"] =
      Json::array({{{"name", "scale"}, {"kind", "scalar"}, {"type", "f32"}},
                   {{"name", "k"},
                    {"kind", "tensor_map"},
                    {"type", "tensor_map"},
                    {"box", {128, 64}},
                    {"swizzle", 128}},
                   {{"name", "q"}, {"kind", "base"}, {"type", "ptr"}},
                   {{"name", "v"},
                    {"kind", "tensor_map"},
                    {"type", "tensor_map"},
                    {"box", {64, 32}},
                    {"swizzle", 0}}});
  e["dtype"] = "bf16";
  open({e});
  args.dtype = TA_DTYPE_BF16;
  ASSERT_EQ(chosen(9, 0), "tma");
  EXPECT_EQ(plan.param_offsets[1], 64u);
  EXPECT_EQ(plan.param_sizes[1], 128u);
  EXPECT_EQ(plan.param_offsets[2], 192u);
  EXPECT_EQ(plan.param_offsets[3], 256u);
  EXPECT_EQ(plan.param_sizes[3], 128u);
  EXPECT_EQ(fakecuda::tensorMapCalls(), 2);

  // The last descriptor, of v.
  fakecuda::TensorMapCall call = fakecuda::lastTensorMap();
  EXPECT_EQ(call.tensorMap, plan.param_data + 256);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(call.tensorMap) % 64, 0u);
  EXPECT_EQ(call.dataType, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(call.rank, 4u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(call.globalAddress), args.v.data);
  const uint64_t dims[4] = {64, 131, 3, 2};
  const uint64_t strides[3] = {64 * 2, 131 * 64 * 2, 3 * 131 * 64 * 2};
  const unsigned box[4] = {32, 64, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(call.globalDim[i], dims[i]) << i;
    EXPECT_EQ(call.boxDim[i], box[i]) << i;
    EXPECT_EQ(call.elementStrides[i], 1u) << i;
  }
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(call.globalStrides[i], strides[i]) << i;
  EXPECT_EQ(call.interleave, CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(call.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  EXPECT_EQ(call.l2Promotion, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(call.oobFill, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  // The fake writes the address into the descriptor's first word.
  EXPECT_EQ(paramAs<uint64_t>(plan, 3), args.v.data);
  EXPECT_EQ(paramAs<uint64_t>(plan, 1), args.k.data);
  // The driver encodes in a context: with none current, device 0's primary
  // context, pushed for the call; else the thread's own.
  EXPECT_EQ(call.context, fakecuda::primaryContext(0));
  EXPECT_EQ(fakecuda::current(), nullptr);
  CUcontext mine = fakecuda::createContext(1);
  fakecuda::setCurrent(mine);
  ASSERT_EQ(chosen(9, 0), "tma");
  EXPECT_EQ(fakecuda::lastTensorMap().context, mine);
  EXPECT_EQ(fakecuda::current(), mine);
  fakecuda::setCurrent(nullptr);
}

TEST_F(Plan, TensorMapChecks) {
  Json e = entry("tma", "sm_90");
  e["align_bytes"] = 2;
  e["params"] = Json::array({{{"name", "k"},
                              {"kind", "tensor_map"},
                              {"type", "tensor_map"},
                              {"box", {64, 64}},
                              {"swizzle", 128}}});
  open({e});
  fakecuda::reset();
  args.k.data += 8;
  EXPECT_EQ(chosen(9, 0),
            "error 1: k's data pointer 0x200000008 is not 16-byte aligned, "
            "which the TMA descriptor of kernel tma needs");
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[2] = 68;
  EXPECT_EQ(chosen(9, 0),
            "error 1: k's stride along dimension 2 (68 elements, 136 bytes) "
            "is not a multiple of 16 bytes, which the TMA descriptor of "
            "kernel tma needs");
  args = problem(2, 3, 77, 131, 64);
  args.k.strides[1] = -64;
  EXPECT_THAT(chosen(9, 0), HasSubstr("k's stride along dimension 1 (-64 "
                                      "elements) must be positive and below "
                                      "2^40 bytes"));
  // A dimension of size 1 gets a contiguous stride, whatever it was.
  args = problem(1, 3, 77, 131, 64);
  args.k.strides[0] = 5;
  ASSERT_EQ(chosen(9, 0), "tma");
  EXPECT_EQ(fakecuda::lastTensorMap().globalStrides[2], 3u * 131 * 64 * 2);
  // A driver failure names the call and the descriptor.
  fakecuda::fail("cuTensorMapEncodeTiled", CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(chosen(9, 0),
            "error 4: cuTensorMapEncodeTiled(k of kernel tma) failed: "
            "CUDA_ERROR_INVALID_VALUE (1): invalid argument\ndims {64, 131, 3, "
            "1}, byte strides {128, 16768, 50304}, box {64, 64, 1, 1}, "
            "swizzle 128");
  fakecuda::reset();
}

TEST_F(Plan, GroupedKvHeadsNeedAKernelThatTakesThem) {
  Json grouped = entry("grouped", "sm_80");
  grouped["grouped_kv"] = true;
  open({entry("older", "sm_90"), grouped});
  // Equal head counts: any kernel, the highest arch first.
  EXPECT_EQ(chosen(9, 0), "older");
  // H_q = 6, H_kv = 2: only a kernel built to read K/V head h / 3.
  args = problem(2, 6, 77, 131, 64);
  args.k.sizes[1] = args.v.sizes[1] = 2;
  EXPECT_EQ(chosen(9, 0), "grouped");
  open({entry("older", "sm_90")});
  EXPECT_THAT(chosen(9, 0),
              HasSubstr("grouped KV heads (H_q=6, H_kv=2; a library built "
                        "before tiled-attn took them has no such kernel: "
                        "rebuild it)"));
}

TEST_F(Plan, GroupedKvMustBeABoolean) {
  Json bad = entry("bad", "sm_80");
  bad["grouped_kv"] = 1;
  writeLibrary(dir, manifestOf({bad}));
  EXPECT_NE(library.open(dir.path()), TA_OK);
  EXPECT_THAT(lastError(), HasSubstr("grouped_kv"));
}
