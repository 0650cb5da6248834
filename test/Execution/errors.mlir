// Malformed input gets a clear error from tiled-attn-run, never a crash.

// RUN: not tiled-attn-run %s 2>&1 | FileCheck %s --check-prefix=NOKERNEL
// NOKERNEL: error: no function with a 'tile.sdpa' attribute

// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --kernel=nope 2>&1 | FileCheck %s --check-prefix=NONAME
// NONAME: error: no function named 'nope'

// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --shapes=17 2>&1 | FileCheck %s --check-prefix=SHAPES
// SHAPES: error: --shapes: expected SQxSK (e.g. 17x33), got '17'

// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --shapes=0x4 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: --shapes: sequence lengths must be at least 1, got '0x4'

// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --layout=sbhd 2>&1 | FileCheck %s --check-prefix=LAYOUT
// LAYOUT: error: --layout must be bhsd or bshd, got 'sbhd'

// A problem too large for the host (or whose size overflows) is refused
// before anything is allocated.
// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --batch=9223372036854775807 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: error: the problem (--batch 9223372036854775807, --heads 3, --kv-heads 3, --shapes {{.*}}) needs more than 2^63 elements of q, k, v and o; the host executor takes at most 134217728 (2^27) at once
// RUN: not tiled-attn-run %repo/examples/sdpa_fwd.mlir --batch=1000 --shapes=1000x1000 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LARGE
// LARGE: error: the problem (--batch 1000, --heads 3, --kv-heads 3, --shapes 1000x1000) needs 771000000 elements
// --help lists the tool's options, not LLVM's.
// RUN: tiled-attn-run --help | FileCheck %s --check-prefix=HELP
// HELP: tiled-attn-run options:
// HELP: --batch=<long>
// HELP-NOT: --aarch64

// RUN: not tiled-attn-run %s.missing 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: cannot open input file

// RUN: echo 'func.func @f(' | not tiled-attn-run 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error:

// A load whose in_bounds promise is false is reported, not padded: the
// generated kernel's K load, marked in_bounds, with S_k = 5 < BLOCK_N.
// RUN: tiled-attn-opt %repo/examples/sdpa_fwd.mlir \
// RUN:   | sed -e 's/pad(0.000000e+00) transpose/pad(0.000000e+00) transpose in_bounds/' \
// RUN:   | not tiled-attn-run --shapes=4x5 2>&1 | FileCheck %s --check-prefix=IN-BOUNDS
// IN-BOUNDS: error: load marked in_bounds reads outside the view, at indices [0, 0, 0, 0]

// So is a gather's: the document ids read at 16 key positions, marked
// in_bounds, with S_k = 5.
// RUN: tiled-attn-opt %repo/kernels/functions/document.mlir \
// RUN:   --tile-generate-sdpa="head-dim=16 variant=none+document block-m=16 block-n=16" --tile-schedule \
// RUN:   | sed -e 's/pad(0.000000e+00) : <?x?xi32>/pad(0.000000e+00) in_bounds : <?x?xi32>/' \
// RUN:   | not tiled-attn-run --shapes=5x5 --capture=document_ids=BxSk:0:2 2>&1 | FileCheck %s --check-prefix=GATHER-IN-BOUNDS
// GATHER-IN-BOUNDS: error: gather marked in_bounds reads outside the view, at element 5 of its result

// An op the interpreter does not know is reported on the op.
// RUN: tiled-attn-opt --tile-decompose-online-softmax %repo/examples/sdpa_fwd.mlir \
// RUN:   | sed -e 's/math.exp/math.cos/' | not tiled-attn-run --shapes=4x4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: error: host execution does not support 'math.cos'

// A loop that would not end in any useful time (from INT64_MIN: 2^63 + 1
// iterations, a hang before, found by test/Fuzz) is refused before it runs.
// RUN: sed -e 's/%c1 = arith.constant 1 : index/%c1 = arith.constant 1 : index\n  %cmin = arith.constant -9223372036854775808 : index/' \
// RUN:     -e 's/scf.for %j = %c0 to/scf.for %j = %cmin to/' %repo/examples/sdpa_fwd.mlir \
// RUN:   | not tiled-attn-run --shapes=4x4 2>&1 | FileCheck %s --check-prefix=TRIPS
// TRIPS: error: host execution: this loop would run 9223372036854775809 iterations (from -9223372036854775808 to 1 step 1), past the 134217728 (2^27) a program instance may run on the host

// A tensor no CTA holds is refused by the verifier before the interpreter
// allocates it (an out-of-memory abort before, found by test/Fuzz).
// RUN: sed -e 's/%c1 = arith.constant 1 : index/%c1 = arith.constant 1 : index\n  %huge = arith.constant dense<8.0> : tensor<4294967296xf32>/' \
// RUN:     %repo/examples/sdpa_fwd.mlir | not tiled-attn-run --shapes=4x4 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: 'func.func' op with 'tile.sdpa' holds a 'tensor<4294967296xf32>' of 4294967296 elements; a tile may have at most 65536

func.func @not_a_kernel() {
  return
}
