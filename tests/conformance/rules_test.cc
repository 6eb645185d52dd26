// Every rule flexconform reports cites conformance/RULES.md, which ships
// with the repository, and nothing that does not; every id it cites is a
// section there; every rule has a fix hint that fits the rule, not merely
// its F-number.
#include "conformance/rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace flexkit::conform {
namespace {

const std::filesystem::path kSource = FLEXKIT_SOURCE_DIR;

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// RULES.md's section ids: the text of its "### " headings.
std::vector<std::string> RulesMdSections() {
  std::vector<std::string> ids;
  std::istringstream in(ReadText(kSource / "conformance/RULES.md"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("### ", 0) == 0) ids.push_back(line.substr(4));
  }
  return ids;
}

// The anchor GitHub gives a heading: lower case, punctuation dropped,
// spaces turned into hyphens.
std::string Anchor(const std::string& heading) {
  std::string out;
  for (char ch : heading) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || ch == '-' || ch == '_') out += static_cast<char>(std::tolower(c));
    if (ch == ' ') out += '-';
  }
  return out;
}

struct Literal {
  std::string where;  // file:line
  std::string text;   // as written, escapes kept
};

// The string literals of a C++ source, comments and character literals
// skipped; raw strings whole; adjacent literals one each.
std::vector<Literal> StringLiterals(const std::filesystem::path& file) {
  const std::string s = ReadText(file);
  std::vector<Literal> out;
  int line = 1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '\n') ++line;
    if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i) - 1;
    } else if (s.compare(i, 2, "/*") == 0) {
      const std::size_t end = s.find("*/", i + 2);
      line += static_cast<int>(std::count(s.begin() + i, s.begin() + end, '\n'));
      i = end + 1;
    } else if (ch == '\'') {
      i = s.find('\'', i + (s[i + 1] == '\\' ? 3 : 2));
    } else if (ch == 'R' && i + 1 < s.size() && s[i + 1] == '"') {
      const std::size_t open = s.find('(', i);
      const std::string close = ")" + s.substr(i + 2, open - i - 2) + "\"";
      const std::size_t end = s.find(close, open);
      out.push_back(
          {file.string() + ":" + std::to_string(line), s.substr(open + 1, end - open - 1)});
      line += static_cast<int>(std::count(s.begin() + i, s.begin() + end, '\n'));
      i = end + close.size() - 1;
    } else if (ch == '"') {
      std::size_t j = i + 1;
      while (s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      out.push_back({file.string() + ":" + std::to_string(line), s.substr(i + 1, j - i - 1)});
      i = j;
    }
  }
  return out;
}

std::vector<Literal> ConformanceLiterals() {
  std::vector<Literal> all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kSource / "conformance")) {
    const auto ext = e.path().extension();
    // rules.cc holds the ids themselves (checked against RULES.md above).
    if ((ext != ".cc" && ext != ".h") || e.path().stem() == "rules") continue;
    auto found = StringLiterals(e.path());
    all.insert(all.end(), found.begin(), found.end());
  }
  return all;
}

bool IsRule(const std::string& id) {
  for (const auto& r : Rules()) {
    if (r.id == id) return true;
  }
  return false;
}

// Documents that do not ship with the repository.
const char* const kAbsentDocuments[] = {"§",       "protocol.md", "cluster-facts",      "DESIGN",
                                        "anchors", "shared/",     "flexvolume-protocol"};

TEST(RulesMd, EveryRuleIsASectionAndEverySectionARule) {
  const auto sections = RulesMdSections();
  const std::set<std::string> headed(sections.begin(), sections.end());
  EXPECT_EQ(headed.size(), sections.size()) << "a section id appears twice";
  for (const auto& r : Rules()) EXPECT_TRUE(headed.count(r.id)) << "no ### " << r.id;
  for (const auto& id : sections) EXPECT_TRUE(IsRule(id)) << "### " << id << " has no hint";
}

TEST(RulesMd, EveryFamilyF1ToF30HasASection) {
  const std::string text = ReadText(kSource / "conformance/RULES.md");
  for (int f = 1; f <= 30; ++f) {
    bool found = false;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("## F", 0) != 0) continue;
      // "## F16, F17: ...", "## F1-F3: ...": the numbers the heading spans.
      const std::string head = line.substr(3, line.find(':') - 3);
      std::smatch m;
      std::string rest = head;
      std::vector<int> numbers;
      while (std::regex_search(rest, m, std::regex("F([0-9]+)"))) {
        numbers.push_back(std::stoi(m[1]));
        rest = m.suffix();
      }
      if (numbers.empty()) continue;
      const bool range = head.find('-') != std::string::npos && numbers.size() == 2;
      for (int n : numbers) found |= n == f;
      if (range) found |= f >= numbers[0] && f <= numbers[1];
    }
    EXPECT_TRUE(found) << "no ## heading for F" << f;
  }
}

TEST(RulesMd, ItsLinksPointAtItsOwnSections) {
  const std::string text = ReadText(kSource / "conformance/RULES.md");
  std::set<std::string> anchors;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) anchors.insert(Anchor(line.substr(line.find(' ') + 1)));
  }
  const std::regex link("\\]\\(#([^)]+)\\)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator();
       ++it) {
    EXPECT_TRUE(anchors.count((*it)[1])) << "dangling link #" << (*it)[1];
  }
}

// No string flexconform prints cites a document the repository does not
// have; every string shaped as a rule names a rule; every "RULES.md <id>"
// names a section.
TEST(RuleStrings, CiteOnlyRulesMdSections) {
  const std::regex f_rule("^F[0-9]+[ /(:]");
  const std::regex rule_shape(
      "^(F[0-9]+(/F[0-9]+)* [a-z0-9]+(-[a-z0-9]+)*|[a-z0-9]+(-[a-z0-9]+)+|warn|fixture): ");
  const std::regex citation("RULES\\.md (F[0-9]+(/F[0-9]+)* [a-z0-9]+(-[a-z0-9]+)*)");
  std::size_t rules = 0;
  for (const auto& l : ConformanceLiterals()) {
    for (const char* absent : kAbsentDocuments) {
      EXPECT_EQ(l.text.find(absent), std::string::npos)
          << l.where << ": \"" << l.text << "\" cites " << absent;
    }
    std::smatch m;
    // Messages that start with a hyphenated name of something else.
    const bool not_a_rule = l.text.rfind("convoy-fake: ", 0) == 0;
    if (!not_a_rule && std::regex_search(l.text, m, rule_shape)) {
      ++rules;
      EXPECT_TRUE(IsRule(RuleId(l.text))) << l.where << ": \"" << l.text << "\": no such rule";
    } else {
      EXPECT_FALSE(std::regex_search(l.text, f_rule))
          << l.where << ": \"" << l.text << "\" is not \"<RULES.md id>: <statement>\"";
    }
    for (auto it = std::sregex_iterator(l.text.begin(), l.text.end(), citation);
         it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(IsRule((*it)[1])) << l.where << ": cites RULES.md " << (*it)[1];
    }
  }
  EXPECT_GT(rules, 80u) << "the scan found the rule strings";
}

TEST(RuleStrings, TheReadmesCiteExistingSections) {
  const std::regex citation("RULES\\.md (F[0-9]+(/F[0-9]+)* [a-z0-9]+(-[a-z0-9]+)*)");
  for (const char* readme : {"README.md", "conformance/README.md"}) {
    const std::string text = ReadText(kSource / readme);
    for (const char* absent : {"shared/", "flexvolume-protocol", "cluster-facts", "anchors §"})
      EXPECT_EQ(text.find(absent), std::string::npos) << readme << " cites " << absent;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), citation);
         it != std::sregex_iterator(); ++it) {
      EXPECT_TRUE(IsRule((*it)[1])) << readme << " cites RULES.md " << (*it)[1];
    }
  }
}

TEST(FixHints, EveryRuleHasOneThatCitesNothingAbsent) {
  for (const auto& r : Rules()) {
    EXPECT_FALSE(r.hint.empty()) << r.id;
    EXPECT_EQ(FixHint(r.id + ": any statement"), r.hint) << r.id;
    for (const char* absent : kAbsentDocuments)
      EXPECT_EQ(r.hint.find(absent), std::string::npos) << r.id << ": " << r.hint;
  }
  EXPECT_EQ(FixHint("F10 (an older report's rule)"), "");
  EXPECT_EQ(RuleId("harness"), "harness");
  EXPECT_EQ(RuleId("F14 data-intact: storage: shared: data is on B"), "F14 data-intact");
}

// The rule strings a driver's report shows, as the catalog writes them.
bool InCatalog(const std::string& rule) {
  for (const auto& l : ConformanceLiterals()) {
    if (l.text == rule) return true;
  }
  return false;
}

// The hints of the rules issue 31 found with another duty's hint.
TEST(FixHints, FollowTheRuleNotItsFNumber) {
  const std::string attach_device = "F8 attach-device: attach returns the device";
  ASSERT_TRUE(InCatalog(attach_device));
  EXPECT_NE(FixHint(attach_device).find("\"device\""), std::string::npos);
  EXPECT_EQ(FixHint(attach_device).find("init"), std::string::npos) << FixHint(attach_device);

  const std::string same_device =
      "F9 attach-same-device: a repeated attach returns the same device";
  ASSERT_TRUE(InCatalog(same_device));
  EXPECT_NE(FixHint(same_device).find("repeated attach returns the device"), std::string::npos);
  EXPECT_EQ(FixHint(same_device).find("mount"), std::string::npos) << FixHint(same_device);

  // A reformat that lost the data of a volume after its node restarted.
  const std::string data = "F14 data-intact: data survives a node restart in place";
  ASSERT_TRUE(InCatalog(data));
  EXPECT_NE(FixHint(data).find("format only a device with no filesystem"), std::string::npos);
  EXPECT_EQ(FixHint(data).find("refuse to attach"), std::string::npos) << FixHint(data);
  EXPECT_NE(FixHint("F19 never-reformat: an existing filesystem is never reformatted")
                .find("never reformat"),
            std::string::npos);

  EXPECT_NE(FixHint("F19 mountdevice-mounts: x").find("mountdevice mounts"), std::string::npos);
  EXPECT_NE(FixHint("F19 fstype-honoured: x").find("fsType"), std::string::npos);
  EXPECT_NE(FixHint("F2 controller-path: x").find("no tools on PATH"), std::string::npos);
}

// A 16 MiB flood is output: the one-reply rule and its hint, never F16's
// timeout; a hang and a held pipe keep theirs.
TEST(FixHints, AnOutputFloodBreaksTheOutputRule) {
  const std::string flood =
      HarnessProblemRule("output exceeded the 16777216-byte cap; process group killed");
  EXPECT_EQ(RuleId(flood), "F1/F2/F3 one-json-reply");
  EXPECT_NE(FixHint(flood).find("exactly one JSON reply"), std::string::npos);
  EXPECT_NE(FixHint(flood), FixHint("F16 no-hang"));
  EXPECT_EQ(RuleId(HarnessProblemRule("would hang kubelet: mount still running after 30000 ms "
                                      "(kubelet has no timeout for it); process group killed")),
            "F16 no-hang");
  EXPECT_EQ(RuleId(HarnessProblemRule(
                "would hang kubelet: the driver exited but a process it started keeps its "
                "stdout/stderr open (CombinedOutput waits for end of file); process group killed")),
            "F17 output-closed");
}

}  // namespace
}  // namespace flexkit::conform
