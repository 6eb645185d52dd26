#include "driver/sdk/status.h"

#include <string_view>

namespace flexvolume {

DriverStatus Succeed(std::string message) {
  DriverStatus s;
  s.status = kStatusSuccess;
  s.message = std::move(message);
  return s;
}

DriverStatus Fail(std::string message) {
  DriverStatus s;
  s.status = kStatusFailure;
  s.message = std::move(message);
  return s;
}

DriverStatus NotSupported(std::string message) {
  DriverStatus s;
  s.status = kStatusNotSupported;
  s.message = std::move(message);
  return s;
}

int ExitCodeFor(const DriverStatus& status) { return status.IsFailure() ? 1 : 0; }

namespace {

// The length of the well-formed UTF-8 sequence at the start of `s`, or 0
// (Unicode 15 Table 3-7: no overlongs, surrogates or code points past
// U+10FFFF). *valid_prefix is how many of its bytes were acceptable.
size_t Utf8SequenceLength(std::string_view s, size_t* valid_prefix) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  }
  *valid_prefix = length == 0 ? 0 : 1;  // a byte that cannot lead is not even a prefix
  if (length == 0) return 0;
  for (size_t i = 1; i < length; ++i) {
    if (i >= s.size()) return 0;
    const unsigned char b = byte(i);
    if (b < low || b > high) return 0;
    low = 0x80, high = 0xBF;
    *valid_prefix = i + 1;
  }
  return length;
}

// A JSON string as nlohmann::json's dump() writes it with
// error_handler_t::replace: short escapes, \u00XX for other control
// characters, UTF-8 kept, and U+FFFD for each ill-formed sequence (a lead
// byte with its acceptable continuation bytes) and for a cut-off one.
void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    // The longest run that needs no escaping, in one append.
    size_t plain = i;
    while (plain < s.size() && s[plain] >= 0x20 && s[plain] != '"' && s[plain] != '\\') ++plain;
    out->append(s.substr(i, plain - i));
    i = plain;
    if (i == s.size()) break;
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t valid_prefix = 0;
      const size_t n = Utf8SequenceLength(s.substr(i), &valid_prefix);
      if (n > 0) {
        out->append(s.substr(i, n));
        i += n;
      } else {
        out->append("\xEF\xBF\xBD");
        i += valid_prefix == 0 ? 1 : valid_prefix;
      }
      continue;
    }
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 0xF]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out->push_back('"');
}

// Writes one JSON object member by member.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string* out) : out_(out) { out_->push_back('{'); }
  void Member(const char* key, std::string_view value) {
    Key(key);
    AppendJsonString(value, out_);
  }
  void Member(const char* key, bool value) {
    Key(key);
    out_->append(value ? "true" : "false");
  }
  // The value is written next, by the caller.
  void Key(const char* key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    AppendJsonString(key, out_);
    out_->push_back(':');
  }
  void Close() { out_->push_back('}'); }

 private:
  std::string* out_;
  bool first_ = true;
};

}  // namespace

// Written by hand, not with nlohmann::json: `init` runs on every probe, and
// the reply is the same few members, so its cost is the process's start.
std::string RenderReply(const DriverStatus& status) {
  std::string out;
  out.reserve(160 + status.message.size());
  ObjectWriter reply(&out);
  // "status" first: it is what people grep for.
  reply.Member("status", status.status);
  if (!status.message.empty()) reply.Member("message", status.message);
  if (status.device) reply.Member("device", *status.device);
  if (status.volume_name) reply.Member("volumeName", *status.volume_name);
  if (status.attached) reply.Member("attached", *status.attached);
  if (status.capabilities) {
    const Capabilities& c = *status.capabilities;
    reply.Key("capabilities");
    ObjectWriter caps(&out);
    caps.Member("attach", c.attach);
    caps.Member("selinuxRelabel", c.selinux_relabel);
    caps.Member("supportsMetrics", c.supports_metrics);
    caps.Member("fsGroup", c.fs_group);
    caps.Member("requiresFSResize", c.requires_fs_resize);
    caps.Close();
  }
  reply.Close();
  out.push_back('\n');
  return out;
}

}  // namespace flexvolume
