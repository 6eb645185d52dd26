#include "driver/sdk/dispatch.h"

#include <charconv>
#include <exception>
#include <initializer_list>
#include <string_view>

#include "driver/sdk/secrets.h"

namespace flexvolume {
namespace {

using Args = std::vector<std::string>;

// Parses and secret-decodes the options argument of `verb`.
bool LoadOptions(const char* verb, const std::string& text, Options* opts, DriverStatus* reply) {
  std::string err;
  if (!ParseOptions(text, opts, &err) || !DecodeKubeSecrets(opts, &err)) {
    *reply = Fail(std::string(verb) + ": " + err);
    return false;
  }
  return true;
}

bool ParseSize(const char* verb, const char* what, const std::string& text, uint64_t* out,
               DriverStatus* reply) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (text.empty() || ec != std::errc() || ptr != end) {
    *reply = Fail(std::string(verb) + ": " + what + " must be a decimal byte count");
    return false;
  }
  return true;
}

bool LooksLikeJsonObject(const std::string& s) {
  Options ignored;
  std::string err;
  return ParseOptions(s, &ignored, &err);
}

// Each call returns false when its shape does not apply to the arguments
// (used to tell the 1.6 isattached order apart); then the next shape is tried.
bool CallInit(Driver& d, const Args&, DriverStatus* r) {
  *r = d.Init();
  return true;
}
bool CallGetVolumeName(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("getvolumename", a[0], &o, r)) *r = d.GetVolumeName(o);
  return true;
}
bool CallAttach(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("attach", a[0], &o, r)) *r = d.Attach(o, a[1]);
  return true;
}
bool CallLegacyAttach(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("attach", a[0], &o, r)) *r = d.Attach(o, "");
  return true;
}
bool CallDetach(Driver& d, const Args& a, DriverStatus* r) {
  *r = d.Detach(a[0], a[1]);
  return true;
}
bool CallLegacyDetach(Driver& d, const Args& a, DriverStatus* r) {
  *r = d.Detach(a[0], "");
  return true;
}
bool CallWaitForAttach(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("waitforattach", a[1], &o, r)) *r = d.WaitForAttach(a[0], o);
  return true;
}
bool CallIsAttached(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("isattached", a[0], &o, r)) *r = d.IsAttached(o, a[1]);
  return true;
}
// With legacy argv accepted, the current order yields to the 1.6 order
// `isattached <node> <json>` when only the second argument is the JSON.
bool CallIsAttachedUnlessLegacyOrder(Driver& d, const Args& a, DriverStatus* r) {
  if (!LooksLikeJsonObject(a[0]) && LooksLikeJsonObject(a[1])) return false;
  return CallIsAttached(d, a, r);
}
bool CallLegacyIsAttached(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("isattached", a[1], &o, r)) *r = d.IsAttached(o, a[0]);
  return true;
}
bool CallMountDevice(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("mountdevice", a[2], &o, r)) *r = d.MountDevice(a[0], a[1], o);
  return true;
}
bool CallUnmountDevice(Driver& d, const Args& a, DriverStatus* r) {
  *r = d.UnmountDevice(a[0]);
  return true;
}
bool CallMount(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("mount", a[1], &o, r)) *r = d.Mount(a[0], o);
  return true;
}
// kubelet <= 1.5 had no mountdevice: its `mount <dir> <device> <json>` is one.
bool CallLegacyMount(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  if (LoadOptions("mount", a[2], &o, r)) *r = d.MountDevice(a[0], a[1], o);
  return true;
}
bool CallUnmount(Driver& d, const Args& a, DriverStatus* r) {
  *r = d.Unmount(a[0]);
  return true;
}
bool CallExpandVolume(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  uint64_t n = 0, old = 0;
  if (LoadOptions("expandvolume", a[0], &o, r) &&
      ParseSize("expandvolume", "<newSizeBytes>", a[2], &n, r) &&
      ParseSize("expandvolume", "<oldSizeBytes>", a[3], &old, r)) {
    *r = d.ExpandVolume(o, a[1], n, old);
  }
  return true;
}
bool CallExpandFs(Driver& d, const Args& a, DriverStatus* r) {
  Options o;
  uint64_t n = 0, old = 0;
  if (LoadOptions("expandfs", a[0], &o, r) &&
      ParseSize("expandfs", "<newSizeBytes>", a[3], &n, r) &&
      ParseSize("expandfs", "<oldSizeBytes>", a[4], &old, r)) {
    *r = d.ExpandFs(o, a[1], a[2], n, old);
  }
  return true;
}

// Which dispatch configurations a shape belongs to.
enum class Argv { kAny, kCurrentOnly, kLegacyOnly };

// One argv shape of one verb: its parameters (for messages) and the call.
struct Shape {
  std::string_view verb;
  Argv argv;
  std::initializer_list<const char*> params;
  bool (*call)(Driver&, const Args&, DriverStatus*);
};

// Constant data, so a call allocates nothing to find its verb (`init` runs
// on every probe). Sorted by verb, and within a verb in the order shapes
// are tried.
const Shape kShapes[] = {
    {"attach", Argv::kAny, {"<json>", "<nodeName>"}, CallAttach},
    {"attach", Argv::kLegacyOnly, {"<json>"}, CallLegacyAttach},
    {"detach", Argv::kAny, {"<volumeName>", "<nodeName>"}, CallDetach},
    {"detach", Argv::kLegacyOnly, {"<device>"}, CallLegacyDetach},
    {"expandfs",
     Argv::kAny,
     {"<json>", "<device>", "<podVolumeDir>", "<newSizeBytes>", "<oldSizeBytes>"},
     CallExpandFs},
    {"expandvolume",
     Argv::kAny,
     {"<json>", "<deviceMountPath>", "<newSizeBytes>", "<oldSizeBytes>"},
     CallExpandVolume},
    {"getvolumename", Argv::kAny, {"<json>"}, CallGetVolumeName},
    {"init", Argv::kAny, {}, CallInit},
    {"isattached", Argv::kCurrentOnly, {"<json>", "<nodeName>"}, CallIsAttached},
    {"isattached", Argv::kLegacyOnly, {"<json>", "<nodeName>"}, CallIsAttachedUnlessLegacyOrder},
    {"isattached", Argv::kLegacyOnly, {"<nodeName>", "<json>"}, CallLegacyIsAttached},
    {"mount", Argv::kAny, {"<podVolumeDir>", "<json>"}, CallMount},
    {"mount", Argv::kLegacyOnly, {"<podVolumeDir>", "<device>", "<json>"}, CallLegacyMount},
    {"mountdevice", Argv::kAny, {"<deviceMountPath>", "<device>", "<json>"}, CallMountDevice},
    {"unmount", Argv::kAny, {"<podVolumeDir>"}, CallUnmount},
    {"unmountdevice", Argv::kAny, {"<deviceMountPath>"}, CallUnmountDevice},
    {"waitforattach", Argv::kAny, {"<device>", "<json>"}, CallWaitForAttach},
};

bool Applies(const Shape& s, bool legacy) {
  return s.argv == Argv::kAny || (s.argv == Argv::kLegacyOnly) == legacy;
}

std::string Usage(std::string_view verb, bool legacy) {
  std::string out;
  for (const Shape& s : kShapes) {
    if (s.verb != verb || !Applies(s, legacy)) continue;
    if (!out.empty()) out += " or ";
    out += verb;
    for (const char* p : s.params) out += std::string(" ") + p;
  }
  return out;
}

std::string KnownVerbs() {
  std::string out;
  std::string_view previous;
  for (const Shape& s : kShapes) {
    if (s.verb == previous) continue;  // the verb's next shape
    out += (out.empty() ? "" : ", ") + std::string(s.verb);
    previous = s.verb;
  }
  return out;
}

// Makes the reply explicit where kubelet would otherwise apply defaults.
void Complete(const std::string& verb, DriverStatus* reply) {
  if (!reply->IsSuccess()) return;
  if (verb == "init" && !reply->capabilities) reply->capabilities = Capabilities{};
  if (verb == "isattached" && !reply->attached) reply->attached = false;
}

DriverStatus Run(Driver& driver, const std::vector<std::string>& args,
                 const DispatchConfig& config) {
  const bool legacy = config.accept_legacy_argv;
  if (args.empty()) return Fail("no verb given: expected one of " + KnownVerbs());
  const std::string& verb = args[0];
  const std::vector<std::string> params(args.begin() + 1, args.end());
  bool known = false;
  for (const Shape& shape : kShapes) {
    if (shape.verb != verb || !Applies(shape, legacy)) continue;
    known = true;
    if (shape.params.size() != params.size()) continue;
    DriverStatus reply;
    try {
      if (!shape.call(driver, params, &reply)) continue;
    } catch (const std::exception& e) {
      return Fail(verb + ": " + e.what());
    } catch (...) {
      return Fail(verb + ": the driver threw an exception that is not a std::exception");
    }
    Complete(verb, &reply);
    return reply;
  }
  if (!known) return NotSupported();
  return Fail(verb + ": wrong number of arguments: expected `" + Usage(verb, legacy) + "`, got " +
              std::to_string(params.size()) + (params.size() == 1 ? " argument" : " arguments"));
}

}  // namespace

DriverStatus Dispatch(Driver& driver, const std::vector<std::string>& args,
                      const DispatchConfig& config) {
  DriverStatus reply = Run(driver, args, config);
  reply.message = SecretRegistry::Global().Redact(reply.message);
  return reply;
}

std::string DescribeCall(const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ' ';
    Options o;
    std::string err;
    // Only what could be a JSON object is parsed: a failed parse throws
    // inside nlohmann, and a static binary's first throw is costly.
    const bool may_be_json = args[i].find('{') != std::string::npos;
    if (i > 0 && may_be_json && ParseOptions(args[i], &o, &err)) {
      // Registers the secrets, so a value reused elsewhere is scrubbed too.
      Options decoded = o;
      DecodeKubeSecrets(&decoded, &err);
      out += RedactedOptions(o);
    } else if (may_be_json) {
      // Malformed options were never decoded, so their secrets are unknown.
      out += "<malformed JSON, " + std::to_string(args[i].size()) + " bytes>";
    } else {
      out += '"' + args[i] + '"';
    }
  }
  return SecretRegistry::Global().Redact(out);
}

}  // namespace flexvolume
