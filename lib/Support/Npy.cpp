//===- Npy.cpp - NumPy .npy arrays ----------------------------------------===//

#include "fuel/Support/Npy.h"

#include <optional>

using namespace fuel;

namespace {
struct DescrEntry {
  std::string_view descr;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::F32}, {"<f2", DType::F16}, {"<f8", DType::F64},
    {"|i1", DType::I8},  {"<i4", DType::I32}, {"<i8", DType::I64},
    {"|u1", DType::U8},  {"|b1", DType::Bool}, {"<i2", DType::I16},
    {"<u2", DType::U16}, {"<u4", DType::U32}, {"<u8", DType::U64},
    // bf16: numpy has no such type; raw 2-byte records (numpy's view as
    // dtype 'V2'), as fuel writes them.
    {"|V2", DType::BF16}};
} // namespace

std::string fuel::formatExtents(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Parses the Python-literal header `{'descr': '<f4', 'fortran_order':
/// False, 'shape': (2, 3), }`.
static bool parseHeader(std::string_view text, std::string &descr,
                        bool &fortranOrder, std::vector<int64_t> &shape) {
  auto valueAfter = [&](std::string_view key) -> std::string_view {
    size_t k = text.find(key);
    if (k == std::string_view::npos)
      return {};
    size_t colon = text.find(':', k + key.size());
    if (colon == std::string_view::npos)
      return {};
    std::string_view rest = text.substr(colon + 1);
    size_t start = rest.find_first_not_of(' ');
    return start == std::string_view::npos ? std::string_view()
                                           : rest.substr(start);
  };
  std::string_view d = valueAfter("'descr'");
  if (d.size() < 2 || d[0] != '\'')
    return false;
  size_t close = d.find('\'', 1);
  if (close == std::string_view::npos)
    return false;
  descr = d.substr(1, close - 1);
  std::string_view fortran = valueAfter("'fortran_order'");
  if (fortran.starts_with("True"))
    fortranOrder = true;
  else if (!fortran.starts_with("False"))
    return false;
  std::string_view s = valueAfter("'shape'");
  if (s.empty() || s[0] != '(')
    return false;
  size_t end = s.find(')');
  if (end == std::string_view::npos)
    return false;
  std::string_view dims = s.substr(1, end - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    while (pos < dims.size() && (dims[pos] == ' ' || dims[pos] == ','))
      ++pos;
    if (pos >= dims.size())
      break;
    int64_t v = 0;
    size_t digits = 0;
    while (pos < dims.size() && dims[pos] >= '0' && dims[pos] <= '9') {
      if (v > (int64_t(1) << 59) / 10)
        return false;
      v = v * 10 + (dims[pos++] - '0');
      ++digits;
    }
    if (digits == 0)
      return false;
    shape.push_back(v);
  }
  return true;
}

Expected<NpyArray> fuel::parseNpy(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
    return Error{"is not a .npy file (bad magic)"};
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || bytes.size() < 8 + lengthBytes)
    return Error{"uses unsupported .npy version " + std::to_string(major)};
  uint32_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[8 + i]))
                    << (8 * i);
  size_t dataStart = 8 + lengthBytes + headerLength;
  if (dataStart > bytes.size())
    return Error{"is truncated inside its header"};
  std::string descr;
  bool fortranOrder = false;
  NpyArray out;
  if (!parseHeader(bytes.substr(8 + lengthBytes, headerLength), descr,
                   fortranOrder, out.shape)) {
    return Error{"has a malformed header"};
  }
  std::optional<DType> dtype;
  for (const DescrEntry &e : kDescrs)
    if (e.descr == descr)
      dtype = e.dtype;
  if (!dtype)
    return Error{"holds unsupported element type '" + descr + "'"};
  if (fortranOrder) {
    return Error{"is in Fortran order; only C order is supported"};
  }
  out.dtype = *dtype;
  uint64_t need = dtypeByteSize(*dtype);
  for (int64_t d : out.shape) {
    if (d != 0 && need > (uint64_t(1) << 62) / uint64_t(d))
      return Error{"declares a shape too large to hold"};
    need *= uint64_t(d);
  }
  size_t have = bytes.size() - dataStart;
  if (have != need)
    return Error{std::string(have < need ? "is truncated" : "has trailing bytes") + ": needs " +
                 std::to_string(need) + " data bytes, has " + std::to_string(have)};
  out.dataOffset = dataStart;
  out.dataSize = need;
  return out;
}

std::string fuel::writeNpy(DType dtype, const std::vector<int64_t> &shape,
                           std::string_view data) {
  std::string descr;
  for (const DescrEntry &e : kDescrs)
    if (e.dtype == dtype)
      descr = e.descr;
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.resize(dims.size() - 2); // "(2, 3)", but "(4,)" for one axis.
  else if (shape.size() == 1)
    dims.pop_back();
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad so that the data starts on a 64-byte boundary, newline-terminated.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out += data;
  return out;
}
