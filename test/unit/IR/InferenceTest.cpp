//===- InferenceTest.cpp - Per-op shape and dtype inference ---------------===//

#include "../TestUtil.h"

#include <catch2/catch.hpp>

using namespace fuel;
using namespace fuel::test;

namespace {
/// Inputs used by most cases.
const std::string kInputs = R"([
  {"name": "x", "dtype": "f32", "shape": ["B", 4]},
  {"name": "m", "dtype": "f32", "shape": [2, 3, 4]},
  {"name": "n", "dtype": "f32", "shape": [4, 5]},
  {"name": "row", "dtype": "f32", "shape": [4]},
  {"name": "h", "dtype": "f16", "shape": ["B", 4]},
  {"name": "i", "dtype": "i32", "shape": [3]},
  {"name": "q", "dtype": "u8", "shape": ["B", 4]},
  {"name": "qw", "dtype": "i8", "shape": [4, 5]},
  {"name": "flag", "dtype": "bool", "shape": ["B", 1]},
  {"name": "img", "dtype": "f32", "shape": ["B", 3, 8, 8]},
  {"name": "k", "dtype": "f32", "shape": [6, 3, 3, 3]},
  {"name": "qimg", "dtype": "u8", "shape": ["B", 3, 8, 8]},
  {"name": "qk", "dtype": "i8", "shape": [6, 3, 3, 3]},
  {"name": "qb", "dtype": "i32", "shape": [6]},
  {"name": "seq", "dtype": "f32", "shape": ["B", "T", 16]}
])";

/// The type of `y`, or the first error message.
std::string infer(const std::string &node) {
  ParseResult r = parseOneOp(kInputs, node);
  if (!r.graph)
    return "error: " + r.firstMessage();
  return typeOf(*r.graph, "y");
}

std::string op(const std::string &name, const std::string &inputs,
               const std::string &attrs = "") {
  std::string node = R"({"id": "y", "op": ")" + name + R"(", "inputs": )" +
                     inputs;
  if (!attrs.empty())
    node += R"(, "attrs": )" + attrs;
  return infer(node + "}");
}
} // namespace

TEST_CASE("unary ops keep the type and check dtypes", "[infer]") {
  for (const char *name : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh",
                           "sigmoid", "relu", "gelu", "silu", "erf", "sin",
                           "cos", "recip", "floor", "ceil", "round"})
    CHECK(op(name, R"(["x"])") == "f32[B, 4]");
  CHECK(op("exp", R"(["i"])") ==
        "error: exp: operand 0 must be a float type, got i32");
  CHECK(op("relu", R"(["i"])") == "i32[3]");
  CHECK(op("neg", R"(["flag"])") ==
        "error: neg: operand 0 must be numeric (not bool), got bool");
  CHECK(op("not", R"(["flag"])") == "bool[B, 1]");
  CHECK(op("not", R"(["i"])") == "i32[3]"); // Bitwise.
  CHECK(op("not", R"(["x"])") == "error: not: operand 0 must be bool or integer, got f32");
  CHECK(op("gelu", R"(["x"])", R"({"approximate": "tanh"})") == "f32[B, 4]");
  CHECK(op("gelu", R"(["x"])", R"({"approximate": "fast"})") ==
        "error: gelu: 'approximate' must be \"none\" or \"tanh\", got \"fast\"");
  CHECK(op("cast", R"(["x"])", R"({"to": "bf16"})") == "bf16[B, 4]");
  CHECK(op("clamp", R"(["x"])", R"({"min": 0, "max": 6})") == "f32[B, 4]");
  CHECK(op("clamp", R"(["x"])") ==
        "error: clamp: needs at least one of 'min' and 'max'");
  CHECK(op("clamp", R"(["x"])", R"({"min": 2, "max": 1})") ==
        "error: clamp: 'min' is greater than 'max'");
}

TEST_CASE("binary ops broadcast and never promote", "[infer]") {
  for (const char *name : {"add", "sub", "mul", "div", "pow", "max", "min"})
    CHECK(op(name, R"(["x", "row"])") == "f32[B, 4]");
  for (const char *name : {"eq", "ne", "lt", "le", "gt", "ge"})
    CHECK(op(name, R"(["x", "x"])") == "bool[B, 4]");
  CHECK(op("and", R"(["flag", "flag"])") == "bool[B, 1]");
  CHECK(op("and", R"(["i", "i"])") == "i32[3]"); // Bitwise.
  CHECK(op("or", R"(["x", "x"])") ==
        "error: or: operand 0 must be bool or integer, got f32");
  CHECK(op("add", R"(["x", "h"])") ==
        "error: add: dtype mismatch: operand 1 is f16, operand 0 is f32");
  CHECK(op("add", R"(["m", "n"])") ==
        "error: add: cannot broadcast [2, 3, 4] with [4, 5] (operand 1): "
        "extents differ at result axis 1");
  CHECK(op("add", R"(["x", "m"])") ==
        "error: add: cannot broadcast [B, 4] with [2, 3, 4] (operand 1): "
        "extents differ at result axis 1");
  CHECK(op("mul", R"(["m", "row"])") == "f32[2, 3, 4]");
  CHECK(op("where", R"(["flag", "x", "row"])") == "f32[B, 4]");
  CHECK(op("where", R"(["x", "x", "x"])") ==
        "error: where: operand 0 must be bool, got f32");
}

TEST_CASE("matmul and linear", "[infer]") {
  CHECK(op("matmul", R"(["m", "n"])") == "f32[2, 3, 5]");
  CHECK(op("matmul", R"(["n", "n"])", R"({"transpose_a": true})") ==
        "f32[5, 5]");
  CHECK(op("matmul", R"(["m", "m"])", R"({"transpose_b": true})") ==
        "f32[2, 3, 3]");
  CHECK(op("matmul", R"(["row", "n"])") == "f32[5]");
  CHECK(op("matmul", R"(["m", "row"])") == "f32[2, 3]");
  CHECK(op("matmul", R"(["row", "row"])") == "f32[]");
  // 8-bit operands, in any mix, give their exact product in i32; another
  // dtype beside one is an error.
  CHECK(op("matmul", R"(["q", "qw"])") == "i32[B, 5]");
  CHECK(op("matmul", R"(["qw", "qw"])", R"({"transpose_a": true})") == "i32[5, 5]");
  CHECK(op("matmul", R"(["x", "qw"])") ==
        "error: matmul: dtype mismatch: operand 1 is i8, operand 0 is f32");
  CHECK(op("matmul", R"(["n", "m"])") ==
        "error: matmul: contraction extents differ: operand 0 (f32[4, 5]) "
        "has K = 5, operand 1 (f32[2, 3, 4]) has K = 3");
  CHECK(op("matmul", R"(["row", "n"])", R"({"transpose_a": true})") ==
        "error: matmul: 'transpose_a' needs operand 0 of rank >= 2");
  CHECK(op("linear", R"(["x", "n"])") ==
        "error: linear: weight [4, 5] must be [N, K] with K = 4 (the last "
        "extent of operand 0)");
  ParseResult r = parseText(document(
      kInputs,
      R"([{"id": "w", "op": "transpose", "inputs": ["n"]},
          {"id": "b", "op": "reduce_sum", "inputs": ["n"], "attrs": {"axes": [0]}},
          {"id": "y", "op": "linear", "inputs": ["x", "w", "b"]},
          {"id": "bad", "op": "linear", "inputs": ["x", "w", "row"]}])",
      R"(["y", "bad"])"));
  REQUIRE_FALSE(r.graph);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].message ==
        "linear: bias must be [5], got [4]");
  CHECK(r.diagnostics[0].location.node == "bad");
  CHECK(r.diagnostics[0].location.pointer == "/nodes/3/inputs/2");
}

TEST_CASE("conv2d and pooling", "[infer]") {
  CHECK(op("conv2d", R"(["img", "k"])", R"({"pads": [1, 1, 1, 1]})") ==
        "f32[B, 6, 8, 8]");
  CHECK(op("conv2d", R"(["img", "k"])", R"({"strides": [2, 2]})") ==
        "f32[B, 6, 3, 3]");
  CHECK(op("conv2d", R"(["img", "k"])", R"({"dilations": [3, 3]})") ==
        "f32[B, 6, 2, 2]");
  CHECK(op("conv2d", R"(["img", "k"])", R"({"groups": 3})") ==
        "error: conv2d: weight [6, 3, 3, 3] expects 9 input channels, input "
        "[B, 3, 8, 8] has 3");
  CHECK(op("conv2d", R"(["img", "k"])", R"({"strides": [0, 1]})") ==
        "error: conv2d: 'strides' value 0 is out of range");
  CHECK(op("conv2d", R"(["img", "k"])", R"({"dilations": [5, 5]})") ==
        "error: conv2d: window of extent 11 does not fit the padded input "
        "extent 8 on spatial axis 0");
  CHECK(op("conv2d", R"(["x", "k"])") ==
        "error: conv2d: operand 0 must have rank 4, got [B, 4]");
  // 8-bit image and weights, in any mix, give their exact convolution in
  // i32, without a bias; another dtype beside one is an error.
  CHECK(op("conv2d", R"(["qimg", "qk"])", R"({"pads": [1, 1, 1, 1]})") == "i32[B, 6, 8, 8]");
  CHECK(op("conv2d", R"(["qimg", "qk", "qb"])") ==
        "error: conv2d: an 8-bit convolution takes no bias (add it to the i32 result)");
  CHECK(op("conv2d", R"(["img", "qk"])") ==
        "error: conv2d: dtype mismatch: operand 1 is i8, operand 0 is f32");
  CHECK(op("conv2d", R"(["i", "i"])") ==
        "error: conv2d: operand 0 must be a float type or 8-bit integers, got i32");
  CHECK(op("max_pool2d", R"(["img"])", R"({"kernel": [2, 2], "strides": [2, 2]})") ==
        "f32[B, 3, 4, 4]");
  CHECK(op("avg_pool2d", R"(["img"])",
           R"({"kernel": [3, 3], "strides": [2, 2], "ceil_mode": true})") ==
        "f32[B, 3, 4, 4]");
  CHECK(op("max_pool2d", R"(["img"])", R"({"kernel": [2, 2], "pads": [2, 0, 0, 0]})") ==
        "error: max_pool2d: padding must be at most half the kernel extent");
  CHECK(op("max_pool2d", R"(["img"])", R"({"kernel": [2]})") ==
        "error: max_pool2d: 'kernel' needs 2 values, got 1");
}

TEST_CASE("reductions and normalizations", "[infer]") {
  CHECK(op("reduce_sum", R"(["m"])") == "f32[]");
  CHECK(op("reduce_max", R"(["m"])", R"({"axes": [0, -1], "keepdims": true})") ==
        "f32[1, 3, 1]");
  CHECK(op("reduce_mean", R"(["x"])", R"({"axes": [1]})") == "f32[B]");
  CHECK(op("reduce_mean", R"(["i"])") ==
        "error: reduce_mean: operand 0 must be a float type, got i32");
  CHECK(op("reduce_prod", R"(["m"])", R"({"axes": [1, 1]})") ==
        "error: reduce_prod: axis 1 is repeated");
  CHECK(op("reduce_min", R"(["m"])", R"({"axes": [3]})") ==
        "error: reduce_min: axis 3 is out of range for rank 3");
  CHECK(op("argmax", R"(["m"])", R"({"axis": 1})") == "i64[2, 4]");
  CHECK(op("argmin", R"(["m"])", R"({"axis": -1, "keepdims": true})") ==
        "i64[2, 3, 1]");
  CHECK(op("softmax", R"(["x"])") == "f32[B, 4]");
  CHECK(op("log_softmax", R"(["x"])", R"({"axis": 2})") ==
        "error: log_softmax: axis 2 is out of range for rank 2");
  CHECK(op("layer_norm", R"(["m", "row", "row"])") == "f32[2, 3, 4]");
  CHECK(op("layer_norm", R"(["m", "n"])", R"({"axis": -2})") ==
        "error: layer_norm: scale must have shape [3, 4] (the normalized "
        "axes), got [4, 5]");
  CHECK(op("rms_norm", R"(["seq"])", R"({"eps": 0})") ==
        "error: rms_norm: 'eps' must be positive");
  CHECK(op("rms_norm", R"(["x", "row"])") == "f32[B, 4]");
}

TEST_CASE("views", "[infer]") {
  CHECK(op("reshape", R"(["m"])", R"({"shape": [6, -1]})") == "f32[6, 4]");
  CHECK(op("reshape", R"(["seq"])", R"({"shape": ["B", "T", 4, 4]})") ==
        "f32[B, T, 4, 4]");
  CHECK(op("reshape", R"(["seq"])", R"({"shape": ["B", -1, 16]})") ==
        "f32[B, T, 16]");
  CHECK(op("reshape", R"(["m"])", R"({"shape": [5, -1]})") ==
        "error: reshape: cannot reshape [2, 3, 4] to [5, -1]: element counts "
        "differ");
  CHECK(op("reshape", R"(["seq"])", R"({"shape": [-1, 16]})") ==
        "error: reshape: cannot infer the -1 extent of [-1, 16] from "
        "[B, T, 16]: it is the product 'B*T'; write that instead of -1");
  CHECK(op("reshape", R"(["m"])", R"({"shape": [-1, -1]})") ==
        "error: reshape: 'shape' may contain -1 at most once");
  CHECK(op("transpose", R"(["m"])") == "f32[4, 3, 2]");
  CHECK(op("transpose", R"(["m"])", R"({"perm": [1, 0, 2]})") == "f32[3, 2, 4]");
  CHECK(op("transpose", R"(["m"])", R"({"perm": [0, 0, 1]})") ==
        "error: transpose: axis 0 is repeated");
  CHECK(op("broadcast_to", R"(["row"])", R"({"shape": ["B", 3, 4]})") ==
        "f32[B, 3, 4]");
  CHECK(op("broadcast_to", R"(["n"])", R"({"shape": [4, 4]})") ==
        "error: broadcast_to: cannot broadcast [4, 5] to [4, 4]");
  CHECK(op("expand", R"(["flag"])", R"({"shape": [1, 7]})") == "bool[B, 7]");
  CHECK(op("slice", R"(["m"])",
           R"({"starts": [0, -1], "ends": [100, -4], "axes": [1, 2], "steps": [2, -1]})") ==
        "f32[2, 2, 3]");
  CHECK(op("slice", R"(["x"])", R"({"starts": [1], "ends": [3]})") ==
        "error: slice: cannot slice symbolic extent B on axis 0 (only the "
        "whole extent, 0:huge:1, is supported)");
  CHECK(op("slice", R"(["x"])",
           R"({"starts": [0, 1], "ends": [9223372036854775807, 3]})") ==
        "f32[B, 2]");
  CHECK(op("slice", R"(["m"])", R"({"starts": [0], "ends": [1], "steps": [0]})") ==
        "error: slice: 'steps' must not be 0");
  CHECK(op("squeeze", R"(["flag"])") == "bool[B]");
  CHECK(op("squeeze", R"(["m"])", R"({"axes": [0]})") ==
        "error: squeeze: cannot squeeze axis 0 of extent 2");
  CHECK(op("unsqueeze", R"(["x"])", R"({"axes": [0, -1]})") ==
        "f32[1, B, 4, 1]");
}

TEST_CASE("concat, split, gather and pad", "[infer]") {
  CHECK(op("concat", R"(["m", "m"])", R"({"axis": -1})") == "f32[2, 3, 8]");
  CHECK(op("concat", R"(["x", "x"])", R"({"axis": 0})") ==
        "error: concat: cannot concatenate along symbolic extent B");
  CHECK(op("concat", R"(["m", "n"])", R"({"axis": 0})") ==
        "error: concat: rank mismatch: operand 1 (f32[4, 5]) vs operand 0 of "
        "rank 3");
  CHECK(op("gather", R"(["n", "i"])") == "f32[3, 5]");
  CHECK(op("gather", R"(["m", "i"])", R"({"axis": 2})") == "f32[2, 3, 3]");
  CHECK(op("gather", R"(["n", "x"])") ==
        "error: gather: operand 1 must be i32 or i64, got f32");
  CHECK(op("pad", R"(["m"])", R"({"pads": [0, 1, 2, 0, 1, 2]})") ==
        "f32[2, 5, 8]");
  CHECK(op("pad", R"(["m"])", R"({"pads": [0, 3, 0, 0, 0, 0], "mode": "reflect"})") ==
        "error: pad: reflect padding must be smaller than the extent 3 on "
        "axis 1");
  CHECK(op("pad", R"(["m"])", R"({"pads": [1, 1]})") ==
        "error: pad: 'pads' needs 2 * rank = 6 values (all begins, then all "
        "ends), got 2");
  CHECK(op("pad", R"(["x"])", R"({"pads": [1, 0, 0, 0]})") ==
        "error: pad: cannot pad symbolic extent B");

  ParseResult r = parseText(document(
      kInputs,
      R"([{"id": "s", "op": "split", "inputs": ["m"], "attrs": {"axis": 2, "sizes": [1, 3]}},
          {"id": "y", "op": "add", "inputs": ["s#1", "s#1"]}])",
      R"(["s#0", "y"])"));
  REQUIRE(r.graph);
  CHECK(typeOf(*r.graph, "s", 0) == "f32[2, 3, 1]");
  CHECK(typeOf(*r.graph, "s", 1) == "f32[2, 3, 3]");
  CHECK(typeOf(*r.graph, "y") == "f32[2, 3, 3]");
  CHECK(op("split", R"(["m"])", R"({"num": 3})") ==
        "error: split: 'num' = 3 does not divide extent 2 evenly");
  CHECK(op("split", R"(["m"])") ==
        "error: split: needs exactly one of 'sizes' and 'num'");
  CHECK(op("split", R"(["m"])", R"({"sizes": [1, 2]})") ==
        "error: split: 'sizes' add up to 3, the extent is 2");
}

TEST_CASE("structural ops", "[infer]") {
  CHECK(op("copy", R"(["x"])", R"({"device": "cuda:0"})") == "f32[B, 4]");
  CHECK(op("move", R"(["x"])", R"({"device": "vulkan:0"})") == "f32[B, 4]");
  CHECK(op("copy", R"(["x"])", R"({"device": "tpu:0"})") ==
        "error: attribute 'device' names invalid device 'tpu:0' (expected "
        "cpu:N, cuda:N or vulkan:N)");
  CHECK(op("copy", R"(["x"])") ==
        "error: copy: missing required attribute 'device'");
  CHECK(op("alloc", "[]",
           R"({"dtype": "f16", "shape": ["B", 128, 64], "device": "cpu:0"})") ==
        "f16[B, 128, 64]");
  ParseResult r = parseText(document(
      R"([{"name": "cache", "dtype": "f32", "shape": ["B", 128, 64]},
          {"name": "step", "dtype": "f32", "shape": ["B", 1, 64]},
          {"name": "pos", "dtype": "i64", "shape": ["P"]}])",
      R"([{"id": "y", "op": "write_slice", "inputs": ["cache", "step"],
           "attrs": {"axis": 1, "offset": "P"}},
          {"id": "bad", "op": "write_slice", "inputs": ["cache", "step"],
           "attrs": {"axis": 1, "offset": 128}}])",
      R"(["y", "bad"])"));
  REQUIRE_FALSE(r.graph);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].message ==
        "write_slice: slice of extent 1 at offset 128 overruns destination "
        "extent 128 on axis 1");
}

TEST_CASE("one root cause yields one diagnostic", "[infer]") {
  ParseResult r = parseText(document(
      kInputs,
      R"([{"id": "a", "op": "add", "inputs": ["m", "n"]},
          {"id": "b", "op": "relu", "inputs": ["a"]},
          {"id": "c", "op": "exp", "inputs": ["i"]},
          {"id": "d", "op": "add", "inputs": ["b", "c"]}])",
      R"(["d"])"));
  REQUIRE_FALSE(r.graph);
  REQUIRE(r.diagnostics.size() == 2);
  CHECK(r.diagnostics[0].location.node == "a");
  CHECK(r.diagnostics[1].location.node == "c");
}
