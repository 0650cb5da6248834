//===- KernelFunctions.cpp - Score and mask functions of a kernel ---------===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tiled_attn/Kernels/KernelFunctions.h"

using namespace mlir;
using namespace tiled_attn;
using namespace tiled_attn::tile;

unsigned KernelArguments::add(OpBuilder &b, Type type, ArgAttr role) {
  types.push_back(type);
  attrs.push_back(
      b.getDictionaryAttr(b.getNamedAttr(TileDialect::getArgAttrName(), role)));
  return types.size() - 1;
}

LogicalResult tiled_attn::findKernelFunctions(Location loc, ModuleOp module,
                                              ArrayRef<std::string> names,
                                              KernelFunction &score,
                                              KernelFunction &mask,
                                              StringRef &missing) {
  for (const std::string &name : names) {
    auto found =
        module ? module.lookupSymbol<func::FuncOp>(name) : func::FuncOp();
    if (!found || found.isExternal()) {
      if (missing.empty())
        missing = name;
      continue;
    }
    FunctionType type = found.getFunctionType();
    bool isScore = type.getNumResults() == 1 && type.getResult(0).isF32();
    KernelFunction &fn = isScore ? score : mask;
    if (fn.fn)
      return emitError(loc)
             << "two " << (isScore ? "score" : "mask") << " functions: '"
             << fn.fn.getSymName() << "' and '" << name
             << "' (a score function gives an f32, a mask function an i1)";
    fn.fn = found;
  }
  return success();
}

LogicalResult tiled_attn::addFunctionCaptures(OpBuilder &b, KernelFunction &fn,
                                              bool isScore,
                                              KernelArguments &args) {
  func::FuncOp found = fn.fn;
  StringRef name = found.getSymName();
  FunctionType type = found.getFunctionType();
  unsigned leading = isScore ? 5 : 4;
  bool ok =
      type.getNumInputs() >= leading && type.getNumResults() == 1 &&
      (isScore ? type.getResult(0).isF32() : type.getResult(0).isInteger(1)) &&
      (!isScore || type.getInput(0).isF32());
  for (unsigned i = isScore ? 1 : 0; ok && i < leading; ++i)
    ok = type.getInput(i).isIndex();
  if (!ok)
    return emitError(found.getLoc())
           << "a " << (isScore ? "score" : "mask") << " function takes ("
           << (isScore ? "score: f32, " : "")
           << "b, h, q_idx, kv_idx: index, captured inputs...) and gives "
           << (isScore ? "an f32" : "an i1") << ", got " << type;
  for (unsigned i = leading; i < type.getNumInputs(); ++i) {
    ArgAttr role = getArgAttr(found, i);
    if (!role || role.getRole() != ArgRole::Captured)
      return emitError(found.getLoc())
             << "argument #" << i << " of '" << name
             << "' is a captured input: mark it #tile.arg<captured, "
                "\"name\">, the name the caller gives it by";
    auto it = args.captured.find(role.getArgumentName());
    if (it == args.captured.end()) {
      unsigned number = args.add(b, type.getInput(i), role);
      it = args.captured.insert({role.getArgumentName(), number}).first;
    } else if (args.types[it->second] != type.getInput(i)) {
      return emitError(found.getLoc())
             << "captured input '" << role.getArgumentName()
             << "' has two types: " << args.types[it->second] << " and "
             << type.getInput(i);
    }
    fn.captures.push_back(it->second);
  }
  return success();
}
