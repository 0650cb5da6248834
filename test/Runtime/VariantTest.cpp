//===- VariantTest.cpp - What a kernel computes, as the runtime reads it --===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The kernel variants of KernelVariant.def through the C API:
// ta_kernel_feature, ta_kernel_info.variant and .features, the manifest's
// one flag per feature, and the choice of a kernel by the features a call
// asks for (sparse: a block mask's four captured inputs given).
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include "tiled_attn/Kernels/KernelVariant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// The names of a block mask's captured inputs, in argument order.
constexpr auto &kBlockMask = tiled_attn::kBlockMaskArguments;

/// A kernel of mask function "document" (a rank-2 i32 view document_ids)
/// and, with `sparse`, "sparse": true and a block mask's four rank-3/4 i32
/// views after it.
Json documentEntry(const std::string &name, bool sparse) {
  Json e = kernelEntry(name);
  e["mask_function"] = "document";
  e["captures"] = Json::array();
  auto capture = [&](const char *input, const char *function, int rank) {
    e["captures"].push_back({{"name", input},
                             {"function", function},
                             {"kind", "view"},
                             {"dtype", "i32"},
                             {"rank", rank}});
    e["params"].push_back({{"name", input}, {"kind", "base"}, {"type", "ptr"}});
  };
  capture("document_ids", "document", 2);
  if (sparse) {
    e["sparse"] = true;
    for (int i = 0; i < 4; ++i)
      capture(kBlockMask[i], "block_mask", i % 2 ? 4 : 3);
  }
  return e;
}

/// Adds to entry `e` a captured rank-`rank` view `name` of `dtype`, read by
/// the function of its name (with `alignBytes`, the manifest's align_bytes),
/// and its base parameter.
void addViewCapture(Json &e, const char *name, const char *dtype, int rank,
                    int alignBytes = 0) {
  if (!e.contains("captures"))
    e["captures"] = Json::array();
  Json capture = {{"name", name},
                  {"function", name},
                  {"kind", "view"},
                  {"dtype", dtype},
                  {"rank", rank}};
  if (alignBytes)
    capture["align_bytes"] = alignBytes;
  e["captures"].push_back(capture);
  e["params"].push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
}

class Variant : public ChoiceTest {
protected:
  /// Gives document_ids and, with `blockMask`, the four block-mask views.
  void give(bool blockMask) {
    captures.clear();
    captures.push_back(viewCapture("document_ids", TA_CAPTURE_I32,
                                   kFarAway + 0x200000, {2, 131}, {131, 1}));
    for (int i = 0; blockMask && i < 4; ++i) {
      std::vector<int64_t> ones(i % 2 ? 4 : 3, 1);
      captures.push_back(viewCapture(kBlockMask[i], TA_CAPTURE_I32,
                                     kFarAway + 0x300000 + 0x10000 * i, ones,
                                     ones));
    }
    args.mask_function = "document";
    args.captures = captures.data();
    args.num_captures = static_cast<int32_t>(captures.size());
  }
  std::vector<ta_capture> captures;
};

} // namespace

TEST(VariantInfo, FeaturesByIndex) {
  // KernelVariant.def's order: the bits of ta_kernel_info.features and the
  // suffixes of a variant's name.
  std::vector<std::string> names;
  for (int32_t i = 0; ta_kernel_feature(i); ++i)
    names.push_back(ta_kernel_feature(i));
  EXPECT_EQ(names,
            (std::vector<std::string>{"softcap", "lse", "varlen", "sparse",
                                      "split", "seqused", "paged"}));
  EXPECT_EQ(ta_kernel_feature(-1), nullptr);
  EXPECT_EQ(ta_kernel_feature(1 << 20), nullptr);
  // variant and features follow captures (API version 9).
  EXPECT_EQ(offsetof(ta_kernel_info, variant),
            offsetof(ta_kernel_info, captures) + sizeof(void *));
  // page_size follows features (API version 12).
  EXPECT_EQ(offsetof(ta_kernel_info, page_size),
            offsetof(ta_kernel_info, features) + sizeof(uint32_t));
  // align_bytes follows a capture's rank (API version 13).
  EXPECT_EQ(offsetof(ta_capture_info, align_bytes),
            offsetof(ta_capture_info, rank) + sizeof(int32_t));
  // phase follows page_size, last (API version 14).
  EXPECT_GT(offsetof(ta_kernel_info, phase),
            offsetof(ta_kernel_info, page_size));
  EXPECT_EQ(offsetof(ta_kernel_info, phase) + sizeof(void *),
            sizeof(ta_kernel_info));
  EXPECT_EQ(TA_API_VERSION, 15);
  EXPECT_EQ(ta_api_version(), 15);
}

TEST(VariantInfo, TheSparseFeatureListsTheBlockMaskArguments) {
  // The generator's kBlockMaskArguments are the arguments KernelVariant.def
  // declares for `sparse`, in order.
  std::string joined;
  for (const char *name : tiled_attn::kBlockMaskArguments)
    joined += (joined.empty() ? "" : " ") + std::string(name);
  const tiled_attn::KernelFeature *sparse = nullptr;
  for (const tiled_attn::KernelFeature &feature : tiled_attn::kKernelFeatures)
    if (feature.member == &tiled_attn::KernelVariant::sparse)
      sparse = &feature;
  ASSERT_NE(sparse, nullptr);
  EXPECT_EQ(joined, sparse->arguments);
  EXPECT_EQ(sparse->use, tiled_attn::FeatureUse::Exact);
}

TEST(VariantInfo, ThePagedFeatureListsTheBlockTable) {
  const tiled_attn::KernelFeature *paged = nullptr;
  for (const tiled_attn::KernelFeature &feature : tiled_attn::kKernelFeatures)
    if (feature.member == &tiled_attn::KernelVariant::paged)
      paged = &feature;
  ASSERT_NE(paged, nullptr);
  EXPECT_STREQ(paged->arguments, tiled_attn::kBlockTableArgument);
  EXPECT_EQ(paged->use, tiled_attn::FeatureUse::Exact);
}

TEST_F(Variant, KernelInfoNamesIt) {
  Json softcap = kernelEntry("ws");
  softcap["causal"] = "window";
  softcap["softcap"] = true;
  softcap["lse"] = true;
  for (const char *bound : {"window_lo", "window_hi"})
    softcap["params"].push_back(
        {{"name", bound}, {"kind", "scalar"}, {"type", "i64"}});
  softcap["params"].push_back(
      {{"name", "lse"}, {"kind", "base"}, {"type", "ptr"}});
  for (int d = 0; d < 3; ++d)
    softcap["params"].push_back(
        {{"name", "lse"}, {"kind", "stride"}, {"dim", d}, {"type", "i64"}});
  softcap["params"].push_back(
      {{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  open({kernelEntry("plain"), softcap, documentEntry("doc", false),
        documentEntry("doc_sparse", true)});
  const char *variants[] = {"none", "window_softcap_lse", "none+document",
                            "none_sparse+document"};
  const uint32_t features[] = {0, 0b0011, 0, 0b1000};
  for (int32_t i = 0; i < 4; ++i) {
    ta_kernel_info info;
    ASSERT_EQ(ta_library_kernel(library.get(), i, &info), TA_OK) << i;
    EXPECT_STREQ(info.variant, variants[i]);
    EXPECT_EQ(info.features, features[i]) << variants[i];
    EXPECT_EQ(info.softcap, int32_t(features[i] & 1));
    EXPECT_EQ(info.lse, int32_t(features[i] >> 1 & 1));
  }
}

TEST_F(Variant, SparseKernelsRunTheCallsThatGiveABlockMask) {
  open({documentEntry("doc_sparse", true), documentEntry("doc", false)});
  give(false);
  EXPECT_EQ(chosen(), "doc");
  give(true);
  EXPECT_EQ(chosen(), "doc_sparse");
  // Named, a kernel must fit the call's features.
  args.kernel = "doc_sparse";
  give(false);
  EXPECT_THAT(chosen(), HasSubstr("error 2: no kernel in the library for "));
  args.kernel = nullptr;

  open({documentEntry("doc_sparse", true)});
  give(false);
  EXPECT_THAT(chosen(), HasSubstr("error 2: no kernel in the library for "));
  open({documentEntry("doc", false)});
  give(true);
  std::string status = chosen();
  EXPECT_THAT(status, HasSubstr("error 2: no kernel in the library for "));
  EXPECT_THAT(status, HasSubstr("; a kernel of causal=none, with sparse, "
                                "would compute it"));
}

TEST(VariantManifest, FlagsAreChecked) {
  Json entry = documentEntry("doc_sparse", true);
  entry["sparse"] = "yes";
  expectOpenError(manifestOf({entry}),
                  {"field 'sparse' must be true or false, got \"yes\""});
  // "sparse" agrees with the block mask's captured inputs.
  entry["sparse"] = false;
  expectOpenError(manifestOf({entry}),
                  {"field 'sparse' must be true for a kernel that takes a "
                   "block mask's four captured inputs, got false"});
  Json plain = documentEntry("doc", false);
  plain["sparse"] = true;
  expectOpenError(manifestOf({plain}),
                  {"field 'sparse' must be false for a kernel that takes no "
                   "block mask"});
}

TEST_F(Variant, ALibraryWithoutTheSparseKeyReadsItFromTheCaptures) {
  // A manifest written before API version 9 has no "sparse": its
  // block-sparse kernels are the ones that take a block mask.
  Json sparse = documentEntry("doc_sparse", true),
       doc = documentEntry("doc", false);
  sparse.erase("sparse");
  open({sparse, doc});
  give(true);
  EXPECT_EQ(chosen(), "doc_sparse");
  give(false);
  EXPECT_EQ(chosen(), "doc");
  // One of the block mask's inputs asks for a sparse kernel, whose
  // parameters name the missing ones.
  give(true);
  args.num_captures = 2; // document_ids and kv_num_blocks only
  EXPECT_THAT(chosen(), HasSubstr("takes the captured input 'kv_indices', "
                                  "which captures lacks"));
}

TEST_F(Variant, ByteCapturesAreI8) {
  // A kernel of the library's bool mask function: a captured rank-4 view of
  // one byte per element (TA_CAPTURE_I8, API version 9).
  Json e = kernelEntry("mask");
  e["mask_function"] = "mask";
  addViewCapture(e, "mask", "i8", 4);
  open({e});
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  ASSERT_EQ(info.num_captures, 1);
  EXPECT_EQ(info.captures[0].type, TA_CAPTURE_I8);
  EXPECT_STREQ(info.variant, "none+mask");
  ta_capture mask = viewCapture("mask", TA_CAPTURE_I8, kFarAway + 0x400000,
                                {2, 3, 77, 131}, {77 * 131, 0, 131, 1});
  args.mask_function = "mask";
  args.captures = &mask;
  args.num_captures = 1;
  EXPECT_EQ(chosen(), "mask");
  EXPECT_EQ(paramAs<uint64_t>(plan, plan.num_params - 1), mask.data);
  // An f32 view where the kernel takes i8 is refused, naming both.
  mask.type = TA_CAPTURE_F32;
  EXPECT_THAT(chosen(), HasSubstr("error 1: "));
  mask.type = static_cast<ta_capture_type>(TA_CAPTURE_I8 + 1);
  EXPECT_THAT(chosen(), HasSubstr("has type 5, not a ta_capture_type"));
}

TEST_F(Variant, BlockLoadedCapturesAreAligned) {
  // A kernel that copies its bias in 16-byte blocks (block-loads: the
  // manifest's align_bytes 16) takes a view whose data pointer and strides
  // (of dimensions longer than 1) are multiples of 16 bytes, and refuses
  // another, naming the capture and the padding that fixes it.
  Json e = kernelEntry("bias");
  e["score_function"] = "bias";
  addViewCapture(e, "bias", "f32", 4, 16);
  open({e});
  // A [2, 1, 77, 132] bias broadcast over 3 heads: rows of 132 floats.
  ta_capture bias = viewCapture("bias", TA_CAPTURE_F32, kFarAway + 0x400000,
                                {2, 3, 77, 132}, {77 * 132, 0, 132, 1});
  args.score_function = "bias";
  args.captures = &bias;
  args.num_captures = 1;
  EXPECT_EQ(chosen(), "bias");
  // The C API says so (ta_capture_info.align_bytes).
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  ASSERT_EQ(info.num_captures, 1);
  EXPECT_EQ(info.captures[0].align_bytes, 16);
  // Rows of 131 floats (524 bytes) are not.
  bias.sizes[3] = 131;
  bias.strides[0] = 77 * 131;
  bias.strides[2] = 131;
  EXPECT_THAT(chosen(),
              HasSubstr("captured input 'bias' cannot be passed to kernel "
                        "bias as it is: the kernel copies it in 16-byte "
                        "blocks"));
  EXPECT_THAT(chosen(), HasSubstr("to a multiple of 4 elements"));
  // Nor is a data pointer 4 bytes past a 16-byte boundary.
  bias.sizes[3] = 132;
  bias.strides[0] = 77 * 132;
  bias.strides[2] = 132;
  bias.data += 4;
  EXPECT_THAT(chosen(), HasSubstr("cannot be passed to kernel bias"));
}

TEST_F(Variant, CapturedViewsTakeTensorMaps) {
  // A Hopper kernel copies its bias and mask blocks with TMA: a tensor map
  // of each, over the capture's own element type (f32, bytes), with the
  // strides of the view as given: a dimension broadcast by stride 0 keeps
  // its zero stride.
  fakecuda::reset();
  Json e = kernelEntry("bias_tma");
  e["arch"] = "sm_90a";
  e["score_function"] = "bias";
  e["mask_function"] = "mask";
  addViewCapture(e, "bias", "f32", 4, 16);
  addViewCapture(e, "mask", "i8", 4, 16);
  e["params"].push_back({{"name", "bias"},
                         {"kind", "tensor_map"},
                         {"type", "tensor_map"},
                         {"box", {128, 32}},
                         {"swizzle", 128}});
  e["params"].push_back({{"name", "mask"},
                         {"kind", "tensor_map"},
                         {"type", "tensor_map"},
                         {"box", {128, 64}},
                         {"swizzle", 64}});
  open({e});
  ta_capture captures[2] = {
      // [2, 1, 77, 132] broadcast over 3 heads.
      viewCapture("bias", TA_CAPTURE_F32, kFarAway + 0x400000, {2, 3, 77, 132},
                  {77 * 132, 0, 132, 1}),
      // [1, 1, 1, 144] broadcast over batch, heads and queries.
      viewCapture("mask", TA_CAPTURE_I8, kFarAway + 0x800000, {2, 3, 77, 144},
                  {0, 0, 0, 1})};
  args.score_function = "bias";
  args.mask_function = "mask";
  args.captures = captures;
  args.num_captures = 2;
  ASSERT_EQ(chosen(), "bias_tma");
  ASSERT_EQ(fakecuda::tensorMapCalls(), 2);
  fakecuda::TensorMapCall call = fakecuda::lastTensorMap();
  EXPECT_EQ(call.dataType, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(call.globalAddress),
            kFarAway + 0x800000);
  const uint64_t maskDims[4] = {144, 77, 3, 2};
  const unsigned maskBox[4] = {64, 128, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(call.globalDim[i], maskDims[i]) << i;
    EXPECT_EQ(call.boxDim[i], maskBox[i]) << i;
  }
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(call.globalStrides[i], 0u) << i;
  EXPECT_EQ(call.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);

  // The bias alone, to see its call.
  fakecuda::reset();
  e["mask_function"] = "";
  e["captures"].erase(1);
  for (size_t i = e["params"].size(); i-- > 0;)
    if (e["params"][i]["name"] == "mask")
      e["params"].erase(i);
  open({e});
  args.mask_function = nullptr;
  args.num_captures = 1;
  ASSERT_EQ(chosen(), "bias_tma");
  call = fakecuda::lastTensorMap();
  EXPECT_EQ(call.dataType, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  const uint64_t biasDims[4] = {132, 77, 3, 2};
  const uint64_t biasStrides[3] = {132 * 4, 0, 77 * 132 * 4};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(call.globalDim[i], biasDims[i]) << i;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(call.globalStrides[i], biasStrides[i]) << i;
  EXPECT_EQ(call.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);

  // A float32 box row past its swizzle, and a map of a view of rank 2,
  // are the manifest's errors.
  e["params"].back()["box"] = {128, 64};
  expectOpenError(manifestOf({e}),
                  {"a box whose rows fit the 128-byte swizzle (64 f32 "
                   "elements of 'bias' are 256 bytes)"});
  e["params"].back()["box"] = {128, 32};
  e["captures"][0]["rank"] = 2;
  expectOpenError(manifestOf({e}), {"'base', 'size' or 'stride' for a "
                                    "captured view of rank below 4"});
}
