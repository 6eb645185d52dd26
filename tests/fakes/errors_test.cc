// ReplyText: the fakes' own errors keep their text; a library's never
// reaches a reply (nlohmann's, std::stoi's, std::filesystem's).
#include "fakes/common/errors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace flexkit::fakes {
namespace {

template <typename Throw>
std::string ReplyTextOf(Throw&& thrower) {
  try {
    thrower();
  } catch (const std::exception& e) {
    return ReplyText(e);
  }
  return "nothing thrown";
}

TEST(FakesErrors, OwnErrorsKeepTheirText) {
  EXPECT_EQ("mount /a on /b: Device or resource busy", ReplyTextOf([] {
              throw std::runtime_error("mount /a on /b: Device or resource busy");
            }));
  struct Sub : FakeError {
    using FakeError::FakeError;
  };
  EXPECT_EQ("volume v1 doesn't exist", ReplyTextOf([] { throw Sub("volume v1 doesn't exist"); }));
}

TEST(FakesErrors, LibraryTextsNeverReachAReply) {
  std::string json = ReplyTextOf([] { nlohmann::json j = nlohmann::json::parse("{\"a\":"); });
  EXPECT_EQ(std::string::npos, json.find("json.exception")) << json;
  EXPECT_NE(std::string::npos, json.find("details in the log")) << json;
  std::string type = ReplyTextOf([] {
    int i = nlohmann::json("x").get<int>();
    (void)i;
  });
  EXPECT_EQ(std::string::npos, type.find("type_error")) << type;
  std::string stoi = ReplyTextOf([] {
    int i = std::stoi("x");
    (void)i;
  });
  EXPECT_EQ("internal error (details in the log)", stoi);
  std::string fs =
      ReplyTextOf([] { std::filesystem::create_directories("/proc/self/no/such/dir"); });
  EXPECT_EQ(std::string::npos, fs.find("filesystem error")) << fs;
  EXPECT_EQ(0u, fs.find("/proc/self/no/such/dir: ")) << fs;
}

}  // namespace
}  // namespace flexkit::fakes
