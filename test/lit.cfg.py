# -*- Python -*-
# lit configuration for the tiled-attn regression tests.

import os
import shutil

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILED_ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tiled_attn_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%repo", config.tiled_attn_src_root))

# The NVVM target links libdevice (for math.exp2, math.fma, ...) from the CUDA
# toolkit that these variables name; without it the PTX keeps unresolved
# __nv_* calls. Tests see the toolkit the user's shell sees.
llvm_config.with_system_environment(["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"])

# ptxas (from the CUDA toolkit) validates the PTX of every target; the tests
# that need it say `REQUIRES: ptxas`.
ptxas = shutil.which("ptxas", path=config.environment.get("PATH", os.environ.get("PATH")))
if not ptxas and os.access("/usr/local/cuda/bin/ptxas", os.X_OK):
    ptxas = "/usr/local/cuda/bin/ptxas"
if ptxas:
    config.available_features.add("ptxas")
    llvm_config.with_environment("PATH", os.path.dirname(ptxas), append_path=True)
else:
    lit_config.note("ptxas not found: PTX validation tests are skipped (install the CUDA toolkit or put ptxas on PATH)")

# Our tools first, then FileCheck, not, count and split-file from LLVM.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tiled_attn_tools_dir, append_path=True)

tool_dirs = [config.tiled_attn_tools_dir, config.llvm_tools_dir]
tools = ["tiled-attn-opt", "tiled-attn-run", "tiled-attn-compile", "FileCheck", "not", "count", "split-file"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The encodings' unit tests (test/Target), built when GoogleTest is there.
target_tests = os.path.join(config.tiled_attn_tools_dir, "tiled-attn-target-tests")
if os.path.exists(target_tests):
    config.available_features.add("target-tests")
    config.substitutions.append(("%target_tests", target_tests))

# The kernel builders' unit tests (test/Kernels), built when GoogleTest is
# there.
kernel_tests = os.path.join(config.tiled_attn_tools_dir, "tiled-attn-kernel-tests")
if os.path.exists(kernel_tests):
    config.available_features.add("kernel-tests")
    config.substitutions.append(("%kernel_tests", kernel_tests))

# The runtime library (lib/Runtime): its unit tests on the fake libcuda, and
# the C++ example built against the installed CMake package. Present when
# the build has them (TILED_ATTN_BUILD_RUNTIME, GoogleTest).
runtime_lib = os.path.join(config.tiled_attn_libs_dir, "libtiled_attn_runtime.so")
fake_cuda = os.path.join(config.tiled_attn_libs_dir, "libfakecuda.so")
runtime_tests = os.path.join(config.tiled_attn_tools_dir, "tiled-attn-runtime-tests")
if os.path.exists(runtime_tests):
    config.available_features.add("runtime-tests")
    config.substitutions.append(("%runtime_tests", runtime_tests))
if os.path.exists(runtime_lib) and os.path.exists(fake_cuda):
    config.available_features.add("runtime")
    cuda_root = os.path.dirname(config.tiled_attn_cuda_include_dir)
    config.substitutions.append(("%tiled_attn_obj_root", config.tiled_attn_obj_root))
    config.substitutions.append(("%fake_cuda", fake_cuda))
    config.substitutions.append(("%cuda_root", cuda_root))
    config.substitutions.append(("%cmake_generator", '"%s"' % config.cmake_generator))
    config.substitutions.append(("%cmake", config.cmake_command))
    if os.path.exists(os.path.join(cuda_root, "lib64", "stubs", "libcuda.so")):
        config.available_features.add("cuda-stub")
