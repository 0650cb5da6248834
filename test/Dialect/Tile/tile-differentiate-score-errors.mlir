// RUN: tiled-attn-opt %s -split-input-file -verify-diagnostics --tile-differentiate-score=function=mix
// RUN: not tiled-attn-opt %s -split-input-file --tile-differentiate-score=function=absent 2>&1 | FileCheck %s --check-prefix=ABSENT

// tile-differentiate-score's errors: what it cannot differentiate is said,
// for the function's author to declare the gradient beside it.

// ABSENT: error: tile-differentiate-score: no function 'absent' in the module

// An op with no rule, on a value that depends on the score.
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index) -> f32 {
  // expected-error @+1 {{tile-differentiate-score: no derivative for 'math.sin' of a value that depends on the score; declare the function's gradient beside it instead}}
  %s = math.sin %score : f32
  return %s : f32
}

// -----

// expected-error @+1 {{tile-differentiate-score: a score function takes (score: f32, b, h, q_idx, kv_idx, captures...) and returns f32, in one block}}
func.func @mix(%score: f32, %b: index) -> f32 {
  return %score : f32
}

// -----

// An op with regions is not looked into.
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index,
               %c: i1) -> f32 {
  // expected-error @+1 {{tile-differentiate-score: ops with regions are not differentiated; declare the function's gradient beside it instead}}
  %r = scf.if %c -> f32 {
    scf.yield %score : f32
  } else {
    scf.yield %score : f32
  }
  return %r : f32
}

// -----

// The gradient's name is taken.
// expected-error @+1 {{tile-differentiate-score: the module already has 'mix_grad'}}
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index) -> f32 {
  return %score : f32
}
func.func @mix_grad() {
  return
}

// -----

// A select's condition computed from the score (a comparison, and i1 ops
// on it) has no tangent: no error (the select takes each side's).
func.func @mix(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index) -> f32 {
  %zero = arith.constant 0.0 : f32
  %pos = arith.cmpf ogt, %score, %zero : f32
  %bits = arith.andi %pos, %pos : i1
  %r = arith.select %bits, %score, %zero : f32
  return %r : f32
}
