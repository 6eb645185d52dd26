#include "driver/convoy/volume_spec.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "driver/convoy/names.h"

namespace convoy_flexvolume {
namespace {

constexpr std::pair<const char*, long double> kSuffixes[] = {{"Ki", 1024.0L},
                                                             {"Mi", 1048576.0L},
                                                             {"Gi", 1073741824.0L},
                                                             {"Ti", 1099511627776.0L},
                                                             {"Pi", 1125899906842624.0L},
                                                             {"Ei", 1152921504606846976.0L},
                                                             {"k", 1e3L},
                                                             {"M", 1e6L},
                                                             {"G", 1e9L},
                                                             {"T", 1e12L},
                                                             {"P", 1e15L},
                                                             {"E", 1e18L},
                                                             {"", 1.0L}};

}  // namespace

bool ParseQuantity(const std::string& text, int64_t* bytes) {
  size_t i = 0;
  long double whole = 0;
  bool any_digit = false;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    whole = whole * 10 + (text[i++] - '0');
    any_digit = true;
  }
  long double fraction = 0, scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      scale /= 10;
      fraction += (text[i++] - '0') * scale;
      any_digit = true;
    }
  }
  if (!any_digit) return false;
  const std::string suffix = text.substr(i);
  for (const auto& [name, multiplier] : kSuffixes) {
    if (suffix != name) continue;
    long double value = (whole + fraction) * multiplier;
    if (value > static_cast<long double>(std::numeric_limits<int64_t>::max())) return false;
    int64_t rounded = static_cast<int64_t>(value);
    if (static_cast<long double>(rounded) < value) ++rounded;
    *bytes = rounded;
    return true;
  }
  return false;
}

VolumeSpec ParseVolumeSpec(const flexvolume::Options& opts) {
  VolumeSpec spec;
  spec.name = flexvolume::Get(opts, option::kName);
  if (spec.name.empty()) spec.name = flexvolume::Get(opts, flexvolume::option::kPvOrVolumeName);
  if (spec.name.empty()) {
    throw std::invalid_argument(
        "no volume name: set option \"name\" or run under kubelet, which passes "
        "kubernetes.io/pvOrVolumeName");
  }
  if (!IsValidVolumeName(spec.name)) {
    throw std::invalid_argument(
        "volume name " + Quoted(spec.name) +
        " is not a valid Convoy name: 2-253 characters from [a-zA-Z0-9_.-], starting with a "
        "letter or digit");
  }
  spec.driver = flexvolume::Get(opts, option::kConvoyDriver, "ebs");
  if (spec.driver != "ebs" && spec.driver != "vfs") {
    throw std::invalid_argument("option convoyDriver must be \"ebs\" or \"vfs\", not " +
                                Quoted(spec.driver));
  }
  spec.volume_id = flexvolume::Get(opts, option::kVolumeId);
  if (!spec.volume_id.empty()) {
    bool ok = spec.volume_id.size() > 4 && spec.volume_id.rfind("vol-", 0) == 0;
    for (size_t i = 4; ok && i < spec.volume_id.size(); ++i) {
      const char c = spec.volume_id[i];
      ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }
    if (!ok) {
      throw std::invalid_argument(
          "option volumeID must be an EBS volume id (vol- and hex digits), not " +
          Quoted(spec.volume_id));
    }
    if (spec.driver != "ebs") {
      throw std::invalid_argument("option volumeID only applies to convoyDriver \"ebs\"");
    }
  }
  const std::string size = flexvolume::Get(opts, option::kSize);
  if (!size.empty() && (!ParseQuantity(size, &spec.size_bytes) || spec.size_bytes <= 0)) {
    throw std::invalid_argument(
        "option size must be a positive Kubernetes quantity like 1Gi, 500Mi or 1073741824, not " +
        Quoted(size));
  }
  spec.volume_type = flexvolume::Get(opts, option::kVolumeType);
  if (!spec.volume_type.empty() && spec.volume_type != "gp2" && spec.volume_type != "io1" &&
      spec.volume_type != "standard" && spec.volume_type != "st1" && spec.volume_type != "sc1") {
    throw std::invalid_argument(
        "option volumeType must be one of gp2, io1, standard, st1, sc1, not " +
        Quoted(spec.volume_type));
  }
  const std::string iops = flexvolume::Get(opts, option::kIops);
  if (!iops.empty()) {
    int64_t n = 0;
    if (!ParseQuantity(iops, &n) || n <= 0 ||
        iops.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("option iops must be a positive whole number, not " +
                                  Quoted(iops));
    }
    spec.iops = n;
  }
  const std::string fs = flexvolume::Get(opts, flexvolume::option::kFsType);
  if (!fs.empty()) {
    spec.fs_type = fs;
    spec.fs_type_requested = true;
  }
  if (spec.fs_type != "ext4" && spec.fs_type != "xfs") {
    throw std::invalid_argument("kubernetes.io/fsType must be ext4 or xfs, not " +
                                Quoted(spec.fs_type));
  }
  const std::string rw = flexvolume::Get(opts, flexvolume::option::kReadWrite, "rw");
  if (rw != "rw" && rw != "ro") {
    throw std::invalid_argument("kubernetes.io/readwrite must be \"rw\" or \"ro\", not " +
                                Quoted(rw));
  }
  spec.read_only = rw == "ro";
  return spec;
}

}  // namespace convoy_flexvolume
