//===- HeadDimVTest.cpp - V and O of a head dim of their own --------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// DeepSeek's MLA: q and k of head dim D = 192, v and o of D_v = 128. The
// manifest's "head_dim_v" (D when absent), ta_kernel_info.head_dim_v (API
// version 7), the shape checks (k has q's D, o has v's D_v), the choice (a
// kernel of the pair (D, D_v) and no other) and the messages naming D_v.
//
//===----------------------------------------------------------------------===//

#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

using namespace tatest;
using testing::HasSubstr;
using testing::StartsWith;

namespace {

/// A kernel of head dims (d, dv): "head_dim_v" only where they differ.
Json headDimsEntry(const std::string &name, int d, int dv) {
  Json e = kernelEntry(name);
  e["head_dim"] = d;
  if (dv != d)
    e["head_dim_v"] = dv;
  return e;
}

/// B 2, H 3, S_q 77, S_k 131: q and k of D = d, v and o of D_v = dv.
ta_sdpa_args mlaProblem(int64_t d, int64_t dv) {
  ta_sdpa_args args = problem(2, 3, 77, 131, d);
  contiguous(args.v, args.v.data, 2, 3, 131, dv);
  contiguous(args.o, args.o.data, 2, 3, 77, dv);
  return args;
}

class HeadDimV : public ChoiceTest {};

} // namespace

TEST(HeadDimVInfo, LayoutAndVersion) {
  // head_dim_v follows varlen (API version 7; version 8 added the
  // functions, CapturesTest.cpp, and version 9 the variant, VariantTest.cpp).
  EXPECT_EQ(offsetof(ta_kernel_info, head_dim_v),
            offsetof(ta_kernel_info, varlen) + sizeof(int32_t));
}

TEST_F(HeadDimV, KernelInfoSaysSo) {
  open({headDimsEntry("mla", 192, 128), headDimsEntry("d192", 192, 192),
        kernelEntry("d64")});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_EQ(info.head_dim, 192);
  EXPECT_EQ(info.head_dim_v, 128);
  // Absent, it is the head dim.
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_EQ(info.head_dim_v, 192);
  ASSERT_EQ(ta_library_kernel(library.get(), 2, &info), TA_OK);
  EXPECT_EQ(info.head_dim_v, 64);
}

TEST_F(HeadDimV, TheChoiceMatchesBothHeadDims) {
  open({headDimsEntry("d192", 192, 192), headDimsEntry("mla", 192, 128),
        headDimsEntry("d128", 128, 128)});
  args = mlaProblem(192, 128);
  EXPECT_EQ(chosen(), "mla");
  // The plan's views: v and o of 128 columns.
  EXPECT_EQ(paramAs<int64_t>(plan, 2 * 9 + 4), 128); // v.sizes[3]
  EXPECT_EQ(paramAs<int64_t>(plan, 3 * 9 + 4), 128); // o.sizes[3]
  args = mlaProblem(192, 192);
  EXPECT_EQ(chosen(), "d192");
  args = mlaProblem(128, 128);
  EXPECT_EQ(chosen(), "d128");
  // A pair no kernel has: refused, naming both head dims and the library's.
  args = mlaProblem(128, 192);
  std::string message = chosen();
  EXPECT_THAT(message, StartsWith("error 1: head dim D=128 (D_v=192) is not "
                                  "supported; the kernel library has head "
                                  "dims 128, 192 (D_v=128), 192"));
}

TEST_F(HeadDimV, NamedKernelOfOtherHeadDims) {
  open({headDimsEntry("d192", 192, 192), headDimsEntry("mla", 192, 128)});
  args = mlaProblem(192, 128);
  args.kernel = "d192";
  EXPECT_THAT(chosen(), StartsWith("error 2: no kernel in the library for "
                                   "sm_90, f16, D=192 (D_v=128), causal=none"));
  args.kernel = "mla";
  EXPECT_EQ(chosen(), "mla");
}

TEST_F(HeadDimV, ShapesFollowVsHeadDim) {
  open({headDimsEntry("mla", 192, 128)});
  // k must have q's head dim.
  args = mlaProblem(192, 128);
  contiguous(args.k, args.k.data, 2, 3, 131, 128);
  EXPECT_THAT(chosen(), HasSubstr("k has head dim 128 but q has 192"));
  // o must have v's head dim, not q's.
  args = mlaProblem(192, 128);
  contiguous(args.o, args.o.data, 2, 3, 77, 192);
  EXPECT_THAT(chosen(),
              HasSubstr("o has shape [2, 3, 77, 192] but q has [2, 3, 77, "
                        "192] and v [2, 3, 131, 128]; the output must have "
                        "q's shape with v's head dim"));
  // v's other sizes are still checked.
  args = mlaProblem(192, 128);
  contiguous(args.v, args.v.data, 2, 3, 130, 128);
  EXPECT_THAT(chosen(), HasSubstr("v has sequence length 130 but k has 131"));
}

TEST_F(HeadDimV, ManifestChecksTheValue) {
  Json e = headDimsEntry("mla", 192, 128);
  e["head_dim_v"] = 0;
  writeLibrary(dir, manifestOf({e}));
  ta_library *raw = nullptr;
  EXPECT_EQ(ta_library_open(dir.path().c_str(), &raw), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("head_dim_v"));
}
