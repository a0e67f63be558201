// escape_text: what untrusted text looks like once it is safe to print.
#include "text/escape.hpp"

#include <gtest/gtest.h>

#include <string>

namespace redlock::detail {
namespace {

TEST(EscapeText, KeepsPrintableTextAndValidUtf8) {
  EXPECT_EQ(escape_text("node a:6379 caf\xc3\xa9 \xe2\x82\xac"),
            "node a:6379 caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(escape_text(""), "");
}

TEST(EscapeText, EscapesWhatCouldForgeALineOrReachTheTerminal) {
  EXPECT_EQ(escape_text("x\nredlock: acquire: node 10.9.9.9:6379: granted"),
            "x\\nredlock: acquire: node 10.9.9.9:6379: granted");
  EXPECT_EQ(escape_text("\r\t"), "\\r\\t");
  EXPECT_EQ(escape_text("\x1b[31mred\x1b]0;title\x07"), "\\x1b[31mred\\x1b]0;title\\x07");
  EXPECT_EQ(escape_text(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  // C1 controls (U+009B is a one-character CSI), separators, bidi overrides.
  EXPECT_EQ(escape_text("\xc2\x9b"
                        "2J"),
            "\\xc2\\x9b2J");
  EXPECT_EQ(escape_text("a\xe2\x80\xa8"
                        "b\xe2\x80\xae"
                        "c\xe2\x81\xa6"),
            "a\\xe2\\x80\\xa8b\\xe2\\x80\\xaec\\xe2\\x81\\xa6");
  // Bytes that are not UTF-8.
  EXPECT_EQ(escape_text("\xff\xc3 \xed\xa0\x80"), "\\xff\\xc3 \\xed\\xa0\\x80");
}

TEST(EscapeText, EscapingTwiceChangesNothing) {
  const std::string once = escape_text("a\\b\n\x1b\xff\"");
  EXPECT_EQ(once, "a\\b\\n\\x1b\\xff\"");
  EXPECT_EQ(escape_text(once), once);
}

TEST(EscapeText, QuotedTextEscapesQuotesAndBackslashes) {
  EXPECT_EQ(escape_text("a\"b\\c\n", Quoting::double_quotes), "\"a\\\"b\\\\c\\n\"");
}

}  // namespace
}  // namespace redlock::detail
