// Loads an artifact with the installed runtime, runs it on ones and prints
// the first output's shape and sum.
#include "fuel/Runtime/Runtime.h"

#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  fuel::DiagnosticEngine diag;
  diag.setHandler([](const fuel::Diagnostic &d) { fuel::printDiagnosticText(std::cerr, d); });
  auto file = fuel::FileBuffer::open(argv[1]);
  if (!file) {
    std::cerr << file.error() << '\n';
    return 1;
  }
  auto session = fuel::runtime::Session::load(*file, argv[1], {}, diag);
  if (!session)
    return 1;
  fuel::runtime::Tensor x{fuel::DType::F32, {2, 64}, std::string(2 * 64 * 4, '\0')};
  for (size_t i = 0; i < 2 * 64; ++i) {
    float one = 1;
    std::memcpy(x.data.data() + 4 * i, &one, 4);
  }
  std::vector<fuel::runtime::Tensor> outputs;
  if (failed(session->run({{"x", x}}, outputs, diag)))
    return 1;
  double sum = 0;
  for (size_t i = 0; i < outputs[0].data.size() / 4; ++i) {
    float v;
    std::memcpy(&v, outputs[0].data.data() + 4 * i, 4);
    sum += v;
  }
  std::cout << "output [" << outputs[0].shape[0] << ", " << outputs[0].shape[1]
            << "] sum " << sum << '\n';
}
