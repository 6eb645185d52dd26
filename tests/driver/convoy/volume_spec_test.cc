#include "driver/convoy/volume_spec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

namespace convoy_flexvolume {
namespace {

TEST(Quantity, KubernetesQuantities) {
  const std::pair<const char*, int64_t> cases[] = {
      {"1Gi", 1073741824},   {"500Mi", 524288000}, {"1G", 1000000000}, {"1073741824", 1073741824},
      {"1.5Gi", 1610612736}, {"4Ki", 4096},        {"1k", 1000},       {"0.1", 1}};
  for (auto [text, want] : cases) {
    int64_t got = 0;
    ASSERT_TRUE(ParseQuantity(text, &got)) << text;
    EXPECT_EQ(got, want) << text;
  }
  int64_t ignored;
  for (const char* bad : {"", "Gi", "1gi", "1 Gi", "-1", "1e3", "1Gib", "99999999999Ei"}) {
    EXPECT_FALSE(ParseQuantity(bad, &ignored)) << bad;
  }
}

TEST(VolumeSpec, DefaultsFromKubelet) {
  const VolumeSpec spec =
      ParseVolumeSpec({{"kubernetes.io/pvOrVolumeName", "pv-1"}, {"kubernetes.io/fsType", ""}});
  EXPECT_EQ(spec.name, "pv-1");
  EXPECT_EQ(spec.driver, "ebs");
  EXPECT_EQ(spec.fs_type, "ext4");
  EXPECT_FALSE(spec.read_only);
}

TEST(VolumeSpec, NameOptionWins) {
  const VolumeSpec spec =
      ParseVolumeSpec({{"kubernetes.io/pvOrVolumeName", "data"}, {"name", "data-7"}});
  EXPECT_EQ(spec.name, "data-7");
}

TEST(VolumeSpec, InvalidOptionIsNamed) {
  try {
    ParseVolumeSpec({{"kubernetes.io/pvOrVolumeName", "pv-1"}, {"convoyDriver", "nfs"}});
    FAIL() << "convoyDriver nfs accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "option convoyDriver must be \"ebs\" or \"vfs\", not \"nfs\"");
  }
}

}  // namespace
}  // namespace convoy_flexvolume
