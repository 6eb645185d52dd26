// [secrets]: values from kubernetes.io/secret/* (base64, mount only) are
// accepted, invalid base64 is a Failure, and no secret value (raw or
// base64) appears in any reply (F20, F21). The suite itself never prints
// one: transcripts and reports are redacted. kubelet always base64-encodes
// secrets (cluster-facts §1), so invalid base64 never reaches a driver in
// production: accepting it is a FAIL only for a driver whose profile
// declares secrets (it reads them, and should check them); for any other
// driver (and with no profile) it is a WARN.
#include <string>
#include <vector>

#include "conformance/catalog.h"
#include "simulator/options_builder.h"

namespace flexkit::conform {
namespace {

void SecretsNotLeaked(CaseContext& c) {
  auto& n = c.node();
  auto pod = c.Pod("pod");
  const std::string secret = "flexconform-s3cret-" + c.Unique("v");
  c.AddSecret(secret);
  pod.secret["flexconform-password"] = secret;
  auto v = c.SetUp(n, c.Volume(c.Unique("vol")), pod);
  if (!v.driver_mounted)
    c.Skip("capability: mount is Not supported, so the driver never sees secrets");
  CheckDataRoundTrip(c, v);
  TearDownAll(c);
}

// The invalid value goes into every secret the profile declares, the keys
// the driver reads (a driver need not look at a key it does not use); with
// none declared, into a key of the suite's own.
void InvalidBase64IsFailure(CaseContext& c) {
  auto& n = c.node();
  auto spec = c.Volume(c.Unique("vol"));
  auto pod = c.Pod("pod");
  const std::string invalid = "!!not*base64-" + c.Unique("s") + "!!";
  c.AddSecret(invalid);
  std::vector<std::string> keys;
  for (const auto& [key, value] : c.profile().secrets) keys.push_back(key);
  if (keys.empty()) keys.push_back("flexconform-password");
  std::string key_list;
  for (const auto& key : keys) {
    pod.secret.erase(key);
    spec.options[std::string(sim::kSecretKeyPrefix) + key] = invalid;
    key_list += (key_list.empty() ? "" : ", ") + key;
  }
  const std::string dir = c.Paths(n).PodVolumeDir(pod.pod_uid, spec.name);
  n.filesystem().MakeDirs(dir, 0750);
  c.tracker().Push("remove " + dir, [&n, dir] {
    if (!n.filesystem().PathExists(dir)) return;  // the driver's unmount removed it
    if (n.filesystem().IsMountPoint(dir)) n.filesystem().Unmount(dir);
    n.filesystem().RemoveDir(dir);
  });
  // kubelet never sends invalid base64, so what the reply looks like (a
  // panic's trace, a shell error) is a WARN; a Success is judged below, and
  // a secret in the reply is a FAIL as in any call.
  auto r = c.beyond_kubelet().CallMount(n, spec, pod, dir);
  if (r.not_supported())
    c.Skip("capability: mount is Not supported, so the driver never sees secrets");
  if (r.ok()) {
    // kubelet tears a mounted volume down with the driver's unmount, which
    // may clean up what the mount left (a credentials file, say).
    c.TrackPodTeardown(n, dir);
    const std::string why = "mount with an invalid base64 secret succeeded";
    if (c.profile().secrets.empty()) {
      c.Warn(why +
             " (the profile declares no secrets, so the driver may ignore them; kubelet "
             "never sends invalid base64)");
    } else {
      c.Fail("F20 secrets-base64: secrets are base64; an invalid one is a Failure",
             why + " (invalid in every declared secret: " + key_list + ")");
    }
  }
  TearDownAll(c);
}

}  // namespace

void AddSecretsCases(std::vector<Case>& cases) {
  cases.push_back({"secrets/accepted-and-never-leaked",
                   {"secrets", "root"},
                   {"F20", "F21"},
                   Always,
                   SecretsNotLeaked});
  cases.push_back({"secrets/invalid-base64-is-failure",
                   {"secrets", "root"},
                   {"F20", "F21", "F30"},
                   Always,
                   InvalidBase64IsFailure});
}

}  // namespace flexkit::conform
