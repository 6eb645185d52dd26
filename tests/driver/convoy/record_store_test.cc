#include "driver/convoy/record_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/support/temp_dir.h"

namespace convoy_flexvolume {
namespace {

using ::testing::HasSubstr;

TEST(RecordStore, PutGetErase) {
  flexkit::testing::TempDir dir;
  RecordStore store(dir.path() + "/names");
  store.Put({"node-a", "pv-1"}, "data-7");
  EXPECT_EQ(store.Get({"node-a", "pv-1"}), "data-7");
  store.Erase({"node-a", "pv-1"});
  EXPECT_EQ(store.Get({"node-a", "pv-1"}), std::nullopt);
}

TEST(RecordStore, UnsafeKeyIsRefusedWithTheDirectory) {
  flexkit::testing::TempDir dir;
  RecordStore store(dir.path());
  try {
    store.Put({"..", "x"}, "v");
    FAIL() << "a key part .. was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot keep a record under " + dir.path()));
  }
  EXPECT_EQ(store.Get({"..", "x"}), std::nullopt);
}

}  // namespace
}  // namespace convoy_flexvolume
