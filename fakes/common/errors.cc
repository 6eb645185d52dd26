#include "fakes/common/errors.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>
#include <typeinfo>

namespace flexkit::fakes {

bool IsOwnError(const std::exception& e) {
  return typeid(e) == typeid(std::runtime_error) || dynamic_cast<const FakeError*>(&e) != nullptr;
}

std::string ReplyText(const std::exception& e) {
  if (IsOwnError(e)) return e.what();
  spdlog::error("internal error ({}): {}", typeid(e).name(), e.what());
  if (const auto* fs = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) {
    std::string on = fs->path1().string();
    if (!fs->path2().empty()) on += " -> " + fs->path2().string();
    return on + ": " + fs->code().message();
  }
  if (const auto* sys = dynamic_cast<const std::system_error*>(&e)) {
    return "internal error: " + sys->code().message() + " (details in the log)";
  }
  if (dynamic_cast<const nlohmann::json::exception*>(&e) != nullptr) {
    return "internal error: a stored record or an answer of the cloud is not the JSON expected "
           "(details in the log)";
  }
  return "internal error (details in the log)";
}

}  // namespace flexkit::fakes
