// libFuzzer target over the SDK's dispatch: the input is an argv (elements
// separated by NUL bytes; the first is the verb). Whatever it is, the reply
// must render as one JSON document with one of the three statuses, the exit
// code must agree, and no secret may appear in it.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "driver/sdk/dispatch.h"
#include "driver/sdk/secrets.h"

namespace {

using flexvolume::DriverStatus;
using flexvolume::Options;

// Succeeds on every verb and echoes what it got into the reply, which is the
// worst case for leaking secrets.
class EchoDriver final : public flexvolume::Driver {
 public:
  DriverStatus Init() override { return flexvolume::Succeed(); }
  DriverStatus GetVolumeName(const Options& o) override { return Echo(o); }
  DriverStatus Attach(const Options& o, const std::string&) override { return Echo(o); }
  DriverStatus Detach(const std::string& v, const std::string& n) override {
    return flexvolume::Succeed(v + n);
  }
  DriverStatus WaitForAttach(const std::string& d, const Options& o) override {
    DriverStatus s = Echo(o);
    s.device = d;
    return s;
  }
  DriverStatus IsAttached(const Options& o, const std::string&) override { return Echo(o); }
  DriverStatus MountDevice(const std::string&, const std::string&, const Options& o) override {
    return Echo(o);
  }
  DriverStatus UnmountDevice(const std::string& d) override { return flexvolume::Succeed(d); }
  DriverStatus Mount(const std::string&, const Options& o) override {
    if (o.size() % 3 == 0) throw std::runtime_error(flexvolume::RedactedOptions(o) + Values(o));
    return Echo(o);
  }
  DriverStatus Unmount(const std::string& d) override { return flexvolume::Fail(d); }

 private:
  static std::string Values(const Options& o) {
    std::string all;
    for (const auto& [k, v] : o) all += k + "=" + v + ";";
    return all;
  }
  static DriverStatus Echo(const Options& o) { return flexvolume::Succeed(Values(o)); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.emplace_back();
    } else {
      args.back().push_back(static_cast<char>(data[i]));
    }
  }
  if (size == 0) args.clear();
  // Secrets from earlier inputs would make every later redaction slower.
  flexvolume::SecretRegistry::Global().ClearForTesting();
  EchoDriver driver;
  const flexvolume::DispatchConfig config{.accept_legacy_argv = (size % 2) == 1};
  const DriverStatus reply = flexvolume::Dispatch(driver, args, config);
  const std::string text = flexvolume::RenderReply(reply);
  if (text.empty() || text.back() != '\n' || text.find('\n') != text.size() - 1) abort();
  const auto j = nlohmann::json::parse(text);  // throws (and the fuzzer reports) if invalid
  const std::string status = j.at("status");
  const bool failure = status == "Failure";
  if (!failure && status != "Success" && status != "Not supported") abort();
  if (flexvolume::ExitCodeFor(reply) != (failure ? 1 : 0)) abort();
  // Every secret decoded so far must be gone from the message. The message
  // was redacted once, and a secret may be part of the marker itself ("e"
  // in "<redacted>"), so each stretch between markers is looked at alone.
  const std::string_view marker = flexvolume::kRedacted;
  std::string_view rest = reply.message;
  for (;;) {
    const auto at = rest.find(marker);
    const std::string_view stretch = rest.substr(0, at);
    if (flexvolume::SecretRegistry::Global().Redact(stretch) != stretch) abort();
    if (at == std::string_view::npos) break;
    rest.remove_prefix(at + marker.size());
  }
  return 0;
}
