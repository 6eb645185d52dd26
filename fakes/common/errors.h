#pragma once
// Which exception texts may reach a client. fakes/ code throws
// std::runtime_error itself or a FakeError (ConvoyError, Ec2Error,
// CloudError); their texts say what was attempted, on what and why. A
// library's exception ("[json.exception.type_error.302] ...", "stoi",
// "filesystem error: ...") speaks of the library, not of the request, so
// its text goes to the log and the reply gets ReplyText's rendering.
#include <exception>
#include <stdexcept>
#include <string>

namespace flexkit::fakes {

struct FakeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// True for std::runtime_error itself and for FakeError and its subclasses.
bool IsOwnError(const std::exception& e);

// e.what() for an own error. For a library's: the path and errno text of a
// file-system error, or what kind of internal failure it was, pointing at
// the log; the library's text is logged (spdlog, error level).
std::string ReplyText(const std::exception& e);

}  // namespace flexkit::fakes
