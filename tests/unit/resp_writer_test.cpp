#include "transport/resp_writer.hpp"

#include <gtest/gtest.h>

#include <string>

namespace redlock::detail {
namespace {

TEST(RespWriter, EncodesAnArrayOfBulkStrings) {
  std::string out;
  append_command(out, {"SET", "k", "v"});
  EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
}

TEST(RespWriter, BinarySafeArguments) {
  std::string out;
  const std::string binary("a\r\n\0b", 5);
  append_command(out, {binary});
  EXPECT_EQ(out, std::string("*1\r\n$5\r\na\r\n\0b\r\n", 15));
}

TEST(RespWriter, EmptyArgumentAndAppending) {
  std::string out = "prefix";
  append_array_header(out, 2);
  append_bulk(out, "");
  append_bulk(out, "xyz");
  EXPECT_EQ(out, "prefix*2\r\n$0\r\n\r\n$3\r\nxyz\r\n");
}

}  // namespace
}  // namespace redlock::detail
