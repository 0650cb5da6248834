//===- SdpaKernel.cpp - Build the SDPA forward kernel in tile IR ----------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The kernel follows FlashAttention-2's forward loop. One program computes
// block_m rows of O for one (batch, head); K and V have H_kv heads, which
// divides H_q: query head h reads K/V head h / (H_q / H_kv) (grouped KV
// heads, GQA; MQA with H_kv = 1; plain attention with H_kv = H_q):
//
//   Q_i = load Q[b, h, m]                       (padded with 0 past S_q)
//   m = -inf, l = 0, acc = 0
//   for j in [0, ceil(S_k / block_n)):
//     S   = Q_i K_jᵀ    (K_j = K[b, h_kv, j], padded with 0 past S_k)
//     S   = tanh(scale / softcap * S), with a softcap (the softmax then
//           scales by softcap instead of scale)
//     S   = -inf where the key is past S_k or hidden by the causal mask
//           (or, in a `window` kernel, where its diagonal j - i lies
//           outside [window_lo, window_hi])
//     m', l', P, alpha = online_softmax(S, m, l, scale)
//     acc = acc * alpha + P V_j
//   LSE_i = m + log(l)   (with `lse`; -inf for a row that saw no key)
//   O_i = acc / l   (0 for a row that saw no key), stored under S_q
//
// V and O may have a head dim of their own (D_v, `head_dim_v`): S = Q_i K_jᵀ
// contracts over D, acc = P V_j has D_v columns.
//
// With `seqused`, batch entry b attends to its first seqused_k[b] keys: k
// and v are sliced to them first (with varlen, the sequence's length is
// capped by it), so that the masks and split-KV's chunks see that length.
//
// With `paged`, k and v are a cache's pages, [num_pages, H_kv, page_size,
// D], and key block j of batch entry b lies in page block_table[b, j /
// (page_size / block_n)], as its block j % (page_size / block_n): the
// loads read it there (two indices per block, the page from a read of the
// table), and the keys' count, the used length, takes the place of S_k.
// With a page size smaller than block_n (SdpaKernelConfig::pageSize), each
// key block is one load that gathers block_n / page_size pages (tile.load's
// gather), each page read from the table, clamped to the last used one.
//
// With `varlen`, the tensors are packed sequences seen as [1, H, total, D]
// (with `paged`, q, o and lse are; the keys are sequence b's pages, row b
// of the block table, seqused_k[b] of them);
// program (m, h, b) reads sequence b's first rows and lengths from
// cu_seqlens_q/k and slices q, o (and lse) and k, v to them, so that the
// loop above, its masks and its stores see one sequence as a batch entry.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/SdpaKernel.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Kernels/KernelFunctions.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

FailureOr<func::FuncOp>
tiled_attn::buildSdpaKernel(OpBuilder &b, Location loc,
                            const SdpaKernelConfig &cfg) {
  MLIRContext *ctx = b.getContext();
  auto emitError = [&]() { return mlir::emitError(loc); };
  const KernelVariant &variant = cfg.variant;
  // KernelVariant.def's masks are tile::CausalMode's, by name.
  const CausalMode causal = *symbolizeCausalMode(kernelMaskName(variant.mask));
  SdpaAttr sdpa = SdpaAttr::getChecked(
      emitError, ctx, cfg.headDim, cfg.headDimV, cfg.elementType, causal,
      cfg.blockM, cfg.blockN, /*stages=*/int64_t{1},
      /*refillAfterUse=*/false,
      /*causalSplit=*/false, /*exp2=*/false,
      /*rescaleThreshold=*/int64_t{0},
      /*deferPv=*/false, static_cast<const KernelFeatures &>(variant));
  if (!sdpa)
    return failure();

  const int64_t bm = cfg.blockM, bn = cfg.blockN, d = cfg.headDim,
                dv = sdpa.getValueHeadDim();
  Type elt = cfg.elementType;
  Type f32 = b.getF32Type();
  int64_t dyn = ShapedType::kDynamic;
  auto viewTy = ViewType::get(ctx, {dyn, dyn, dyn, d}, elt);
  auto viewVTy = ViewType::get(ctx, {dyn, dyn, dyn, dv}, elt);
  auto tensorTy = [&](ArrayRef<int64_t> shape, Type t) {
    return RankedTensorType::get(shape, t);
  };

  const bool window = causal == CausalMode::Window;
  // One argument per role the attribute names, in its order, each marked
  // with its role.
  SmallVector<ArgRole> roles = sdpa.getArgumentRoles();
  KernelArguments args;
  for (ArgRole role : roles) {
    Type type;
    switch (role) {
    case ArgRole::Q:
    case ArgRole::K:
      type = viewTy;
      break;
    case ArgRole::V:
      type = viewVTy;
      break;
    case ArgRole::O: // with split, the partial outputs, in f32
      type = variant.split ? ViewType::get(ctx, {dyn, dyn, dyn, dv}, f32)
                           : viewVTy;
      break;
    case ArgRole::NumSplits:
      type = b.getIndexType();
      break;
    case ArgRole::Scale:
    case ArgRole::Softcap:
      type = f32;
      break;
    case ArgRole::WindowLo:
    case ArgRole::WindowHi:
    case ArgRole::WindowAlign:
      type = b.getIndexType();
      break;
    case ArgRole::Lse: // [B, H_q, S_q] row log-sum-exps
      type = ViewType::get(ctx, {dyn, dyn, dyn}, f32);
      break;
    case ArgRole::CuSeqlensQ:
    case ArgRole::CuSeqlensK:
    case ArgRole::SeqUsedK:
      type = ViewType::get(ctx, {dyn}, b.getI32Type());
      break;
    case ArgRole::Captured:
    case ArgRole::SeqQ:
    case ArgRole::SeqK:
    case ArgRole::BlockKinds:
    case ArgRole::OPartial:
    case ArgRole::LsePartial:
    case ArgRole::DOut:
    case ArgRole::DQ:
    case ArgRole::DK:
    case ArgRole::DV:
    case ArgRole::Delta:
    case ArgRole::DQAccum:
      llvm_unreachable("not a role of tile.sdpa's");
    }
    args.add(b, type, ArgAttr::get(ctx, role, {}));
  }
  // The captured inputs of the score and mask functions, once per name.
  auto module =
      dyn_cast_or_null<ModuleOp>(b.getInsertionBlock()->getParentOp());
  KernelFunction scoreFn, maskFn;
  // The variant's functions, a score function (an f32 result) and a mask
  // function (an i1), at most one of each; their captured inputs go in
  // that order.
  // A function the module lacks is reported after the others are checked.
  StringRef missing;
  if (failed(findKernelFunctions(loc, module, variant.functions, scoreFn,
                                 maskFn, missing)))
    return failure();
  for (auto [fn, isScore] :
       {std::pair{&scoreFn, true}, std::pair{&maskFn, false}})
    if (fn->fn && failed(addFunctionCaptures(b, *fn, isScore, args)))
      return failure();
  if (variant.seqused && window)
    return emitError() << "a seqused kernel takes no window: its band would "
                          "not follow each entry's length (causal masks do)";
  if (cfg.pageSize && (!variant.paged || cfg.pageSize >= bn ||
                       bn % cfg.pageSize || cfg.pageSize % 8))
    return emitError() << "a page size of " << cfg.pageSize
                       << " needs a paged kernel and a multiple of 8 that "
                          "divides block_n ("
                       << bn << ") and is smaller";
  if (variant.split && (scoreFn.fn || maskFn.fn || variant.sparse))
    return emitError() << "a split-KV kernel takes no score or mask function "
                          "and no block mask";
  if (!missing.empty())
    return mlir::emitError(loc)
           << "no function '" << missing
           << "' with a body in the module for the kernel's variant "
           << kernelVariantName(variant);
  // A block-sparse kernel's block mask: four captured i32 views after the
  // functions' captures.
  SmallVector<unsigned> blockMaskArgs;
  if (variant.sparse) {
    if (causal != CausalMode::None || variant.varlen)
      return emitError() << "a block-sparse kernel takes no causal or window "
                            "mask (its mask function and block mask say "
                            "which keys each query sees) and no varlen";
    if (kBlockMaskSize % bm != 0 || kBlockMaskSize % bn != 0)
      return emitError() << "a block-sparse kernel's blocks must divide the "
                            "block mask's "
                         << kBlockMaskSize << "x" << kBlockMaskSize
                         << " blocks, got " << bm << "x" << bn;
    for (StringRef name : kBlockMaskArguments) {
      if (args.captured.count(name))
        return emitError() << "a function's captured input '" << name
                           << "' has the name of a block mask input of a "
                              "block-sparse kernel";
      int64_t rank = name.ends_with("indices") ? 4 : 3;
      blockMaskArgs.push_back(args.add(
          b,
          ViewType::get(ctx, SmallVector<int64_t>(rank, dyn), b.getI32Type()),
          ArgAttr::get(ctx, ArgRole::Captured, StringAttr::get(ctx, name))));
    }
  }
  // A paged kernel's block table: a captured i32 view after the others.
  std::optional<unsigned> blockTableArg;
  if (variant.paged) {
    if (args.captured.count(kBlockTableArgument))
      return emitError() << "a function's captured input '"
                         << kBlockTableArgument
                         << "' has the name of a paged kernel's block table";
    blockTableArg =
        args.add(b, ViewType::get(ctx, {dyn, dyn}, b.getI32Type()),
                 ArgAttr::get(ctx, ArgRole::Captured,
                              StringAttr::get(ctx, kBlockTableArgument)));
  }
  auto funcTy = b.getFunctionType(args.types, {});
  auto func = func::FuncOp::create(b, loc, cfg.name, funcTy);
  func->setAttr(TileDialect::getSdpaAttrName(), sdpa);
  func.setAllArgAttrs(args.attrs);
  Block *entry = func.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  auto arg = [&](ArgRole role) -> Value { return findArgument(func, role); };
  Value q = arg(ArgRole::Q), k = arg(ArgRole::K), v = arg(ArgRole::V),
        o = arg(ArgRole::O), scale = arg(ArgRole::Scale);
  Value windowLo = arg(ArgRole::WindowLo), windowHi = arg(ArgRole::WindowHi);
  Value windowAlign = arg(ArgRole::WindowAlign);
  Value cap = arg(ArgRole::Softcap);
  Value lseView = arg(ArgRole::Lse);
  Value cuSeqlensQ = arg(ArgRole::CuSeqlensQ);
  Value cuSeqlensK = arg(ArgRole::CuSeqlensK);
  Value seqUsedK = arg(ArgRole::SeqUsedK);
  // With a softcap, the scores are softcap * tanh(scale / softcap * s): the
  // tanh's argument takes scale / softcap (one division per program), and
  // the softmax the cap as its scale (FlashAttention's folding). The
  // division is approximate (afn: div.approx on NVPTX, within 2 ulp): a
  // correctly rounded one has a slow path whose call makes ptxas keep the
  // loop's uniform work (the wgmma descriptors) in vector registers.
  Value capScale, softmaxScale = scale;
  if (cap) {
    capScale =
        arith::DivFOp::create(b, loc, scale, cap, arith::FastMathFlags::afn);
    softmaxScale = cap;
  }

  auto cIndex = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto splat = [&](ArrayRef<int64_t> shape, double value) -> Value {
    auto type = tensorTy(shape, f32);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
  };
  const double negInf = -std::numeric_limits<double>::infinity();

  Value c0 = cIndex(0), c1 = cIndex(1), cBm = cIndex(bm), cBn = cIndex(bn);
  Value mBlk = BlockIdOp::create(b, loc, Dim::X);
  Value head = BlockIdOp::create(b, loc, Dim::Y);
  Value batch = BlockIdOp::create(b, loc, Dim::Z);
  auto readIndexAt = [&](Value offsets, Value at) -> Value {
    Value read = ReadOp::create(b, loc, b.getI32Type(), offsets, at);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), read);
  };
  // With seqused: batch entry b's keys are its first seqused_k[b] (at most
  // S_k; a negative length is none). Without varlen k and v are sliced here,
  // before split-KV's chunks and the masks, which then see that length.
  // The keys this program reads, as one slice of k and v along S_k (a TMA
  // load takes one slice of an argument): [keyStart, keyStart + keyLen).
  Value usedKeys, keyStart, keyLen, pagedKeys;
  if (variant.seqused) {
    Value used = readIndexAt(seqUsedK, batch);
    Value nonNegative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, used, c0);
    usedKeys = arith::SelectOp::create(b, loc, nonNegative, used, c0);
    if (variant.paged) {
      // At most the pages the table holds.
      Value capacity = arith::MulIOp::create(
          b, loc, DimOp::create(b, loc, func.getArgument(*blockTableArg), 1),
          DimOp::create(b, loc, k, 2));
      keyStart = c0;
      keyLen = arith::MinUIOp::create(b, loc, usedKeys, capacity);
      pagedKeys = keyLen;
    } else if (!variant.varlen) {
      keyStart = c0;
      keyLen =
          arith::MinUIOp::create(b, loc, usedKeys, DimOp::create(b, loc, k, 2));
    }
  }
  // With split, grid y is (head, chunk of the keys) and the partial outputs'
  // head index is y itself: the query head is y / num_splits, and k and v
  // narrow to the chunk, ceil(ceil(S_k / block_n) / num_splits) key blocks
  // from block chunk * (y % num_splits) (none past S_k, or past the used
  // keys).
  Value outHead = head;
  if (variant.split) {
    // The merge, launched after this kernel as its dependent, may take the
    // SMs this grid leaves free once all its programs run, and waits
    // there for this grid to end (tile.wait_prior_grids).
    LaunchDependentGridsOp::create(b, loc);
    Value numSplits = arg(ArgRole::NumSplits);
    head = arith::DivUIOp::create(b, loc, outHead, numSplits);
    Value chunk = arith::RemUIOp::create(b, loc, outHead, numSplits);
    Value keys = keyLen ? keyLen : DimOp::create(b, loc, k, 2).getResult();
    Value blocks = arith::CeilDivUIOp::create(b, loc, keys, cBn);
    Value perChunk = arith::MulIOp::create(
        b, loc, arith::CeilDivUIOp::create(b, loc, blocks, numSplits), cBn);
    keyStart = arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, chunk, perChunk), keys);
    keyLen = arith::MinUIOp::create(
        b, loc, perChunk, arith::SubIOp::create(b, loc, keys, keyStart));
  }
  // Paged: the keys' blocks from block keyStart / block_n on (a multiple
  // of block_n), each in its page, so k and v stay whole.
  Value firstKeyBlock, blocksPerPage;
  if (variant.paged) {
    firstKeyBlock = arith::DivUIOp::create(b, loc, keyStart, cBn);
    // (At least 1: a page smaller than a block breaks the contract, and
    // then gives wrong keys, never a division by zero.)
    blocksPerPage = arith::MaxUIOp::create(
        b, loc,
        arith::DivUIOp::create(b, loc, DimOp::create(b, loc, k, 2), cBn), c1);
  } else if (keyLen) {
    k = SliceOp::create(b, loc, k, 2, keyStart, keyLen);
    v = SliceOp::create(b, loc, v, 2, keyStart, keyLen);
  }
  // What score and mask functions see: the batch entry (the sequence, with
  // varlen), and positions from the block's first query and key (within
  // the sequence), whatever the causal alignment.
  Value position = batch, tableRow = batch;
  Value unitScale =
      scoreFn.fn ? arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f))
                       .getResult()
                 : Value();
  if (variant.varlen) {
    // Sequence b's rows of the packed tensors: [cu[b], cu[b + 1]).
    Value next = arith::AddIOp::create(b, loc, batch, c1);
    auto offset = [&](Value offsets, Value at) -> Value {
      Value read = ReadOp::create(b, loc, b.getI32Type(), offsets, at);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), read);
    };
    Value startQ = offset(cuSeqlensQ, batch);
    Value lenQ =
        arith::SubIOp::create(b, loc, offset(cuSeqlensQ, next), startQ);
    // A paged sequence's keys are its pages' (keyLen, from seqused; its
    // cu_seqlens_k is not read).
    Value startK, lenK = keyLen;
    if (!variant.paged) {
      startK = offset(cuSeqlensK, batch);
      lenK = arith::SubIOp::create(b, loc, offset(cuSeqlensK, next), startK);
      // With seqused, the sequence's keys are its first seqused_k[b] from
      // its offset (at most its span).
      if (usedKeys)
        lenK = arith::MinUIOp::create(b, loc, lenK, usedKeys);
    }
    // A bottom-right band shifts by this sequence's S_k - S_q.
    if (windowAlign) {
      Value shift = arith::MulIOp::create(
          b, loc, windowAlign, arith::SubIOp::create(b, loc, lenK, lenQ));
      windowLo = arith::AddIOp::create(b, loc, windowLo, shift);
      windowHi = arith::AddIOp::create(b, loc, windowHi, shift);
    }
    // The grid covers the longest sequence: a program past its own
    // sequence's queries sees no keys, so that its loops run zero times
    // (and its stores write nothing).
    Value live =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              arith::MulIOp::create(b, loc, mBlk, cBm), lenQ);
    Value keys = arith::SelectOp::create(b, loc, live, lenK, c0);
    q = SliceOp::create(b, loc, q, 2, startQ, lenQ);
    o = SliceOp::create(b, loc, o, 2, startQ, lenQ);
    // The caller that wants no log-sum-exps passes a view of no rows: the
    // slice is clamped to the view (to nothing there).
    if (lseView) {
      Value rows = DimOp::create(b, loc, lseView, 2);
      Value first = arith::MinUIOp::create(b, loc, startQ, rows);
      Value count = arith::MinUIOp::create(
          b, loc, lenQ, arith::SubIOp::create(b, loc, rows, first));
      lseView = SliceOp::create(b, loc, lseView, 2, first, count);
    }
    if (variant.paged) {
      keyLen = keys;
    } else {
      k = SliceOp::create(b, loc, k, 2, startK, keys);
      v = SliceOp::create(b, loc, v, 2, startK, keys);
    }
    // The packed views have one batch entry (the block table a row per
    // sequence).
    tableRow = batch;
    batch = c0;
  }
  Value seqQ = DimOp::create(b, loc, q, 2);
  Value seqK = variant.paged ? keyLen : DimOp::create(b, loc, k, 2).getResult();
  Value qTile = LoadOp::create(
      b, loc, tensorTy({bm, d}, elt), q, ValueRange{batch, head, mBlk, c0},
      /*gather=*/ValueRange{}, /*pad=*/APFloat(0.0), /*transpose=*/false);
  // The K/V head of this query head: its group of H_q / H_kv query heads.
  // The divisions (an emulated sequence on the GPU, on the way to the
  // first K/V copy: 2-5% at D=64 and S <= 4096 on an H100) are skipped
  // when the head counts are equal; and they come after Q's load, so that
  // they do not hold up its copy.
  Value headsQ = DimOp::create(b, loc, q, 1);
  Value headsKv = DimOp::create(b, loc, k, 1);
  Value grouped =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, headsQ, headsKv);
  auto kvHeadOf = scf::IfOp::create(
      b, loc, grouped,
      [&](OpBuilder &b, Location loc) {
        Value group = arith::DivUIOp::create(b, loc, headsQ, headsKv);
        scf::YieldOp::create(
            b, loc, ValueRange{arith::DivUIOp::create(b, loc, head, group)});
      },
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, ValueRange{head});
      });
  Value kvHead = kvHeadOf.getResult(0);
  Value initMax = splat({bm}, negInf);
  Value initSum = splat({bm}, 0.0);
  Value initAcc = splat({bm, dv}, 0.0);
  Value zeroScores = splat({bm, bn}, 0.0);
  Value maskedScores = splat({bm, bn}, negInf);
  Value numBlocks = arith::CeilDivUIOp::create(b, loc, seqK, cBn);

  // The query position of this block's first row, as the causal mask sees
  // it: bottom-right alignment shifts queries by S_k - S_q.
  Value rowOffset = arith::MulIOp::create(b, loc, mBlk, cBm);
  Value queryStart = rowOffset;
  if (causal == CausalMode::BottomRight)
    rowOffset = arith::AddIOp::create(
        b, loc, rowOffset, arith::SubIOp::create(b, loc, seqK, seqQ));

  // The online softmax of a block's scores, and P V_j into the accumulator;
  // yields the loop's new state.
  auto softmaxStep = [&](OpBuilder &b, Location loc, Value s, Value vt,
                         ValueRange iter) {
    auto softmax = OnlineSoftmaxOp::create(
        b, loc, s, iter[0], iter[1], scoreFn.fn ? unitScale : softmaxScale,
        /*exp2=*/false, /*rescale_threshold=*/nullptr);
    Value p = arith::TruncFOp::create(b, loc, tensorTy({bm, bn}, elt),
                                      softmax.getProbs());
    Value alpha = BroadcastOp::create(b, loc, tensorTy({bm, dv}, f32),
                                      softmax.getAlpha(), 1);
    Value acc = arith::MulFOp::create(b, loc, iter[2], alpha);
    acc = MmaOp::create(b, loc, p, vt, acc);
    scf::YieldOp::create(
        b, loc, ValueRange{softmax.getNewMax(), softmax.getNewSum(), acc});
  };
  // One step over key block j: with the masks (the keys' bounds, the band,
  // the mask function), or without them for a block the block mask lists
  // as full.
  auto step = [&](OpBuilder &b, Location loc, Value j, ValueRange iter,
                  bool masked) {
    // Key block j: of batch entry b, or of its page.
    Value kvEntry = batch, kvBlock = j;
    SmallVector<Value> gather;
    if (variant.paged && cfg.pageSize) {
      // Gathered from bn / pageSize pages, the block's group g from the
      // page of its first key, none past the last used page (the table's
      // entries past it may be anything; those keys are masked).
      int64_t groups = bn / cfg.pageSize;
      Value block = arith::AddIOp::create(b, loc, j, firstKeyBlock);
      Value lastPage = arith::DivUIOp::create(
          b, loc,
          arith::SubIOp::create(
              b, loc, arith::MaxUIOp::create(b, loc, pagedKeys, c1), c1),
          cIndex(cfg.pageSize));
      Value firstPage = arith::MulIOp::create(b, loc, block, cIndex(groups));
      for (int64_t g = 0; g < groups; ++g) {
        Value at = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, firstPage, cIndex(g)),
            lastPage);
        gather.push_back(arith::IndexCastOp::create(
            b, loc, b.getIndexType(),
            ReadOp::create(b, loc, b.getI32Type(),
                           func.getArgument(*blockTableArg),
                           ValueRange{tableRow, at})));
      }
      kvEntry = c0;
      kvBlock = c0;
    } else if (variant.paged) {
      Value block = arith::AddIOp::create(b, loc, j, firstKeyBlock);
      Value page = ReadOp::create(
          b, loc, b.getI32Type(), func.getArgument(*blockTableArg),
          ValueRange{tableRow,
                     arith::DivUIOp::create(b, loc, block, blocksPerPage)});
      kvEntry = arith::IndexCastOp::create(b, loc, b.getIndexType(), page);
      kvBlock = arith::RemUIOp::create(b, loc, block, blocksPerPage);
    }
    Value kt = LoadOp::create(b, loc, tensorTy({d, bn}, elt), k,
                              ValueRange{kvEntry, kvHead, kvBlock, c0}, gather,
                              APFloat(0.0), /*transpose=*/true);
    // V is loaded with K, so that its copy overlaps Q K^T and the softmax.
    Value vt = LoadOp::create(b, loc, tensorTy({bn, dv}, elt), v,
                              ValueRange{kvEntry, kvHead, kvBlock, c0}, gather,
                              APFloat(0.0), /*transpose=*/false);
    Value s = MmaOp::create(b, loc, qTile, kt, zeroScores);
    if (capScale) {
      Value factor =
          tensor::SplatOp::create(b, loc, tensorTy({bm, bn}, f32), capScale);
      s = math::TanhOp::create(b, loc,
                               arith::MulFOp::create(b, loc, s, factor));
    }
    Value colOffset = arith::MulIOp::create(b, loc, j, cBn);
    auto captures = [&](const KernelFunction &f) {
      SmallVector<Value> values;
      for (unsigned a : f.captures)
        values.push_back(func.getArgument(a));
      return values;
    };
    // The score function sees the scores as the softmax would (scaled,
    // capped); the softmax then takes them as they are.
    if (scoreFn.fn) {
      Value factor = tensor::SplatOp::create(b, loc, tensorTy({bm, bn}, f32),
                                             softmaxScale);
      s = arith::MulFOp::create(b, loc, s, factor);
      s = ApplyOp::create(b, loc, tensorTy({bm, bn}, f32),
                          scoreFn.fn.getSymName(), s, position, head,
                          queryStart, colOffset, captures(scoreFn));
    }
    if (!masked)
      return softmaxStep(b, loc, s, vt, iter);
    // Keys past S_k: a mask over the block's columns, for every row.
    Value inBounds =
        BoundsMaskOp::create(b, loc, tensorTy({bn}, b.getI1Type()),
                             ValueRange{colOffset}, ValueRange{seqK});
    Value keep = BroadcastOp::create(b, loc, tensorTy({bm, bn}, b.getI1Type()),
                                     inBounds, 0);
    if (window) {
      Value visible =
          WindowMaskOp::create(b, loc, tensorTy({bm, bn}, b.getI1Type()),
                               rowOffset, colOffset, windowLo, windowHi);
      keep = arith::AndIOp::create(b, loc, keep, visible);
    } else if (causal != CausalMode::None) {
      Value visible = CausalMaskOp::create(
          b, loc, tensorTy({bm, bn}, b.getI1Type()), rowOffset, colOffset);
      keep = arith::AndIOp::create(b, loc, keep, visible);
    }
    if (maskFn.fn) {
      Value visible = ApplyOp::create(b, loc, tensorTy({bm, bn}, b.getI1Type()),
                                      maskFn.fn.getSymName(),
                                      /*score=*/Value(), position, head,
                                      queryStart, colOffset, captures(maskFn));
      keep = arith::AndIOp::create(b, loc, keep, visible);
    }
    s = arith::SelectOp::create(b, loc, keep, s, maskedScores);
    return softmaxStep(b, loc, s, vt, iter);
  };
  SmallVector<Value> init{initMax, initSum, initAcc};
  scf::ForOp loop;
  if (!variant.sparse) {
    loop = scf::ForOp::create(
        b, loc, c0, numBlocks, c1, init,
        [&](OpBuilder &b, Location loc, Value j, ValueRange iter) {
          step(b, loc, j, iter, /*masked=*/true);
        });
  } else {
    // The block mask's row of this program's query block, and the kernel's
    // key blocks per block of the block mask (r, a power of two).
    Value maskRow =
        arith::DivUIOp::create(b, loc, mBlk, cIndex(kBlockMaskSize / bm));
    Value perMaskBlock = cIndex(kBlockMaskSize / bn);
    auto readIndex = [&](OpBuilder &b, Location loc, unsigned arg,
                         ValueRange at) -> Value {
      Value read = ReadOp::create(b, loc, b.getI32Type(),
                                  func.getArgument(blockMaskArgs[arg]), at);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), read);
    };
    // The partial blocks (with the masks), then the full ones: step t of a
    // list visits the kernel's block t % r of block mask block
    // indices[t / r].
    SmallVector<Value> state(init);
    for (auto [counts, indices, masked] :
         {std::tuple{0u, 1u, true}, std::tuple{2u, 3u, false}}) {
      Value listed = readIndex(b, loc, counts, {batch, head, maskRow});
      Value steps = arith::MulIOp::create(b, loc, listed, perMaskBlock);
      loop = scf::ForOp::create(
          b, loc, c0, steps, c1, state,
          [&, indices = indices, masked = masked](OpBuilder &b, Location loc,
                                                  Value t, ValueRange iter) {
            Value maskBlock =
                readIndex(b, loc, indices,
                          {batch, head, maskRow,
                           arith::DivUIOp::create(b, loc, t, perMaskBlock)});
            Value j = arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, maskBlock, perMaskBlock),
                arith::RemUIOp::create(b, loc, t, perMaskBlock));
            step(b, loc, j, iter, masked);
          });
      state.assign(loop.getResults().begin(), loop.getResults().end());
    }
  }

  Value sum = loop.getResult(1);
  // The rows' log-sum-exps (of the scores the softmax saw: scaled, capped),
  // -inf for a row that saw no key; nothing is written through a view with
  // no rows. Stored before O, so that the max is dead during O's epilogue
  // (and O's store, which may go through shared memory, stays last).
  if (lseView) {
    // The softmax chain's own scale (1 when a score function has scaled
    // the scores already), which tile-exp2 requires.
    Value lse =
        LogSumExpOp::create(b, loc, tensorTy({bm}, f32), loop.getResult(0), sum,
                            scoreFn.fn ? unitScale : softmaxScale);
    StoreOp::create(b, loc, lse, lseView, ValueRange{batch, outHead, mBlk},
                    /*mask=*/Value());
  }
  // O = acc * (1 / l): one division per row, not per element (as
  // FlashAttention-2 does), with 0 for rows that saw no key (l == 0).
  Value inv = arith::DivFOp::create(b, loc, splat({bm}, 1.0), sum);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, initSum);
  inv = arith::SelectOp::create(b, loc, empty, initSum, inv);
  Value out = arith::MulFOp::create(
      b, loc, loop.getResult(2),
      BroadcastOp::create(b, loc, tensorTy({bm, dv}, f32), inv, 1));
  // (Split-KV's partial outputs stay f32 for the merge.)
  if (!variant.split)
    out = arith::TruncFOp::create(b, loc, tensorTy({bm, dv}, elt), out);
  StoreOp::create(b, loc, out, o, ValueRange{batch, outHead, mBlk, c0},
                  /*mask=*/Value());
  func::ReturnOp::create(b, loc);
  return func;
}
