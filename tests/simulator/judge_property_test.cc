// Properties of judging (RapidCheck): whitespace around a valid reply never
// changes the verdict; any trailing non-space byte makes it a decode error;
// the case of the top-level keys never changes the outcome or the error.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "simulator/judge.h"
#include "simulator/verdict_json.h"

namespace flexkit::sim {
namespace {

struct Reply {
  std::string text;
  ExitStatus exit;
};

rc::Gen<Reply> ValidReply() {
  return rc::gen::exec([] {
    nlohmann::json j;
    j["status"] = *rc::gen::oneOf(
        rc::gen::element<std::string>("Success", "Not supported", "Failure", "success", ""),
        rc::gen::arbitrary<std::string>());
    if (*rc::gen::arbitrary<bool>()) j["message"] = *rc::gen::arbitrary<std::string>();
    if (*rc::gen::arbitrary<bool>()) j["device"] = "/dev/" + *rc::gen::arbitrary<std::string>();
    if (*rc::gen::arbitrary<bool>()) j["attached"] = *rc::gen::arbitrary<bool>();
    if (*rc::gen::arbitrary<bool>()) {
      nlohmann::json caps = nlohmann::json::object();
      for (const char* k : {"attach", "selinuxRelabel", "supportsMetrics", "fsGroup"}) {
        if (*rc::gen::arbitrary<bool>()) caps[k] = *rc::gen::arbitrary<bool>();
      }
      j["capabilities"] = caps;
    }
    Reply r;
    r.text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    r.exit.exit_code = *rc::gen::inRange(0, 3);
    return r;
  });
}

rc::Gen<std::string> Whitespace() {
  return rc::gen::container<std::string>(rc::gen::element(' ', '\t', '\n', '\r'));
}

std::string VerdictText(const std::string& verb, const ExitStatus& exit, const std::string& out) {
  return VerdictToJson(Judge(verb, exit, out), true)
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

RC_GTEST_PROP(SimulatorJudgeProperty, WhitespaceAroundValidReplyNeverChangesVerdict, ()) {
  Reply r = *ValidReply();
  std::string before = *Whitespace(), after = *Whitespace();
  RC_ASSERT(VerdictText("mount", r.exit, before + r.text + after) ==
            VerdictText("mount", r.exit, r.text));
}

RC_GTEST_PROP(SimulatorJudgeProperty, TrailingNonSpaceByteIsDecodeError, ()) {
  Reply r = *ValidReply();
  char junk = *rc::gen::suchThat<char>(
      [](char c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; });
  std::string tail = *rc::gen::arbitrary<std::string>();
  Verdict v = Judge("mount", r.exit, r.text + *Whitespace() + junk + tail);
  RC_ASSERT(v.outcome == Outcome::kDecodeError);
  RC_ASSERT(!v.status.has_value());
}

RC_GTEST_PROP(SimulatorJudgeProperty, KeyCaseNeverChangesOutcome, ()) {
  Reply r = *ValidReply();
  // Upper-case every top-level key; the keys inside capabilities keep their case.
  nlohmann::json j = nlohmann::json::parse(r.text);
  nlohmann::json upper;
  for (auto& [k, v] : j.items()) {
    std::string K = k;
    for (auto& c : K) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    upper[K] = v;
  }
  Verdict a = Judge("init", r.exit, r.text);
  Verdict b =
      Judge("init", r.exit, upper.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  RC_ASSERT(a.outcome == b.outcome);
  RC_ASSERT(a.error == b.error);
}

}  // namespace
}  // namespace flexkit::sim
