#!/usr/bin/env bash
# Set up and build as scripts/run.sh does, then run the whole test suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$REPO_ROOT"
echo "== lit suite"
"$LLVM_PREFIX/bin/lit" -v "$BUILD_DIR/test"
echo "== Python runtime (validation, manifest and launch tests; no GPU needed)"
"$VENV/bin/python" -m pytest -q "$REPO_ROOT/python/tests"
