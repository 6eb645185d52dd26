#pragma once
// The JSON options map kubelet passes to drivers (reference
// flexvolume-protocol.md §4): a JSON object whose values are all strings.
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace flexvolume {

using Options = std::map<std::string, std::string>;

// Well-known keys. User options are applied last by kubelet, so any of these
// may also come from the user.
namespace option {
inline constexpr const char* kFsType = "kubernetes.io/fsType";
inline constexpr const char* kReadWrite = "kubernetes.io/readwrite";  // "ro" | "rw"
inline constexpr const char* kPvOrVolumeName = "kubernetes.io/pvOrVolumeName";
inline constexpr const char* kFsGroup = "kubernetes.io/mounterArgs.FsGroup";  // kubelet >= 1.15
inline constexpr const char* kFsGroupLegacy = "kubernetes.io/fsGroup";        // kubelet 1.6-1.14
inline constexpr const char* kPodName = "kubernetes.io/pod.name";
inline constexpr const char* kPodNamespace = "kubernetes.io/pod.namespace";
inline constexpr const char* kPodUid = "kubernetes.io/pod.uid";
inline constexpr const char* kServiceAccountName = "kubernetes.io/serviceAccount.name";
// Every secret key arrives as kSecretPrefix + <key>, base64-encoded.
inline constexpr const char* kSecretPrefix = "kubernetes.io/secret/";
}  // namespace option

// Parses `text` as a JSON object of string values. On error returns false and
// sets *err to a description that never quotes the input (it may hold
// secrets); *out is unchanged.
bool ParseOptions(std::string_view text, Options* out, std::string* err);

bool IsSecretKey(std::string_view key);

// Replaces every kubernetes.io/secret/* value by its base64 decoding (the
// standard alphabet, padded, CR/LF skipped as Go does; a trailing CR/LF of
// the decoded value is trimmed, since secrets made with `echo | base64` carry
// one). On an invalid
// value returns false with *err naming the key only; *opts is unchanged.
bool DecodeKubeSecrets(Options* opts, std::string* err);

// The pod's fsGroup from either spelling, the current one winning.
std::optional<std::string> FsGroup(const Options& opts);

// True when kubernetes.io/readwrite is "ro".
bool IsReadOnly(const Options& opts);

// Value of `key`, or `fallback` when absent.
std::string Get(const Options& opts, const std::string& key, std::string fallback = "");

// The options as compact JSON with every secret value replaced by
// "<redacted>": the only form in which options may be logged.
std::string RedactedOptions(const Options& opts);

}  // namespace flexvolume
