#include "common/control/response.h"

#include <gtest/gtest.h>

namespace tprobe::control {
namespace {

TEST(ResponseTest, EveryCodeCrossesTheProtocolAndBack) {
  for (const Status& s :
       {Status::Ok(), Status::InvalidArgument("a"), Status::NothingToDo("b"),
        Status::PermissionDenied("c"), Status::Unavailable("d"),
        Status::Error("e")}) {
    const v1::Response r = ResponseOf(s);
    EXPECT_EQ(IsOk(r), s.ok());
    const Status back = StatusOf(r);
    EXPECT_EQ(back.code(), s.code());
    EXPECT_EQ(back.message(), s.message());
  }
}

TEST(ResponseTest, AReplyWithoutACodeIsAnError) {
  v1::Response r;
  EXPECT_FALSE(IsOk(r));
  EXPECT_EQ(StatusOf(r).code(), StatusCode::kInternal);
  EXPECT_EQ(StatusOf(r).message(), "a reply without a code");
  r.set_code(static_cast<v1::Code>(99));  // from a newer daemon
  r.set_error("why");
  EXPECT_EQ(StatusOf(r).code(), StatusCode::kInternal);
  EXPECT_EQ(StatusOf(r).message(), "why");
}

}  // namespace
}  // namespace tprobe::control
