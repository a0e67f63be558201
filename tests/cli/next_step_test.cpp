// Every warning and note that `check-config` and `status` print ends with
// the step to take: "; next step: docs/operations.md#ANCHOR", and ANCHOR is
// a section of docs/operations.md as it stands (its heading's anchor, as a
// Markdown renderer makes it), so a renamed section fails here.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace redlock::test {
namespace {

// A heading's anchor: lower case, spaces to hyphens, other punctuation gone.
std::string anchor_of(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0) {
      anchor.push_back(static_cast<char>(std::tolower(byte)));
    } else if (c == ' ' || c == '-') {
      anchor.push_back('-');
    }
  }
  return anchor;
}

std::set<std::string> operations_anchors() {
  std::ifstream file(std::string(REDLOCK_SOURCE_DIR) + "/docs/operations.md");
  std::set<std::string> anchors;
  std::string line;
  while (std::getline(file, line)) {
    const std::size_t level = line.find_first_not_of('#');
    if (level == 0 || level == std::string::npos || line[level] != ' ') continue;
    anchors.insert(anchor_of(line.substr(level + 1)));
  }
  return anchors;
}

// The lines of `text` that contain `marker`.
std::vector<std::string> lines_with(const std::string& text, const std::string& marker) {
  std::vector<std::string> found;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(marker) != std::string::npos) found.push_back(line);
  }
  return found;
}

// Each line ends with a next step whose anchor docs/operations.md has.
void expect_next_steps(const std::vector<std::string>& lines, const std::set<std::string>& known) {
  const std::string pointer = "; next step: docs/operations.md#";
  for (const std::string& line : lines) {
    const std::size_t at = line.rfind(pointer);
    ASSERT_NE(at, std::string::npos) << "no next step: " << line;
    const std::string anchor = line.substr(at + pointer.size());
    EXPECT_EQ(known.count(anchor), 1U)
        << "docs/operations.md has no section #" << anchor << ": " << line;
  }
}

class NextStepTest : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const std::filesystem::path file = dir_ / name;
    write_text(file, text);
    return file;
  }

  TempDir dir_;
  const std::set<std::string> anchors_ = operations_anchors();
};

TEST_F(NextStepTest, TheDocumentHasTheSectionsTheToolsName) {
  // The parser reads this document's headings, so the anchors below exist
  // only if it does.
  EXPECT_EQ(anchors_.count("access-auth-acl-passwords"), 1U);
  EXPECT_EQ(anchors_.count("checking-the-quorum-redlock-status"), 1U);
  EXPECT_EQ(anchors_.count("first-use"), 1U);
}

TEST_F(NextStepTest, CheckConfigsWarningsAndNotesEachNameTheirNextStep) {
  CliOptions options;
  options.environment = {{"PW", "secret"}};
  // A password across a network in clear text, a TLS node not verified,
  // and two nodes (an even count).
  const auto pair = write("pair.toml",
                          "[[node]]\naddress = \"192.0.2.7:6379\"\npassword_env = \"PW\"\n"
                          "[[node]]\naddress = \"rediss://192.0.2.8:6380\"\ntls_verify = false\n");
  const CliResult two = run_cli({"check-config", pair.string()}, options);
  ASSERT_EQ(two.exit_code, 0) << describe(two);
  const std::vector<std::string> warned = lines_with(two.out, "warning:");
  EXPECT_EQ(warned.size(), 2U) << two.out;
  expect_next_steps(warned, anchors_);
  const std::vector<std::string> noted = lines_with(two.out, "note:");
  EXPECT_EQ(noted.size(), 1U) << two.out;
  expect_next_steps(noted, anchors_);

  const auto single = write("single.toml", "[[node]]\naddress = \"127.0.0.1:6379\"\n");
  const CliResult one = run_cli({"check-config", single.string()});
  ASSERT_EQ(one.exit_code, 0) << describe(one);
  const std::vector<std::string> single_note = lines_with(one.out, "note:");
  EXPECT_EQ(single_note.size(), 1U) << one.out;
  expect_next_steps(single_note, anchors_);
}

TEST_F(NextStepTest, StatusWithoutAMajorityNamesItsNextStep) {
  RedisServer up;
  RedisServer down_one;
  RedisServer down_two;
  const std::string first = down_one.address();
  const std::string second = down_two.address();
  down_one.stop();
  down_two.stop();
  const CliResult result =
      run_cli({"status", "--node", up.address(), "--node", first, "--node", second});
  EXPECT_EQ(result.exit_code, 75) << describe(result);
  const std::vector<std::string> lines = lines_with(result.err, "nodes reachable");
  ASSERT_EQ(lines.size(), 1U) << result.err;
  expect_next_steps(lines, anchors_);
}

}  // namespace
}  // namespace redlock::test
