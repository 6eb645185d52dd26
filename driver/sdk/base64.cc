#include "driver/sdk/base64.h"

#include <array>
#include <cstdint>

namespace flexvolume {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kDecode = MakeDecodeTable();

}  // namespace

bool Base64Decode(std::string_view raw, std::string* out) {
  out->clear();
  // Go's decoder skips CR and LF wherever they are.
  std::string in;
  in.reserve(raw.size());
  for (char c : raw) {
    if (c != '\r' && c != '\n') in.push_back(c);
  }
  if (in.size() % 4 != 0) return false;
  out->reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int pad = 0;
    uint32_t bits = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = in[i + j];
      if (c == '=') {
        // Padding only in the last quantum, only in its last two places, and
        // nothing but padding after it.
        if (!last || j < 2) return false;
        ++pad;
        bits <<= 6;
        continue;
      }
      if (pad > 0) return false;
      const int8_t v = kDecode[static_cast<unsigned char>(c)];
      if (v < 0) return false;
      bits = (bits << 6) | static_cast<uint32_t>(v);
    }
    out->push_back(static_cast<char>((bits >> 16) & 0xFF));
    if (pad < 2) out->push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (pad < 1) out->push_back(static_cast<char>(bits & 0xFF));
  }
  return true;
}

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t n = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  const size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (rest == 2) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

}  // namespace flexvolume
