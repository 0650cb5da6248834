//===- TileTypes.td - Types of the tile dialect ------------*- tablegen -*-===//
//
// Part of the tiled-attn project, under the Apache License v2.0 with LLVM
// Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TILED_ATTN_DIALECT_TILE_IR_TILETYPES_TD
#define TILED_ATTN_DIALECT_TILE_IR_TILETYPES_TD

include "tiled_attn/Dialect/Tile/IR/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_ViewType : Tile_Type<"View", "view"> {
  let summary = "A strided view of a global-memory tensor";
  let description = [{
    A `!tile.view` names a tensor in global memory: a base address, one size
    and one stride per dimension. Sizes are static or dynamic (`?`); strides
    are always run-time values, counted in elements. Tiles are moved in and
    out of a view with `tile.load` and `tile.store`, which handle elements
    that fall outside the view's sizes.

    Example:

    ```mlir
    // [batch, heads, sequence, head_dim] with a static head dim.
    !tile.view<?x?x?x128xf16>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "sizes; ShapedType::kDynamic for `?`">:$shape,
    "::mlir::Type":$elementType
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
  }];
}

#endif // TILED_ATTN_DIALECT_TILE_IR_TILETYPES_TD
