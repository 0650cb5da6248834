//===- ManifestTest.cpp - Opening kernel libraries ------------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// ta_library_open on good and malformed manifests: every malformed field is
// a TA_ERROR_LIBRARY naming the manifest, the kernel and the field.
//
//===----------------------------------------------------------------------===//

#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

using namespace tatest;
using testing::HasSubstr;

namespace {

/// A manifest of one kernel whose entry `edit` changes.
template <typename Edit> Json oneKernel(Edit edit) {
  Json entry = kernelEntry("k0");
  edit(entry);
  return manifestOf({entry});
}

} // namespace

TEST(Manifest, OpensAndDescribesKernels) {
  TempDir dir;
  Json second = kernelEntry("k1");
  second["arch"] = "sm_90a";
  second["dtype"] = "bf16";
  second["head_dim"] = 128;
  second["causal"] = "bottom_right";
  second["index_bits"] = 32;
  second["align_bytes"] = 32;
  second["block"] = {256, 1, 1};
  second["cubin"] = {{"sm_90a", "k1.sm_90a.cubin"}};
  writeLibrary(dir, manifestOf({kernelEntry("k0"), second}));
  Library library;
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  EXPECT_EQ(std::string(ta_library_path(library.get())), dir.path());
  ASSERT_EQ(ta_library_kernel_count(library.get()), 2);

  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_STREQ(info.name, "k1");
  EXPECT_STREQ(info.arch, "sm_90a");
  EXPECT_STREQ(info.dtype, "bf16");
  EXPECT_STREQ(info.mask, "bottom_right");
  EXPECT_STREQ(info.schedule, "block-m=64");
  EXPECT_EQ(info.head_dim, 128);
  EXPECT_EQ(info.block_m, 64);
  EXPECT_EQ(info.block_n, 32);
  EXPECT_EQ(info.threads, 256);
  EXPECT_EQ(info.shared_bytes, 16384);
  EXPECT_EQ(info.index_bits, 32);
  EXPECT_EQ(info.align_bytes, 32);
  EXPECT_EQ(info.num_params, 37);
  EXPECT_EQ(info.softcap, 0);
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_EQ(info.align_bytes, 16);
  EXPECT_EQ(info.index_bits, 64);

  EXPECT_EQ(ta_library_kernel(library.get(), 2, &info),
            TA_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(lastError(),
            "kernel index 2 is out of range: the library holds 2 kernels");
  EXPECT_EQ(ta_library_kernel(library.get(), 0, nullptr),
            TA_ERROR_INVALID_ARGUMENT);
}

TEST(Manifest, ApiVersionAndNulls) {
  EXPECT_EQ(ta_api_version(), TA_API_VERSION);
  EXPECT_EQ(ta_library_kernel_count(nullptr), 0);
  EXPECT_EQ(ta_library_path(nullptr), nullptr);
  ta_library_close(nullptr);
  EXPECT_EQ(ta_library_open("/tmp", nullptr), TA_ERROR_INVALID_ARGUMENT);
}

TEST(Manifest, EmptyLibraryOpens) {
  TempDir dir;
  writeLibrary(dir, manifestOf({}));
  Library library;
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  EXPECT_EQ(ta_library_kernel_count(library.get()), 0);
}

TEST(Manifest, DefaultFolderFromEnvironment) {
  TempDir dir;
  writeLibrary(dir, manifestOf({kernelEntry("k0")}));
  ta_library *library = nullptr;
  EXPECT_EQ(ta_library_open(nullptr, &library), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("TILED_ATTN_KERNELS is not set"));
  setenv("TILED_ATTN_KERNELS", dir.path().c_str(), 1);
  EXPECT_EQ(ta_library_open("", &library), TA_OK) << lastError();
  unsetenv("TILED_ATTN_KERNELS");
  EXPECT_EQ(ta_library_kernel_count(library), 1);
  ta_library_close(library);
}

TEST(Manifest, MissingFolderAndFile) {
  Library library;
  EXPECT_EQ(library.open("/nonexistent/kernels"), TA_ERROR_LIBRARY);
  EXPECT_EQ(lastError(),
            "no kernel library at /nonexistent/kernels: the folder does not "
            "exist; build the kernels or set TILED_ATTN_KERNELS to a folder "
            "holding manifest.json");
  TempDir dir;
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("manifest.json is missing"));
}

TEST(Manifest, MalformedJson) {
  TempDir dir;
  dir.write("manifest.json", "{\"version\": 2,\n \"kernels\": [}");
  Library library;
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("manifest.json is not valid JSON: "));
  EXPECT_THAT(lastError(), HasSubstr("line 2"));
  dir.write("manifest.json", "[1, 2]");
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(),
              HasSubstr("expected a JSON object at the top, got array"));
}

TEST(Manifest, Versions) {
  Json manifest = manifestOf({});
  manifest["version"] = 1;
  expectOpenError(manifest, {"manifest version 1 (kernel ABI "
                             "memref-descriptor-v1) is no longer supported",
                             "rebuild the kernel library"});
  manifest["version"] = 3;
  expectOpenError(manifest, {"unsupported manifest version 3 (this runtime "
                             "reads 2)"});
  manifest["version"] = "2";
  expectOpenError(manifest, {"unsupported manifest version \"2\""});
  manifest.erase("version");
  expectOpenError(manifest, {"unsupported manifest version (missing)"});
  manifest = manifestOf({});
  manifest["kernels"] = {{"a", 1}};
  expectOpenError(manifest, {"field 'kernels' must be a list"});
  manifest["kernels"] = {1};
  expectOpenError(manifest, {"kernel #0: expected an object, got 1"});
}

TEST(Manifest, VersionOneAbi) {
  expectOpenError(
      oneKernel([](Json &e) { e["abi"] = "memref-descriptor-v1-index32"; }),
      {"kernel #0 (k0): kernel ABI memref-descriptor-v1-index32 (manifest "
       "version 1) is no longer supported",
       "rebuild the kernel library"});
  expectOpenError(oneKernel([](Json &e) { e["abi"] = "tiled-attn-v3"; }),
                  {"kernel #0 (k0): field 'abi' must be 'tiled-attn-v2', got "
                   "\"tiled-attn-v3\""});
}

TEST(Manifest, MissingFields) {
  for (const char *field :
       {"name", "arch", "dtype", "head_dim", "causal", "symbol", "ptx", "block",
        "block_m", "shared_bytes", "abi", "index_bits", "params"}) {
    SCOPED_TRACE(field);
    expectOpenError(oneKernel([&](Json &e) { e.erase(field); }),
                    {std::string("missing field '") + field + "'"});
  }
}

TEST(Manifest, BadFields) {
  struct Case {
    const char *field;
    Json value;
    const char *message;
  } cases[] = {
      {"arch", "sm_8", "field 'arch' must be an arch like 'sm_80' or 'sm_90a'"},
      {"arch", "compute_80", "field 'arch' must be an arch like"},
      {"arch", "sm_90b", "field 'arch' must be an arch like"},
      {"dtype", "f32",
       "field 'dtype' must be one of 'f16', 'bf16', got "
       "\"f32\""},
      {"causal", true,
       "field 'causal' must be one of 'none', 'top_left', "
       "'bottom_right', 'window', got true"},
      {"head_dim", 0, "field 'head_dim' must be an integer >= 1, got 0"},
      {"head_dim", 64.5, "field 'head_dim' must be an integer >= 1, got 64.5"},
      {"block", Json({128, 1}),
       "field 'block' must be a list of 3 positive "
       "integers, got [128,1]"},
      {"block", Json({64, 32, 1}),
       "field 'block' must be at most 1024 "
       "threads, got [64,32,1]"},
      {"block_m", -1, "field 'block_m' must be an integer >= 1, got -1"},
      {"shared_bytes", "16K", "field 'shared_bytes' must be an integer >= 0"},
      {"index_bits", 16, "field 'index_bits' must be 32 or 64, got 16"},
      {"index_bits", 48, "field 'index_bits' must be 32 or 64, got 48"},
      {"align_bytes", 24, "field 'align_bytes' must be a power of two, got 24"},
      {"symbol", 7, "field 'symbol' must be a non-empty string, got 7"},
      {"schedule", "x", "field 'schedule' must be an object, got \"x\""},
      {"params", Json::object(),
       "field 'params' must be a list of "
       "parameters, got {}"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    expectOpenError(oneKernel([&](Json &e) { e[c.field] = c.value; }),
                    {std::string("kernel #0 (k0): ") + c.message});
  }
}

TEST(Manifest, BadName) {
  expectOpenError(oneKernel([](Json &e) { e["name"] = ""; }),
                  {"kernel #0: field 'name' must be a non-empty string, got "
                   "\"\""});
}

TEST(Manifest, ScheduleFields) {
  expectOpenError(oneKernel([](Json &e) { e["schedule"]["block_n"] = 0; }),
                  {"field 'schedule.block_n' must be an integer >= 1"});
  expectOpenError(oneKernel([](Json &e) { e["schedule"]["options"] = 1; }),
                  {"field 'schedule.options' must be a string, got 1"});
  // The default schedule's options are empty; other keys are ignored.
  TempDir dir;
  Json entry = kernelEntry("k0");
  entry["schedule"] = {{"options", ""}, {"warps", 4}, {"exp2", true}};
  writeLibrary(dir, manifestOf({entry}));
  Library library;
  EXPECT_EQ(library.open(dir.path()), TA_OK) << lastError();
}

TEST(Manifest, Files) {
  expectOpenError(manifestOf({kernelEntry("k0")}),
                  {"kernel #0 (k0): field 'ptx' names k0.ptx, which is "
                   "missing from"},
                  /*writeImages=*/false);
  expectOpenError(oneKernel([](Json &e) { e["ptx"] = "../outside.ptx"; }),
                  {"field 'ptx' must be a file name inside the library "
                   "folder, got \"../outside.ptx\""});
  expectOpenError(
      oneKernel([](Json &e) { e["ptx"] = "/etc/passwd"; }),
      {"field 'ptx' must be a file name inside the library folder"});
  expectOpenError(
      oneKernel([](Json &e) {
        e["cubin"] = {{"sm_9", "k0.cubin"}};
      }),
      {"field 'cubin' must be an arch like 'sm_80' or 'sm_90a', got \"sm_9\""});
  expectOpenError(oneKernel([](Json &e) {
                    e["cubin"] = {{"sm_90", 5}};
                  }),
                  {"field 'cubin.sm_90' must be a file name, got 5"});
  // A cubin named but not written.
  TempDir dir;
  Json manifest = manifestOf({kernelEntry("k0")});
  writeLibrary(dir, manifest);
  manifest["kernels"][0]["cubin"] = {{"sm_90", "k0.sm_90.cubin"}};
  dir.write("manifest.json", manifest.dump());
  Library library;
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("field 'cubin.sm_90' names "
                                     "k0.sm_90.cubin, which is missing"));
}

TEST(Manifest, SymlinkOutOfTheFolder) {
  TempDir outside, dir;
  outside.write("real.ptx", "// ptx\n");
  Json manifest = manifestOf({kernelEntry("k0")});
  writeLibrary(dir, manifest);
  std::filesystem::remove(dir.path() + "/k0.ptx");
  std::filesystem::create_symlink(outside.path() + "/real.ptx",
                                  dir.path() + "/k0.ptx");
  Library library;
  EXPECT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("field 'ptx' must be a file name inside "
                                     "the library folder"));
}

TEST(Manifest, DuplicateNames) {
  expectOpenError(manifestOf({kernelEntry("k0"), kernelEntry("k0")}),
                  {"kernel #1: kernel name 'k0' appears twice"});
}

TEST(Manifest, BadParams) {
  struct Case {
    Json param;
    const char *message;
  } cases[] = {
      {1, "field 'params[0]' must be an object, got 1"},
      {{{"name", "q"}, {"kind", "offset"}, {"type", "i64"}},
       "field 'params[0].kind' must be one of 'base', 'size', 'stride', "
       "'scalar', 'tensor_map', got \"offset\""},
      {{{"name", "x"}, {"kind", "base"}, {"type", "ptr"}},
       "field 'params[0].name' must be one of 'q', 'k', 'v', 'o', 'lse', "
       "'cu_seqlens_q', 'cu_seqlens_k', 'seqused_k', got \"x\""},
      {{{"name", "q"}, {"kind", "scalar"}, {"type", "f32"}},
       "field 'params[0].name' must be 'scale', 'window_lo', 'window_hi', "
       "'window_align', 'softcap' or 'num_splits' for kind 'scalar', got "
       "\"q\""},
      {{{"name", "q"}, {"kind", "base"}, {"type", "i64"}},
       "field 'params[0].type' must be 'ptr' for kind 'base', got \"i64\""},
      {{{"name", "q"}, {"kind", "size"}, {"dim", 0}, {"type", "u32"}},
       "field 'params[0].type' must be 'i32' or 'i64' for kind 'size', got "
       "\"u32\""},
      {{{"name", "scale"}, {"kind", "scalar"}, {"type", "f64"}},
       "field 'params[0].type' must be 'f32' for kind 'scalar'"},
      {{{"name", "q"}, {"kind", "stride"}, {"dim", 4}, {"type", "i32"}},
       "field 'params[0].dim' must be an integer from 0 to 3, got 4"},
      {{{"name", "q"}, {"kind", "stride"}, {"type", "i32"}},
       "missing field 'params[0].dim'"},
      {{{"name", "k"}, {"kind", "tensor_map"}, {"type", "ptr"}},
       "field 'params[0].type' must be 'tensor_map' for kind 'tensor_map'"},
      {{{"name", "k"}, {"kind", "tensor_map"}, {"type", "tensor_map"}},
       "missing field 'params[0].box'"},
      {{{"name", "k"},
        {"kind", "tensor_map"},
        {"type", "tensor_map"},
        {"box", {512, 64}}},
       "field 'params[0].box' must be [rows, cols], each from 1 to 256, got "
       "[512,64]"},
      {{{"name", "k"},
        {"kind", "tensor_map"},
        {"type", "tensor_map"},
        {"box", {64, 4}}},
       "field 'params[0].box' must be a box whose rows are a multiple of 16 "
       "bytes (4 f16 elements are 8 bytes)"},
      {{{"name", "k"},
        {"kind", "tensor_map"},
        {"type", "tensor_map"},
        {"box", {64, 128}},
        {"swizzle", 128}},
       "field 'params[0].box' must be a box whose rows fit the 128-byte "
       "swizzle (128 f16 elements are 256 bytes)"},
      {{{"name", "k"},
        {"kind", "tensor_map"},
        {"type", "tensor_map"},
        {"box", {64, 64}},
        {"swizzle", 16}},
       "field 'params[0].swizzle' must be 0, 32, 64 or 128 (bytes), got 16"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    expectOpenError(
        oneKernel([&](Json &e) { e["params"] = Json::array({c.param}); }),
        {std::string("kernel #0 (k0): ") + c.message});
  }
}

TEST(Manifest, ParamLimits) {
  Json many = Json::array();
  for (int i = 0; i < TA_MAX_PARAMS + 1; ++i)
    many.push_back({{"name", "q"}, {"kind", "base"}, {"type", "ptr"}});
  expectOpenError(oneKernel([&](Json &e) { e["params"] = many; }),
                  {"field 'params' must hold at most 128 parameters, got 129"});
  Json maps = Json::array();
  for (int i = 0; i < 33; ++i)
    maps.push_back({{"name", "k"},
                    {"kind", "tensor_map"},
                    {"type", "tensor_map"},
                    {"box", {64, 64}}});
  expectOpenError(oneKernel([&](Json &e) { e["params"] = maps; }),
                  {"field 'params' must pack into 4096 bytes, but params[32] "
                   "ends at byte 4224"});
}

TEST(Manifest, RepeatedParamsAreAllowed) {
  // A memref-style list passes the base pointer twice (allocated, aligned).
  TempDir dir;
  Json entry = kernelEntry("k0");
  entry["params"] =
      Json::array({{{"name", "q"}, {"kind", "base"}, {"type", "ptr"}},
                   {{"name", "q"}, {"kind", "base"}, {"type", "ptr"}}});
  writeLibrary(dir, manifestOf({entry}));
  Library library;
  EXPECT_EQ(library.open(dir.path()), TA_OK) << lastError();
}

TEST(Manifest, WindowKernels) {
  // A "window" kernel takes window_lo and window_hi, i32 or i64, anywhere.
  TempDir dir;
  Json window = kernelEntry("w");
  window["causal"] = "window";
  window["params"].push_back(
      {{"name", "window_hi"}, {"kind", "scalar"}, {"type", "i32"}});
  Json lo = {{"name", "window_lo"}, {"kind", "scalar"}, {"type", "i64"}};
  window["params"].insert(window["params"].begin(), lo);
  writeLibrary(dir, manifestOf({window}));
  Library library;
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_STREQ(info.mask, "window");
  EXPECT_EQ(info.num_params, 39);
}

TEST(Manifest, WindowParams) {
  auto withParam = [](Json &e, const char *name, const char *type) {
    e["params"].push_back({{"name", name}, {"kind", "scalar"}, {"type", type}});
  };
  // A window kernel without its band.
  expectOpenError(oneKernel([&](Json &e) {
                    e["causal"] = "window";
                    withParam(e, "window_lo", "i64");
                  }),
                  {"kernel #0 (k0): a kernel of 'causal' 'window' takes the "
                   "scalar 'window_hi' (the band of diagonals it computes), "
                   "which field 'params' lacks"});
  expectOpenError(oneKernel([&](Json &e) { e["causal"] = "window"; }),
                  {"kernel #0 (k0): a kernel of 'causal' 'window' takes the "
                   "scalar 'window_lo'"});
  // Another kernel with one.
  expectOpenError(oneKernel([&](Json &e) {
                    e["causal"] = "top_left";
                    withParam(e, "window_hi", "i64");
                  }),
                  {"kernel #0 (k0): field 'params[37]' is the scalar "
                   "'window_hi', which only a kernel of 'causal' 'window' "
                   "takes (this one is 'top_left')"});
  expectOpenError(
      oneKernel([&](Json &e) { withParam(e, "window_lo", "i32"); }),
      {"field 'params[37]' is the scalar 'window_lo', which only a kernel of "
       "'causal' 'window' takes (this one is 'none')"});
  // Types.
  for (const char *type : {"f32", "ptr", "u32"}) {
    SCOPED_TRACE(type);
    expectOpenError(oneKernel([&](Json &e) {
                      e["causal"] = "window";
                      withParam(e, "window_lo", type);
                      withParam(e, "window_hi", "i32");
                    }),
                    {std::string("kernel #0 (k0): field 'params[37].type' "
                                 "must be 'i32' or 'i64' for scalar "
                                 "'window_lo', got \"") +
                     type + "\""});
  }
  expectOpenError(oneKernel([&](Json &e) {
                    e["causal"] = "window";
                    withParam(e, "window", "i32");
                  }),
                  {"field 'params[37].name' must be 'scale', 'window_lo', "
                   "'window_hi', 'window_align', 'softcap' or 'num_splits' "
                   "for kind 'scalar', got \"window\""});
}

TEST(Manifest, SoftcapKernels) {
  // "softcap": true and the f32 scalar softcap, anywhere in the list; with
  // "softcap": false or absent, neither.
  TempDir dir;
  Json window = kernelEntry("ws");
  window["causal"] = "window";
  window["softcap"] = true;
  for (const char *name : {"window_lo", "window_hi"})
    window["params"].push_back(
        {{"name", name}, {"kind", "scalar"}, {"type", "i64"}});
  window["params"].push_back(
      {{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  Json first = kernelEntry("ns");
  first["softcap"] = true;
  first["params"].insert(
      first["params"].begin(),
      Json{{"name", "softcap"}, {"kind", "scalar"}, {"type", "f32"}});
  Json off = kernelEntry("plain");
  off["softcap"] = false;
  writeLibrary(dir, manifestOf({window, first, off}));
  Library library;
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  ta_kernel_info info;
  ASSERT_EQ(ta_library_kernel(library.get(), 0, &info), TA_OK);
  EXPECT_STREQ(info.mask, "window");
  EXPECT_EQ(info.softcap, 1);
  EXPECT_EQ(info.num_params, 40);
  ASSERT_EQ(ta_library_kernel(library.get(), 1, &info), TA_OK);
  EXPECT_STREQ(info.mask, "none");
  EXPECT_EQ(info.softcap, 1);
  EXPECT_EQ(info.num_params, 38);
  ASSERT_EQ(ta_library_kernel(library.get(), 2, &info), TA_OK);
  EXPECT_EQ(info.softcap, 0);
}

TEST(Manifest, SoftcapParams) {
  auto withSoftcap = [](Json &e, const char *type = "f32") {
    e["params"].push_back(
        {{"name", "softcap"}, {"kind", "scalar"}, {"type", type}});
  };
  // softcap true without the parameter.
  expectOpenError(oneKernel([&](Json &e) { e["softcap"] = true; }),
                  {"kernel #0 (k0): a kernel of 'softcap' true takes the "
                   "scalar 'softcap' (the cap of its scores), which field "
                   "'params' lacks"});
  // The parameter without softcap true.
  expectOpenError(oneKernel([&](Json &e) { withSoftcap(e); }),
                  {"kernel #0 (k0): field 'params[37]' is the scalar "
                   "'softcap', which only a kernel of 'softcap' true takes "
                   "(this one's 'softcap' is absent)"});
  expectOpenError(oneKernel([&](Json &e) {
                    e["softcap"] = false;
                    withSoftcap(e);
                  }),
                  {"kernel #0 (k0): field 'params[37]' is the scalar "
                   "'softcap', which only a kernel of 'softcap' true takes "
                   "(this one's 'softcap' is false)"});
  // A type other than f32.
  for (const char *type : {"i32", "i64", "f64", "ptr"}) {
    SCOPED_TRACE(type);
    expectOpenError(oneKernel([&](Json &e) {
                      e["softcap"] = true;
                      withSoftcap(e, type);
                    }),
                    {std::string("kernel #0 (k0): field 'params[37].type' "
                                 "must be 'f32' for scalar 'softcap', got \"") +
                     type + "\""});
  }
  // softcap must be a boolean.
  for (Json value : {Json(1), Json("true"), Json(50.0)}) {
    SCOPED_TRACE(value.dump());
    expectOpenError(oneKernel([&](Json &e) {
                      e["softcap"] = value;
                      withSoftcap(e);
                    }),
                    {"kernel #0 (k0): field 'softcap' must be true or false, "
                     "got " +
                     value.dump()});
  }
}
