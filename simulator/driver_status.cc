#include "simulator/driver_status.h"

#include <charconv>
#include <set>

#include "gojson/decode.h"

namespace flexkit::sim {

DriverCapabilities DriverCapabilities::Defaults() {
  DriverCapabilities c;
  c.attach = true;
  c.selinux_relabel = true;
  c.fs_group = true;
  c.requires_fs_resize = true;
  return c;
}

namespace {

// Go's UnmarshalTypeError text: the innermost struct's name, then the JSON
// field path from the top ("DriverCapabilities.Capabilities.attach").
std::string TypeError(std::string_view value, std::string_view field, std::string_view type) {
  std::string_view go_struct =
      field.find('.') == std::string_view::npos ? "DriverStatus" : "DriverCapabilities";
  return "json: cannot unmarshal " + std::string(value) + " into Go struct field " +
         std::string(go_struct) + "." + std::string(field) + " of type " + std::string(type);
}

class StatusDecoder {
 public:
  explicit StatusDecoder(std::string_view text, DecodedStatus& out) : cursor_(text), out_(out) {}

  void Run() {
    gojson::GoJsonKind kind = cursor_.Kind();
    if (kind == gojson::GoJsonKind::kNull) return;
    if (kind != gojson::GoJsonKind::kObject) {
      out_.error = std::string("json: cannot unmarshal ") + gojson::GoJsonKindName(kind) +
                   " into Go value of type flexvolume.DriverStatus";
      return;
    }
    Object("", [this](std::string_view key, const std::string& path) { TopField(key, path); });
  }

 private:
  // Decodes an object's members, each through `member(key, path)`.
  template <typename Member>
  void Object(const std::string& prefix, Member member) {
    if (!cursor_.EnterObject()) return;
    do {
      std::string key = cursor_.ReadKeyAndColon();
      member(key, prefix);
    } while (cursor_.NextMember());
  }

  // Finds the Go field a key selects; records what strict mode reports.
  const char* Match(std::string_view key, std::initializer_list<const char*> fields,
                    const std::string& prefix) {
    const char* found = nullptr;
    for (const char* f : fields) {
      if (key == f) found = f;
    }
    if (found == nullptr) {
      for (const char* f : fields) {
        if (gojson::GoFoldEquals(key, f)) {
          found = f;
          break;
        }
      }
    }
    std::string shown = prefix + std::string(key);
    if (found == nullptr) {
      out_.notes.unknown_keys.push_back(shown);
      return nullptr;
    }
    // "capabilities" is matched by the Go field name Capabilities; both
    // spellings are usual, so neither is reported as non-canonical.
    bool canonical =
        key == found || (std::string_view(found) == "Capabilities" && key == "capabilities");
    if (!canonical) out_.notes.non_canonical_keys.push_back(shown);
    if (!seen_.insert(prefix + found).second) out_.notes.duplicate_keys.push_back(prefix + found);
    return found;
  }

  void SaveError(std::string error) {
    if (out_.error.empty()) out_.error = std::move(error);
  }

  void String(std::string& target, std::string_view field) {
    gojson::GoJsonKind kind = cursor_.Kind();
    if (kind == gojson::GoJsonKind::kString) {
      target = cursor_.ReadString();
      return;
    }
    if (kind != gojson::GoJsonKind::kNull)
      SaveError(TypeError(gojson::GoJsonKindName(kind), field, "string"));
    cursor_.SkipValue();
  }

  void Bool(bool& target, std::string_view field) {
    gojson::GoJsonKind kind = cursor_.Kind();
    if (kind == gojson::GoJsonKind::kBool) {
      target = cursor_.ReadLiteral() == "true";
      return;
    }
    if (kind != gojson::GoJsonKind::kNull)
      SaveError(TypeError(gojson::GoJsonKindName(kind), field, "bool"));
    cursor_.SkipValue();
  }

  void Int64(std::int64_t& target, std::string_view field) {
    gojson::GoJsonKind kind = cursor_.Kind();
    if (kind == gojson::GoJsonKind::kNumber) {
      std::string_view text = cursor_.ReadLiteral();
      std::int64_t value = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size()) {
        SaveError(TypeError("number " + std::string(text), field, "int64"));
      } else {
        target = value;
      }
      return;
    }
    if (kind != gojson::GoJsonKind::kNull)
      SaveError(TypeError(gojson::GoJsonKindName(kind), field, "int64"));
    cursor_.SkipValue();
  }

  void TopField(std::string_view key, const std::string&) {
    DriverStatus& s = out_.status;
    const char* f = Match(
        key,
        {"status", "message", "device", "volumeName", "attached", "Capabilities", "volumeNewSize"},
        "");
    std::string_view name = f == nullptr ? "" : f;
    if (name == "status") return String(s.status, name);
    if (name == "message") return String(s.message, name);
    if (name == "device") return String(s.device, name);
    if (name == "volumeName") return String(s.volume_name, name);
    if (name == "attached") return Bool(s.attached, name);
    if (name == "volumeNewSize") return Int64(s.volume_new_size, name);
    if (name == "Capabilities") return Capabilities();
    cursor_.SkipValue();
  }

  void Capabilities() {
    gojson::GoJsonKind kind = cursor_.Kind();
    if (kind == gojson::GoJsonKind::kNull) {
      cursor_.SkipValue();
      out_.status.capabilities.reset();
      return;
    }
    if (kind != gojson::GoJsonKind::kObject) {
      SaveError(
          TypeError(gojson::GoJsonKindName(kind), "Capabilities", "flexvolume.DriverCapabilities"));
      cursor_.SkipValue();
      return;
    }
    if (!out_.status.capabilities) out_.status.capabilities.emplace();  // Go: new zero struct
    DriverCapabilities& c = *out_.status.capabilities;
    Object("Capabilities.", [this, &c](std::string_view key, const std::string& prefix) {
      const char* f =
          Match(key, {"attach", "selinuxRelabel", "supportsMetrics", "fsGroup", "requiresFSResize"},
                prefix);
      std::string_view name = f == nullptr ? "" : f;
      std::string path = prefix + std::string(name);
      if (name == "attach") return Bool(c.attach, path);
      if (name == "selinuxRelabel") return Bool(c.selinux_relabel, path);
      if (name == "supportsMetrics") return Bool(c.supports_metrics, path);
      if (name == "fsGroup") return Bool(c.fs_group, path);
      if (name == "requiresFSResize") return Bool(c.requires_fs_resize, path);
      cursor_.SkipValue();
    });
  }

  gojson::GoJsonCursor cursor_;
  DecodedStatus& out_;
  std::set<std::string> seen_;
};

}  // namespace

DecodedStatus DecodeDriverStatus(std::string_view output) {
  DecodedStatus out;
  if (auto syntax = gojson::GoJsonSyntaxError(output)) {
    out.error = *syntax;
    return out;
  }
  StatusDecoder(output, out).Run();
  return out;
}

}  // namespace flexkit::sim
