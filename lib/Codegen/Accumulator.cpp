//===- Accumulator.cpp - Result accumulation for contractions -------------===//

#include "Accumulator.h"

using namespace fuel;
using namespace fuel::codegen;

static std::string identity(unsigned rank) {
  std::vector<std::string> dims;
  for (unsigned d = 0; d < rank; ++d)
    dims.push_back("d" + std::to_string(d));
  return affineMap(rank, dims);
}

Accumulator codegen::beginAccumulation(KernelEmitter &e, ValueRef y,
                                       double init,
                                       std::optional<ValueRef> bias,
                                       unsigned biasAxis) {
  DType t = e.graph.dtype(y);
  Accumulator acc;
  acc.rank = static_cast<unsigned>(e.graph.shape(y).size());
  acc.elemType = computeType(t);
  acc.wide = acc.elemType != storageType(t);
  if (acc.wide) {
    acc.buffer = e.scratch(e.extents(y), acc.elemType, acc.type);
  } else {
    acc.buffer = e.argName(y);
    acc.type = e.argType(y);
  }
  if (!bias) {
    e.fill(acc.buffer, acc.type, acc.elemType,
           scalarLiteral(init, acc.elemType));
    return acc;
  }
  std::string biasMap =
      affineMap(acc.rank, {"d" + std::to_string(biasAxis)});
  e.generic(acc.rank, std::vector<bool>(acc.rank, false),
            {e.operand(*bias, biasMap)}, {acc.operand(identity(acc.rank))},
            [&](const std::vector<std::string> &a) {
              return std::vector<std::string>{
                  e.toCompute(a[0], e.graph.dtype(*bias))};
            });
  return acc;
}

void codegen::finishAccumulation(KernelEmitter &e, const Accumulator &acc,
                                 ValueRef y, const std::string &divisor,
                                 const std::string &divisorType) {
  if (!acc.wide && divisor.empty())
    return;
  std::string id = identity(acc.rank);
  std::vector<GenericOperand> ins{acc.operand(id)};
  if (!divisor.empty())
    ins.push_back({divisor, divisorType, id, acc.elemType});
  e.generic(acc.rank, std::vector<bool>(acc.rank, false), ins,
            {e.operand(y, id)}, [&](const std::vector<std::string> &a) {
              std::string v = a[0];
              if (!divisor.empty())
                v = e.op("arith.divf " + v + ", " + a[1], acc.elemType);
              return std::vector<std::string>{
                  e.toStorage(v, e.graph.dtype(y))};
            });
}
