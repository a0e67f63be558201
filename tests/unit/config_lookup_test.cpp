// find_config_file and load_default_config: --config, then $REDLOCK_CONFIG,
// then ./redlock.toml. Each test runs in an empty temporary directory with
// REDLOCK_CONFIG unset, and puts both back afterwards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include "redlock/config.hpp"

// The tests change the environment from a single thread; the warning is
// about threads that read it concurrently.
// NOLINTBEGIN(concurrency-mt-unsafe)

namespace redlock {
namespace {

namespace fs = std::filesystem;

constexpr const char* kVariable = "REDLOCK_CONFIG";
constexpr const char* kValidFile = "[[node]]\naddress = \"127.0.0.1:7101\"\n";

class ConfigLookup : public testing::Test {
 protected:
  void SetUp() override {
    if (const char* value = std::getenv(kVariable)) saved_variable_ = value;
    ::unsetenv(kVariable);
    saved_directory_ = fs::current_path();
    std::string pattern = fs::temp_directory_path() / "redlock-lookup-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    fs::current_path(directory_);
  }

  void TearDown() override {
    if (saved_variable_) {
      ::setenv(kVariable, saved_variable_->c_str(), 1);
    } else {
      ::unsetenv(kVariable);
    }
    std::error_code ignored;
    if (!saved_directory_.empty()) fs::current_path(saved_directory_, ignored);
    if (!directory_.empty()) fs::remove_all(directory_, ignored);
  }

  // Writes `contents` to `name` inside the test's directory.
  void write(const fs::path& name, const std::string& contents) const {
    std::ofstream(directory_ / name, std::ios::binary) << contents;
  }

  fs::path directory_;

 private:
  std::optional<std::string> saved_variable_;
  fs::path saved_directory_;
};

TEST_F(ConfigLookup, FindsNothingWhenNoSourceApplies) {
  EXPECT_EQ(find_config_file(std::nullopt), std::nullopt);
}

TEST_F(ConfigLookup, FindsTheLocalFile) {
  write("redlock.toml", kValidFile);
  EXPECT_EQ(find_config_file(std::nullopt), fs::path("redlock.toml"));
}

TEST_F(ConfigLookup, PrefersTheVariableToTheLocalFile) {
  write("redlock.toml", kValidFile);
  ::setenv(kVariable, "/etc/redlock/quorum.toml", 1);
  EXPECT_EQ(find_config_file(std::nullopt), fs::path("/etc/redlock/quorum.toml"));
}

TEST_F(ConfigLookup, IgnoresAnEmptyVariable) {
  write("redlock.toml", kValidFile);
  ::setenv(kVariable, "", 1);
  EXPECT_EQ(find_config_file(std::nullopt), fs::path("redlock.toml"));
}

TEST_F(ConfigLookup, PrefersTheExplicitPathToEverything) {
  write("redlock.toml", kValidFile);
  ::setenv(kVariable, "/etc/redlock/quorum.toml", 1);
  EXPECT_EQ(find_config_file(fs::path("mine.toml")), fs::path("mine.toml"));
}

TEST_F(ConfigLookup, ReturnsAnExplicitPathEvenIfItDoesNotExist) {
  EXPECT_EQ(find_config_file(fs::path("absent.toml")), fs::path("absent.toml"));
}

TEST_F(ConfigLookup, LoadsTheFileItFinds) {
  const fs::path file = directory_ / "from-variable.toml";
  write(file, kValidFile);
  ::setenv(kVariable, file.c_str(), 1);
  const ConfigResult result = load_default_config();
  ASSERT_TRUE(result.ok()) << result.error.to_string();
  EXPECT_EQ(result.config->source, file.string());
}

TEST_F(ConfigLookup, LoadsTheLocalFileUnderItsRelativeName) {
  write("redlock.toml", kValidFile);
  const ConfigResult result = load_default_config();
  ASSERT_TRUE(result.ok()) << result.error.to_string();
  EXPECT_EQ(result.config->source, "redlock.toml");
}

TEST_F(ConfigLookup, SaysWhereItLookedWhenNothingIsFound) {
  const ConfigResult result = load_default_config();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(),
            "no configuration file: expected the REDLOCK_CONFIG environment variable or "
            "./redlock.toml");
  // A program calls this too: no word of the CLI's flag.
  EXPECT_EQ(result.error.to_string().find("--config"), std::string::npos);
}

TEST_F(ConfigLookup, ReportsAnExplicitFileThatCannotBeOpened) {
  write("redlock.toml", kValidFile);  // Not a fallback for an explicit choice.
  const ConfigResult result = load_default_config(fs::path("absent.toml"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(), "absent.toml: cannot open: No such file or directory");
}

TEST_F(ConfigLookup, ReportsAVariableNamingAMissingFile) {
  ::setenv(kVariable, "absent.toml", 1);
  const ConfigResult result = load_default_config();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(), "absent.toml: cannot open: No such file or directory");
}

TEST_F(ConfigLookup, RejectsAnEmptyExplicitPath) {
  const ConfigResult result = load_default_config(fs::path());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error.to_string(), "expected a file path, got an empty one");
}

}  // namespace
}  // namespace redlock

// NOLINTEND(concurrency-mt-unsafe)
