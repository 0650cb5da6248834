//===- CapturesTest.cpp - Score and mask functions' captured inputs -------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_sdpa_args.score_function, mask_function and captures through
// ta_sdpa_plan: the manifest's "captures" and their parameters, the kernel
// chosen (only one of exactly the functions asked for), the captured views'
// and scalars' packing, and the errors of missing, extra and mistyped
// captured inputs.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// A captured input of kernel entry `e` in the manifest's "captures":
/// `name`, declared by `function`, a view of `rank` (0: a scalar) of
/// `dtype`.
void addCapture(Json &e, const std::string &name, const std::string &function,
                const std::string &dtype, int rank) {
  e["captures"].push_back({{"name", name},
                           {"function", function},
                           {"kind", rank ? "view" : "scalar"},
                           {"dtype", dtype},
                           {"rank", rank}});
}

/// A kernel with ALiBi (a rank-1 f32 view "slopes": base and size, as the
/// compiler's ABI passes a rank-1 view) and, with `document`, document
/// masking (a rank-2 i32 view "document_ids": base, sizes and the first
/// stride) and a captured i32 scalar "prefix".
Json functionEntry(const std::string &name, bool alibi, bool document) {
  Json e = kernelEntry(name);
  e["captures"] = Json::array();
  if (alibi) {
    e["score_function"] = "alibi";
    addCapture(e, "slopes", "alibi", "f32", 1);
    e["params"].push_back(
        {{"name", "slopes"}, {"kind", "base"}, {"type", "ptr"}});
    e["params"].push_back(
        {{"name", "slopes"}, {"kind", "size"}, {"dim", 0}, {"type", "i64"}});
  }
  if (document) {
    e["mask_function"] = "document";
    addCapture(e, "document_ids", "document", "i32", 2);
    addCapture(e, "prefix", "document", "i32", 0);
    e["params"].push_back(
        {{"name", "document_ids"}, {"kind", "base"}, {"type", "ptr"}});
    for (int d : {0, 1})
      e["params"].push_back({{"name", "document_ids"},
                             {"kind", "size"},
                             {"dim", d},
                             {"type", "i64"}});
    e["params"].push_back({{"name", "document_ids"},
                           {"kind", "stride"},
                           {"dim", 0},
                           {"type", "i64"}});
    e["params"].push_back(
        {{"name", "prefix"}, {"kind", "scalar"}, {"type", "i32"}});
  }
  return e;
}

class Captures : public ChoiceTest {
protected:
  void SetUp() override {
    slopes =
        viewCapture("slopes", TA_CAPTURE_F32, kFarAway + 0x100000, {3}, {1});
    docs = viewCapture("document_ids", TA_CAPTURE_I32, kFarAway + 0x200000,
                       {2, 131}, {140, 1});
    prefix.name = "prefix";
    prefix.type = TA_CAPTURE_I32;
    prefix.scalar = 17;
  }
  void give(std::vector<ta_capture> given) {
    captures = std::move(given);
    args.captures = captures.data();
    args.num_captures = static_cast<int32_t>(captures.size());
  }
  ta_capture slopes = {}, docs = {}, prefix = {};
  std::vector<ta_capture> captures;
};

} // namespace

TEST(CapturesArgs, Layout) {
  // The functions and their captures follow the varlen batch (API version
  // 8); zero-initialized, none.
  EXPECT_EQ(offsetof(ta_sdpa_args, score_function),
            offsetof(ta_sdpa_args, varlen) + sizeof(ta_varlen));
  ta_sdpa_args zero = {};
  EXPECT_EQ(zero.score_function, nullptr);
  EXPECT_EQ(zero.num_captures, 0);
  EXPECT_GE(ta_api_version(), 8);
}

TEST_F(Captures, OnlyKernelsOfTheFunctionsAskedFor) {
  open({kernelEntry("plain"), functionEntry("alibi", true, false),
        functionEntry("alibi_doc", true, true),
        functionEntry("doc", false, true)});
  EXPECT_EQ(chosen(), "plain");
  args.score_function = "alibi";
  give({slopes});
  EXPECT_EQ(chosen(), "alibi");
  args.mask_function = "document";
  give({slopes, docs, prefix});
  EXPECT_EQ(chosen(), "alibi_doc");
  args.score_function = nullptr;
  give({docs, prefix});
  EXPECT_EQ(chosen(), "doc");
  args.mask_function = "prefix_lm";
  EXPECT_THAT(chosen(),
              HasSubstr("error 2: no kernel in the library for sm_90, "
                        "f16, D=64, causal=none, "
                        "mask_function=prefix_lm"));
}

TEST_F(Captures, TheKernelThatTakesTheGivenCaptures) {
  // Two kernels of the same mask function: the second also takes a captured
  // "extra_ids". The kernel chosen takes exactly the captured inputs given,
  // whatever the manifest's order; with neither set, the first of the
  // functions names what is wrong. (A block mask's four inputs choose the
  // `sparse` kernels: VariantTest.cpp.)
  Json extra = functionEntry("doc_extra", false, true);
  addCapture(extra, "extra_ids", "document", "i32", 3);
  extra["params"].push_back(
      {{"name", "extra_ids"}, {"kind", "base"}, {"type", "ptr"}});
  open({extra, functionEntry("doc", false, true)});
  args.mask_function = "document";
  give({docs, prefix});
  EXPECT_EQ(chosen(), "doc");
  ta_capture ids = viewCapture("extra_ids", TA_CAPTURE_I32, kFarAway + 0x300000,
                               {1, 1, 1}, {0, 0, 0});
  give({ids, docs, prefix});
  EXPECT_EQ(chosen(), "doc_extra");
  give({docs});
  EXPECT_EQ(chosen(), "error 1: kernel doc_extra (score function '', mask "
                      "function 'document') takes the captured input "
                      "'prefix', which captures lacks");
}

TEST_F(Captures, Packed) {
  open({functionEntry("alibi_doc", true, true)});
  args.score_function = "alibi";
  args.mask_function = "document";
  give({prefix, docs, slopes}); // any order: by name
  ASSERT_EQ(chosen(), "alibi_doc");
  // The standard 37 parameters, then the slopes' base and size, the ids'
  // base, two sizes and a stride, and the prefix.
  ASSERT_EQ(plan.num_params, 37 + 2 + 4 + 1);
  EXPECT_EQ(paramAs<uint64_t>(plan, 37), slopes.data);
  EXPECT_EQ(paramAs<int64_t>(plan, 38), 3);
  EXPECT_EQ(paramAs<uint64_t>(plan, 39), docs.data);
  EXPECT_EQ(paramAs<int64_t>(plan, 40), 2);
  EXPECT_EQ(paramAs<int64_t>(plan, 41), 131);
  EXPECT_EQ(paramAs<int64_t>(plan, 42), 140);
  EXPECT_EQ(plan.param_sizes[43], 4u);
  EXPECT_EQ(paramAs<int32_t>(plan, 43), 17);
}

TEST_F(Captures, KernelInfo) {
  open({functionEntry("alibi_doc", true, true)});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_STREQ(info.score_function, "alibi");
  EXPECT_STREQ(info.mask_function, "document");
  ASSERT_EQ(info.num_captures, 3);
  EXPECT_STREQ(info.captures[0].name, "slopes");
  EXPECT_STREQ(info.captures[0].function, "alibi");
  EXPECT_EQ(info.captures[0].type, TA_CAPTURE_F32);
  EXPECT_EQ(info.captures[0].rank, 1);
  EXPECT_STREQ(info.captures[2].name, "prefix");
  EXPECT_STREQ(info.captures[2].function, "document");
  EXPECT_EQ(info.captures[2].rank, 0);
}

TEST_F(Captures, MissingExtraOrMistyped) {
  open({functionEntry("alibi", true, false)});
  args.score_function = "alibi";
  give({});
  EXPECT_EQ(chosen(), "error 1: kernel alibi (score function 'alibi', mask "
                      "function '') takes the captured input 'slopes', which "
                      "captures lacks");
  give({slopes, prefix});
  EXPECT_EQ(chosen(),
            "error 1: captured input 'prefix' is not one kernel alibi takes");
  slopes.type = TA_CAPTURE_BF16;
  give({slopes});
  EXPECT_EQ(chosen(), "error 1: captured input 'slopes' is a rank-1 view of "
                      "bf16, but kernel alibi takes a rank-1 view of f32");
}

TEST_F(Captures, SizesPastI32AreRefused) {
  // A kernel of 32-bit indices takes a captured view's sizes as i32.
  Json e = functionEntry("alibi", true, false);
  e["params"][38]["type"] = "i32";
  open({e});
  args.score_function = "alibi";
  slopes.sizes[0] = int64_t(1) << 33;
  give({slopes});
  EXPECT_EQ(chosen(), "error 1: the captured input slopes's size along "
                      "dimension 0 is 8589934592, which does not fit the i32 "
                      "parameter params[38] of kernel alibi");
}

TEST_F(Captures, BadCaptures) {
  open({functionEntry("alibi", true, false)});
  args.score_function = "alibi";
  give({slopes, slopes});
  EXPECT_EQ(chosen(), "error 1: captured input 'slopes' is given twice "
                      "(captures[0] and [1])");
  ta_capture bad = slopes;
  bad.strides[0] = 2;
  give({bad});
  EXPECT_EQ(chosen(), "error 1: captured input 'slopes' has a last-dimension "
                      "stride of 2, not 1: make it contiguous first");
  bad = slopes;
  bad.data = 0;
  give({bad});
  EXPECT_EQ(chosen(), "error 1: captured input 'slopes' has elements but a "
                      "null data pointer");
  bad = slopes;
  bad.rank = 5;
  give({bad});
  EXPECT_EQ(chosen(), "error 1: captured input 'slopes' has rank 5; a view "
                      "has rank 1 to 4, a scalar 0");
  bad = slopes;
  bad.name = nullptr;
  give({bad});
  EXPECT_EQ(chosen(), "error 1: captures[0] has no name");
  args.captures = nullptr;
  args.num_captures = 1;
  EXPECT_EQ(chosen(), "error 1: num_captures is 1 with captures null");
}

TEST_F(Captures, ManifestErrors) {
  Json e = functionEntry("alibi", true, false);
  e["params"].erase(e["params"].end() - 2, e["params"].end());
  writeLibrary(dir, manifestOf({e}));
  ta_library *lib = nullptr;
  EXPECT_EQ(ta_library_open(dir.path().c_str(), &lib), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("the captured input 'slopes' has no "
                                     "parameter in field 'params'"));
  e = functionEntry("alibi", true, false);
  e["captures"][0]["kind"] = "matrix";
  writeLibrary(dir, manifestOf({e}));
  EXPECT_EQ(ta_library_open(dir.path().c_str(), &lib), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("field 'captures[0].kind' must be"));
  e = functionEntry("alibi", true, false);
  e["params"][38]["dim"] = 1;
  writeLibrary(dir, manifestOf({e}));
  EXPECT_EQ(ta_library_open(dir.path().c_str(), &lib), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("field 'params[38].dim' must be"));
  // A capture's align_bytes (block-loaded views) is a power of two.
  e = functionEntry("alibi", true, false);
  e["captures"][0]["align_bytes"] = 12;
  writeLibrary(dir, manifestOf({e}));
  EXPECT_EQ(ta_library_open(dir.path().c_str(), &lib), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(),
              HasSubstr("field 'captures[0].align_bytes' must be a power of "
                        "two"));
}
