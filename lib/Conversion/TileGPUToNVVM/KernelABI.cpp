//===- KernelABI.cpp - A kernel's parameters, spelled out
//------------------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The kernel ABI (tiled-attn-v2): a GPU-level kernel becomes a gpu.func whose
// parameters are explicit scalars, each tagged with the #tilegpu.param it
// carries. A view argument
//
//   %q: !tile.view<?x?x?x64xf16>
//
// becomes its base address, the sizes of its dynamic dimensions and the
// strides of its dimensions (the last one's stride is 1 by construction):
//
//   %q: memref<f16>        {tilegpu.param = #tilegpu.param<base, "q">},
//   %q_size0..2: index     {tilegpu.param = #tilegpu.param<size, "q", dim =
//   i>}, %q_stride0..2: index   {tilegpu.param = #tilegpu.param<stride, "q",
//   dim = i>}
//
// and the body sees the strided memref it had, rebuilt from them:
//
//   memref.reinterpret_cast %q to offset: [%c0], sizes: [%s0, %s1, %s2, 64],
//       strides: [%t0, %t1, %t2, 1]
//
// A tensor map argument (a wgmma kernel's TMA copies read through it)
// becomes one pointer: the runtime passes the 128-byte CUtensorMap by value
// as a grid constant (tilegpu-tensor-map-params marks the lowered llvm.func
// parameter so) and the kernel reads it at that address.
//
// The GPU-to-NVVM pipeline lowers with the bare-pointer calling convention,
// so the rank-0 memref is one pointer and every other parameter one
// register-wide value: the PTX entry takes exactly this list, which the
// library's manifest records and the runtime packs. Upstream's expanded
// memref descriptors (11 values per view, 45 for an SDPA kernel) are gone.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Conversion/TileGPUToNVVM/TileGPUToNVVM.h"
#include "tiled_attn/Dialect/Tile/IR/TileOps.h"
#include "tiled_attn/Dialect/TileGPU/IR/TileGPUOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tilegpu;

namespace {
/// The explicit parameters of one kernel, built argument by argument.
struct ParamList {
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;

  void add(Type type, ParamKind kind, StringRef name, int64_t dim = -1,
           Type map = Type()) {
    MLIRContext *ctx = type.getContext();
    types.push_back(type);
    auto param = KernelParamAttr::get(ctx, kind, name, dim, map);
    attrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(TileGPUDialect::getParamAttrName(), param)}));
  }
};
} // namespace

/// Appends the parameters of view `view` named `name`: base, the sizes of
/// its dynamic dimensions, the strides of every dimension but the last.
static void addViewParams(MLIRContext *ctx, tile::ViewType view, StringRef name,
                          ParamList &params) {
  Type index = IndexType::get(ctx);
  params.add(MemRefType::get({}, view.getElementType()), ParamKind::Base, name);
  for (auto [dim, size] : llvm::enumerate(view.getShape()))
    if (ShapedType::isDynamic(size))
      params.add(index, ParamKind::Size, name, dim);
  for (int64_t dim = 0; dim + 1 < view.getRank(); ++dim)
    params.add(index, ParamKind::Stride, name, dim);
}

/// Rebuilds, at the start of the kernel, the strided memref (of `type`) of a
/// view from its parameters starting at `first`; returns the memref and the
/// number of parameters used.
static std::pair<Value, unsigned> rebuildView(OpBuilder &b, Location loc,
                                              tile::ViewType view,
                                              MemRefType type,
                                              ValueRange params) {
  unsigned next = 0;
  Value base = params[next++];
  SmallVector<OpFoldResult> sizes, strides;
  for (int64_t size : view.getShape())
    sizes.push_back(ShapedType::isDynamic(size) ? OpFoldResult(params[next++])
                                                : b.getIndexAttr(size));
  for (int64_t dim = 0; dim + 1 < view.getRank(); ++dim)
    strides.push_back(params[next++]);
  strides.push_back(b.getIndexAttr(1));
  // Offset 0, as a value: the memref type's offset is dynamic, as its
  // slices' are.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value memref = memref::ReinterpretCastOp::create(b, loc, type, base, zero,
                                                   sizes, strides);
  return {memref, next};
}

FailureOr<gpu::GPUFuncOp>
tiled_attn::createKernelWithExplicitParams(OpBuilder &b, func::FuncOp func,
                                           const TypeConverter &converter) {
  MLIRContext *ctx = b.getContext();
  ParamList params;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    std::string name = tile::getArgumentName(func, index);
    // A tensor map (convert-tile-to-tilegpu made it, and named it after its
    // view): one pointer, the address of the grid-constant CUtensorMap.
    if (auto map = dyn_cast<TensorMapType>(type)) {
      auto param = func.getArgAttrOfType<KernelParamAttr>(
          index, TileGPUDialect::getParamAttrName());
      if (!param || param.getKind() != ParamKind::TensorMap)
        return func.emitError() << "convert-tilegpu-to-nvvm: tensor map "
                                   "argument #"
                                << index
                                << " has no #tilegpu.param"
                                   "<tensor_map, ...>";
      params.add(converter.convertType(map), ParamKind::TensorMap,
                 param.getName(), /*dim=*/-1, map);
      continue;
    }
    if (auto view = dyn_cast<tile::ViewType>(type)) {
      addViewParams(ctx, view, name, params);
      continue;
    }
    Type converted = converter.convertType(type);
    if (!converted || !converted.isIntOrIndexOrFloat())
      return func.emitError()
             << "convert-tilegpu-to-nvvm: kernel argument #" << index
             << " has type " << type
             << "; a kernel takes views and integer or float scalars";
    params.add(converted, ParamKind::Scalar, name);
  }

  auto kernel = gpu::GPUFuncOp::create(b, func.getLoc(), func.getName(),
                                       b.getFunctionType(params.types, {}));
  for (auto [index, attrs] : llvm::enumerate(params.attrs))
    kernel.setArgAttrs(index, attrs);

  // The body moves over; its entry block takes the new parameters after
  // the old arguments, which are replaced by the values rebuilt from them
  // and then dropped.
  kernel.getBody().front().erase();
  kernel.getBody().takeBody(func.getBody());
  Block &entry = kernel.getBody().front();
  unsigned numOld = entry.getNumArguments();
  for (Type type : params.types)
    entry.addArgument(type, func.getLoc());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry);
  unsigned next = numOld;
  for (BlockArgument arg : entry.getArguments().take_front(numOld)) {
    ValueRange rest = entry.getArguments().drop_front(next);
    if (auto view = dyn_cast<tile::ViewType>(arg.getType())) {
      auto type = cast<MemRefType>(converter.convertType(view));
      auto [memref, used] = rebuildView(b, arg.getLoc(), view, type, rest);
      arg.replaceAllUsesWith(memref);
      next += used;
    } else {
      arg.replaceAllUsesWith(rest.front());
      ++next;
    }
  }
  entry.eraseArguments(0, numOld);
  return kernel;
}
