//===- BlockMaskTest.cpp - ta_block_mask on the fake driver ---------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Block mask kernels ("program": "block_mask" in the manifest, as
// tiled-attn-compile writes them): listed apart from the SDPA kernels
// (ta_library_block_mask), launched by ta_block_mask with one program per
// (query block, head, batch entry) of block_kinds and every parameter bound
// by name (the function's captured inputs, seq_q, seq_k, block_kinds); the
// errors of a bad call and of a bad manifest entry. Fake device 0 is sm_90.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// A view parameter's entries: base, sizes, strides but the last.
void addView(Json &params, const std::string &name, int rank) {
  params.push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
  for (int d = 0; d < rank; ++d)
    params.push_back(
        {{"name", name}, {"kind", "size"}, {"dim", d}, {"type", "i64"}});
  for (int d = 0; d + 1 < rank; ++d)
    params.push_back(
        {{"name", name}, {"kind", "stride"}, {"dim", d}, {"type", "i64"}});
}

/// The block mask kernel of "document" as tiled-attn-compile records it.
Json blockMaskEntry(const std::string &name = "block_mask_sm_80_document",
                    const std::string &function = "document") {
  Json e;
  e["name"] = name;
  e["program"] = "block_mask";
  e["arch"] = "sm_80";
  e["mask_function"] = function;
  e["captures"] = Json::array({{{"name", "document_ids"},
                                {"function", function},
                                {"kind", "view"},
                                {"dtype", "i32"},
                                {"rank", 2}}});
  e["symbol"] = "block_mask";
  e["ptx"] = name + ".ptx";
  e["block"] = {256, 1, 1};
  e["block_size"] = 128;
  e["shared_bytes"] = 256;
  e["abi"] = "tiled-attn-v2";
  e["index_bits"] = 64;
  Json params = Json::array();
  addView(params, "document_ids", 2);
  params.push_back({{"name", "seq_q"}, {"kind", "scalar"}, {"type", "i64"}});
  params.push_back({{"name", "seq_k"}, {"kind", "scalar"}, {"type", "i64"}});
  addView(params, "block_kinds", 4);
  e["params"] = params;
  return e;
}

class BlockMask : public testing::Test {
protected:
  void SetUp() override {
    fakecuda::reset();
    fakecuda::setRecording(true);
    ids = viewCapture("document_ids", TA_CAPTURE_I32, 0x100000, {2, 300},
                      {300, 1});
    args.mask_function = "document";
    args.captures = &ids;
    args.num_captures = 1;
    args.seq_q = 300;
    args.seq_k = 700;
    // [B 2, H 3, ceil(300 / 128) = 3, ceil(700 / 128) = 6]
    args.block_kinds.data = 0x200000;
    int64_t sizes[4] = {2, 3, 3, 6}, strides[4] = {54, 18, 6, 1};
    for (int d = 0; d < 4; ++d) {
      args.block_kinds.sizes[d] = sizes[d];
      args.block_kinds.strides[d] = strides[d];
    }
  }
  void TearDown() override {
    fakecuda::setCurrent(nullptr);
    fakecuda::reset();
  }

  void open(const std::vector<Json> &entries) {
    writeLibrary(dir, manifestOf(entries));
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }
  ta_status blockMask() {
    return ta_block_mask(library.get(), &args, 0, nullptr);
  }

  TempDir dir;
  Library library;
  ta_capture ids;
  ta_block_mask_args args = {};
};

template <typename T> T paramOf(const fakecuda::Launch &launch, size_t i) {
  T value;
  EXPECT_EQ(launch.params.at(i).size(), sizeof(T)) << "param " << i;
  std::memcpy(&value, launch.params.at(i).data(), sizeof(T));
  return value;
}

} // namespace

TEST_F(BlockMask, ListedApartFromTheSdpaKernels) {
  open({kernelEntry("k"), blockMaskEntry()});
  EXPECT_EQ(ta_library_kernel_count(library.get()), 1);
  ASSERT_EQ(ta_library_block_mask_count(library.get()), 1);
  ta_kernel_info info;
  ASSERT_EQ(ta_library_block_mask(library.get(), 0, &info), TA_OK);
  EXPECT_STREQ(info.name, "block_mask_sm_80_document");
  EXPECT_STREQ(info.arch, "sm_80");
  EXPECT_STREQ(info.mask_function, "document");
  EXPECT_STREQ(info.score_function, "");
  EXPECT_EQ(info.threads, 256);
  EXPECT_EQ(info.shared_bytes, 256);
  // The function's captured inputs only, not the three the call adds.
  ASSERT_EQ(info.num_captures, 1);
  EXPECT_STREQ(info.captures[0].name, "document_ids");
  EXPECT_EQ(info.captures[0].type, TA_CAPTURE_I32);
  EXPECT_EQ(info.captures[0].rank, 2);
  EXPECT_EQ(ta_library_block_mask(library.get(), 1, &info),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("out of range"));
  // An SDPA call never chooses it.
  ta_sdpa_args sdpa = problem(2, 3, 77, 131, 64);
  ta_launch_plan plan;
  ASSERT_EQ(ta_sdpa_plan(library.get(), &sdpa, 9, 0, &plan), TA_OK);
  EXPECT_EQ(plan.kernel, 0);
}

TEST_F(BlockMask, LaunchesOneProgramPerQueryBlockHeadAndBatchEntry) {
  open({blockMaskEntry()});
  void *stream = reinterpret_cast<void *>(0x77);
  ASSERT_EQ(ta_block_mask(library.get(), &args, 0, stream), TA_OK)
      << lastError();
  fakecuda::Launch launch = fakecuda::lastLaunch();
  EXPECT_EQ(launch.symbol, "block_mask");
  EXPECT_EQ(launch.stream, stream);
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 3u);
  EXPECT_EQ(launch.grid[2], 2u);
  EXPECT_EQ(launch.block[0], 256u);
  EXPECT_EQ(launch.sharedBytes, 256u);
  ASSERT_EQ(launch.params.size(), 14u);
  EXPECT_EQ(paramOf<uint64_t>(launch, 0), 0x100000u); // document_ids
  EXPECT_EQ(paramOf<int64_t>(launch, 1), 2);
  EXPECT_EQ(paramOf<int64_t>(launch, 2), 300);
  EXPECT_EQ(paramOf<int64_t>(launch, 3), 300);
  EXPECT_EQ(paramOf<int64_t>(launch, 4), 300);        // seq_q
  EXPECT_EQ(paramOf<int64_t>(launch, 5), 700);        // seq_k
  EXPECT_EQ(paramOf<uint64_t>(launch, 6), 0x200000u); // block_kinds
  const int64_t sizes[4] = {2, 3, 3, 6}, strides[3] = {54, 18, 6};
  for (int d = 0; d < 4; ++d)
    EXPECT_EQ(paramOf<int64_t>(launch, 7 + d), sizes[d]) << "size " << d;
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(paramOf<int64_t>(launch, 11 + d), strides[d]) << "stride " << d;
}

TEST_F(BlockMask, NothingToDoForAnEmptyMask) {
  open({blockMaskEntry()});
  args.seq_q = 0;
  EXPECT_EQ(blockMask(), TA_OK) << lastError();
  EXPECT_EQ(fakecuda::launches(), 0);
}

TEST_F(BlockMask, BadCallsAreRefusedNamingTheArgument) {
  open({blockMaskEntry()});
  auto expectError = [&](ta_status status, const std::string &part) {
    EXPECT_EQ(blockMask(), status) << part;
    EXPECT_THAT(lastError(), HasSubstr(part));
    EXPECT_EQ(fakecuda::launches(), 0) << part;
  };
  ta_block_mask_args good = args;
  args.mask_function = "prefix_lm";
  expectError(TA_ERROR_NO_KERNEL,
              "no block mask kernel of mask function 'prefix_lm'");
  EXPECT_THAT(lastError(), HasSubstr("its block mask functions: 'document'"));
  args = good;
  args.block_kinds.sizes[3] = 5;
  expectError(TA_ERROR_INVALID_ARGUMENT,
              "seq_q = 300 and seq_k = 700 need [B, H, 3, 6]");
  args = good;
  args.block_kinds.sizes[1] = 0;
  expectError(TA_ERROR_INVALID_ARGUMENT, "block_kinds has head size 0");
  args = good;
  args.block_kinds.data = 0;
  expectError(TA_ERROR_INVALID_ARGUMENT, "block_kinds.data is null");
  args = good;
  args.num_captures = 0;
  expectError(TA_ERROR_INVALID_ARGUMENT,
              "takes the captured input 'document_ids', which captures lacks");
  args = good;
  ta_capture wrong = ids;
  wrong.type = TA_CAPTURE_F32;
  args.captures = &wrong;
  expectError(TA_ERROR_INVALID_ARGUMENT,
              "captured input 'document_ids' is a rank-2 view of f32");
  args = good;
  ta_capture named[2] = {ids, ids};
  named[1].name = "seq_q";
  args.captures = named;
  args.num_captures = 2;
  expectError(TA_ERROR_INVALID_ARGUMENT,
              "captured input 'seq_q' has the name of an argument");
  args = good;
  args.seq_k = -1;
  expectError(TA_ERROR_INVALID_ARGUMENT, "seq_q and seq_k must be at least 0");
  args = good;
  args.mask_function = nullptr;
  expectError(TA_ERROR_INVALID_ARGUMENT, "mask_function is null or empty");
  EXPECT_EQ(ta_block_mask(library.get(), nullptr, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ta_block_mask(nullptr, &good, 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
}

TEST_F(BlockMask, BadManifestEntriesAreRefused) {
  Json e = blockMaskEntry();
  e["block_size"] = 64;
  expectOpenError(manifestOf({e}), {"block_size"});
  e = blockMaskEntry();
  e["mask_function"] = "";
  expectOpenError(manifestOf({e}), {"mask_function"});
  e = blockMaskEntry();
  e["program"] = "combine";
  expectOpenError(manifestOf({e}),
                  {"program", "'sdpa', 'block_mask', 'split_merge' or 'sdpa_backward'"});
  e = blockMaskEntry();
  e["captures"][0]["name"] = "block_kinds";
  expectOpenError(manifestOf({e}), {"no captured input named 'block_kinds'"});
  // A parameter no captured input explains.
  e = blockMaskEntry();
  e["params"].push_back({{"name", "q"}, {"kind", "base"}, {"type", "ptr"}});
  Json manifest = manifestOf({e});
  writeLibrary(dir, manifest);
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  EXPECT_EQ(blockMask(), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("is no captured input's"));
}
