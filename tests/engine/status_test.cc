// gpkv::Status and gpkv::Result: messages, and what a checked build does when
// a Result without a value is read (include/gpkv/status.h).
//
// The checks are compiled into the code that reads the Result, so this file
// turns them on for itself whatever the build type (RelWithDebInfo defines
// NDEBUG). The Result types it reads are its own (Payload), so no copy of a
// Result member compiled elsewhere without the checks can stand in for them.
#define GPKV_CHECKED 1
#include "gpkv/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace gpkv {
namespace {

struct Payload {
  int number = 0;
};

static_assert(GPKV_INTERNAL_CHECK_RESULTS == 1, "this test needs the checked accessors");

TEST(Status, ToStringNamesTheCodeAndTheMessage) {
  EXPECT_EQ(Status::OK().ToString(), "ok");
  EXPECT_EQ(Status::Corruption("pool.gpkv table 'users' (offset 0x3a000): bad state").ToString(),
            "corruption: pool.gpkv table 'users' (offset 0x3a000): bad state");
  EXPECT_EQ(Status::PoolFull("p").ToString(), "pool full: p");
  EXPECT_EQ(Status::Busy("p").ToString(), "busy: p");
  EXPECT_TRUE(Status::Busy("p").IsBusy());
}

TEST(Result, HoldsAValueOrTheStatusThatExplainsWhyNot) {
  Result<Payload> good = Payload{7};
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good.value().number, 7);
  EXPECT_EQ((*good).number, 7);
  EXPECT_EQ(good->number, 7);
  Result<std::unique_ptr<Payload>> moved = std::make_unique<Payload>(Payload{8});
  std::unique_ptr<Payload> taken = std::move(moved).value();
  EXPECT_EQ(taken->number, 8);

  Result<Payload> bad = Status::NotFound("no table 'users'");
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotFound());
}

// Reading the value of an error is the caller's bug: a checked build stops
// there and prints the status, instead of reading an empty optional.
TEST(ResultDeathTest, ReadingTheValueOfAnErrorAbortsWithTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<Payload> bad = Status::NotFound("pool.gpkv: no table 'users'");
  const Result<Payload>& const_bad = bad;
  const char* expected = "holds none \\(not found: pool.gpkv: no table 'users'\\)";
  EXPECT_DEATH((void)bad.value(), expected);
  EXPECT_DEATH((void)const_bad.value(), expected);
  EXPECT_DEATH((void)std::move(bad).value(), expected);
  EXPECT_DEATH((void)(*bad).number, expected);
  EXPECT_DEATH((void)bad->number, expected);
  EXPECT_DEATH((void)const_bad->number, expected);
}

TEST(ResultDeathTest, AResultMadeFromAnOkStatusHasNoValueToRead) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<Payload> empty = Status::OK();
  EXPECT_DEATH((void)empty.value(), "holds none \\(ok\\)");
}

}  // namespace
}  // namespace gpkv
