# -*- Python -*-
# lit configuration for the tiled-attn regression tests.

import os

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TILED_ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tiled_attn_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%repo", config.tiled_attn_src_root))

# Our tools first, then FileCheck, not and count from LLVM.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tiled_attn_tools_dir, append_path=True)

tool_dirs = [config.tiled_attn_tools_dir, config.llvm_tools_dir]
tools = ["tiled-attn-opt", "tiled-attn-run", "FileCheck", "not", "count"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
