//===- TestLibrary.cpp - Kernel libraries for the runtime's tests ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace tatest;
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern =
      (fs::temp_directory_path() / "tiled-attn-rt-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data()))
    std::abort();
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void TempDir::write(const std::string &name, const std::string &text) const {
  fs::path file = fs::path(path_) / name;
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

Json tatest::standardParams(const std::string &indexType) {
  Json params = Json::array();
  for (const char *name : {"q", "k", "v", "o"}) {
    params.push_back({{"name", name}, {"kind", "base"}, {"type", "ptr"}});
    for (const char *kind : {"size", "stride"})
      for (int dim = 0; dim < 4; ++dim)
        params.push_back({{"name", name},
                          {"kind", kind},
                          {"dim", dim},
                          {"type", indexType}});
  }
  params.push_back({{"name", "scale"}, {"kind", "scalar"}, {"type", "f32"}});
  return params;
}

Json tatest::kernelEntry(const std::string &name) {
  return Json{{"name", name},
              {"arch", "sm_80"},
              {"dtype", "f16"},
              {"head_dim", 64},
              {"causal", "none"},
              {"symbol", "sdpa_fwd"},
              {"ptx", name + ".ptx"},
              {"block", {128, 1, 1}},
              {"block_m", 64},
              {"shared_bytes", 16384},
              {"abi", "tiled-attn-v2"},
              {"index_bits", 64},
              {"params", standardParams()},
              {"schedule", {{"block_n", 32}, {"options", "block-m=64"}}},
              {"ptxas", {{"registers", 128}}}};
}

std::string tatest::fakePtx(const std::string &symbol, const Json &params,
                            const std::string &marker) {
  std::string text = "// " + marker + "\n.visible .entry " + symbol + "(\n";
  int i = 0;
  for (const Json &param : params) {
    if (!param.is_object() || !param.contains("type") ||
        !param["type"].is_string())
      continue;
    std::string type = param["type"].get<std::string>();
    std::string name = "p" + std::to_string(i++);
    if (type == "tensor_map")
      text += "  .param .align 64 .b8 " + name + "[128],\n";
    else if (type == "i32" || type == "f32")
      text += "  .param .u32 " + name + ",\n";
    else
      text += "  .param .u64 " + name + ",\n";
  }
  return text + ")\n{\n  ret;\n}\n";
}

void tatest::writeLibrary(const TempDir &dir, const Json &manifest,
                          bool writeImages) {
  dir.write("manifest.json", manifest.dump(2));
  if (!writeImages || !manifest.contains("kernels"))
    return;
  for (const Json &entry : manifest["kernels"]) {
    if (!entry.is_object() || !entry.contains("ptx") ||
        !entry["ptx"].is_string())
      continue;
    std::string symbol = "sdpa_fwd";
    if (entry.contains("symbol") && entry["symbol"].is_string())
      symbol = entry["symbol"].get<std::string>();
    Json params = Json::array();
    if (entry.contains("params") && entry["params"].is_array())
      params = entry["params"];
    dir.write(entry["ptx"].get<std::string>(), fakePtx(symbol, params));
    if (entry.contains("cubin") && entry["cubin"].is_object())
      for (const auto &[arch, file] : entry["cubin"].items())
        if (file.is_string())
          dir.write(file.get<std::string>(),
                    kFakeCubinHeader +
                        fakePtx(symbol, params, "cubin " + arch));
  }
}

Json tatest::manifestOf(const std::vector<Json> &entries) {
  return Json{
      {"version", 2}, {"generator", "test"}, {"kernels", Json(entries)}};
}

ta_status Library::open(const std::string &dir) {
  close();
  return ta_library_open(dir.c_str(), &library_);
}

void tatest::contiguous(ta_tensor &t, uint64_t data, int64_t b, int64_t h,
                        int64_t s, int64_t d) {
  t.data = data;
  int64_t sizes[4] = {b, h, s, d};
  int64_t stride = 1;
  for (int dim = 3; dim >= 0; --dim) {
    t.sizes[dim] = sizes[dim];
    t.strides[dim] = stride;
    stride *= sizes[dim] > 0 ? sizes[dim] : 1;
  }
}

ta_sdpa_args tatest::problem(int64_t b, int64_t h, int64_t sq, int64_t sk,
                             int64_t d) {
  ta_sdpa_args args = {};
  contiguous(args.q, 0x100000000, b, h, sq, d);
  contiguous(args.k, 0x200000000, b, h, sk, d);
  contiguous(args.v, 0x300000000, b, h, sk, d);
  contiguous(args.o, 0x400000000, b, h, sq, d);
  args.dtype = TA_DTYPE_F16;
  args.mask = TA_MASK_NONE;
  args.scale = 0.125f;
  args.kernel = nullptr;
  return args;
}

std::string tatest::lastError() { return ta_last_error(); }

void tatest::expectOpenError(const Json &manifest,
                             const std::vector<std::string> &parts,
                             bool writeImages) {
  TempDir dir;
  writeLibrary(dir, manifest, writeImages);
  Library library;
  ASSERT_EQ(library.open(dir.path()), TA_ERROR_LIBRARY);
  EXPECT_EQ(library.get(), nullptr);
  std::string message = lastError();
  EXPECT_THAT(message, testing::HasSubstr(dir.path() + "/manifest.json"));
  for (const std::string &part : parts)
    EXPECT_THAT(message, testing::HasSubstr(part));
}

ta_capture tatest::viewCapture(const char *name, ta_capture_type type,
                               uint64_t data, const std::vector<int64_t> &sizes,
                               const std::vector<int64_t> &strides) {
  ta_capture c = {};
  c.name = name;
  c.type = type;
  c.rank = static_cast<int32_t>(sizes.size());
  c.data = data;
  for (size_t d = 0; d < sizes.size() && d < 4; ++d)
    c.sizes[d] = sizes[d], c.strides[d] = strides[d];
  return c;
}

ta_window tatest::window(int64_t left, int64_t right, bool bottomRight) {
  ta_window w = {};
  w.enabled = 1;
  w.bottom_right = bottomRight;
  w.left = left;
  w.right = right;
  return w;
}

void tatest::ChoiceTest::open(const std::vector<Json> &entries) {
  writeLibrary(dir, manifestOf(entries));
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
}

std::string tatest::ChoiceTest::chosen(int major, int minor) {
  ta_status status = ta_sdpa_plan(library.get(), &args, major, minor, &plan);
  if (status != TA_OK)
    return "error " + std::to_string(status) + ": " + lastError();
  ta_kernel_info info;
  EXPECT_EQ(ta_library_kernel(library.get(), plan.kernel, &info), TA_OK);
  return info.name;
}

const char *tatest::fakeCudaPath() { return FAKE_CUDA_PATH; }

int main(int argc, char **argv) {
  // Every library of the tests opens the fake driver, unless a test says
  // otherwise.
  setenv("TILED_ATTN_LIBCUDA", FAKE_CUDA_PATH, 1);
  unsetenv("TILED_ATTN_KERNELS");
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
