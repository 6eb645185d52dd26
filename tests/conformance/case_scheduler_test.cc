// The run's scheduling and retry policy, without a process: which case
// starts in which slot, what a retried FAIL becomes, where --fail-fast stops.
#include "conformance/case_scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace flexkit::conform {
namespace {

CaseResult Graded(const std::string& name, Grade grade, const std::string& reason = "") {
  CaseResult r;
  r.name = name;
  r.grade = grade;
  r.reason = reason;
  return r;
}

struct Heard {
  std::vector<std::string> names;
  CaseScheduler::OnResult Listener() {
    return [this](const CaseResult& r, std::size_t finished, std::size_t total) {
      names.push_back(r.name + " " + std::to_string(finished) + "/" + std::to_string(total));
    };
  }
};

TEST(CaseScheduler, SlowCasesStartFirstAndOneJobRunsOneCaseAtATime) {
  Heard heard;
  CaseScheduler s({{"a"}, {"slow"}, {"waits"}, {"slow"}}, {1, 0, false, false}, heard.Listener());
  auto first = s.Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 1u);
  EXPECT_FALSE(s.Next()) << "-j 1 has no waiting slot";
  s.Finish(*first, Graded("one", Grade::kPass));
  std::vector<std::size_t> order;
  while (auto next = s.Next()) {
    order.push_back(next->index);
    EXPECT_FALSE(next->waiting_slot);
    s.Finish(*next, Graded("c" + std::to_string(next->index), Grade::kPass));
  }
  EXPECT_EQ(order, (std::vector<std::size_t>{3, 0, 2}))
      << "slow first, then the rest in order; a waits case takes a CPU slot when it is the last";
  EXPECT_EQ(heard.names, (std::vector<std::string>{"one 0/4", "c3 1/4", "c0 2/4", "c2 3/4"}));
  const auto results = s.TakeResults();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].name, "one") << "results in selection order";
}

TEST(CaseScheduler, WaitsCasesRunInTheirOwnSlotsBesideTheCpuJobs) {
  CaseScheduler s({{"a"}, {"b"}, {"waits"}, {"waits"}, {"waits"}, {"c"}}, {2, 0, false, false},
                  nullptr);
  std::vector<Attempt> started;
  while (auto next = s.Next()) started.push_back(*next);
  ASSERT_EQ(started.size(), 4u) << "two CPU slots and two waiting slots";
  int waiting = 0;
  for (const auto& a : started) waiting += a.waiting_slot;
  EXPECT_EQ(waiting, 2);
  for (const auto& a : started) {
    if (!a.waiting_slot) {
      s.Finish(a, Graded("x", Grade::kPass));
      break;
    }
  }
  auto next = s.Next();
  ASSERT_TRUE(next) << "a freed CPU slot starts the next case";
  EXPECT_EQ(next->index, 5u);
  EXPECT_FALSE(s.Next());
}

TEST(CaseScheduler, WithoutWaitingSlotsNoMoreThanTheJobsRunAtOnce) {
  SchedulerPolicy policy{2, 0, false, false};
  policy.waiting_slots = false;  // a profile's maxJobs
  CaseScheduler s({{"a"}, {"waits"}, {"waits"}, {"b"}}, policy, nullptr);
  std::vector<Attempt> started;
  while (auto next = s.Next()) started.push_back(*next);
  ASSERT_EQ(started.size(), 2u) << "two jobs, nothing beside them";
  for (const auto& a : started) EXPECT_FALSE(a.waiting_slot);
}

TEST(CaseScheduler, AFailThatPassesOnARetryIsFlakyAndKeepsTheFailingFindings) {
  Heard heard;
  CaseScheduler s({{"a"}, {"b"}}, {1, 2, false, false}, heard.Listener());
  auto a = s.Next();
  ASSERT_EQ(a->index, 0u);
  auto failed = Graded("a", Grade::kFail, "mount failed");
  failed.duration = std::chrono::milliseconds(5);
  s.Finish(*a, failed);
  auto retry = s.Next();
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->index, 0u) << "a retry goes before new cases";
  EXPECT_EQ(retry->attempt, 1);
  EXPECT_EQ(retry->Suffix(), "0t1");
  auto passed = Graded("a", Grade::kPass);
  passed.duration = std::chrono::milliseconds(7);
  s.Finish(*retry, passed);
  auto b = s.Next();
  s.Finish(*b, Graded("b", Grade::kPass));
  const auto results = s.TakeResults();
  EXPECT_EQ(results[0].grade, Grade::kFlaky);
  EXPECT_EQ(results[0].reason, "FAILed, then PASS on run 2 (--retries): mount failed");
  EXPECT_EQ(results[0].duration, std::chrono::milliseconds(12));
  EXPECT_EQ(heard.names.size(), 2u) << "only final verdicts are reported";
}

TEST(CaseScheduler, AFailOnEveryRunSaysSoAndAnErrorAloneIsNotRetried) {
  CaseScheduler s({{"a"}, {"b"}}, {1, 1, false, false}, nullptr);
  auto a = s.Next();
  s.Finish(*a, Graded("a", Grade::kFail, "why"));
  auto retry = s.Next();
  ASSERT_EQ(retry->attempt, 1);
  s.Finish(*retry, Graded("a", Grade::kFail, "why again"));
  auto b = s.Next();
  ASSERT_EQ(b->index, 1u);
  s.Finish(*b, Graded("b", Grade::kError, "harness"));
  EXPECT_FALSE(s.Next()) << "an ERROR that no FAIL began is final";
  const auto results = s.TakeResults();
  EXPECT_EQ(results[0].grade, Grade::kFail);
  EXPECT_EQ(results[0].reason, "why (FAILed on all 2 runs)");
  EXPECT_EQ(results[1].grade, Grade::kError);
}

TEST(CaseScheduler, FailFastStartsNothingAfterAFailOrADisallowedFlaky) {
  CaseScheduler s({{"a"}, {"b"}, {"c"}}, {1, 0, true, false}, nullptr);
  auto a = s.Next();
  s.Finish(*a, Graded("a", Grade::kWarn));
  auto b = s.Next();
  ASSERT_TRUE(b) << "a WARN does not stop the run";
  s.Finish(*b, Graded("b", Grade::kFail));
  EXPECT_EQ(s.FailedFirst(), "b");
  EXPECT_FALSE(s.Next());
  EXPECT_TRUE(s.Pending());
  EXPECT_EQ(s.TakeResults().size(), 2u) << "the case never started is left out";

  CaseScheduler allowed({{"a"}, {"b"}}, {1, 1, true, true}, nullptr);
  auto first = allowed.Next();
  allowed.Finish(*first, Graded("a", Grade::kFail));
  auto retry = allowed.Next();
  allowed.Finish(*retry, Graded("a", Grade::kPass));
  EXPECT_TRUE(allowed.Next()) << "a FLAKY case with --allow-flaky does not stop the run";
}

}  // namespace
}  // namespace flexkit::conform
