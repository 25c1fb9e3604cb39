//===- HostTensor.cpp - Dense host tensors for the reference interpreter --===//

#include "fuel/Reference/Interpreter.h"


using namespace fuel;

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double fuel::roundToDType(double value, DType dtype) {
  char element[8];
  storeElement(dtype, value, element);
  return loadElement(dtype, element);
}

std::string HostTensor::toBytes() const {
  size_t width = dtypeByteSize(dtype);
  std::string out(values.size() * width, '\0');
  for (size_t i = 0; i < values.size(); ++i)
    storeElement(dtype, values[i], out.data() + i * width);
  return out;
}

HostTensor HostTensor::fromBytes(DType dtype, std::vector<int64_t> shape,
                                 std::string_view bytes) {
  HostTensor t{dtype, std::move(shape), {}};
  size_t width = dtypeByteSize(dtype);
  t.values.resize(bytes.size() / width);
  for (size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = loadElement(dtype, bytes.data() + i * width);
  return t;
}
