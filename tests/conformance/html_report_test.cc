// flexconform --html: the renderer on hostile input (escaping, no external
// resources, every case present, FAIL highlighted), the backend request
// log parser, and end to end: real runs rendered, then opened in headless
// Chromium to check that the diagrams render and the filters work.
#include "conformance/html_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "conformance/backend_events.h"
#include "conformance/rules.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace flexkit::conform {
namespace {

using Json = nlohmann::ordered_json;

std::size_t Count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size()))
    ++n;
  return n;
}

Json Call(const std::string& node, const std::string& component, const std::string& verb,
          const std::string& arg, int exit_code, const std::string& output,
          const std::string& outcome) {
  Json c;
  c["type"] = "call";
  c["node"] = node;
  c["component"] = component;
  c["verb"] = verb;
  c["argv"] = {"/drv", verb, arg};
  c["executed"] = true;
  c["exit_code"] = exit_code;
  c["output"] = Json::array({Json{{"stream", "stdout"}, {"bytes", output}}});
  c["duration_ms"] = 3;
  c["verdict"] = Json{{"outcome", outcome}, {"message", nullptr}, {"error", nullptr}};
  c["harness_problem"] = nullptr;
  c["mounts_added"] = Json::array();
  c["mounts_removed"] = Json::array();
  return c;
}

const std::string kHostile =
    "<script>alert('x')</script><img src=\"http://evil.example/x.png\">"
    "\"quoted\" & caf\xC3\xA9 \xE2\x9C\x93 \xFF\xFE bell\x07";

// PASS with a backend timeline, FAIL with hostile output, SKIP, WARN.
RunSummary HostileRun() {
  RunSummary s;
  CaseResult pass;
  pass.name = "lifecycle/attachable";
  pass.tags = {"lifecycle", "root"};
  pass.transcript.push_back(Call("node-1", "controller", "attach", "{}", 0,
                                 R"({"status":"Success","device":"/dev/xvdf"})", "success"));
  pass.transcript.back()["verdict"]["device"] = "/dev/xvdf";
  pass.transcript.push_back(
      Call("node-1", "kubelet", "mountdevice", "/g", 0, R"({"status":"Success"})", "success"));
  pass.timeline.calls = {CallWindow{1000, 1050}, CallWindow{2000, 2050}};
  auto event = [](std::string server, std::int64_t start, std::int64_t duration, int status,
                  std::string method, std::string path) {
    BackendEvent e;
    e.server = std::move(server);
    e.start_ms = start;
    e.duration_ms = duration;
    e.status = status;
    e.method = std::move(method);
    e.path = std::move(path);
    return e;
  };
  pass.timeline.backend = {event("node-1", 1010, 30, 200, "POST", "/v1/volumes/create"),
                           event("cloud", 1020, 5, 200, "POST", "/ec2/AttachVolume"),
                           event("node-1", 1500, 1, 200, "GET", "/v1/between-calls"),
                           event("node-1", 2010, 5, 500, "POST", "/v1/volumes/mount")};

  CaseResult fail;
  fail.name = "robustness/hostile-option-values";
  fail.tags = {"robustness", "root"};
  fail.grade = Grade::kFail;
  fail.rule = "F24 data-not-code: option values <arrive> intact";
  fail.reason = "mount failed: " + kHostile;
  fail.transcript.push_back(Call("node-1", "kubelet", "init", "", 0,
                                 R"({"status":"Success","capabilities":{"attach":false}})",
                                 "success"));
  fail.transcript.push_back(Json{{"type", "event"}, {"event", "node crash " + kHostile}});
  Json bad = Call("node-1", "kubelet", "mount", std::string(64 * 1024, 'v') + kHostile, 1,
                  R"({"status":"Failure","message":")" + kHostile + R"("})", "failure");
  bad["verdict"]["message"] = kHostile;
  fail.transcript.push_back(bad);

  CaseResult skip;
  skip.name = "teardown/detach-never-attached";
  skip.tags = {"teardown"};
  skip.grade = Grade::kSkip;
  skip.reason = "capability: attach:false";

  CaseResult warn;
  warn.name = "protocol/unknown-verb-not-supported";
  warn.tags = {"protocol"};
  warn.grade = Grade::kWarn;
  warn.rule = "kubelet tolerates it";
  warn.reason = "Not supported with exit 1";
  warn.transcript.push_back(Call("node-1", "kubelet", "frobnicate", "", 1,
                                 R"({"status":"Not supported"})", "not_supported"));
  s.results = {pass, fail, skip, warn};
  s.wall = std::chrono::milliseconds(1234);
  return s;
}

// Resources a page could load: any src= or href= in a tag (ours are only
// in-page "#..." links), CSS url() to anything but "#...", @import.
void ExpectSelfContained(const std::string& html) {
  static const std::regex src(R"(<[a-zA-Z][^>]*\ssrc\s*=)", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html, src));
  static const std::regex href(R"(\shref\s*=\s*["']?([^"'\s>]*))", std::regex::icase);
  for (std::sregex_iterator it(html.begin(), html.end(), href), end; it != end; ++it)
    EXPECT_EQ((*it)[1].str().substr(0, 1), "#") << "external link: " << (*it)[0];
  static const std::regex url(R"(url\(\s*[^#\s])", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html, url));
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u) << "only the page's own inline script";
  EXPECT_EQ(html.find("<script src"), std::string::npos);
}

TEST(HtmlText, EscapesMarkupAndQuotesAndReplacesInvalidBytes) {
  EXPECT_EQ(HtmlText("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(HtmlText("caf\xC3\xA9 \xE2\x9C\x93"), "caf\xC3\xA9 \xE2\x9C\x93");
  EXPECT_EQ(HtmlText("a\xFF"
                     "b\x01"
                     "c\xC0\xAF"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(HtmlText("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(HtmlText("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD") << "a surrogate";
}

TEST(HtmlText, ClipsLongValuesOnACharacterBoundaryAndSaysHowLong) {
  const std::string big = std::string(65535, 'x') + "\xE2\x9C\x93";  // the check mark straddles
  const std::string out = HtmlText(big, 65536);
  EXPECT_EQ(out, std::string(65535, 'x') + "\xE2\x80\xA6 (65538 bytes)");
}

TEST(HtmlReport, HostileOutputIsEscapedAndNothingIsLoadedFromOutside) {
  const std::string html = HtmlReport(HostileRun(), "/drv<x>", "convoy-fake");
  ExpectSelfContained(html);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("alert('x')"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("\xFF"), std::string::npos);
  EXPECT_EQ(html.find("\x07"), std::string::npos);
  EXPECT_NE(html.find("caf\xC3\xA9 \xE2\x9C\x93"), std::string::npos);
  EXPECT_NE(html.find("/drv&lt;x&gt;"), std::string::npos);
  // 64 KiB argv: shown clipped, with its size, not pasted whole into every place.
  EXPECT_NE(html.find("bytes)"), std::string::npos);
  EXPECT_LT(html.size(), 200u * 1024) << "long values are clipped";
}

TEST(HtmlReport, EveryCaseHasARowAndASectionAndFailuresAreHighlighted) {
  const RunSummary run = HostileRun();
  const std::string html = HtmlReport(run, "/drv", "none");
  EXPECT_EQ(Count(html, "<section class=\"case "), run.results.size());
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    const std::string grade = GradeName(r.grade);
    EXPECT_NE(html.find("<tr class=\"" + grade + "\" data-verdict=\"" + grade + "\""),
              std::string::npos);
    EXPECT_NE(
        html.find("<section class=\"case " + grade + "\" id=\"case-" + std::to_string(i) + "\""),
        std::string::npos)
        << r.name;
    EXPECT_NE(html.find("<a href=\"#case-" + std::to_string(i) + "\">" + r.name + "</a>"),
              std::string::npos);
  }
  // The FAIL box: rule, reason and the failing call's reply.
  const auto box = html.find("<div class=\"failure\">");
  ASSERT_NE(box, std::string::npos);
  const std::string failure = html.substr(box, html.find("</div>", box) - box);
  EXPECT_NE(failure.find("F24 data-not-code: option values &lt;arrive&gt; intact"),
            std::string::npos);
  // Under the rule, its fix hint (RULES.md's), as the console and JUnit give it.
  EXPECT_NE(failure.find("<b>Fix:</b> " + HtmlText(FixHint("F24 data-not-code"))),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("Failure: &lt;script&gt;"), std::string::npos) << failure;
  EXPECT_NE(failure.find("exit 1"), std::string::npos);
  // In the diagram, the failing call's arrows stand out; exactly one call is it.
  EXPECT_EQ(Count(html, "<g class=\"arrow call failing\">"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"arrow reply bad failing\">"), 1u);
  EXPECT_EQ(Count(html, "<li class=\"failing\">"), 1u);
  // Three cases have calls, so three diagrams; the SKIP has none.
  EXPECT_EQ(Count(html, "<svg class=\"seq\""), 3u);
  // Filters: every verdict and every tag.
  for (const char* v : {"PASS", "FAIL", "WARN", "SKIP"})
    EXPECT_NE(html.find("data-kind=\"verdict\" value=\"" + std::string(v) + "\" checked"),
              std::string::npos);
  for (const char* t : {"lifecycle", "root", "robustness", "teardown", "protocol"})
    EXPECT_NE(html.find("data-kind=\"tag\" value=\"" + std::string(t) + "\" checked"),
              std::string::npos);
}

TEST(HtmlReport, DiagramHasLifelinesPerComponentAndBackendRequestsInsideTheirCall) {
  const std::string html = HtmlReport(HostileRun(), "/drv", "convoy-fake");
  const auto start = html.find("<svg class=\"seq\"", html.find("id=\"case-0\""));
  const std::string svg = html.substr(start, html.find("</svg>", start) - start);
  for (const char* lifeline :
       {"controller", "kubelet node-1", "driver node-1", "daemon node-1", "cloud"})
    EXPECT_NE(svg.find("<title>" + std::string(lifeline) + "</title>"), std::string::npos)
        << lifeline;
  // Order: request, the backend requests made meanwhile, then the reply.
  const auto attach = svg.find(">attach</text>");
  const auto create = svg.find("POST /v1/volumes/create \xE2\x86\x92 200");
  const auto cloud = svg.find("POST /ec2/AttachVolume \xE2\x86\x92 200");
  const auto reply = svg.find("Success /dev/xvdf");
  ASSERT_NE(attach, std::string::npos);
  ASSERT_NE(create, std::string::npos);
  ASSERT_NE(cloud, std::string::npos);
  ASSERT_NE(reply, std::string::npos);
  EXPECT_LT(attach, create);
  EXPECT_LT(create, cloud);
  EXPECT_LT(cloud, reply);
  EXPECT_NE(svg.find("<g class=\"arrow backend err\"><title>Convoy daemon on node-1: POST "
                     "/v1/volumes/mount\nstatus 500"),
            std::string::npos);
  EXPECT_EQ(svg.find("between-calls"), std::string::npos)
      << "a request outside every driver call is not the driver's";
}

// A read-only mount that is writable: mount answered Success (the call at
// fault), the write check went through, and the teardown's unmount then
// failed too. The finding names the mount.
CaseResult ReadOnlyIgnored() {
  CaseResult r;
  r.name = "readonly/write-fails";
  r.tags = {"readonly"};
  Json mount =
      Call("node-1", "kubelet", "mount", "/pods/p", 0, R"({"status":"Success"})", "success");
  mount["argv"].push_back(R"({"kubernetes.io/fsType":"xfs","kubernetes.io/readwrite":"ro",)"
                          R"("kubernetes.io/secret/password":"<redacted>","share":")" +
                          std::string(4000, 's') + R"("})");
  r.transcript.push_back(mount);
  r.transcript.push_back(Json{{"type", "event"},
                              {"event", "check"},
                              {"details",
                               {{"node", "node-1"},
                                {"check", "write"},
                                {"path", "/pods/p/must-not-exist"},
                                {"failed", true},
                                {"outcome", "the write succeeded (read-only asked)"}}}});
  r.transcript.push_back(Call("node-1", "kubelet", "unmount", "/pods/p", 1,
                              R"({"status":"Failure","message":"busy"})", "failure"));
  AddFinding(r, {Grade::kFail, "F18 read-only: readwrite=ro mounts read-only",
                 "a write through /pods/p succeeded", 0});
  return r;
}

TEST(HtmlReport, TheFailingCallIsTheOneTheFindingJudgedNotTheLastNorTheTeardown) {
  RunSummary run;
  run.results = {ReadOnlyIgnored()};
  const std::string html = HtmlReport(run, "/drv", "none");
  const auto box = html.find("<div class=\"failure\">");
  ASSERT_NE(box, std::string::npos);
  const std::string failure = html.substr(box, html.find("</div>", box) - box);
  EXPECT_NE(failure.find("<b>Failing call</b> (call 1, kubelet node-1): <code>/drv mount /pods/p"),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("<b>Options:</b> readwrite=ro fsType=xfs secrets=password"),
            std::string::npos)
      << failure;
  EXPECT_NE(failure.find("<b>Failed check</b> on node-1: write <code>/pods/p/must-not-exist</code>"
                         ": the write succeeded (read-only asked)"),
            std::string::npos)
      << failure;
  // The argv in the box is shortened, but keeps the keys the rule is about.
  EXPECT_NE(failure.find("&quot;kubernetes.io/readwrite&quot;:&quot;ro&quot;"), std::string::npos);
  EXPECT_NE(failure.find("(4000 bytes)"), std::string::npos) << failure;
  // On the diagram: the mount framed (request and reply), never the unmount.
  EXPECT_EQ(Count(html, "<g class=\"arrow call failing\">"), 1u);
  EXPECT_EQ(Count(html, "<g class=\"arrow reply ok failing\">"), 1u) << "mount's Success";
  EXPECT_EQ(Count(html, "<g class=\"arrow reply bad failing\">"), 0u) << "not the unmount";
  const auto framed = html.find("<g class=\"arrow call failing\">");
  EXPECT_EQ(html.substr(framed, 200).find("unmount"), std::string::npos)
      << html.substr(framed, 200);
  // The check is a step of its own, between the mount and the unmount.
  const auto check = html.find("<g class=\"arrow check bad self\">");
  ASSERT_NE(check, std::string::npos);
  EXPECT_NE(html.find("check write: the write succeeded (read-only asked)", check),
            std::string::npos);
  EXPECT_LT(framed, check);
  EXPECT_LT(check, html.find(">unmount</text>"));
  // The mount arrow shows its decisive options, the secret by name only.
  EXPECT_NE(html.find("<text class=\"options\" x=\""), std::string::npos);
  EXPECT_NE(html.find("\">readwrite=ro fsType=xfs secrets=password</text>"), std::string::npos);
}

TEST(HtmlReport, WithoutAFindingThatNamesACallTheFirstCallThatWentWrongIsShown) {
  CaseResult r = ReadOnlyIgnored();
  r.findings.clear();
  AddFinding(r, {Grade::kFail, "teardown-succeeds: teardown succeeds", "teardown: unmount: busy"});
  r.transcript.insert(r.transcript.begin(), Call("node-1", "kubelet", "init", "", 0,
                                                 R"({"status":"Success"})", "success"));
  RunSummary run;
  run.results = {r};
  const std::string html = HtmlReport(run, "/drv", "none");
  EXPECT_NE(html.find("<b>Failing call</b> (call 3, kubelet node-1): <code>/drv unmount"),
            std::string::npos);
  // A FAIL about no call at all (a leak) frames none.
  CaseResult leak;
  leak.name = "lifecycle/leak";
  leak.transcript.push_back(
      Call("node-1", "kubelet", "init", "", 0, R"({"status":"Success"})", "success"));
  AddFinding(leak,
             {Grade::kFail, "F26 no-leaks: a case leaves nothing behind", "a mount was left"});
  run.results = {leak};
  const std::string leak_html = HtmlReport(run, "/drv", "none");
  EXPECT_EQ(leak_html.find("Failing call"), std::string::npos);
  EXPECT_EQ(leak_html.find("failing\""), std::string::npos);
}

TEST(HtmlReport, FailuresComeFirstAndEveryVerdictHasAFilter) {
  RunSummary run = HostileRun();  // PASS, FAIL, SKIP, WARN
  CaseResult flaky = ReadOnlyIgnored();
  flaky.name = "readonly/flaky";
  flaky.grade = Grade::kFlaky;
  run.results.push_back(flaky);
  const std::string html = HtmlReport(run, "/drv", "none");
  std::vector<std::string> rows, sections;
  static const std::regex row(R"re(<tr class="([A-Z]+)")re");
  static const std::regex section(R"re(<section class="case ([A-Z]+)")re");
  for (std::sregex_iterator it(html.begin(), html.end(), row), end; it != end; ++it)
    rows.push_back((*it)[1]);
  for (std::sregex_iterator it(html.begin(), html.end(), section), end; it != end; ++it)
    sections.push_back((*it)[1]);
  const std::vector<std::string> expected = {"FAIL", "FLAKY", "WARN", "PASS", "SKIP"};
  EXPECT_EQ(rows, expected);
  EXPECT_EQ(sections, expected);
  EXPECT_NE(html.find("<section class=\"case FAIL\" id=\"case-1\""), std::string::npos)
      << "anchors keep the run order";
  for (const char* v : {"FAIL", "FLAKY", "ERROR", "WARN", "PASS", "SKIP"})
    EXPECT_NE(html.find("data-kind=\"verdict\" value=\"" + std::string(v) + "\" checked"),
              std::string::npos)
        << v;
}

TEST(BackendEvents, ParsesRequestLinesAndSkipsTheRest) {
  std::istringstream log(
      "[2026-11-30 12:00:00.001] [daemon] [info] convoy-fake daemon for host 'node-1' ready\n"
      "[2026-11-30 12:00:00.010] [daemon] [info] request start_ms=1764504000005 duration_ms=4 "
      "status=200 POST /v1/volumes/create\n"
      "[2026-11-30 12:00:00.011] [daemon] [info] request start_ms=garbage duration_ms=4 "
      "status=200 GET /x\n"
      "[2026-11-30 12:00:00.012] [daemon] [info] request start_ms=1764504000011 duration_ms=0 "
      "status=0 DELETE /v1/volumes/\n");
  const auto events = ParseRequestLog(log, "node-1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].server, "node-1");
  EXPECT_EQ(events[0].start_ms, 1764504000005);
  EXPECT_EQ(events[0].duration_ms, 4);
  EXPECT_EQ(events[0].status, 200);
  EXPECT_EQ(events[0].method, "POST");
  EXPECT_EQ(events[0].path, "/v1/volumes/create");
  EXPECT_EQ(events[1].status, 0);
  EXPECT_EQ(events[1].method, "DELETE");
}

TEST(BackendEvents, ReadsEveryLogRedactsAndOrdersEnclosingRequestsFirst) {
  flexkit::testing::TempDir dir;
  std::ofstream(dir.Join("cloud.log")) << "[t] [cloud] [info] request start_ms=100 duration_ms=1 "
                                          "status=200 POST /ec2/AttachVolume\n";
  std::ofstream(dir.Join("daemon.log"))
      << "[t] [daemon] [info] request start_ms=100 duration_ms=9 status=200 POST /v1/hunter2\n"
      << "[t] [daemon] [info] request start_ms=50 duration_ms=1 status=404 GET /v1/volumes/\n";
  const auto events = ReadBackendEvents({{"cloud", dir.Join("cloud.log")},
                                         {"node-1", dir.Join("daemon.log")},
                                         {"node-2", dir.Join("missing.log")}},
                                        [](std::string text) {
                                          const auto pos = text.find("hunter2");
                                          if (pos != std::string::npos)
                                            text.replace(pos, 7, "<redacted>");
                                          return text;
                                        });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].path, "/v1/volumes/");
  EXPECT_EQ(events[1].path, "/v1/<redacted>") << "the enclosing (longer) request first";
  EXPECT_EQ(events[2].server, "cloud");
}

// ---- end to end: flexconform runs, the page in headless Chromium ----

using flexkit::testing::BuiltBinary;
using flexkit::testing::RunProcess;

std::string Chromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "";
}

// Chromium's DOM after the page's script ran, the page opened at `fragment`.
std::string DumpDom(const std::string& chromium, const std::string& page,
                    const std::string& fragment, const std::string& profile_dir) {
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(30);
  auto r = RunProcess({chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                       "--user-data-dir=" + profile_dir, "--dump-dom", "file://" + page + fragment},
                      options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// The opening tags of the case sections in a dumped DOM.
std::vector<std::string> CaseTags(const std::string& dom) {
  std::vector<std::string> tags;
  static const std::regex section(R"(<section class="case [^>]*>)");
  for (std::sregex_iterator it(dom.begin(), dom.end(), section), end; it != end; ++it)
    tags.push_back((*it)[0]);
  return tags;
}

std::string Attribute(const std::string& dom, const std::string& tag, const std::string& name) {
  const std::regex attr("<" + tag + R"re([^>]*\s)re" + name + R"re(="([^"]*)")re");
  std::smatch m;
  return std::regex_search(dom, m, attr) ? m[1].str() : "";
}

TEST(HtmlReportEndToEnd, RealRunsRenderAndTheFiltersWorkInChromium) {
  FLEXKIT_REQUIRE_ROOT();
  flexkit::testing::TempDir dir;
  flexkit::testing::RunOptions options;
  options.deadline = std::chrono::seconds(120);

  // A known-good driver: PASS and SKIP only.
  const std::string tmpfs_page = dir.Join("tmpfs.html");
  auto good = RunProcess({BuiltBinary("conformance/flexconform"), "--driver",
                          BuiltBinary("driver/samples/tmpfs/flexkit-tmpfs"), "--html", tmpfs_page,
                          "--run-root", dir.path(), "--focus", "protocol|lifecycle|teardown"},
                         options);
  ASSERT_EQ(good.exit_code, 0) << good.out << good.err;
  const std::string tmpfs_html = flexkit::testing::ReadFileText(tmpfs_page);
  ExpectSelfContained(tmpfs_html);
  EXPECT_EQ(tmpfs_html.find("<section class=\"case FAIL\""), std::string::npos);
  EXPECT_NE(tmpfs_html.find("<section class=\"case PASS\""), std::string::npos);

  // A mutant that echoes the secret it gets: PASS, FAIL and SKIP in one
  // report, and the echoed secret must not be in it.
  const std::string mutants = FLEXKIT_MUTANTS_DIR;
  const std::string page = dir.Join("mutant.html");
  const std::string json = dir.Join("mutant.json");
  auto bad =
      RunProcess({BuiltBinary("conformance/flexconform"), "--profile", mutants + "/profile.yaml",
                  "--driver", mutants + "/mutant~secret-echoed/secret-echoed", "--focus",
                  "protocol|secrets/accepted|teardown/detach", "--html", page, "--json", json,
                  "--run-root", dir.path()},
                 options);
  ASSERT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  const std::string html = flexkit::testing::ReadFileText(page);
  ExpectSelfContained(html);
  EXPECT_EQ(html.find("flexconform-s3cret"), std::string::npos) << "a secret, raw";
  EXPECT_EQ(html.find("ZmxleGNvbmZvcm0tczNjcmV0"), std::string::npos) << "a secret, base64";
  EXPECT_NE(html.find("&lt;redacted&gt;"), std::string::npos);
  const auto report = nlohmann::json::parse(flexkit::testing::ReadFileText(json));
  std::map<std::string, int> verdicts;
  std::size_t with_calls = 0;
  for (const auto& c : report["cases"]) {
    ++verdicts[c["verdict"].get<std::string>()];
    with_calls += c["transcript"].empty() ? 0 : 1;
  }
  ASSERT_GE(verdicts["PASS"], 1);
  ASSERT_EQ(verdicts["FAIL"], 1);
  ASSERT_GE(verdicts["SKIP"], 1);
  EXPECT_EQ(Count(html, "<svg class=\"seq\""), with_calls);

  const std::string chromium = Chromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (ci/install-deps installs Debian's chromium): "
                    "the browser checks did not run";
  const std::string profile_dir = dir.Join("chromium-profile");

  // Only FAIL through the fragment: every diagram rendered (counted before
  // filtering), exactly the FAIL case visible.
  const std::string failed = DumpDom(chromium, page, "#verdict=FAIL", profile_dir);
  EXPECT_EQ(Attribute(failed, "body", "data-rendered"), std::to_string(with_calls)) << failed;
  EXPECT_EQ(Attribute(failed, "body", "data-visible"), "1");
  const auto sections = CaseTags(failed);
  ASSERT_EQ(sections.size(), report["cases"].size());
  for (const auto& tag : sections) {
    const bool is_fail = tag.find("data-verdict=\"FAIL\"") != std::string::npos;
    EXPECT_EQ(tag.find(" hidden") == std::string::npos, is_fail) << tag;
  }

  // By tag: only the [secrets] case.
  const std::string secrets = DumpDom(chromium, page, "#tag=secrets", profile_dir);
  EXPECT_EQ(Attribute(secrets, "body", "data-visible"), "1");
  for (const auto& tag : CaseTags(secrets)) {
    const bool tagged = tag.find("secrets") != std::string::npos;
    EXPECT_EQ(tag.find(" hidden") == std::string::npos, tagged) << tag;
  }

  // A screenshot, kept in the build dir as an artifact of the run.
  const std::string shot =
      std::string(std::getenv("FLEXKIT_BUILD_DIR") ? std::getenv("FLEXKIT_BUILD_DIR") : ".") +
      "/html-report-screenshot.png";
  std::filesystem::remove(shot);
  flexkit::testing::RunOptions shot_options;
  shot_options.deadline = std::chrono::seconds(30);
  auto r = RunProcess({chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                       "--user-data-dir=" + profile_dir, "--hide-scrollbars",
                       "--window-size=1280,2000", "--screenshot=" + shot, "file://" + page},
                      shot_options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(shot)) << r.err;
  EXPECT_GT(std::filesystem::file_size(shot), 20u * 1024) << "a blank page compresses to less";
  const std::string png = flexkit::testing::ReadFileText(shot);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
}  // namespace flexkit::conform
