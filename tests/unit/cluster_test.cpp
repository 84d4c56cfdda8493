// Redis Cluster helpers: key slots as CLUSTER KEYSLOT computes them, and redirect parsing.
#include "cluster.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "redirect.hpp"

namespace rcoord {
namespace {

Reply error_reply(const std::string& text) {
  auto* r = static_cast<redisReply*>(calloc(1, sizeof(redisReply)));
  r->type = REDIS_REPLY_ERROR;
  r->str = static_cast<char*>(malloc(text.size() + 1));
  memcpy(r->str, text.c_str(), text.size() + 1);
  r->len = text.size();
  return Reply(r);
}

Reply integer_reply(long long v) {
  auto* r = static_cast<redisReply*>(calloc(1, sizeof(redisReply)));
  r->type = REDIS_REPLY_INTEGER;
  r->integer = v;
  return Reply(r);
}

}  // namespace

TEST_CASE("key_slot matches CLUSTER KEYSLOT") {
  // Values given by a Redis 7 server.
  CHECK(cluster::key_slot("foo") == 12182);
  CHECK(cluster::key_slot("123456789") == 12739);
  CHECK(cluster::key_slot("rcoord:{lock:a}") == 6035);
  CHECK(cluster::key_slot("rcoord:{lock:d}") == 1846);
  // Only the hash tag counts; an empty tag means the whole key; the first '}' closes it.
  CHECK(cluster::key_slot("rcoord:{lock:a}:fence") == 6035);
  CHECK(cluster::key_slot("x{lock:a}y") == cluster::key_slot("lock:a"));
  CHECK(cluster::key_slot("foo{{bar}}") == cluster::key_slot("{bar"));
}

TEST_CASE("parse_redirect reads MOVED, ASK and TRYAGAIN") {
  auto moved = cluster::parse_redirect(error_reply("MOVED 3999 127.0.0.1:6381").get());
  CHECK(moved.kind == cluster::Redirect::Kind::kMoved);
  CHECK(moved.slot == 3999);
  CHECK(moved.host == "127.0.0.1");
  CHECK(moved.port == 6381);
  auto ask = cluster::parse_redirect(error_reply("ASK 1 ::1:7000").get());
  CHECK(ask.kind == cluster::Redirect::Kind::kAsk);
  CHECK(ask.host == "::1");
  CHECK(ask.port == 7000);
  auto no_host = cluster::parse_redirect(error_reply("MOVED 12 :7001").get());
  CHECK(no_host.kind == cluster::Redirect::Kind::kMoved);
  CHECK(no_host.host.empty());
  CHECK(cluster::parse_redirect(error_reply("TRYAGAIN Multiple keys request").get()).kind ==
        cluster::Redirect::Kind::kTryAgain);
  CHECK(cluster::parse_redirect(error_reply("ERR MOVED somewhere").get()).kind ==
        cluster::Redirect::Kind::kNone);
  CHECK(cluster::parse_redirect(error_reply("MOVED x 127.0.0.1:1").get()).kind ==
        cluster::Redirect::Kind::kNone);
  CHECK(cluster::parse_redirect(integer_reply(1).get()).kind == cluster::Redirect::Kind::kNone);
}

TEST_CASE("a pipeline is redirected as a whole only when nothing ran") {
  std::vector<Reply> all;
  all.push_back(error_reply("MOVED 5 127.0.0.1:7002"));
  all.push_back(error_reply("MOVED 5 127.0.0.1:7002"));
  CHECK(cluster::pipeline_redirect(all).kind == cluster::Redirect::Kind::kMoved);
  std::vector<Reply> partly;
  partly.push_back(integer_reply(1));
  partly.push_back(error_reply("MOVED 5 127.0.0.1:7002"));
  CHECK(cluster::pipeline_redirect(partly).kind == cluster::Redirect::Kind::kNone);
  CHECK(cluster::is_redirect(partly[1].get()));
}

TEST_CASE("endpoint_at keeps the credentials and leaves a Unix socket") {
  Endpoint base;
  base.socket_path = "/tmp/redis.sock";
  base.user = "app";
  base.password = "secret";
  cluster::Redirect to;
  to.kind = cluster::Redirect::Kind::kMoved;
  to.host = "10.0.0.2";
  to.port = 7003;
  Endpoint e = cluster::endpoint_at(base, to);
  CHECK(e.socket_path.empty());
  CHECK(e.host == "10.0.0.2");
  CHECK(e.port == 7003);
  CHECK(e.user == "app");
  CHECK(e.password == std::optional<std::string>("secret"));
  to.host = "?";
  CHECK_THROWS_AS(cluster::endpoint_at(base, to), Error);
}

TEST_CASE("the redirect budget ends a loop with a cluster error") {
  cluster::Budget budget;
  cluster::Redirect moved;
  moved.kind = cluster::Redirect::Kind::kMoved;
  moved.text = "MOVED 1 127.0.0.1:1";
  for (int i = 0; i < cluster::Budget::kMaxHops; ++i) budget.hop(moved);
  try {
    budget.hop(moved);
    FAIL("no error after too many hops");
  } catch (const Error& e) {
    CHECK(e.code() == kServer);
    CHECK(std::string(e.what()).find("cluster error") != std::string::npos);
  }
}

}  // namespace rcoord
