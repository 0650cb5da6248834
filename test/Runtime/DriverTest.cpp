//===- DriverTest.cpp - Driver errors and a missing driver ----------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every failed driver call is a TA_ERROR_DRIVER naming the call, the error's
// name and code and the driver's description; a missing libcuda, a library
// that is not a driver, and the CUDA toolkit's stub libcuda are clear
// TA_ERROR_DRIVERs too.
//
// The runtime loads one driver per $TILED_ATTN_LIBCUDA path and keeps it, so
// tests of what happens while a driver loads (cuInit, the device queries,
// the primary context) point $TILED_ATTN_LIBCUDA at a fresh symlink to the
// fake: a new path, the same fake.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "TestLibrary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <fstream>

using namespace tatest;
using testing::HasSubstr;

namespace {

class Driver : public testing::Test {
protected:
  void SetUp() override {
    fakecuda::reset();
    writeLibrary(dir, manifestOf({kernelEntry("k")}));
  }
  void TearDown() override {
    setenv("TILED_ATTN_LIBCUDA", fakeCudaPath(), 1);
    fakecuda::setCurrent(nullptr);
    fakecuda::reset();
  }

  /// Points $TILED_ATTN_LIBCUDA at `path` and opens the library.
  void openWithDriver(const std::string &path) {
    setenv("TILED_ATTN_LIBCUDA", path.c_str(), 1);
    ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  }

  /// A new symlink to the fake driver, which the runtime has not loaded.
  std::string freshFake() {
    static int count = 0;
    std::string path =
        links.path() + "/libcuda-" + std::to_string(count++) + ".so";
    std::filesystem::create_symlink(fakeCudaPath(), path);
    return path;
  }

  ta_status sdpa(int device = 0) {
    return ta_sdpa(library.get(), &args, device, nullptr);
  }

  TempDir dir, links;
  Library library;
  ta_sdpa_args args = problem(2, 3, 77, 131, 64);
};

} // namespace

TEST_F(Driver, MissingLibcuda) {
  openWithDriver("/nonexistent/libcuda.so.1");
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(),
            "cannot load the CUDA driver (/nonexistent/libcuda.so.1, from "
            "$TILED_ATTN_LIBCUDA): /nonexistent/libcuda.so.1: cannot open "
            "shared object file: No such file or directory; tiled-attn needs "
            "an NVIDIA GPU and its driver");
  // Planning a kernel without TMA descriptors needs no driver.
  ta_launch_plan plan;
  EXPECT_EQ(ta_sdpa_plan(library.get(), &args, 9, 0, &plan), TA_OK)
      << lastError();
}

TEST_F(Driver, DefaultLibcudaOnAMachineWithoutOne) {
  if (void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(handle);
    GTEST_SKIP() << "libcuda.so.1 is present";
  }
  if (void *handle = dlopen("libcuda.so.1", RTLD_LAZY)) {
    dlclose(handle);
    GTEST_SKIP() << "libcuda.so.1 is present";
  }
  unsetenv("TILED_ATTN_LIBCUDA");
  ASSERT_EQ(library.open(dir.path()), TA_OK) << lastError();
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_THAT(lastError(), HasSubstr("cannot load the CUDA driver "
                                     "(libcuda.so.1): libcuda.so.1: cannot "
                                     "open shared object file"));
}

TEST_F(Driver, NotADriver) {
  openWithDriver("libm.so.6");
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(), "the CUDA driver libm.so.6 lacks cuInit; it is too "
                         "old or not a CUDA driver");
}

TEST_F(Driver, ToolkitStubLibrary) {
  if (!std::filesystem::exists(CUDA_STUB_PATH))
    GTEST_SKIP() << CUDA_STUB_PATH << " is absent";
  openWithDriver(CUDA_STUB_PATH);
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(),
            "cuInit(0) failed: CUDA_ERROR_STUB_LIBRARY (34): the loaded "
            "libcuda is the CUDA toolkit's stub library, not a real driver; "
            "install the NVIDIA driver or put its libcuda.so.1 on the library "
            "path (" CUDA_STUB_PATH ")");
}

TEST_F(Driver, FailedInitIsNotRemembered) {
  std::string path = freshFake();
  openWithDriver(path);
  fakecuda::fail("cuInit", CUDA_ERROR_NO_DEVICE);
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(), "cuInit(0) failed: CUDA_ERROR_NO_DEVICE (100): no "
                         "CUDA-capable device is detected");
  fakecuda::fail("cuInit", CUDA_SUCCESS);
  EXPECT_EQ(sdpa(), TA_OK) << lastError();
}

TEST_F(Driver, FailuresWhileLoading) {
  struct Case {
    const char *call;
    CUresult result;
    const char *message;
  } cases[] = {
      {"cuDeviceGetCount", CUDA_ERROR_NOT_INITIALIZED,
       "cuDeviceGetCount failed: CUDA_ERROR_NOT_INITIALIZED (3): "
       "initialization error"},
      {"cuDeviceGet", CUDA_ERROR_INVALID_DEVICE,
       "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE (101): invalid device "
       "ordinal"},
      {"cuDeviceGetAttribute", CUDA_ERROR_INVALID_VALUE,
       "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR) failed: "
       "CUDA_ERROR_INVALID_VALUE (1): invalid argument"},
      {"cuDevicePrimaryCtxRetain", CUDA_ERROR_OUT_OF_MEMORY,
       "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of "
       "memory"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.call);
    openWithDriver(freshFake());
    fakecuda::fail(c.call, c.result);
    EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
    EXPECT_EQ(lastError(), c.message);
    fakecuda::fail(c.call, CUDA_SUCCESS);
    EXPECT_EQ(sdpa(), TA_OK) << lastError();
  }
}

TEST_F(Driver, FailuresOfALaunch) {
  struct Case {
    const char *call;
    CUresult result;
    const char *message;
  } cases[] = {
      {"cuCtxGetCurrent", CUDA_ERROR_DEINITIALIZED,
       "cuCtxGetCurrent failed: CUDA_ERROR_DEINITIALIZED (4): driver "
       "shutting down"},
      {"cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT,
       "cuCtxPushCurrent failed: CUDA_ERROR_INVALID_CONTEXT (201): invalid "
       "device context"},
      {"cuModuleLoadDataEx", CUDA_ERROR_OUT_OF_MEMORY,
       "cuModuleLoadDataEx(k.ptx, ptx) failed: CUDA_ERROR_OUT_OF_MEMORY (2): "
       "out of memory"},
      {"cuModuleGetFunction", CUDA_ERROR_NOT_FOUND,
       "cuModuleGetFunction('sdpa_fwd' in kernel k) failed: "
       "CUDA_ERROR_NOT_FOUND (500): named symbol not found"},
      {"cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
       "cuLaunchKernel(kernel k, grid (2, 3, 2), block (128, 1, 1), "
       "shared_bytes 16384) failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): "
       "too many resources requested for launch"},
      {"cuCtxPopCurrent", CUDA_ERROR_INVALID_CONTEXT,
       "cuCtxPopCurrent failed: CUDA_ERROR_INVALID_CONTEXT (201): invalid "
       "device context"},
      {"cuLaunchKernel", static_cast<CUresult>(12345),
       "cuLaunchKernel(kernel k, grid (2, 3, 2), block (128, 1, 1), "
       "shared_bytes 16384) failed: unknown CUDA error 12345"},
  };
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  for (const Case &c : cases) {
    SCOPED_TRACE(c.call);
    fakecuda::fail(c.call, c.result);
    EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
    EXPECT_EQ(lastError(), c.message);
    fakecuda::fail(c.call, CUDA_SUCCESS);
    if (std::string(c.call) != "cuCtxPopCurrent")
      EXPECT_EQ(fakecuda::current(), nullptr); // The pushed context is popped.
    else
      fakecuda::setCurrent(nullptr);
  }
  EXPECT_EQ(sdpa(), TA_OK) << lastError();
}

TEST_F(Driver, ContextOfTheThreadFails) {
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  fakecuda::setCurrent(fakecuda::createContext(0));
  fakecuda::fail("cuCtxGetDevice", CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(), "cuCtxGetDevice failed: CUDA_ERROR_INVALID_CONTEXT "
                         "(201): invalid device context");
}

TEST_F(Driver, JitErrorLog) {
  dir.write("k.ptx", "// ptx\nFAKE_JIT_ERROR\n");
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(),
            "cuModuleLoadDataEx(k.ptx, ptx) failed: CUDA_ERROR_INVALID_PTX "
            "(218): a PTX JIT compilation failed\nJIT log: ptxas fatal   : "
            "fake JIT error in line 1");
}

TEST_F(Driver, MissingSymbol) {
  dir.write("k.ptx", fakePtx("other_kernel", standardParams()));
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  EXPECT_EQ(sdpa(), TA_ERROR_DRIVER);
  EXPECT_EQ(lastError(), "cuModuleGetFunction('sdpa_fwd' in kernel k) "
                         "failed: CUDA_ERROR_NOT_FOUND (500): named symbol "
                         "not found");
  EXPECT_EQ(fakecuda::moduleUnloads(), 1); // The module is not kept.
}

TEST_F(Driver, KernelFileRemovedAfterOpen) {
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  std::filesystem::remove(dir.path() + "/k.ptx");
  EXPECT_EQ(sdpa(), TA_ERROR_LIBRARY);
  EXPECT_THAT(lastError(), HasSubstr("cannot read kernel file " + dir.path() +
                                     "/k.ptx: No such file or directory"));
}

TEST_F(Driver, CloseSkipsDestroyedContexts) {
  ASSERT_EQ(library.open(dir.path()), TA_OK);
  CUcontext gone = fakecuda::createContext(0);
  fakecuda::setCurrent(gone);
  ASSERT_EQ(sdpa(), TA_OK) << lastError();
  fakecuda::setCurrent(nullptr);
  ASSERT_EQ(sdpa(), TA_OK) << lastError();
  fakecuda::destroyContext(gone);
  library.close();
  EXPECT_EQ(fakecuda::moduleLoads(), 2);
  EXPECT_EQ(fakecuda::moduleUnloads(), 1);
}
