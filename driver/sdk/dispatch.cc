#include "driver/sdk/dispatch.h"

#include <charconv>
#include <exception>
#include <functional>
#include <map>

#include "driver/sdk/secrets.h"

namespace flexvolume {
namespace {

// One argv shape of one verb: the argument names (for messages) and the call.
struct Shape {
  std::vector<const char*> params;
  // Returns false when this shape does not apply to the arguments (used to
  // tell the 1.6 isattached order apart); then the next shape is tried.
  std::function<bool(Driver&, const std::vector<std::string>&, DriverStatus*)> call;
};

// Parses and secret-decodes the options argument of `verb`.
bool LoadOptions(const std::string& verb, const std::string& text, Options* opts,
                 DriverStatus* reply) {
  std::string err;
  if (!ParseOptions(text, opts, &err) || !DecodeKubeSecrets(opts, &err)) {
    *reply = Fail(verb + ": " + err);
    return false;
  }
  return true;
}

bool ParseSize(const std::string& verb, const char* what, const std::string& text, uint64_t* out,
               DriverStatus* reply) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (text.empty() || ec != std::errc() || ptr != end) {
    *reply = Fail(verb + ": " + what + " must be a decimal byte count");
    return false;
  }
  return true;
}

bool LooksLikeJsonObject(const std::string& s) {
  Options ignored;
  std::string err;
  return ParseOptions(s, &ignored, &err);
}

using Table = std::map<std::string, std::vector<Shape>>;

Table CurrentShapes() {
  Table t;
  t["init"] = {{{}, [](Driver& d, const auto&, DriverStatus* r) {
                  *r = d.Init();
                  return true;
                }}};
  t["getvolumename"] = {{{"<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                           Options o;
                           if (LoadOptions("getvolumename", a[0], &o, r)) *r = d.GetVolumeName(o);
                           return true;
                         }}};
  t["attach"] = {{{"<json>", "<nodeName>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                    Options o;
                    if (LoadOptions("attach", a[0], &o, r)) *r = d.Attach(o, a[1]);
                    return true;
                  }}};
  t["detach"] = {{{"<volumeName>", "<nodeName>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                    *r = d.Detach(a[0], a[1]);
                    return true;
                  }}};
  t["waitforattach"] = {{{"<device>", "<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                           Options o;
                           if (LoadOptions("waitforattach", a[1], &o, r))
                             *r = d.WaitForAttach(a[0], o);
                           return true;
                         }}};
  t["isattached"] = {{{"<json>", "<nodeName>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                        Options o;
                        if (LoadOptions("isattached", a[0], &o, r)) *r = d.IsAttached(o, a[1]);
                        return true;
                      }}};
  t["mountdevice"] = {
      {{"<deviceMountPath>", "<device>", "<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
         Options o;
         if (LoadOptions("mountdevice", a[2], &o, r)) *r = d.MountDevice(a[0], a[1], o);
         return true;
       }}};
  t["unmountdevice"] = {{{"<deviceMountPath>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                           *r = d.UnmountDevice(a[0]);
                           return true;
                         }}};
  t["mount"] = {{{"<podVolumeDir>", "<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                   Options o;
                   if (LoadOptions("mount", a[1], &o, r)) *r = d.Mount(a[0], o);
                   return true;
                 }}};
  t["unmount"] = {{{"<podVolumeDir>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                     *r = d.Unmount(a[0]);
                     return true;
                   }}};
  t["expandvolume"] = {{{"<json>", "<deviceMountPath>", "<newSizeBytes>", "<oldSizeBytes>"},
                        [](Driver& d, const auto& a, DriverStatus* r) {
                          Options o;
                          uint64_t n = 0, old = 0;
                          if (LoadOptions("expandvolume", a[0], &o, r) &&
                              ParseSize("expandvolume", "<newSizeBytes>", a[2], &n, r) &&
                              ParseSize("expandvolume", "<oldSizeBytes>", a[3], &old, r)) {
                            *r = d.ExpandVolume(o, a[1], n, old);
                          }
                          return true;
                        }}};
  t["expandfs"] = {{{"<json>", "<device>", "<podVolumeDir>", "<newSizeBytes>", "<oldSizeBytes>"},
                    [](Driver& d, const auto& a, DriverStatus* r) {
                      Options o;
                      uint64_t n = 0, old = 0;
                      if (LoadOptions("expandfs", a[0], &o, r) &&
                          ParseSize("expandfs", "<newSizeBytes>", a[3], &n, r) &&
                          ParseSize("expandfs", "<oldSizeBytes>", a[4], &old, r)) {
                        *r = d.ExpandFs(o, a[1], a[2], n, old);
                      }
                      return true;
                    }}};
  return t;
}

void AddLegacyShapes(Table* t) {
  (*t)["attach"].push_back({{"<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                              Options o;
                              if (LoadOptions("attach", a[0], &o, r)) *r = d.Attach(o, "");
                              return true;
                            }});
  (*t)["detach"].push_back({{"<device>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                              *r = d.Detach(a[0], "");
                              return true;
                            }});
  (*t)["mount"].push_back(
      {{"<podVolumeDir>", "<device>", "<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
         Options o;
         if (LoadOptions("mount", a[2], &o, r)) *r = d.MountDevice(a[0], a[1], o);
         return true;
       }});
  // 1.6 sent `isattached <node> <json>`; tell the orders apart by which
  // argument is the JSON object, trying the current order first.
  auto& isattached = (*t)["isattached"];
  auto current = isattached.front().call;
  isattached.front().call = [current](Driver& d, const std::vector<std::string>& a,
                                      DriverStatus* r) {
    if (!LooksLikeJsonObject(a[0]) && LooksLikeJsonObject(a[1])) return false;
    return current(d, a, r);
  };
  isattached.push_back({{"<nodeName>", "<json>"}, [](Driver& d, const auto& a, DriverStatus* r) {
                          Options o;
                          if (LoadOptions("isattached", a[1], &o, r)) *r = d.IsAttached(o, a[0]);
                          return true;
                        }});
}

const Table& ShapesFor(bool legacy) {
  static const Table current = CurrentShapes();
  static const Table with_legacy = [] {
    Table t = CurrentShapes();
    AddLegacyShapes(&t);
    return t;
  }();
  return legacy ? with_legacy : current;
}

std::string Usage(const std::string& verb, const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) {
    if (!out.empty()) out += " or ";
    out += verb;
    for (const char* p : s.params) out += std::string(" ") + p;
  }
  return out;
}

std::string KnownVerbs(const Table& t) {
  std::string out;
  for (const auto& [verb, shapes] : t) out += (out.empty() ? "" : ", ") + verb;
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
  const Table& table = ShapesFor(config.accept_legacy_argv);
  if (args.empty()) {
    return Fail("no verb given: expected one of " + KnownVerbs(table));
  }
  const std::string& verb = args[0];
  auto it = table.find(verb);
  if (it == table.end()) return NotSupported();
  const std::vector<std::string> params(args.begin() + 1, args.end());
  for (const Shape& shape : it->second) {
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
  return Fail(verb + ": wrong number of arguments: expected `" + Usage(verb, it->second) +
              "`, got " + std::to_string(params.size()) +
              (params.size() == 1 ? " argument" : " arguments"));
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
    if (i > 0 && ParseOptions(args[i], &o, &err)) {
      // Registers the secrets, so a value reused elsewhere is scrubbed too.
      Options decoded = o;
      DecodeKubeSecrets(&decoded, &err);
      out += RedactedOptions(o);
    } else if (args[i].find('{') != std::string::npos) {
      // Malformed options were never decoded, so their secrets are unknown.
      out += "<malformed JSON, " + std::to_string(args[i].size()) + " bytes>";
    } else {
      out += '"' + args[i] + '"';
    }
  }
  return SecretRegistry::Global().Redact(out);
}

}  // namespace flexvolume
