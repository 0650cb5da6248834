/*===- TiledAttn.h - The tiled-attn runtime's C API --------------*- C -*-===*\
|*                                                                            *|
|* Part of the tiled-attn project, under the Apache License v2.0 with LLVM    *|
|* Exceptions.                                                                *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* Attention with the kernels of a prebuilt library (a folder holding         *|
|* manifest.json and the PTX/cubin files it names), launched through the      *|
|* CUDA driver API. libcuda is opened at run time (dlopen), so a program      *|
|* linked against this library starts on machines without a GPU; the first   *|
|* call that needs the driver reports its absence as TA_ERROR_DRIVER.         *|
|* $TILED_ATTN_LIBCUDA, if set, names the file to open instead (for tests).   *|
|*                                                                            *|
|* Every function returns a ta_status; on failure ta_last_error() gives a     *|
|* message naming the problem (the argument and its value, or the driver      *|
|* call, the error's name and the driver's description of it). A library     *|
|* handle may be used from several threads at once.                           *|
|*                                                                            *|
|* Example (error checks left out):                                           *|
|*                                                                            *|
|*   ta_library *lib;                                                         *|
|*   ta_library_open("/opt/tiled-attn/kernels", &lib);                        *|
|*   ta_sdpa_args args = {0};                                                 *|
|*   args.q = (ta_tensor){q_ptr, {B, H, Sq, D}, {H*Sq*D, Sq*D, D, 1}};        *|
|*   ... k, v, and o (the output, written by the kernel) likewise ...         *|
|*   args.dtype = TA_DTYPE_BF16; args.mask = TA_MASK_CAUSAL_TOP_LEFT;         *|
|*   args.scale = 0.125f;                                                     *|
|*   args.window = (ta_window){1, 0, 4095, 0}; // optional: 4096-key window   *|
|*   args.softcap = 50.0f;                      // optional: Gemma 2's cap    *|
|*   args.lse = lse_ptr;             // optional: [B, H, Sq] float32 output   *|
|*   // optional: packed sequences (ta_varlen), q then [1, H, total_q, D]     *|
|*   args.varlen = (ta_varlen){1, n, cu_q, cu_k, max_q, max_k};               *|
|*   if (ta_sdpa(lib, &args, device, stream) != TA_OK)                        *|
|*     fprintf(stderr, "%s\n", ta_last_error());                              *|
|*   ta_library_close(lib);                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef TILED_ATTN_RUNTIME_TILEDATTN_H
#define TILED_ATTN_RUNTIME_TILEDATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
#define TA_ALIGNAS(n) alignas(n)
#else
#define TA_ALIGNAS(n) _Alignas(n)
#endif

#if defined(_WIN32)
#define TA_API
#else
#define TA_API __attribute__((visibility("default")))
#endif

/** The version of this API; ta_api_version() returns the library's. */
#define TA_API_VERSION 15

typedef enum ta_status {
  TA_OK = 0,
  /** A bad argument: shapes that disagree, a stride the kernels cannot take,
      a scale that is not a finite positive float32, a softcap that is not a
      finite float32 >= 0, a null pointer, a window whose bounds are below -1
      or whose alignment is not the causal mask's, a variable-length batch
      whose counts or lengths are out of range, a view whose bytes leave the
      64-bit address space, an output (o, lse) that shares memory with an
      input (q, k, v, the sequences' offsets) or with the other output, or
      o with elements that share an address (a stride of 0, say). */
  TA_ERROR_INVALID_ARGUMENT = 1,
  /** The library holds no kernel for this problem on this device (dtype,
      head dim, mask and window, softcap, log-sum-exps, variable lengths,
      architecture, kernel name). The message lists what it holds (its
      archs, dtypes and head dims for a library of more than 16 kernels;
      its archs alone when none of its kernels runs on the device). */
  TA_ERROR_NO_KERNEL = 2,
  /** The kernel library cannot be read: no folder, no manifest, malformed
      JSON, a missing field, a missing or empty file, an unknown ABI; or, at
      the first launch of a kernel, a kernel file that is damaged (a cubin
      without an ELF header, PTX with a NUL byte) or gone. */
  TA_ERROR_LIBRARY = 3,
  /** libcuda cannot be loaded, or a driver call failed. */
  TA_ERROR_DRIVER = 4,
} ta_status;

typedef enum ta_dtype {
  TA_DTYPE_F16 = 0,
  TA_DTYPE_BF16 = 1,
} ta_dtype;

typedef enum ta_mask {
  TA_MASK_NONE = 0,
  /** Query i sees keys j <= i (PyTorch's is_causal). */
  TA_MASK_CAUSAL_TOP_LEFT = 1,
  /** Query i sees keys j <= i + S_k - S_q (FlashAttention's causal). */
  TA_MASK_CAUSAL_BOTTOM_RIGHT = 2,
} ta_mask;

/** A sliding window (local attention): FlashAttention's window_size.

    With shift = S_k - S_q for bottom-right alignment and 0 for top-left,
    query i sees key j (0-based positions) iff
      (left < 0 or j >= i + shift - left) and
      (right < 0 or j <= i + shift + right) and
      (no causal mask or j <= i + shift):
    a causal mask and a window give their intersection (window_size (w, w)
    with causal, as FlashAttention and transformers pass it, sees the keys
    i + shift - w .. i + shift). A query that sees no key gives a row of
    zeros, as bottom-right causal does for S_q > S_k. A bound of S_q + S_k
    or more is the same as -1.

    The alignment is the causal mask's if there is one (bottom_right must
    agree: TA_MASK_CAUSAL_BOTTOM_RIGHT <=> bottom_right != 0, else
    TA_ERROR_INVALID_ARGUMENT), else bottom_right's.

    Kernel choice: the band of diagonals lo <= j - i <= hi the queries see
    is computed by the kernels of one mask (the manifest's "causal"): "none"
    when it bounds nothing, "top_left" or "bottom_right" when only the
    causal diagonal bounds it, else "window". A kernel of that mask is
    preferred (without a window, first one of the mask asked for, as in API
    version 2); failing that, any band but an unbounded one (with a
    softcap, any band at all: see ta_sdpa_args.softcap) runs on a "window"
    kernel, which takes lo and hi as parameters (window_lo, window_hi) and
    computes every band. So TA_MASK_CAUSAL_BOTTOM_RIGHT runs on a library
    that has window kernels and no bottom_right ones. */
typedef struct ta_window {
  /** 0: no window (zero-initialized arguments keep the behaviour of API
      version 2, the other fields unread); nonzero: the window below. */
  int32_t enabled;
  /** Nonzero: bottom-right alignment. Read with TA_MASK_NONE; with a causal
      mask it must agree with the mask's alignment. */
  int32_t bottom_right;
  /** The keys before and after the (aligned) diagonal a query sees; -1: no
      bound on that side. Any other negative value is an error. */
  int64_t left;
  int64_t right;
} ta_window;

/** A rank-4 [B, H, S, D] view of device memory. */
typedef struct ta_tensor {
  /** Device address of element [0, 0, 0, 0]. */
  uint64_t data;
  int64_t sizes[4];
  /** In elements, not bytes. */
  int64_t strides[4];
} ta_tensor;

/** A variable-length batch (FlashAttention's flash_attn_varlen_func): the
    batch's sequences packed one after the other along one token dimension,
    without padding.

    With enabled != 0, q and o are [1, H, total_q, D] views of a packed
    [total_q, H, D] tensor (PyTorch's and FlashAttention's layout: sizes
    {1, H, total_q, D}, strides {any, a head's, a token's, 1}), and k and v
    [1, H_kv, total_k, D] views of packed [total_k, H_kv, D] tensors.
    Sequence b (0 <= b < num_seqs) is the query rows cu_seqlens_q[b] ..
    cu_seqlens_q[b + 1] - 1 and the keys cu_seqlens_k[b] ..
    cu_seqlens_k[b + 1] - 1: its queries see its keys only, as in a call of
    its own with S_q and S_k its lengths (the causal mask, the window and
    their alignment apply per sequence). A sequence may be empty: no query
    rows, or no keys (its rows give zeros, and log-sum-exps -inf).

    cu_seqlens_q and cu_seqlens_k are read by the kernels only; the runtime
    cannot check their contents. Each must be the device address of
    num_seqs + 1 int32 values (4-byte aligned), starting at 0 and
    nondecreasing, the last one at most total_q (total_k), no sequence
    longer than max_seqlen_q (max_seqlen_k); anything else is undefined
    behaviour (accesses out of bounds). Rows of q, k and v past the last
    sequence (up to total) may be read, as FlashAttention-3's TMA loads do,
    and must hold finite values; rows of o and lse past
    cu_seqlens_q[num_seqs] are not written.

    Kernel choice: only kernels compiled for it (the manifest's "varlen":
    true; they take cu_seqlens_q and cu_seqlens_k as views of int32, and a
    "window" one also window_align) run a variable-length batch, and only
    kernels without it run the others; but a decode step against a paged
    cache (seqused_k and a block_table, max_seqlen_q 1 and total_q equal to
    num_seqs: one query per sequence; no mask or bottom-right causal, no
    functions) runs as the batch of num_seqs entries it is, packed GQA and
    split-KV included (see docs/runtime.md). The mask order of ta_window
   applies, with the band computed on the longest lengths: a window kernel takes
    it relative to each sequence's top-left diagonal (window_lo,
    window_hi), and window_align (1 for bottom-right, else 0) adds that
    sequence's len_k - len_q to both. The grid is (ceil(max_seqlen_q /
    block_m), H, num_seqs). */
typedef struct ta_varlen {
  /** 0: not variable-length (zero-initialized arguments keep the behaviour
      of API version 5, the other fields unread); nonzero: the batch below,
      q, k, v and o of batch size 1. */
  int32_t enabled;
  /** The number of sequences, >= 1 (at most 65535: the grid's z). */
  int64_t num_seqs;
  /** Device addresses of the sequences' offsets (see above), not null. */
  uint64_t cu_seqlens_q;
  uint64_t cu_seqlens_k;
  /** The longest query and key sequence, or more: >= 1, and at most
      total_q (q's sizes[2]; unless it is 0: nothing to launch) and total_k
      (k's sizes[2]). */
  int64_t max_seqlen_q;
  int64_t max_seqlen_k;
} ta_varlen;

/** What a captured input holds (ta_capture.type). */
typedef enum ta_capture_type {
  TA_CAPTURE_F32 = 0,
  TA_CAPTURE_I32 = 1,
  TA_CAPTURE_F16 = 2,
  TA_CAPTURE_BF16 = 3,
  /** One byte per element: a torch.bool, int8 or uint8 tensor (API
      version 9; a boolean mask reads nonzero as true). */
  TA_CAPTURE_I8 = 4,
} ta_capture_type;

/** A captured input of a kernel's score or mask function (the manifest's
    "captures" of the kernel): a view of device memory, or a scalar, given
    by its name. A view's sizes must cover what the function reads (a read
    outside them gives 0); its last stride must be 1. */
typedef struct ta_capture {
  /** The name the function gives it ("slopes", "document_ids", "mask"). */
  const char *name;
  ta_capture_type type;
  /** 1 to 4 for a view; 0 for a scalar (f32 or i32, in `scalar`). */
  int32_t rank;
  /** A view's device address and its sizes and strides (in elements) of
      its first `rank` dimensions. */
  uint64_t data;
  int64_t sizes[4];
  int64_t strides[4];
  /** A scalar's value. */
  double scalar;
} ta_capture;

/** One attention call: O = softmax(cap(scale * Q K^T) + mask) V, where cap
    is the identity, or with a softcap c > 0 the logit soft-capping
    c * tanh(x / c) (see softcap below). */
typedef struct ta_sdpa_args {
  ta_tensor q; /**< [B, H, S_q, D] */
  /** [B, H_kv, S_k, D], S_k >= 1; H_kv divides H (grouped KV heads: query
      head h reads K/V head h / (H / H_kv)), which needs a kernel whose
      manifest entry says "grouped_kv": true. */
  ta_tensor k;
  /** [B, H_kv, S_k, D_v]: D_v is D, or for a kernel whose manifest entry
      says "head_dim_v" (DeepSeek's MLA: D = 192, D_v = 128) that. */
  ta_tensor v;
  ta_tensor o; /**< [B, H, S_q, D_v], written */
  ta_dtype dtype;
  ta_mask mask;
  /** A finite positive float; usually 1/sqrt(D). */
  float scale;
  /** The name of a manifest entry to run, or NULL for the best fit. A
      named kernel must be one the choice above allows: of the mask asked
      for, of the band's, or a "window" kernel for a masked band (for any
      band with a softcap, or with lse), with softcap exactly when
      softcap > 0, and with lse when lse != 0. */
  const char *kernel;
  /** A sliding window; all zero for none. */
  ta_window window;
  /** Logit soft-capping (Gemma 2's attn_logit_softcapping, FlashAttention's
      softcap): with softcap > 0 each score becomes
        softcap * tanh(scale * q.k / softcap)
      after the scale and before the mask and the softmax; 0 is off
      (zero-initialized arguments keep the behaviour of API version 3). It
      must be a finite float >= 0, else TA_ERROR_INVALID_ARGUMENT.

      Kernel choice: only kernels compiled with softcap (the manifest's
      "softcap": true; they take it as one more f32 parameter, "softcap")
      run a problem with softcap > 0, and only kernels without it run one
      with softcap 0. Among the softcap kernels the order above applies,
      and a "window" kernel runs any band, the unbounded one (no mask)
      included, where no kernel of the band's own mask fits. */
  float softcap;
  /** The rows' log-sum-exps, written: 0 for none (zero-initialized
      arguments keep the behaviour of API version 4), else the device
      address of a contiguous [B, H, S_q] float32 tensor (4-byte aligned,
      else TA_ERROR_INVALID_ARGUMENT), which gets, for each query row,
        log(sum_j exp(s_j))
      over the scores s_j = cap(scale * q.k_j) of the keys the row sees, in
      natural log (FlashAttention's softmax_lse), or -inf for a row that
      sees no key. It lets split-KV decoding and ring attention merge
      partial outputs.
      With varlen, it is [1, H, total_q] (FlashAttention's [H, total_q]).
      Kernel choice: only kernels compiled with it (the manifest's "lse":
      true; they take the view "lse") run a problem that asks for it, and a
      "window" one runs any band; a problem that does not ask for it runs
      on kernels without it first, else on one with it. */
  uint64_t lse;
  /** A variable-length batch; all zero for none (API version 5's calls). */
  ta_varlen varlen;
  /** A score function and a mask function of the library, by name (the
      manifest's "score_function" and "mask_function"), or null for none:
      only kernels compiled with exactly these functions run the call. The
      score function maps each scaled (and capped) score, with its batch
      entry, head, query and key index, to the score the softmax sees; the
      mask function hides the keys it gives false for. */
  const char *score_function;
  const char *mask_function;
  /** Their captured inputs: every one the chosen kernel's manifest entry
      lists under "captures", by name, of its type and rank; no others. */
  const ta_capture *captures;
  int32_t num_captures;
  /** Split-KV (API version 11; zero-initialized arguments never split):
      with a workspace, a call whose grid would leave most SMs idle (decode:
      few query rows, heads and sequences, many keys) splits the keys into
      chunks, one program per chunk writing a partial output and
      log-sum-exps into the workspace, and a merge kernel of the library
      (its "split_merge" entries) combines them into o (and lse).
      num_splits: 0 lets the runtime choose by its heuristic over the
      device's SMs (docs/runtime.md, "Split-KV"), 1 never splits, n > 1 asks
      for n chunks (fewer where the keys have fewer blocks, or the grid's y
      extent would pass 65535). Negative is TA_ERROR_INVALID_ARGUMENT.
      Only calls whose every query sees every key split (no mask, or
      bottom-right causal with S_q = 1, and no window that hides keys),
      without varlen, functions, block mask or named kernel, and only where
      the library has a "split" kernel and a merge kernel for the problem;
      any other call runs unsplit, as without a workspace.
      workspace: the device address (256-byte aligned) of at least
      workspace_bytes bytes that the call may overwrite, not shared with
      q, k, v, o or lse, or 0 for none (then no split).
      ta_sdpa_workspace_size gives the bytes a call needs; a smaller
      workspace_bytes is TA_ERROR_INVALID_ARGUMENT. */
  int32_t num_splits;
  uint64_t workspace;
  uint64_t workspace_bytes;
  /** Per-entry key lengths (API version 11; FlashAttention's seqused_k, a
      KV cache's filled lengths): 0 for none, else the device address of B
      int32 values (with varlen, num_seqs), 4-byte aligned; batch entry b
      (sequence b) attends to its first min(seqused_k[b], S_k) keys (a
      negative length is 0), and a causal mask aligns by that length
      (bottom-right: its last query sees its last used key). The runtime
      cannot check the values (the caller's contract, as cu_seqlens').
      Only kernels of the manifest's "seqused": true run such a call, and
      they run no other; a sliding window with seqused_k is
      TA_ERROR_INVALID_ARGUMENT.

      A paged KV cache (vLLM's, FlashAttention's block_table) is a call
      with seqused_k and a captured input named "block_table" (captures):
      a rank-2 TA_CAPTURE_I32 view [B, max_pages], entry b's keys
      i * page_size ... (i + 1) * page_size - 1 in page block_table[b, i];
      k and v are then the caches' pages, [num_pages, H_kv, page_size, D]
      (vLLM's [num_pages, page_size, H_kv, D] with strides), and S_k is
      max_pages * page_size. Only kernels of the manifest's "paged": true
      whose block_n divides page_size run it (the library's: 64, so pages
      of 64, 128, 256, ... keys). Table entries are read for an entry's
      first ceil(seqused_k[b] / page_size) pages only, and must lie in
      [0, num_pages) there: the caller's contract (a page past the cache
      reads as zeros). Every element of a read page must be finite, the
      rows past the entry's length included (they get weight 0). No varlen
      or sliding window yet. */
  uint64_t seqused_k;
} ta_sdpa_args;

/** A captured input a kernel takes (ta_kernel_info.captures). */
typedef struct ta_capture_info {
  const char *name;
  /** The function that reads it (the score function's, where both do). */
  const char *function;
  ta_capture_type type;
  /** 1 to 4 for a view, 0 for a scalar. */
  int32_t rank;
  /** What a view's data pointer and strides (of its dimensions longer than
      1; the last is 1) must be multiples of, in bytes: 16 where the kernel
      copies the view in 16-byte blocks or by TMA, else 1 (API version 13). */
  int32_t align_bytes;
} ta_capture_info;

/** One kernel of the library, as its manifest entry describes it. The
    strings live as long as the library. */
typedef struct ta_kernel_info {
  const char *name;
  /** The target it was compiled for: "sm_80", "sm_90a", ... */
  const char *arch;
  /** "f16" or "bf16". */
  const char *dtype;
  /** "none", "top_left", "bottom_right" or "window" (a kernel that takes
      the band of diagonals lo <= j - i <= hi a query sees as two more
      parameters, window_lo and window_hi; see ta_window). */
  const char *mask;
  /** The manifest's "schedule.options" string (the tile-schedule options). */
  const char *schedule;
  /** Q's and K's head dim (D); V's and O's is head_dim_v. */
  int32_t head_dim;
  int32_t block_m;
  int32_t block_n;
  int32_t threads;
  int32_t shared_bytes;
  /** 32 or 64: the width of the kernel's index arithmetic. A 32-bit kernel
      needs every element offset of every view below 2^31. */
  int32_t index_bits;
  /** Alignment in bytes the kernel needs of base pointers and of every
      stride but the unit one. */
  int32_t align_bytes;
  /** The number of kernel parameters (from the manifest's "params"). */
  int32_t num_params;
  /** 1 if the kernel applies logit soft-capping (it takes the softcap as a
      parameter and runs only problems with softcap > 0), else 0. */
  int32_t softcap;
  /** 1 if the kernel can write the rows' log-sum-exps (ta_sdpa_args.lse),
      else 0. */
  int32_t lse;
  /** 1 if the kernel computes variable-length batches (ta_sdpa_args.varlen;
      it runs those, and only those), else 0. */
  int32_t varlen;
  /** V's and O's head dim: head_dim, or DeepSeek's MLA's 128 where Q and K
      have 192 (API version 7). */
  int32_t head_dim_v;
  /** Its score and mask functions ("" without one) and their captured
      inputs, in the order each function declares them (API version 8). */
  const char *score_function;
  const char *mask_function;
  int32_t num_captures;
  const ta_capture_info *captures;
  /** What the kernel computes, as the library spec and the kernel's name
      say it: its mask, its features and its functions, e.g.
      "window_softcap_lse" or "none_sparse+document" (API version 9). */
  const char *variant;
  /** Its features: bit i set for ta_kernel_feature(i) (softcap, lse and
      varlen above are three of them, kept for API version 8's callers). */
  uint32_t features;
  /** A paged kernel's one page size, smaller than block_n (each key block
      gathered from block_n / page_size pages), or 0: a paged kernel of
      this value takes the page sizes block_n divides (API version 12). */
  int32_t page_size;
  /** "" for a forward kernel; a backward kernel's phase (API version 14):
      "preprocess", "main" or "postprocess" (ta_library_backward_kernel);
      "dq", the deterministic mode's (API version 15). */
  const char *phase;
} ta_kernel_info;

/** The name of kernel feature `index` (0, 1, ...): "softcap", "lse",
    "varlen", "sparse", ... in the order of ta_kernel_info.features' bits
    and of the suffixes of a variant's name; null past the last (API
    version 9). One declaration in the sources (KernelVariant.def) makes
    the list, the manifest's keys and the variant names. */
TA_API const char *ta_kernel_feature(int32_t index);

/** The most parameters, and parameter bytes, a launch plan holds (128
    parameters since API version 14, for the backward's varlen kernels'
    66; 64 before). */
#define TA_MAX_PARAMS 128
#define TA_MAX_PARAM_BYTES 4096

/** What ta_sdpa would launch: the kernel, the grid and the packed
    parameters. Filled by ta_sdpa_plan, which needs no GPU unless a
    parameter is a TMA descriptor (built by the driver, which needs a CUDA
    context: the calling thread's current one, else device 0's primary
    context). */
typedef struct ta_launch_plan {
  /** Index of the kernel in the library (see ta_library_kernel). */
  int32_t kernel;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes;
  int32_t num_params;
  /** Parameter i is param_sizes[i] bytes at param_data + param_offsets[i],
      each at its natural alignment. */
  uint32_t param_offsets[TA_MAX_PARAMS];
  uint32_t param_sizes[TA_MAX_PARAMS];
  TA_ALIGNAS(64) unsigned char param_data[TA_MAX_PARAM_BYTES];
} ta_launch_plan;

typedef struct ta_library ta_library;

/** The TA_API_VERSION the library was built with. */
TA_API int ta_api_version(void);

/** The message of the last failed call on this thread ("" if none). The
    pointer stays valid until the next failing call on this thread. */
TA_API const char *ta_last_error(void);

/** Opens the kernel library in folder `dir` and checks its manifest and
    files. A null or empty `dir` means $TILED_ATTN_KERNELS. Opening needs no
    GPU; modules are loaded on first use. */
TA_API ta_status ta_library_open(const char *dir, ta_library **library);

/** Unloads the library's modules and frees it. Null is allowed. No call may
    be running on it. */
TA_API void ta_library_close(ta_library *library);

/** The folder the library was opened from. */
TA_API const char *ta_library_path(const ta_library *library);

/** The number of kernels in the library. */
TA_API int32_t ta_library_kernel_count(const ta_library *library);

/** Describes kernel `index` (0 <= index < ta_library_kernel_count). */
TA_API ta_status ta_library_kernel(const ta_library *library, int32_t index,
                                   ta_kernel_info *info);

/** The kernel ta_sdpa would run for `args` on a device of compute capability
    cc_major.cc_minor, the grid, and the parameters packed as the kernel's
    manifest entry lists them. Checks the arguments as ta_sdpa does. For an
    empty output (B, H or S_q of zero), which ta_sdpa launches nothing for,
    the plan has kernel -1, a zero grid and block, and no parameters (with
    varlen: H or total_q of zero). The plan is the unsplit call's (as with
    num_splits 1): split-KV needs the device's SM count (see
    ta_sdpa_workspace_size). A decode call of grouped KV heads shows its
    packed grid: H_kv heads of H_q / H_kv rows (docs/runtime.md, "Packed
    GQA"). */
TA_API ta_status ta_sdpa_plan(ta_library *library, const ta_sdpa_args *args,
                              int32_t cc_major, int32_t cc_minor,
                              ta_launch_plan *plan);

/** The workspace bytes ta_sdpa needs for `args` on CUDA device `device`
    (its compute capability and SM count choose the split kernel and the
    number of chunks), as if args->workspace were given: 0 when the call
    would not split (see ta_sdpa_args.num_splits). Checks the arguments as
    ta_sdpa does; needs no CUDA context. (API version 11.) */
TA_API ta_status ta_sdpa_workspace_size(ta_library *library,
                                        const ta_sdpa_args *args, int device,
                                        uint64_t *bytes);
/** Checks the arguments, chooses the kernel for `device` (a CUDA device
    ordinal), loads its module in the calling thread's current CUDA context
    (the device's primary context if none is current on this device) once
    per context, and launches it on `stream` (a CUstream; null is the
    legacy default stream). Asynchronous: returns once the kernel is queued.
    Does not synchronize nor allocate device memory, so it can be captured
    in a CUDA graph once the module is loaded. An empty output (B, H or S_q
    of zero; with varlen, H or total_q) launches nothing. A call that splits
    its keys (ta_sdpa_args.num_splits) launches two kernels on `stream`:
    the split kernel, then the merge. */
TA_API ta_status ta_sdpa(ta_library *library, const ta_sdpa_args *args,
                         int32_t device, void *stream);

/** A block mask from a mask function of the library, on the GPU
    (FlexAttention's create_block_mask, compiled): the kinds of the
    TA_BLOCK_MASK_SIZE x TA_BLOCK_MASK_SIZE blocks of the [B, H, seq_q,
    seq_k] mask the function gives, one int8 per block, 0 (no query sees a
    key of it), 1 (some do) or 2 (all do and the block lies inside seq_k).
    Rows past seq_q count as seeing every key. */
#define TA_BLOCK_MASK_SIZE 128

typedef struct ta_block_mask_args {
  /** The mask function, by name ("document", "prefix_lm"); the library
      must have a block mask kernel of it. */
  const char *mask_function;
  /** Its captured inputs, by name, as for ta_sdpa_args. */
  const ta_capture *captures;
  int32_t num_captures;
  /** The query and key lengths (0: nothing to do). */
  int64_t seq_q, seq_k;
  /** The output: a device tensor of int8 [B, H, ceil(seq_q / 128),
      ceil(seq_k / 128)] (strides in elements); program (m, h, b) writes
      block_kinds[b, h, m, :], the function called with batch b and head
      h. */
  ta_tensor block_kinds;
} ta_block_mask_args;

/** The library's block mask kernels (API version 10): how many, and one's
    name, arch, threads, shared_bytes, mask_function and that function's
    captured inputs (the SDPA fields of ta_kernel_info are empty or 0). */
TA_API int32_t ta_library_block_mask_count(const ta_library *library);
TA_API ta_status ta_library_block_mask(const ta_library *library, int32_t index,
                                       ta_kernel_info *info);

/** Writes the block kinds of args->mask_function's mask on `device`
    (the CUDA device ordinal; the caller's current context) in `stream`.
    Launches one kernel, allocates nothing, does not synchronize. */
TA_API ta_status ta_block_mask(ta_library *library,
                               const ta_block_mask_args *args, int32_t device,
                               void *stream);

/** The backward pass of one attention call (API version 14): the
    gradients of a loss with respect to q, k and v, given its gradient with
    respect to the forward call's output o (FlashAttention-2's backward,
    with S^T and dP^T computed per key block; docs/backward.md).

    Three kernels of the library's "sdpa_backward" entries run on the
    stream, one after the other: preprocess (delta = rowsum(dO * O), dQ's
    float32 accumulator zeroed, both in the workspace), main (one program
    per key block of a K/V head: dK and dV of the block, summed over the
    query heads of its group, and dQ's contribution added to the
    accumulator by atomics) and postprocess (dq = scale * accumulator).
    Not deterministic: the order of the atomic additions to dQ varies from
    run to run (dk and dv are). With `deterministic` (API version 15), a
    dq kernel replaces the postprocess: one program per query block, dQ
    recomputed over the key blocks it sees in registers and written once,
    the same bits every run (the main kernel's additions to the
    accumulator are not read; the mode costs that recomputation). */
typedef struct ta_sdpa_backward_args {
  /** The forward call as it was given to ta_sdpa, its output o and its
      log-sum-exps lse (both read here; lse is required: the forward must
      have been asked for them), with the same dtype, mask, scale, window,
      softcap and varlen. Not taken (TA_ERROR_INVALID_ARGUMENT when set):
      kernel, score_function, mask_function, captures, seqused_k,
      workspace; num_splits is not read. */
  ta_sdpa_args forward;
  /** The gradient of o: o's sizes, [B, H, S_q, D_v]. Read, as o and lse
      are: they may share memory (a loss of sum(o^2) / 2 gives d_o = o). */
  ta_tensor d_o;
  /** The gradients, written: q's, k's and v's sizes (with grouped KV
      heads, dk and dv are [B, H_kv, S_k, D]: each the sum over the query
      heads of its group). Each must share memory with no other view, nor
      with the workspace. */
  ta_tensor dq;
  ta_tensor dk;
  ta_tensor dv;
  /** Device address (256-byte aligned) of at least
      ta_sdpa_backward_workspace_size bytes, which the call overwrites
      (float32 delta [B, H, S_q], then dQ's float32 accumulator [B, H, S_q,
      D]); workspace_bytes its size. */
  uint64_t workspace;
  uint64_t workspace_bytes;
  /** Non-zero: the deterministic mode (API version 15): dq by the
      library's "dq" kernel of the call's mask, softcap and varlen instead
      of the postprocess (TA_ERROR_NO_KERNEL where it has none). */
  int32_t deterministic;
} ta_sdpa_backward_args;

/** The library's backward kernels (API version 14): how many, and each
    one's description (its phase in ta_kernel_info.phase; mask, softcap and
    varlen for a main kernel; dtype, head dims and varlen for every one). */
TA_API int32_t ta_library_backward_count(const ta_library *library);
TA_API ta_status ta_library_backward_kernel(const ta_library *library,
                                            int32_t index,
                                            ta_kernel_info *info);

/** The workspace bytes ta_sdpa_backward needs for `args` (it reads the
    shapes only; 0 for an empty problem). Checks the arguments as
    ta_sdpa_backward does, but not the workspace. */
TA_API ta_status ta_sdpa_backward_workspace_size(
    ta_library *library, const ta_sdpa_backward_args *args, uint64_t *bytes);

/** The three launches ta_sdpa_backward would make on a device of compute
    capability cc_major.cc_minor: plans[0] preprocess, plans[1] main,
    plans[2] postprocess (the dq kernel with `deterministic`; its grid the
    postprocess's), each's kernel an index of
    ta_library_backward_kernel. A phase with nothing to do has kernel -1
    and a zero grid: preprocess and postprocess without query rows (S_q or
    total_q of 0; the main kernel still runs, writing zeros to dk and dv),
    all three without keys' gradients to write (no batch, no heads). */
TA_API ta_status ta_sdpa_backward_plan(ta_library *library,
                                       const ta_sdpa_backward_args *args,
                                       int32_t cc_major, int32_t cc_minor,
                                       ta_launch_plan plans[3]);

/** Checks the arguments, chooses the three kernels for `device`, loads
    their modules (once per context) and launches them on `stream`.
    Asynchronous, allocates nothing, synchronizes nothing: it can be
    captured in a CUDA graph once the modules are loaded. A phase with
    nothing to do (see ta_sdpa_backward_plan) is not launched. With varlen,
    rows of dk and dv past the last key sequence (cu_seqlens_k[num_seqs]
    up to total_k) are not written, as rows of o past the last query
    sequence are not by ta_sdpa. */
TA_API ta_status ta_sdpa_backward(ta_library *library,
                                  const ta_sdpa_backward_args *args,
                                  int32_t device, void *stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TILED_ATTN_RUNTIME_TILEDATTN_H */
